/* workpool.h — the reference scheduler library.
 *
 * A pool of worker threads that runs small tasks, with the scheduling policy
 * chosen when the pool is created, so the seed experiments can compare them on
 * identical work:
 *
 *   WP_POLICY_GLOBAL      one FIFO behind one mutex; every worker takes every
 *                         task from it (trylock first, a failure is counted as a
 *                         contended acquisition, then lock) — seed 000's scene 01.
 *   WP_POLICY_LOCKED      one deque per worker behind its own mutex; the owner
 *                         works at the back, an idle worker takes half of a
 *                         random victim's deque from the front — scene 02.
 *   WP_POLICY_CHASE_LEV   one lock-free Chase-Lev deque per worker (C11 atomics,
 *                         the orders of Lê et al., PPoPP 2013), random victim.
 *                         A thief claims half of what it sees (at most 1024
 *                         tasks) with one CAS; the owner takes up to 32 per
 *                         fence (docs/workpool.md, "Batch steals", "Batch
 *                         takes").
 *
 * Around the per-worker queues: a global injector for submissions from threads
 * that are not workers, a LIFO slot for the task a worker just spawned, an idle
 * spin budget before parking on a pthread condition variable, futures,
 * cooperative cancellation, bounded admission and drain-or-discard shutdown.
 * docs/workpool.md explains the algorithms and the parking protocol.
 *
 * Conventions: functions return 0 (or a count, where stated) on success and a
 * negative errno on failure; wp_strerror() names them. Every public name starts
 * with wp_ / WP_. The library is thread-safe unless a function says otherwise.
 * Link with $(BUILD)/libworkpool.a and -pthread.
 */
#ifndef WORKPOOL_H
#define WORKPOOL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Errors (error.c)                                                          */
/* ------------------------------------------------------------------------ */

/* Every error the library returns, negated: X(NAME, errno value, meaning). */
#define WP_ERRNO_MAP(X)                                                       \
	X(SHUTDOWN,  ESHUTDOWN, "the pool is shut down (or shutting down)")    \
	X(AGAIN,     EAGAIN,    "the pool is at capacity (try-submit)")       \
	X(TIMEDOUT,  ETIMEDOUT, "the timeout expired")                        \
	X(CANCELED,  ECANCELED, "the task was cancelled")                     \
	X(BROKEN,    EPIPE,     "broken promise: the task was dropped unrun") \
	X(INVAL,     EINVAL,    "invalid argument")                           \
	X(NOMEM,     ENOMEM,    "out of memory")                              \
	X(DEADLK,    EDEADLK,   "the wait could never end (e.g. paused pool, " \
	                        "or called from one of the pool's workers)")  \
	X(ALREADY,   EALREADY,  "already done (pool already started)")        \
	X(RANGE,     ERANGE,    "worker index out of range")                  \
	X(BUSY,      EBUSY,     "the future is not ready yet")

/* WP_ESHUTDOWN, WP_EAGAIN, ...: the negative values functions return. */
enum wp_error {
#define WP__ERR_ENUM(name, value, text) WP_E##name = -(value),
	WP_ERRNO_MAP(WP__ERR_ENUM)
#undef WP__ERR_ENUM
};

/* A static string for a (negative) error from this library, or for any
 * negative errno; "success" for 0. Never NULL. */
const char *wp_strerror(int err);

/* ------------------------------------------------------------------------ */
/* Configuration (pool.c)                                                    */
/* ------------------------------------------------------------------------ */

#define WP_POLICY_MAP(X)                                                      \
	X(GLOBAL,    "global")                                                \
	X(LOCKED,    "locked")                                                \
	X(CHASE_LEV, "chase-lev")

typedef enum wp_policy {
#define WP__POLICY_ENUM(name, text) WP_POLICY_##name,
	WP_POLICY_MAP(WP__POLICY_ENUM)
#undef WP__POLICY_ENUM
	WP_POLICY_COUNT
} wp_policy;

/* "global", "locked", "chase-lev"; NULL for an unknown value. */
const char *wp_policy_name(wp_policy policy);
/* Parses one of the names above (also "stealing" for WP_POLICY_CHASE_LEV,
 * "mutex-deque" for WP_POLICY_LOCKED). Returns 0 or WP_EINVAL. */
