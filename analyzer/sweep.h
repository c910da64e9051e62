/* sweep.h — one program at several thread counts: an analysis per count
 * (the median run's), each stack against the smallest count's, a sentence
 * per step and the findings across counts (DESIGN.md, "Layers inside the
 * analyzer"). `convoy scale` records one and renders it; `scale --replay`
 * and `diff` read a recorded one back from its sweep.json. */
#ifndef CONVOY_SWEEP_H
#define CONVOY_SWEEP_H

#include <stdio.h>

#include "analysis.h"

struct json_object;

#define SWEEP_MAX_COUNTS 64
#define SWEEP_MAX_REPEAT 100

struct sweep_run {
	int threads;
	double walls[SWEEP_MAX_REPEAT];   /* every repeat's wall time */
	char *profiles[SWEEP_MAX_REPEAT]; /* and profile (NULL when only the chosen one is known) */
	struct run_outcome outcomes[SWEEP_MAX_REPEAT];   /* and how it ended (unknown when not recorded) */
	int chosen;                       /* the median run: the one analysed */
	struct analysis a;
	double speedup, efficiency;
	char step[1024];                  /* from the previous count to this one (runs[0]: empty) */
};

struct sweep {
	char *dir;                  /* absolute; profiles are kept under it */
	char **command;             /* as given, with {threads} */
	int ncommand;
	int repeat;
	int warmup;                 /* unanalysed runs before the sweep (--warmup) */
	char caution[1024];         /* why the speedups cannot be taken at face value, or "" */
	struct sweep_run runs[SWEEP_MAX_COUNTS];   /* ascending thread counts */
	int nruns;
	struct findings f;
};

/* Picks each count's median run, analyses it, and diagnoses the sweep.
 * Returns 0, or -1 after one error line (a profile would not load). */
int sweep__analyse(struct sweep *w);

/* Reads back the sweep recorded in dir (or the sweep.json named) and
 * analyses it; nothing is run. Returns 0, or -1 after one error line. */
int sweep__load(struct sweep *w, const char *path);

/* The sweep as JSON (also written as DIR/sweep.json; profile paths there are
 * relative to DIR, so a sweep directory can be moved). */
struct json_object *sweep__json(const struct sweep *w);
void sweep__text(const struct sweep *w, FILE *out);
void sweep__free(struct sweep *w);

#endif
