/* speedup.h — the speedup stack of one run (docs/findings.md has the maths).
 *
 * A run at N threads with wall time T has a worker-time budget of N·T. The
 * stack splits it exactly into components; the per-lock split of lock_wait
 * is kept beside it.
 */
#ifndef CONVOY_SPEEDUP_H
#define CONVOY_SPEEDUP_H

#include <stddef.h>

struct model;
struct object_row;

/* X-macro: component, JSON key, phrase used in sentences. */
#define SPEEDUP_COMPONENTS(X)                                                                  \
	X(STACK_USEFUL,      "useful",       "useful on-CPU work")                              \
	X(STACK_INFLATION,   "inflation",    "on-CPU time beyond the reference run's")          \
	X(STACK_LOCK,        "lock_wait",    "waiting for locks")                               \
	X(STACK_PARK,        "park",         "parked (condvars, semaphores, futexes)")          \
	X(STACK_BARRIER,     "barrier",      "waiting at barriers")                             \
	X(STACK_RUNNABLE,    "runnable",     "runnable but not running (waiting for a CPU)")    \
	X(STACK_OTHER,       "other_offcpu", "off-CPU for other reasons (sleep, I/O, faults)")  \
	X(STACK_IDLE,        "idle",         "idle slots: fewer than N threads had work")       \
	X(STACK_UNEXPLAINED, "unexplained",  "unexplained")

enum stack_component {
#define CV_X(sym, key, phrase) sym,
	SPEEDUP_COMPONENTS(CV_X)
#undef CV_X
	STACK_N
};

extern const char *const stack_keys[STACK_N];
extern const char *const stack_phrases[STACK_N];

struct stack_lock {
	const struct object_row *row;   /* in the run's model */
	double wait_ns;
};

struct speedup {
	int threads;            /* N: the thread count the run was asked for */
	double wall_ns;         /* T */
	double budget_ns;       /* N·T */
	double c[STACK_N];      /* ns; they add up to budget_ns */
	double cpu_out_ns;      /* on-CPU time outside waits, all threads (useful + inflation) */
	double active_ns;       /* thread time not spent waiting in pthread_join */
	double progress;        /* progress-point units (0: none) */
	double runq_in_waits;   /* the share of blocked lock waits that was run-queue delay */
	struct stack_lock *locks;   /* lock_wait by lock, most first */
	size_t nlocks;
	struct stack_lock *by_identity;   /* the same, ordered by model__cmp_identity */
};

/* The stack of the run in m, at n threads and wall time wall_ns (0: the
 * profile's own). ref_cpu_out_ns is the reference run's on-CPU time outside
 * waits (the work itself); < 0 when there is no reference, and then all
 * on-CPU time counts as useful. */
void speedup__compute(struct speedup *s, const struct model *m, int n, double wall_ns,
		    double ref_cpu_out_ns);
void speedup__free(struct speedup *s);

/* The wait of the lock that is row's object (row may come from another
 * profile of the same program) in this stack; 0 if absent. */
double speedup__lock_wait(const struct speedup *s, const struct object_row *row);

/* How many threads a single run kept busy at once (at least 1). */
int speedup__busy_threads(const struct model *m);

#endif