int wp_policy_parse(const char *name, wp_policy *out);

typedef struct wp_config {
	wp_policy policy;      /* default WP_POLICY_CHASE_LEV */
	unsigned workers;      /* default 0: the number of online CPUs */
	/* An idle worker polls for work this long before it parks. 0 parks at
	 * once (seed 002's --idle-spin 0). Default 10000 (10 µs). */
	uint64_t idle_spin_ns;
	/* Bound on tasks accepted but not yet started, counted over the whole
	 * pool; submissions from outside the pool wait, fail or time out when it is
	 * reached (see the admission functions). 0 = unbounded (default).
	 * Submissions from the pool's own workers are never refused or blocked for
	 * capacity (they would deadlock the pool; seed 003). */
	size_t capacity;
	/* A worker waiting on a future runs other ready tasks meanwhile. Default
	 * true. false: the worker blocks, so nested waits can starve the pool
	 * (demo nested_submit). */
	bool helping;
	/* Idle workers take work from other workers' queues. Default true.
	 * Ignored by WP_POLICY_GLOBAL (there is only one queue). */
	bool stealing;
	/* wp_spawn() from inside a worker puts the task in the worker's LIFO slot
	 * (run next, not stealable); the task it displaces goes to the deque.
	 * Default true. Ignored by WP_POLICY_GLOBAL. */
	bool lifo_slot;
	/* Create the pool without threads; tasks submitted meanwhile wait in the
	 * queues until wp_start(). Lets a benchmark fill the queues first. Default
	 * false. */
	bool start_paused;
	/* Seed of the per-worker victim-choice RNG (xorshift; each worker mixes in
	 * its index). Same seed, same victim sequence per worker. Default 1. */
	uint64_t seed;
	/* Initial slots of each per-worker deque (rounded up to a power of two,
	 * at least 16); deques grow by doubling. Default 1024. */
	size_t deque_initial;
	/* Thread name prefix: workers are named "<name>-<i>" (truncated to 15
	 * bytes). Default "wp". Copied at creation. */
	const char *name;
	/* WP_POLICY_CHASE_LEV: the most tasks one take moves from a worker's
	 * deque into its private zone — one fence for all of them, popped
	 * with no atomic operation, and at most an eighth of the deque.
	 * Nobody else can take them until the worker shares them, which it
	 * does at its next pop once a thief found nothing to steal: like the
	 * LIFO slot, a task that blocks (outside wp_future_wait) on one of
	 * them can wait forever. 1 (the default; 0 means it too): every queued
	 * task stays stealable. 32 speeds up tiny tasks (weight 0 to 4); at
	 * most 1024. */
	unsigned take_batch;
	/* Each worker starts on its own CPU — the (index mod n)-th of the n in
	 * the affinity mask it inherited — and then takes the whole mask back,
	 * so the kernel stays free to move it. A placement hint, not pinning:
	 * the kernel places a new thread by load and sees a just-started worker
	 * as idle, so it often starts two workers on one CPU and separates them
	 * only milliseconds later (seed 000 at two workers: up to 8 ms of a
	 * 25 ms run). Default true. */
	bool spread_start;
} wp_config;

/* The defaults documented above. */
wp_config wp_config_default(void);

/* ------------------------------------------------------------------------ */
/* Pool lifecycle (pool.c)                                                   */
/* ------------------------------------------------------------------------ */

typedef struct wp_pool wp_pool;

/* Creates a pool; config NULL means wp_config_default(). Starts the workers
 * unless config->start_paused. Returns 0, WP_EINVAL (bad policy, workers >
 * 1024), WP_ENOMEM, or a negative errno from pthread_create. */
int wp_pool_create(wp_pool **out, const wp_config *config);

/* Starts the workers of a pool created with start_paused. WP_EALREADY if they
 * run already, WP_ESHUTDOWN after shutdown. */
int wp_start(wp_pool *pool);

/* Waits until every task accepted so far has completed (run, or completed as
 * cancelled), including tasks those tasks spawned. WP_EDEADLK when called
 * from one of the pool's workers, or while the pool is paused with work
 * queued. */
