/* findings.h — from speedup stacks to ranked findings (docs/findings.md). */
#ifndef CONVOY_FINDINGS_H
#define CONVOY_FINDINGS_H

#include <stddef.h>
#include <stdio.h>

struct model;
struct speedup;
struct json_object;

#define FINDING_MAX_OBJECTS 4
#define FINDING_MAX_EVIDENCE 12
#define FINDING_MAX_EDGES 32     /* a cycle's edges kept with their stacks: longer ones say how many in all */
#define FINDING_MAX_FRAMES 8

/* DESIGN.md's vocabulary: X(symbol, the kind in JSON and text). */
#define FINDING_KINDS(X)                                  \
	X(FINDING_LOCK_CONTENTION,     "lock-contention")      \
	X(FINDING_ACQUISITION_FREQ,    "acquisition-frequency") \
	X(FINDING_LONG_HOLD,           "long-hold")            \
	X(FINDING_FALSE_SHARING,       "false-sharing")        \
	X(FINDING_TRUE_SHARING,        "true-sharing")         \
	X(FINDING_OVERSUBSCRIPTION,    "oversubscription")     \
	X(FINDING_LOAD_IMBALANCE,      "load-imbalance")       \
	X(FINDING_THREAD_CHURN,        "thread-churn")         \
	X(FINDING_PARK_WAKE,           "park-wake")            \
	X(FINDING_LOCK_ORDER_CYCLE,    "lock-order-cycle")     \
	X(FINDING_DEADLOCK,            "deadlock")             \
	X(FINDING_POOL_STARVATION,     "pool-starvation")

enum finding_kind {
#define CV_X(sym, name) sym,
	FINDING_KINDS(CV_X)
#undef CV_X
	FINDING_KIND_N
};

/* Most important first: the order findings are ranked in. */
#define SEVERITIES(X)              \
	X(SEVERITY_HIGH,   "high")   \
	X(SEVERITY_MEDIUM, "medium") \
	X(SEVERITY_LOW,    "low")

enum severity {
#define CV_X(sym, name) sym,
	SEVERITIES(CV_X)
#undef CV_X
	SEVERITY_N
};

const char *finding_kind_name(enum finding_kind k);
const char *severity_name(enum severity s);

/* One edge of a cycle (deadlock.c): a thread that held `from` and took,
 * or waits for, `to`; where it took `from`, and the stack that wants `to`. */
struct finding_edge {
	char from[128], to[128];
	int posts;               /* `from` is a semaphore or futex word the thread posts, not a lock it holds */
	int signals;             /* `from` is a condvar the thread would signal (it is blocked on a lock the waiter holds) */
	int joined;              /* `from` is the thread's own end, which another thread joins (from_site: the join) */
	char thread[64];
	char from_site[192];
	char to_frames[FINDING_MAX_FRAMES][192];
	size_t nframes;
	char from_frames[FINDING_MAX_FRAMES][192];   /* the stack `from` was taken in; none: from_site alone */
	size_t nfrom_frames;
	int from_partial;        /* its function had returned: outer frames as they were when `to` was wanted */
};

struct finding {
	enum finding_kind kind;
	int correctness;         /* a bug whatever it costs (a cycle, a hang): ranked first, share 0 */
	enum severity severity;
	double share;            /* fraction of the lost time it explains, 0..1 */
	int suspected;           /* inferred without direct evidence */
	int external;            /* caused outside the program (other processes): never high */
	int at_most_medium;      /* its evidence fits another cause as well: never high */
	int threads;             /* the thread count it was found at */
	double wall_ns;          /* measured wall time at that count */
	double predicted_wall_ns;/* what-if: wall time without this component */
	char objects[FINDING_MAX_OBJECTS][256];
	size_t nobjects;
	struct { const char *key; double value; } evidence[FINDING_MAX_EVIDENCE];
	size_t nevidence;
	char summary[1024];
	char fix[512];
	struct finding_edge edges[FINDING_MAX_EDGES];
	size_t nedges;
};

struct findings {
	struct finding *v;
	size_t n, cap;
};

/* A run and its stack, as the findings engine sees it. */
struct run_view {
	const struct model *m;
	const struct speedup *s;
};

/* Findings for target against ref (a sweep step: ref is the reference run,
 * usually 1 thread) or, with ref NULL, for a single run on its own. */
void findings__diagnose(struct findings *out, const struct run_view *ref, const struct run_view *target);
void findings__sort(struct findings *f);   /* most important first */
/* The report's first line: the first finding in one sentence (its kind,
 * share and the first sentence of its summary, and whether it came from
 * outside the program: other processes' load), where it is a correctness
 * bug or at least of medium severity; 0: none stands out. */
int findings__main_cause(const struct findings *f, char *buf, size_t size);

/* Does this lock's ownership move between threads often enough that its
 * cache line's travels explain on-CPU inflation (docs/findings.md)? */
struct object_row;
int findings__bouncing(const struct object_row *row, double wall_ns);
/* "main", the start routine's name, the thread's name, or its address. */
struct cv_thread_rec;
const char *findings__thread_label(const struct model *m, const struct cv_thread_rec *t, char *buf, size_t size);
/* A new finding in f, zeroed but for kind and share (deadlock.c adds its own). */
struct finding *findings__add(struct findings *f, enum finding_kind kind, double share);
void findings__free(struct findings *f);

struct json_object *findings__json(const struct findings *f);
void findings__print(const struct findings *f, FILE *out);

#endif
