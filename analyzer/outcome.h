/* outcome.h — how a command that convoy run or scale launched ended, as the
 * launcher saw it: exit status, signal, time limit. A profile alone does not
 * know it (the shim writes before the status exists), so it travels beside
 * the analysis, and every run is explained whatever its outcome. */
#ifndef CONVOY_OUTCOME_H
#define CONVOY_OUTCOME_H

#include <stddef.h>

struct json_object;

struct run_outcome {
	int known;          /* set by convoy run/scale; 0 for a profile read on its own */
	int exit_status;    /* the command's exit status; -1 when a signal ended it */
	int signal;         /* the signal that ended it; 0 when it exited */
	int timed_out;      /* --timeout stopped it */
	double timeout_s;   /* that limit */
	int hung;           /* the watchdog found it hung (and stopped it, unless continued) */
	double watchdog_s;  /* its period */
	int continued;      /* hung, and let go on (--on-hang continue) */
	int snapshot_asked; /* continued: the snapshot signal was sent at the hang */
	int snapshot;       /* and the shim wrote the snapshot */
};

struct launch_result;
struct watchdog_config;
/* From what the launcher saw (launch.h) under this time limit and watchdog. */
void outcome__set(struct run_outcome *o, const struct launch_result *r, double timeout_s,
		  const struct watchdog_config *wdc);
/* Whether it ended other than by exiting with status 0. */
int outcome__failed(const struct run_outcome *o);
/* One sentence: "The command exited with status 3." (empty when unknown). */
void outcome__sentence(const struct run_outcome *o, char *buf, size_t size);
/* exit_status (null when a signal ended it), signal, timed_out, hung (and,
 * when hung, on_hang, hang_snapshot_asked and hang_snapshot) into obj; nothing when unknown. */
void outcome__json(const struct run_outcome *o, struct json_object *obj);
/* Reads back what outcome__json wrote (a recorded sweep); unknown when absent. */
void outcome__from_json(struct run_outcome *o, struct json_object *obj);

#endif