int wp_wait_idle(wp_pool *pool);

typedef enum wp_shutdown_mode {
	/* Stop accepting submissions from outside the pool, run every accepted
	 * task (and what those spawn), then join the workers. */
	WP_SHUTDOWN_DRAIN,
	/* Stop accepting, let running tasks finish, drop every queued task
	 * without running it (its future becomes broken: WP_EBROKEN), join. */
	WP_SHUTDOWN_DISCARD,
} wp_shutdown_mode;

/* Stops the pool as the mode says and joins the workers. After it, every
 * submission returns WP_ESHUTDOWN. A paused pool is started to drain. Safe to
 * call more than once from the owning thread (later calls return 0 at once);
 * not from several threads concurrently. WP_EDEADLK from a worker. While it
 * drains, tasks already accepted may still spawn more (they run too);
 * outside threads get WP_ESHUTDOWN from the moment it is called. */
int wp_shutdown(wp_pool *pool, wp_shutdown_mode mode);

/* wp_shutdown(pool, WP_SHUTDOWN_DRAIN) if not done yet, then frees the pool.
 * Futures still held by the caller stay valid. NULL is a no-op. Calling it
 * from one of the pool's own workers is a bug: it aborts with a message. */
void wp_pool_destroy(wp_pool *pool);

/* The number of workers. */
unsigned wp_workers(const wp_pool *pool);
/* The pool's policy after defaults were applied. */
wp_policy wp_pool_policy(const wp_pool *pool);
/* The calling thread's worker index in this pool, or -1 if it is not one of
 * this pool's workers. */
int wp_current_worker(const wp_pool *pool);

/* ------------------------------------------------------------------------ */
/* Fire-and-forget tasks (submit.c)                                          */
/* ------------------------------------------------------------------------ */

/* A task is a function and its argument: two words in the queue slot, no
 * allocation. */
typedef void (*wp_fn)(void *arg);
typedef struct wp_task {
	wp_fn fn;
	void *arg;
} wp_task;

/* Placement targets, for the `worker` parameters below:
 *   WP_ANY   from a worker of this pool: its LIFO slot / own deque; from any
 *            other thread: the global injector. (Under WP_POLICY_GLOBAL
 *            everything goes to the one global queue.)
 *   WP_DEAL  batches only: task i goes to worker i % workers (seed 000's
 *            up-front deal); a single task goes to the next worker round-robin.
 *   0..N-1   that worker's queue. From another thread while the pool runs,
 *            Chase-Lev pools route it through the worker's mailbox (only the
 *            owner may push a Chase-Lev deque); the worker moves it to its deque
 *            and thieves may take it from the mailbox too. */
#define WP_ANY  (-1)
#define WP_DEAL (-2)

/* Spawns fn(arg) at WP_ANY. From outside the pool, waits for capacity. */
int wp_spawn(wp_pool *pool, wp_fn fn, void *arg);
/* Like wp_spawn but returns WP_EAGAIN at once when the pool is at capacity. */
int wp_try_spawn(wp_pool *pool, wp_fn fn, void *arg);
/* Like wp_spawn but gives up with WP_ETIMEDOUT after timeout_ns. */
int wp_spawn_timed(wp_pool *pool, wp_fn fn, void *arg, uint64_t timeout_ns);
/* Spawns fn(arg) on a given worker's queue (or WP_ANY / WP_DEAL). WP_ERANGE
 * for a bad index. */
int wp_spawn_to(wp_pool *pool, int worker, wp_fn fn, void *arg);

/* Spawns n tasks at once, taking each queue lock once per batch rather than
 * once per task. worker: WP_ANY, WP_DEAL or an index. With a capacity, waits
 * for room as needed. Returns 0 or a negative errno. On an admission error
 * (WP_ESHUTDOWN, WP_EDEADLK) the first tasks, in order, were accepted and the
 * rest were not; on WP_ENOMEM an unspecified subset was accepted. */
