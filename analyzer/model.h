/* model.h — a profile summed per object and per thread (model.c). */
#ifndef CONVOY_MODEL_H
#define CONVOY_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "convoy/profile.h"

struct profile;
struct profile_object;
struct syms;

/* How time blocked on an object counts in the speedup stack (speedup.c). */
enum wait_class {
	WAIT_NONE,      /* no blocking time of its own */
	WAIT_LOCK,      /* waiting for another thread to release it */
	WAIT_PARK,      /* parked until another thread wakes it: condvars, ... */
	WAIT_BARRIER,   /* waiting for the other threads of a round */
};
enum wait_class wait_class_of(uint32_t kind);   /* enum cv_obj_kind */
/* The same for one object: a futex word's class depends on how it was used. */
enum wait_class wait_class_of_obj(const struct profile_object *o);
/* Whether the shim counted every acquisition of o: not a futex word's,
 * which it sees only when a thread waits on it (its acquisitions are its
 * woken waits, its uncontended ones never enter the kernel). */
int model__acquisitions_seen(const struct profile_object *o);
/* What every report says of such a word used as a lock, in one wording. */
#define MODEL_FUTEX_LOCK_UNSEEN                                                                    \
	"a lock on a futex word enters the kernel only when contended: how often it is taken and " \
	"how long it is held are not seen"

/* Object kinds, counted from the X-macro. */
#define CV_X(sym, val, name) + 1
enum { CV_OBJ_KIND_COUNT = 0 CV_OBJ_KINDS(CV_X) };
#undef CV_X

/* The cost of parking and waking, over condvars, semaphores, barriers and
 * futexes (docs/report-json.md, "park_wake"). */
struct park_totals {
	uint64_t parks;            /* waits that blocked (barriers: arrivals but the last of a round) */
	uint64_t park_ns;          /* their time */
	uint64_t wakeups;          /* parks that ended with a wake the shim saw sent */
	uint64_t wake_latency_ns, max_wake_latency_ns;   /* from the wake sent to the waiter running */
	uint64_t wakes_sent;       /* signals, broadcasts, posts, FUTEX_WAKE-type calls */
	uint64_t wakes_unwaited;   /* ... that found nobody waiting */
	uint64_t futile_wakes;     /* condvar wake-ups followed by a wait again without unlocking */
	uint64_t broadcast_woken;  /* waiters claimed by broadcasts (the fan-out) */
	uint64_t broadcast_back_to_sleep;   /* ... of those, futile: went back to sleep */
	uint64_t broadcasts;       /* broadcasts that found a waiter */
};

struct object_row {
	const struct profile_object *obj;
	char name[256];
	size_t site_len;        /* name[0..site_len): the name without " (generation N)" */
	uint32_t ordinal;       /* among the objects of the same name, in creation order: with the
	                         * name (which holds the creating site and generation) it says which
	                         * object this is across two profiles of one program */
	char type[64];          /* mutexes: "normal", "recursive robust", ... */
	struct cv_stats total;
	size_t nthreads;        /* threads that used it */
	double typical_hold_ns; /* hold time averaged per acquisition over threads (0: no sample) */
	uint64_t hold_samples;  /* the holds it was averaged from */
	const struct object_row *monitor;   /* condvars: the mutex their waits named, or NULL */
	const char *inside;     /* what the runtime state it lies in is (syms__data_note), or NULL */
};

struct model {
	const struct profile *p;
	struct syms *syms;           /* what named the rows; call stacks (callstacks.h) use it */
	struct object_row *rows;     /* rows[id] */
	/* Each object's per-thread records: p->stats[stats_of[stats_start[id] ..
	 * stats_start[id + 1] - 1]], so a row reads only its own. */
	size_t *stats_start, *stats_of;
	struct object_row **locks;   /* mutexes, rwlocks, spinlocks, futex words used as locks; most wait first */
	size_t nlocks;
	struct object_row **conds;
	size_t nconds;
	/* Per thread index: time blocked, by wait class. */
	uint64_t *thread_lock_wait, *thread_cond_wait, *thread_barrier_wait;
	uint64_t total_lock_wait;   /* the locks', but for futex words used to park: their waits are parks */
	uint64_t total_thread_ns;
	int main_in_team;   /* the main thread waited at a barrier other threads waited at too */
	double wall_ns;
	/* The other families and the park/wake numbers. */
	struct object_row **sems, **barriers, **futexes, **parks;   /* most wait first */
	size_t nsems, nbarriers, nfutexes, nparks;   /* parks: every condvar, semaphore, barrier, futex */
	struct park_totals park;                    /* the whole process */
	struct park_totals *thread_park;            /* per thread index */
	uint64_t *thread_spin_ns;                   /* on-CPU waiting for spinlocks */
	uint64_t *thread_progress;                  /* progress units (convoy.h), per thread */
	uint64_t *thread_kind_wait;                 /* [thread * CV_OBJ_KIND_COUNT + kind]: wait_ns */
	uint64_t total_progress;
	const struct cpuprof *cpu;   /* where on-CPU time went (cpuprof.h); NULL: not sampled */
	const struct model *hang;    /* the same process's snapshot at a hang (--on-hang auto or continue;
				      * deadlock.h); NULL: none */
};

void model__build(struct model *m, const struct profile *p, struct syms *syms);
/* A row of m->locks: a mutex, rwlock or spinlock, or a futex word threads
 * waited on as a lock (one used to park is a park). */
bool model__lock_like(const struct object_row *row);
/* A futex word threads waited on, and not as a lock: parked on. One that
 * nobody waited on (a lock's unlock whose wake found nobody) is neither. */
bool model__futex_parked_on(const struct object_row *row);
void model__free(struct model *m);

/* The park/wake numbers of one thread's record (or an object's total) of an
 * object of this kind, added to t. */
void model__park_add(struct park_totals *t, uint32_t kind, const struct cv_stats *s);

/* Objects made at one site, summed: text reports show "1,000 ×
 * mutex@make_pool (pool.c:42)" on one line. The site: the kind, the name
 * without its generation (so the objects a pool remakes at one address,
 * generation after generation, are one site's), and what a table's cells
 * show of the object itself (a type, a futex word's role, a barrier's
 * count). */
struct object_group {
	const struct object_row *first;   /* the one that waited most */
	size_t count;
	size_t site_count;                /* the site's objects, those shown apart too */
	uint32_t generation_min, generation_max;
	struct cv_stats total;
	size_t nthreads;                  /* records summed (threads × objects) */
};

/* The groups of rows[0..n), most wait first: a row that holds a tenth of
 * their wait, or more than half of its site's, alone; its site's others
 * together. The caller frees *out. */
size_t model__group(struct object_row *const *rows, size_t n, struct object_group **out);
/* A group of more than one object as one row: *sum is its first row with
 * the group's totals and the name "226 × mutex@pigz+0x11000", note the
 * line under it (what -v shows); false, and nothing written, for a group
 * of one, which is shown as the object it is. */
bool model__group_row(const struct object_group *g, struct object_row *sum, char *note, size_t note_size);
/* The objects in groups g[from..to). */
size_t model__group_objects(const struct object_group *g, size_t from, size_t to);

/* Two rows of two profiles are the same object (same name, site, generation
 * and ordinal). */
int model__same_object(const struct object_row *a, const struct object_row *b);
/* Orders rows by that identity (for matching two models in one pass). */
int model__cmp_identity(const struct object_row *a, const struct object_row *b);

const char *kind_name(uint32_t kind);
const char *exit_text(uint32_t reason);   /* enum cv_exit_reason */

#endif
