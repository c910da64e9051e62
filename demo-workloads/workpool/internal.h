/* internal.h — workpool's private types, grouped by the file that defines
 * their functions. Nothing here is part of the public API; tests include it to
 * reach the deques directly.
 */
#ifndef WP_INTERNAL_H
#define WP_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "workpool.h"
#include "atomic.h"
#include "ring.h"

#define WP_CACHE_LINE 64
#define WP_ALIGNED __attribute__((aligned(WP_CACHE_LINE)))
#define WP_LIKELY(x)   __builtin_expect(!!(x), 1)
#define WP_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Tiered asserts: cheap ones always compile and run in debug builds; the
 * expensive ones (O(n) walks) only with WP_EXPENSIVE_ASSERTS. Disabled code
 * still compiles (mimalloc types.h style). */
#ifndef NDEBUG
static const bool wp__config_asserts = true;
#else
static const bool wp__config_asserts = false;
#endif
#ifdef WP_EXPENSIVE_ASSERTS
static const bool wp__config_expensive_asserts = true;
#else
static const bool wp__config_expensive_asserts = false;
#endif
#define WP_ASSERT(cond)                                                        \
	do { if (wp__config_asserts && !(cond)) wp__assert_fail(#cond, __FILE__, __LINE__); } while (0)
#define WP_ASSERT_EXPENSIVE(cond)                                              \
	do { if (wp__config_expensive_asserts && !(cond)) wp__assert_fail(#cond, __FILE__, __LINE__); } while (0)

/* Impossible failures (pthread_mutex_lock returning EINVAL on our own
 * mutex, ...) abort with a message: error.c. */
__attribute__((noreturn, cold)) void wp__assert_fail(const char *what,
                                                    const char *file, int line);
__attribute__((noreturn, cold)) void wp__abort_errno(const char *what, int err);
void wp__mutex_init(pthread_mutex_t *m);
void wp__cond_init_monotonic(pthread_cond_t *c);
void wp__lock(pthread_mutex_t *m);
void wp__unlock(pthread_mutex_t *m);
uint64_t wp__now_ns(void);
/* CLOCK_MONOTONIC deadline `ns` from now, for pthread_cond_timedwait. */
struct timespec wp__deadline(uint64_t ns);

/* A contention counter: single-writer (a worker's own) or shared (the
 * pool's counter for non-worker threads, updated with an atomic add). */
struct wp__ctr {
	_Atomic uint64_t *p;
	bool shared;
};

static inline void wp__ctr_inc(struct wp__ctr c)
{
	if (c.shared)
		wp__fetch_add_relaxed(c.p, 1);
	else
		wp__counter_inc(c.p);
}

/* Seed 000's measurement: try the lock; only when it is busy count one
 * contended acquisition and block in the real lock. */
static inline void wp__lock_counted(pthread_mutex_t *m, struct wp__ctr c)
{
	if (WP_UNLIKELY(pthread_mutex_trylock(m) != 0)) {
		wp__ctr_inc(c);
		wp__lock(m);
	}
}

/* A source of tasks for the batch paths: an array, or fn(first + i). */
struct wp__src {
	const wp_task *tasks; /* NULL: the range form */
	wp_fn fn;
	uintptr_t first;
};

static inline wp_task wp__src_get(const struct wp__src *s, size_t i)
{
	if (s->tasks)
		return s->tasks[i];
	return (wp_task){ s->fn, (void *)(s->first + i) };
}

/* ------------------------------------------------------------------------ */
/* fifo.c — a mutex-protected FIFO: the global queue, the injector and the   */
/* per-worker mailboxes.                                                      */
/* ------------------------------------------------------------------------ */

struct wp__fifo {
	pthread_mutex_t lock;
	struct wp__ring ring;   /* under lock */
	_Atomic size_t len;     /* ring length, written under lock, peeked
	                           without it (relaxed: a hint, never trusted
	                           for correctness except by the park recheck,
	                           which runs after a seq_cst fence) */
} WP_ALIGNED;

int wp__fifo_init(struct wp__fifo *f, size_t capacity);
void wp__fifo_destroy(struct wp__fifo *f);
/* Appends src[start + k * stride] for k < count. */
int wp__fifo_push(struct wp__fifo *f, const struct wp__src *src, size_t start,
                  size_t stride, size_t count, struct wp__ctr contended);
/* Takes one task from the front; false if empty. */
bool wp__fifo_pop(struct wp__fifo *f, wp_task *out, struct wp__ctr contended);
/* Takes up to max tasks from the front into out; returns how many. */
size_t wp__fifo_pop_many(struct wp__fifo *f, wp_task *out, size_t max,
                         struct wp__ctr contended);
static inline size_t wp__fifo_peek_len(struct wp__fifo *f)
{
	return wp__load_relaxed(&f->len);
}

/* ------------------------------------------------------------------------ */
/* ldeque.c — per-worker deque behind a mutex (WP_POLICY_LOCKED).            */
/* ------------------------------------------------------------------------ */

struct wp__ldeque {
	pthread_mutex_t lock;
	struct wp__ring ring;   /* owner end: back (tail); thieves: front */
	_Atomic size_t len;     /* peek hint, written under lock */
} WP_ALIGNED;

int wp__ldeque_init(struct wp__ldeque *d, size_t capacity);
void wp__ldeque_destroy(struct wp__ldeque *d);
/* Appends at the back (the owner's end); any thread, under the lock. */
int wp__ldeque_push(struct wp__ldeque *d, const struct wp__src *src,
                    size_t start, size_t stride, size_t count,
                    struct wp__ctr contended);
bool wp__ldeque_pop_owner(struct wp__ldeque *d, wp_task *out,
                          struct wp__ctr contended);
/* Takes ceil(len / 2) tasks (at least one when not empty) from the front
 * into *scratch (grown as needed, oldest first); returns how many. */
size_t wp__ldeque_steal_half_thief(struct wp__ldeque *d, wp_task **scratch,
                                   size_t *scratch_cap,
                                   struct wp__ctr contended);
static inline size_t wp__ldeque_peek_len(struct wp__ldeque *d)
{
	return wp__load_relaxed(&d->len);
}

/* ------------------------------------------------------------------------ */
/* deque.c — the Chase-Lev deque (WP_POLICY_CHASE_LEV).                       */
/* ------------------------------------------------------------------------ */

/* A task in a slot: two words, each a relaxed atomic (a thief may read a
 * slot while the owner writes it after wrap-around; the CAS on top decides
 * whether what it read counts, so tearing between the words is harmless). */
struct wp__cl_slot {
	_Atomic uintptr_t fn;
	_Atomic uintptr_t arg;
};

struct wp__cl_buf {
	size_t mask;                    /* capacity - 1, capacity a power of 2 */
	struct wp__cl_buf *retired_next; /* owner-only list of replaced buffers */
	struct wp__cl_slot slots[];
};

enum {
	/* The most tasks one batch steal may claim with its single CAS on
	 * top. The owner takes an element without looking for claims in
	 * flight only when it lies at least this far above top (deque.c,
	 * "Batch steals"). */
	WP__CL_BATCH_MAX = 1024,
	/* The most tasks one take moves into the owner's private zone (one
	 * fence for all of them; deque.c, "Batch takes"): the default of
	 * wp_config.take_batch, and its limit. */
	WP__CL_TAKE_MAX = 32,
	WP__CL_TAKE_LIMIT = 1024,
};

struct wp__deque {
	/* Written by thieves (CAS) and by the owner on the last element. */
	_Atomic size_t top WP_ALIGNED;
	/* Batch thieves between announcing a claim and finishing it (seq_cst
	 * RMWs). On top's line: a thief writes that line anyway, and the
	 * owner reads it right after top. */
	_Atomic unsigned claiming;
	/* Set by a thief that found nothing visible; the owner then publishes
	 * its private zone (wp__deque_share_owner). A hint. */
	_Atomic bool wanted;
	/* Written by the owner only; read by thieves. */
	_Atomic size_t bottom WP_ALIGNED;
	_Atomic(struct wp__cl_buf *) buf;
	struct wp__cl_buf *retired;     /* owner only; freed at destroy */
	/* Owner only, on its own line (written on every pop). */
	struct {
		/* [bottom, hi) is the private zone: taken from the deque by the
		 * owner's last take, not yet run. hi == bottom: none. */
		size_t hi;
		size_t top_seen;        /* top at the last take: sizes the next */
		size_t take_max;        /* most tasks per take (>= 1) */
	} WP_ALIGNED own;
};

/* Result of a steal or a contended pop. */
enum {
	WP__CL_LOST = -1,  /* lost the CAS on top to another thread */
	WP__CL_EMPTY = 0,
	WP__CL_GOT = 1,
};

/* start: the initial value of top and bottom (tests start near SIZE_MAX to
 * run the indices past wrap-around). */
int wp__deque_init(struct wp__deque *d, size_t capacity, size_t start);
void wp__deque_destroy(struct wp__deque *d);
int wp__deque_reserve_owner(struct wp__deque *d, size_t n);
int wp__deque_push_owner(struct wp__deque *d, wp_task t);
/* Pushes src[start + k * stride], k < count, with one publication of bottom
 * (one release fence for the batch). All or nothing: 0 or -ENOMEM. */
int wp__deque_push_many_owner(struct wp__deque *d, const struct wp__src *src,
                              size_t start, size_t stride, size_t count);
/* The newest task: from the private zone, or by a take (one fence for up to
 * own.take_max tasks, WP__CL_TAKE_MAX unless the owner set it before first
 * use). WP__CL_GOT, WP__CL_EMPTY or WP__CL_LOST. */
int wp__deque_pop_owner(struct wp__deque *d, wp_task *out);
/* Owner: publishes the private zone so thieves can take it, and clears
 * `wanted`. Returns how many tasks became visible. */
size_t wp__deque_share_owner(struct wp__deque *d);
/* Whether a thief asked the owner to share (relaxed; a hint). */
static inline bool wp__deque_wanted(struct wp__deque *d)
{
	return wp__load_relaxed(&d->wanted);
}
/* *seen (may be NULL): bottom - top as this thief observed it. */
int wp__deque_steal_thief(struct wp__deque *d, wp_task *out, size_t *seen);
/* Claims ceil(n / 2) of the n tasks it sees in d, at most `max` (clamped to
 * WP__CL_BATCH_MAX), with one CAS on top. The caller must own `into` (its own
 * deque, never d): the claimed tasks are copied above into's bottom, all but
 * the newest are published there (the caller should wake thieves for them),
 * and the newest is returned in *out. *got: how many were claimed. Returns
 * WP__CL_GOT, WP__CL_EMPTY, or WP__CL_LOST (another claim moved top first;
 * nothing is published). Falls back to a single steal if `into` cannot grow. */
int wp__deque_steal_batch_thief(struct wp__deque *d, struct wp__deque *into,
                                size_t max, wp_task *out, size_t *got);
/* bottom - top, clamped at 0; racy hint for anyone. */
size_t wp__deque_peek_len(struct wp__deque *d);
/* Invariants, checked from the owner between operations (or when no thread
 * touches the deque): top <= bottom <= hi, hi - top <= capacity, capacity a
 * power of two >= 16, every retired buffer smaller than its successor and
 * the current one. */
bool wp__deque_valid(struct wp__deque *d);
size_t wp__deque_capacity(struct wp__deque *d);
size_t wp__deque_retired_count(struct wp__deque *d);

/* ------------------------------------------------------------------------ */
/* cancel.c                                                                   */
/* ------------------------------------------------------------------------ */

struct wp_token {
	_Atomic bool cancelled;
	_Atomic unsigned refs;
};

/* Sets the calling thread's current token (wp_current_token); returns the
 * previous one, to restore after the job. */
wp_token *wp__token_swap_current(wp_token *token);

/* ------------------------------------------------------------------------ */
/* future.c — futures and the job record behind every task that has a        */
/* future or a token.                                                         */
/* ------------------------------------------------------------------------ */

struct wp_future {
	_Atomic int state;        /* wp_future_state; release on completion */
	_Atomic unsigned refs;    /* the caller's (if any) + the queued task's */
	_Atomic unsigned helpers; /* workers parked in park.c waiting on it */
	int error;                /* written before state (release) */
	uint64_t value;
	pthread_mutex_t lock;     /* waiters that block (non-workers, or
	                             helping off) */
	pthread_cond_t cond;
	unsigned waiters;         /* under lock */
	wp_pool *pool;
	/* The job. */
	wp_call_fn call;          /* or fn, for wp_spawn_ex with a token */
	wp_fn fn;
	void *arg;
	wp_token *token;
};

struct wp__worker;

/* The trampoline stored in a slot for a job: fn = wp__job_run, arg = the
 * wp_future. Workers compare fn against it to count and drop jobs. */
void wp__job_run(void *job);
struct wp_future *wp__job_new(wp_pool *pool, wp_call_fn call, wp_fn fn,
                              void *arg, wp_token *token, bool caller_ref);
/* Runs or cancels the job; returns true if the function ran. */
bool wp__job_execute(struct wp_future *job);
/* Completes a job that will never run: broken promise. */
void wp__job_drop(struct wp_future *job);
/* Frees a job whose submission failed (never queued). */
void wp__job_discard_unqueued(struct wp_future *job);

/* ------------------------------------------------------------------------ */
/* pool.c — workers, the scheduling loop, lifecycle, quiescence.              */
/* ------------------------------------------------------------------------ */

struct wp__stats {
#define WP__STATS_ATOMIC(field, text) _Atomic uint64_t field;
	WP_WORKER_STATS_MAP(WP__STATS_ATOMIC)
#undef WP__STATS_ATOMIC
};

struct wp__worker {
	/* The worker's own queue; one of the two is used, by policy. Each is
	 * cache-line aligned by its type. */
	struct wp__deque cl;
	struct wp__ldeque ld;

	/* Owner-private and owner-written state, one line apart from the queues
	 * thieves touch. */
	struct {
		wp_task lifo;
		bool lifo_full;
		unsigned lifo_streak;
		unsigned tick;
		uint64_t rng;
		wp_task *scratch;     /* steal/drain staging */
		size_t scratch_cap;
		/* Quiescence (wp_wait_idle, shutdown): tasks this worker
		 * submitted and completed; release stores, single writer. */
		_Atomic uint64_t submitted;
		_Atomic uint64_t completed;
		struct wp__stats st;
	} WP_ALIGNED own;

	/* Submissions to this worker from other threads (Chase-Lev only: only
	 * the owner may push its deque). */
	struct wp__fifo mailbox;

	/* Parking: all under pool->park.lock. */
	pthread_cond_t park_cond;
	bool parked;
	struct wp_future *waiting_on;

	pthread_t thread;
	bool thread_started;
	unsigned index;
	wp_pool *pool;
} WP_ALIGNED;

enum wp__state {
	WP__PAUSED,   /* created with start_paused; no threads yet */
	WP__RUNNING,
	WP__CLOSING,  /* shutdown: workers exit once quiescent */
	WP__JOINED,
};

struct wp_pool {
	/* Read-only after creation (one shared-clean line for the hot path). */
	struct {
		wp_policy policy;
		unsigned n;
		bool stealing;
		bool lifo;
		bool helping;
		bool bounded;            /* capacity > 0 */
		size_t capacity;
		uint64_t idle_spin_ns;
		struct wp__worker *w;
	} WP_ALIGNED cfg;
	wp_config config;
	char name[16];

	/* Written once each (shutdown). */
	_Atomic int state WP_ALIGNED;
	_Atomic bool closed;        /* no more submissions from outside */
	_Atomic bool discarding;    /* queued tasks are dropped, not run */
	pthread_mutex_t lifecycle;  /* serialises paused-pool prefill against
	                               wp_start and shutdown */

	/* The global injector; under WP_POLICY_GLOBAL, the global queue. */
	struct wp__fifo injector;

	/* Parking (park.c). */
	struct {
		pthread_mutex_t lock;
		_Atomic unsigned sleeping; /* parking or parked workers */
		unsigned *stack;           /* parked worker indices */
		unsigned n_parked;
	} WP_ALIGNED park;

	/* wp_wait_idle waiters. */
	struct {
		pthread_mutex_t lock;
		pthread_cond_t cond;
		_Atomic unsigned waiters;
	} WP_ALIGNED idle;

	/* Admission (submit.c), used only when bounded. */
	struct {
		_Atomic size_t queued;    /* accepted, not started */
		pthread_mutex_t lock;
		pthread_cond_t cond;
		_Atomic unsigned waiters;
		_Atomic uint64_t max_queued;
	} WP_ALIGNED admit;

	/* Submissions from non-worker threads. */
	struct {
		_Atomic unsigned inflight; /* between the closed check and the
		                              task being counted and queued */
		_Atomic uint64_t submitted;
		_Atomic uint64_t contended;
		_Atomic uint64_t wakes;
		_Atomic uint64_t rejected;
		_Atomic uint64_t blocked;
		_Atomic uint64_t dropped;
		_Atomic uint64_t unplaced; /* counted, then out of memory:
		                              quiescence treats them as done */
		_Atomic unsigned deal_next;
	} WP_ALIGNED ext;
};

/* The calling thread's worker (any pool), or NULL. */
extern __thread struct wp__worker *wp__tls_self;
static inline struct wp__worker *wp__self_in(const wp_pool *pool)
{
	struct wp__worker *w = wp__tls_self;
	return (w && w->pool == pool) ? w : NULL;
}

/* Runs one task on worker w: admission release, drop-or-run, counters. */
void wp__run_task(struct wp__worker *w, wp_task t);
/* Finds a task for w (LIFO slot, own queue, mailbox, injector, steal). */
bool wp__find_task(struct wp__worker *w, wp_task *out);
/* Whether w could find work now (the park recheck; racy peeks). */
bool wp__work_visible(struct wp__worker *w);
/* All accepted work completed (see pool.c for the argument). */
bool wp__quiescent(wp_pool *pool);
/* Pushes onto w's own queue as its owner (the worker itself, or anyone
 * while the pool is paused and holds pool->lifecycle). */
size_t wp__push_own(struct wp__worker *w, const struct wp__src *src,
                    size_t start, size_t stride, size_t count,
                    struct wp__ctr contended);
/* The contention counter a thread should charge (its worker's or the
 * pool's shared one). */
static inline struct wp__ctr wp__ctr_for(wp_pool *pool, struct wp__worker *self)
{
	if (self)
		return (struct wp__ctr){ &self->own.st.lock_contended, false };
	return (struct wp__ctr){ &pool->ext.contended, true };
}
int wp__start_locked(wp_pool *pool);

/* ------------------------------------------------------------------------ */
/* park.c — idle workers park on their condvar; no lost wake-ups.             */
/* ------------------------------------------------------------------------ */

/* Parks w until woken, work may be visible, the pool may be done, `fut` (if
 * not NULL) is ready, or the deadline (if not NULL) passed. Returns false
 * on timeout. */
bool wp__park(struct wp__worker *w, struct wp_future *fut,
              const struct timespec *deadline);
/* Wakes one parked worker, if any is parked (no signal otherwise). `self`
 * is the calling worker, for the wakes counter (NULL: a non-worker). */
void wp__wake_one(wp_pool *pool, struct wp__worker *self);
/* Wakes up to n parked workers. */
void wp__wake_some(wp_pool *pool, struct wp__worker *self, size_t n);
/* Wakes worker k if it is parked. */
void wp__wake_worker(wp_pool *pool, struct wp__worker *self, unsigned k);
void wp__wake_all(wp_pool *pool, struct wp__worker *self);
/* Wakes the workers parked waiting on fut (helping waits). */
void wp__wake_helpers(wp_pool *pool, struct wp_future *fut);
/* After a worker made stealable work: wakes a sleeper if stealing is on. */
void wp__notify_stealable(wp_pool *pool, struct wp__worker *self, size_t n);
/* A worker became idle: wakes wp_wait_idle callers if quiescent. */
void wp__notify_idle(wp_pool *pool);

/* ------------------------------------------------------------------------ */
/* submit.c — admission and placement.                                        */
/* ------------------------------------------------------------------------ */

/* One task finished waiting in a queue (started, cancelled or dropped):
 * releases its admission slot. */
void wp__admit_release(wp_pool *pool);

#endif /* WP_INTERNAL_H */