int wp_spawn_batch(wp_pool *pool, int worker, const wp_task *tasks, size_t n);
/* Spawns fn((void *)(first + i)) for i in [0, count): seed 000's integer
 * tasks without building an array. Same placement and errors as the batch. */
int wp_spawn_range(wp_pool *pool, int worker, wp_fn fn, uintptr_t first,
                   size_t count);

/* ------------------------------------------------------------------------ */
/* Cancellation tokens (cancel.c)                                            */
/* ------------------------------------------------------------------------ */

/* A shared, reference-counted flag. Cancelling is cooperative: a queued task
 * whose token is cancelled completes as cancelled without running; a running
 * task checks wp_token_cancelled() where its invariants allow stopping, and
 * returns WP_ECANCELED to complete its future as cancelled. */
typedef struct wp_token wp_token;

/* A new, uncancelled token with one reference; NULL when out of memory. */
wp_token *wp_token_new(void);
/* Adds / drops a reference; the last wp_token_release frees it. NULL ok. */
wp_token *wp_token_retain(wp_token *token);
void wp_token_release(wp_token *token);
/* Requests cancellation. Returns true if this call made the change. */
bool wp_token_cancel(wp_token *token);
/* Whether cancellation was requested (acquire load). NULL: false. */
bool wp_token_cancelled(const wp_token *token);
/* The token of the task running on the calling thread, or NULL (no token,
 * or not inside a task). Borrowed: valid while the task runs. */
wp_token *wp_current_token(void);

/* ------------------------------------------------------------------------ */
/* Tasks with futures (future.c)                                             */
/* ------------------------------------------------------------------------ */

/* A task that produces a result: set *value and return 0, or return a
 * negative error (WP_ECANCELED means "I observed cancellation": the future
 * becomes cancelled rather than failed). */
typedef int (*wp_call_fn)(void *arg, uint64_t *value);

typedef struct wp_future wp_future;

typedef enum wp_future_state {
	WP_FUTURE_PENDING,    /* queued or running */
	WP_FUTURE_VALUE,      /* the task returned 0 and a value */
	WP_FUTURE_ERROR,      /* the task returned a negative error */
	WP_FUTURE_CANCELLED,  /* token cancelled before it ran, or it returned
	                         WP_ECANCELED */
	WP_FUTURE_BROKEN,     /* dropped without running (discarding shutdown) */
} wp_future_state;

/* How a submission asks for admission when the pool has a capacity. */
typedef enum wp_admit {
	WP_ADMIT_BLOCK,       /* wait for room (default) */
	WP_ADMIT_TRY,         /* WP_EAGAIN at once when full */
	WP_ADMIT_TIMED,       /* wait at most timeout_ns, then WP_ETIMEDOUT */
} wp_admit;

/* Everything a submission can say. Start from WP_SUBMIT_OPTS_INIT. */
typedef struct wp_submit_opts {
	int worker;           /* WP_ANY (default), WP_DEAL or an index */
	wp_admit admit;       /* default WP_ADMIT_BLOCK */
	uint64_t timeout_ns;  /* for WP_ADMIT_TIMED */
	wp_token *token;      /* optional; the task takes its own reference */
} wp_submit_opts;
#define WP_SUBMIT_OPTS_INIT { WP_ANY, WP_ADMIT_BLOCK, 0, NULL }

/* Submits fn(arg, &value) and, if out is not NULL, stores a future for its
 * result in *out (the caller owns one reference: wp_future_release it).
 * Allocates one record per task. Errors: WP_ESHUTDOWN, WP_EAGAIN,
 * WP_ETIMEDOUT, WP_ERANGE, WP_ENOMEM; *out is untouched on error. */
int wp_submit(wp_pool *pool, wp_call_fn fn, void *arg, wp_future **out);
int wp_submit_to(wp_pool *pool, int worker, wp_call_fn fn, void *arg,
                 wp_future **out);
int wp_submit_ex(wp_pool *pool, wp_call_fn fn, void *arg,
                 const wp_submit_opts *opts, wp_future **out);
/* Fire-and-forget with options (a token, try/timed admission). Allocates a
 * record only when opts->token is set. */
int wp_spawn_ex(wp_pool *pool, wp_fn fn, void *arg,
                const wp_submit_opts *opts);

