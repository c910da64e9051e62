/* speedup.h — the speedup stack of one run (docs/findings.md has the maths).
 *
 * A run at N threads with wall time T has a worker-time budget of N·T. The
 * stack splits it exactly into components; the per-lock split of lock_wait
 * is kept beside it.
 */
#ifndef CONVOY_SPEEDUP_H
#define CONVOY_SPEEDUP_H

#include <stddef.h>
#include <stdint.h>

#include "offcpu.h"

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

/* What a thread did in the run (speedup.c, "Roles"). */
#define THREAD_ROLES(X)                                                        \
	X(ROLE_WORKER, "worker")   /* did the threaded work: in the stack */      \
	X(ROLE_WAITER, "waiter")   /* made threads and mostly waited for them */  \
	X(ROLE_HELPER, "helper")   /* ran beside the workers (I/O, service threads) */ \
	X(ROLE_MERGED, "merged")   /* the "merged threads" row: threads that ended past the shim's cap, as one */

enum thread_role {
#define CV_X(sym, name) sym,
	THREAD_ROLES(CV_X)
#undef CV_X
	ROLE_N
};
extern const char *const role_names[ROLE_N];

/* One thread's part of the stack. Its time is split by how the stack
 * counts it; `in_stack` is the share of its active time that filled one of
 * the N slots (the rest ran beside N other threads and is helper time). */
struct stack_thread {
	enum thread_role role;
	double in_stack;        /* 0..1 */
	double active, cpu, lock, park, barrier, runnable, other;   /* ns, the whole thread's */
	double parked_for_threads;   /* a main thread's parks waiting for its threads: not active */
	double wait_keep;       /* share of its sleeping waits left after the run queue's part */
	double alone;           /* ns it was the only thread in the stack while N > 1: a serial phase */
};

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
	struct stack_lock *locks;   /* lock_wait by lock, most first */
	size_t nlocks;
	struct stack_lock *by_identity;   /* the same, ordered by model__cmp_identity */
	struct stack_lock *parks;   /* park by object (condvars, semaphores, park futexes), most first */
	size_t nparks;
	struct stack_thread *t;  /* per thread index */
	size_t nthreads;
	int nroles[ROLE_N];      /* threads of each role */
	double helper_ns;        /* active time outside the stack: threads beside N others */
	double helper_cpu_ns;    /* ... of it on a CPU */
	/* c[STACK_OTHER] split by kind, each thread's by the measured times of
	 * its sampled switches (offcpu__split); untimed: the threads whose
	 * switches no record timed. They add up to c[STACK_OTHER]. */
	double other_by_kind[OFFCPU_KIND_N];
	double other_untimed;
	/* The spans where one thread was alone in the slots while N > 1:
	 * [alone_spans[2k], alone_spans[2k+1]) ns, thread index alone_thread[k]. */
	double *alone_spans;
	size_t *alone_thread;
	size_t nalone;
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

/* The park of the object that is row's object in this stack; 0 if absent. */
double speedup__park_wait(const struct speedup *s, const struct object_row *row);

/* Two explanations of what the stack cannot name by object, for text
 * output; each writes "" when there is nothing to say:
 *  - a serial phase: the thread that ran alone longest while N > 1, when
 *    that was at least a tenth of the run ("main ran alone for 120 ms (30%
 *    of the run), at its start, before its threads");
 *  - off-CPU time outside waits: the thread with most of it and the
 *    evidence of its kind: page faults, voluntary switches beyond the waits
 *    the shim timed, and, when the launcher sampled context switches, the
 *    kinds and call sites of those outside timed waits (offcpu.h). */
void speedup__serial_text(const struct speedup *s, const struct model *m, char *buf, size_t size);
void speedup__offcpu_text(const struct speedup *s, const struct model *m, char *buf, size_t size);
/* The stack's other off-CPU time by kind ("12% blocking I/O (120 ms), 3%
 * sleep (30 ms) of the worker time."), "" when none was timed. */
void speedup__other_text(const struct speedup *s, char *buf, size_t size);
/* The same in ns, one member per kind and "untimed". */
struct json_object *speedup__other_json(const struct speedup *s);
/* Where serial thread i was in the spans it ran alone (offcpu__phase_site).
 * Returns 0, or -1 when it has none or no sample fell in them. */
int speedup__serial_site(const struct speedup *s, const struct model *m, size_t i, struct phase_site *out);
/* The threads those name (index), or -1. */
long speedup__serial_thread(const struct speedup *s);
long speedup__offcpu_thread(const struct speedup *s);
/* Blocking waits the shim timed in thread i (every kind). */
uint64_t speedup__thread_waits(const struct model *m, size_t i);

/* The workers, waiters and helpers of the run in words ("workers: 2 (worker
 * ×2); helpers: main, 40 ms beside them"), for text output. */
void speedup__roles_text(const struct speedup *s, const struct model *m, char *buf, size_t size);
/* The threads of one role, the first three ("worker (tid 12), ..."); the
 * length written. */
size_t speedup__role_threads_text(const struct speedup *s, const struct model *m, enum thread_role role, char *buf,
				  size_t size);

/* Thread i as text: "main", its name, or its start routine, with its tid. */
const char *speedup__thread_text(const struct model *m, size_t i, char *buf, size_t size);

/* Where thread i's sampled time went in the program's own code: "its own
 * code mostly in make_item (pcq.c:10) (91.0% of its samples)"; "" where no
 * sample reached the program's code. */
void speedup__thread_site(const struct model *m, size_t i, char *buf, size_t size);

/* How many threads a single run kept busy at once (at least 1). */
int speedup__busy_threads(const struct model *m);

/* The run queue from the launcher's switch records: *busy, the most of the
 * program's threads on a CPU or preempted and waiting for one at once for
 * at least a tenth of the recorded time; *own, of the time its preempted
 * threads waited for a CPU, the share that its own threads outnumbering
 * cpus CPUs explains (the waits that would remain with the machine to
 * itself: near 1, it oversubscribed the machine; near 0, other processes
 * held the CPUs). -1 when there are no switch records or too little such
 * waiting to tell. */
int speedup__runq_split(const struct model *m, uint32_t cpus, int *busy, double *own);
/* Whether m's waiting for a CPU was mostly other processes' doing: by the
 * launcher's switch records where speedup__runq_split can tell (the
 * program's own share under half; *recorded then 1), else by *busy (the
 * threads busy at once, given; the records' count where they tell)
 * fitting the CPUs. *own: as speedup__runq_split. */
int speedup__runq_external(const struct model *m, uint32_t cpus, int *busy, double *own, int *recorded);

#endif