/* Waits until the future is ready. From a worker of its pool with helping on,
 * the worker runs other ready tasks while it waits; otherwise it blocks.
 * Returns 0 when ready (any outcome). */
int wp_future_wait(wp_future *future);
/* Same, giving up after timeout_ns with WP_ETIMEDOUT. */
int wp_future_timedwait(wp_future *future, uint64_t timeout_ns);
/* Waits, then returns the outcome: 0 and *value (may be NULL) for a value,
 * the task's error, WP_ECANCELED, or WP_EBROKEN. */
int wp_future_get(wp_future *future, uint64_t *value);
/* Non-blocking: the outcome as wp_future_get, or WP_EBUSY while pending. */
int wp_future_try_get(wp_future *future, uint64_t *value);
/* The current state (acquire load; never blocks). */
wp_future_state wp_future_state_of(const wp_future *future);
/* Drops the caller's reference. The task still runs. NULL is a no-op. */
void wp_future_release(wp_future *future);

/* ------------------------------------------------------------------------ */
/* Counters (pool.c)                                                         */
/* ------------------------------------------------------------------------ */

/* Per-worker totals, each written only by its worker (relaxed atomics), so a
 * read while the pool runs is a consistent-enough snapshot and never a race.
 * At exit each worker also reports them through convoy.h
 * (CONVOY_COUNTER_SET("tasks_run", ...), "steals", "steal_failures",
 * "cas_failures", "lock_contended", "parks", "wakes", "idle_spins", ...:
 * the field names). X(field, description): one list for the struct below,
 * the library's internal counters and the convoy counter names. */
#define WP_WORKER_STATS_MAP(X)                                                \
	X(tasks_run,       "task functions called (helping included)")        \
	X(tasks_cancelled, "completed as cancelled without running")          \
	X(tasks_helped,    "of tasks_run, run while waiting on a future")     \
	X(lifo_hits,       "tasks taken from the LIFO slot")                  \
	X(injector_pops,   "tasks taken from the injector / global queue")    \
	X(steals,          "successful steal operations (a batch counts 1)")  \
	X(stolen_tasks,    "tasks moved by those steals")                     \
	X(steal_failures,  "steal attempts on a victim that got nothing")     \
	X(cas_failures,    "Chase-Lev CAS on top lost (owner pop or steal)")  \
	X(lock_contended,  "trylock failed, then waited (global queue, "      \
	                   "deques, injector, mailboxes)")                    \
	X(parks,           "times it blocked on its condition variable")      \
	X(wakes,           "wake signals it sent to parked workers")          \
	X(idle_spins,      "polling rounds spent idle before parking")

typedef struct wp_worker_stats {
#define WP__STATS_FIELD(field, text) uint64_t field;
	WP_WORKER_STATS_MAP(WP__STATS_FIELD)
#undef WP__STATS_FIELD
} wp_worker_stats;

/* Pool-wide figures that belong to no worker. */
typedef struct wp_pool_stats {
	uint64_t submitted;        /* tasks accepted, from anywhere */
	uint64_t completed;        /* tasks completed (run or cancelled) */
	uint64_t external_submits; /* of submitted, from non-worker threads */
	uint64_t external_contended; /* their trylock failures on shared queues */
	uint64_t external_wakes;   /* wake signals sent by non-worker threads */
	uint64_t rejected;         /* submissions refused (shutdown, full) */
	uint64_t blocked_submits;  /* submissions that had to wait for room */
	uint64_t dropped;          /* queued tasks discarded by shutdown */
	uint64_t max_queued;       /* most tasks accepted-not-started seen (only
	                              tracked with a capacity) */
	wp_worker_stats total;     /* sum over workers */
} wp_pool_stats;

/* Copies one worker's counters. WP_ERANGE for a bad index. */
int wp_worker_stats_get(const wp_pool *pool, unsigned worker,
                        wp_worker_stats *out);
/* Copies the pool-wide counters and the sum over workers. */
int wp_pool_stats_get(const wp_pool *pool, wp_pool_stats *out);

#ifdef __cplusplus
}
#endif
#endif /* WORKPOOL_H */
