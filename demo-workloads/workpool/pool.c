/* pool.c — the pool: configuration, workers and their scheduling loop,
 * lifecycle (start, wait_idle, shutdown, destroy), quiescence and counters.
 *
 * A worker's loop:
 *
 *   find a task:  LIFO slot (at most WP__LIFO_MAX in a row)
 *                 → every WP__INJECTOR_INTERVAL tasks, the injector first
 *                   (so outside submissions are not starved by local work)
 *                 → own queue (back) → own mailbox (Chase-Lev)
 *                 → injector (a batch) → steal from random victims
 *   run it, count it;
 *   none found:   tell wp_wait_idle callers if the pool is quiescent; exit if
 *                 shutting down and quiescent; poll for idle_spin_ns; park.
 *
 * Under WP_POLICY_GLOBAL the only queue is the injector: every worker takes
 * every task from it, one lock acquisition per task, as seed 000's scene 01.
 *
 * Quiescence (wp_wait_idle, shutdown). There is no shared "pending" counter:
 * one written by every worker per task is exactly the contended cache line
 * seed 003 measures. Instead each worker counts the tasks it submitted and
 * completed (single-writer, release stores), non-workers count theirs in
 * ext.submitted, and quiescence is
 *
 *     Σ completed (read first, acquire)  ==  Σ submitted (read second).
 *
 * Every task counted in the first sum was submitted before it completed,
 * and its submission count was stored before (happens-before, through the
 * queue that carried the task and the release/acquire on the counters) our
 * read of the second sum, so the completed set is a subset of the submitted
 * set; equal sizes make them equal. A task submitted by a task that we saw
 * complete is counted too (its submitter stored the count before completing).
 * So equality means every task accepted so far has completed; it can only be
 * falsified by a new submission, which after shutdown only running tasks can
 * make — and there are none.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "convoy.h"
#include "internal.h"

enum {
	WP__LIFO_MAX = 16,           /* LIFO-slot runs in a row before the
	                                slot's task is made stealable */
	WP__INJECTOR_INTERVAL = 61,  /* check the injector first every n tasks
	                                (a prime, as Go and Tokio use) */
	WP__INJECTOR_BATCH = 32,     /* most tasks taken from the injector */
	WP__MAILBOX_BATCH = 256,     /* most tasks moved from a mailbox */
	WP__CL_STEAL_BATCH = WP__CL_BATCH_MAX, /* most tasks one Chase-Lev
	                                          steal moves (one CAS) */
	WP__MAX_WORKERS = 1024,
	WP__SCRATCH = 256,
};

__thread struct wp__worker *wp__tls_self;

/* ------------------------------------------------------------------------ */
/* Configuration                                                              */
/* ------------------------------------------------------------------------ */

wp_config wp_config_default(void)
{
	return (wp_config){
		.policy = WP_POLICY_CHASE_LEV,
		.workers = 0,
		.idle_spin_ns = 10000,
		.capacity = 0,
		.helping = true,
		.stealing = true,
		.lifo_slot = true,
		.start_paused = false,
		.seed = 1,
		.deque_initial = 1024,
		.name = "wp",
		.take_batch = 1,   /* safe: every queued task stays stealable (docs/workpool.md) */
		.spread_start = true,
	};
}

static const char *const wp__policy_names[] = {
#define WP__POLICY_NAME(name, text) text,
	WP_POLICY_MAP(WP__POLICY_NAME)
#undef WP__POLICY_NAME
};

const char *wp_policy_name(wp_policy policy)
{
	if ((unsigned)policy >= WP_POLICY_COUNT)
		return NULL;
	return wp__policy_names[policy];
}

int wp_policy_parse(const char *name, wp_policy *out)
{
	if (!name || !out)
		return WP_EINVAL;
	for (unsigned i = 0; i < WP_POLICY_COUNT; i++) {
		if (strcmp(name, wp__policy_names[i]) == 0) {
			*out = (wp_policy)i;
			return 0;
		}
	}
	if (strcmp(name, "stealing") == 0) {
		*out = WP_POLICY_CHASE_LEV;
		return 0;
	}
	if (strcmp(name, "mutex-deque") == 0) {
		*out = WP_POLICY_LOCKED;
		return 0;
	}
	return WP_EINVAL;
}

static uint64_t wp__splitmix64(uint64_t x)
{
	x += 0x9E3779B97F4A7C15u;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9u;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBu;
	return x ^ (x >> 31);
}

static inline uint64_t wp__rng_next(struct wp__worker *w)
{
	uint64_t x = w->own.rng;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	w->own.rng = x;
	return x;
}

/* ------------------------------------------------------------------------ */
/* Queues, as seen by the owner                                               */
/* ------------------------------------------------------------------------ */

size_t wp__push_own(struct wp__worker *w, const struct wp__src *src,
                    size_t start, size_t stride, size_t count,
                    struct wp__ctr contended)
{
	wp_pool *pool = w->pool;
	switch (pool->cfg.policy) {
	case WP_POLICY_CHASE_LEV:
		if (count == 1)
			return wp__deque_push_owner(&w->cl, wp__src_get(src, start)) ? 0 : 1;
		/* One reservation and one publication of bottom for the batch. */
		return wp__deque_push_many_owner(&w->cl, src, start, stride, count) ? 0 : count;
	case WP_POLICY_LOCKED:
		return wp__ldeque_push(&w->ld, src, start, stride, count, contended) ? 0 : count;
	default:
		return wp__fifo_push(&pool->injector, src, start, stride, count, contended) ? 0 : count;
	}
}

static inline struct wp__ctr wp__own_ctr(struct wp__worker *w)
{
	return (struct wp__ctr){ &w->own.st.lock_contended, false };
}

static inline bool wp__pop_own(struct wp__worker *w, wp_task *out)
{
	if (w->pool->cfg.policy == WP_POLICY_CHASE_LEV) {
		int r = wp__deque_pop_owner(&w->cl, out);
		if (WP_UNLIKELY(r == WP__CL_LOST))
			wp__counter_inc(&w->own.st.cas_failures);
		/* A thief found nothing visible here: publish the tasks our last
		 * take moved into the private zone, and wake a sleeper for them.
		 * One relaxed load of top's line per task otherwise. */
		if (WP_UNLIKELY(wp__deque_wanted(&w->cl))) {
			size_t n = wp__deque_share_owner(&w->cl);
			if (n)
				wp__notify_stealable(w->pool, w, n);
		}
		return r == WP__CL_GOT;
	}
	return wp__ldeque_pop_owner(&w->ld, out, wp__own_ctr(w));
}

static inline size_t wp__own_len(wp_pool *pool, struct wp__worker *w)
{
	if (pool->cfg.policy == WP_POLICY_CHASE_LEV)
		return wp__deque_peek_len(&w->cl) + wp__fifo_peek_len(&w->mailbox);
	return wp__ldeque_peek_len(&w->ld);
}

/* Runs one staged task next (via *out): the oldest, scratch[0], or with
 * newest the last one; pushes the others onto our queue in order. */
static bool wp__take_staged(struct wp__worker *w, size_t k, wp_task *out,
                            bool newest)
{
	wp_task *s = w->own.scratch;
	*out = newest ? s[k - 1] : s[0];
	if (k > 1) {
		struct wp__src src = { newest ? s : s + 1, NULL, 0 };
		size_t pushed = wp__push_own(w, &src, 0, 1, k - 1, wp__own_ctr(w));
		/* Out of memory: run the rest here rather than lose them. */
		for (size_t i = pushed; i < k - 1; i++)
			wp__run_task(w, src.tasks[i]);
		wp__notify_stealable(w->pool, w, pushed);
	}
	return true;
}

static bool wp__take_injector(struct wp__worker *w, wp_task *out)
{
	wp_pool *pool = w->pool;
	size_t len = wp__fifo_peek_len(&pool->injector);
	if (len == 0)
		return false;
	size_t want = len / pool->cfg.n + 1;
	if (want > WP__INJECTOR_BATCH)
		want = WP__INJECTOR_BATCH;
	size_t k = wp__fifo_pop_many(&pool->injector, w->own.scratch, want, wp__own_ctr(w));
	if (k == 0)
		return false;
	wp__counter_add(&w->own.st.injector_pops, k);
	return wp__take_staged(w, k, out, false);
}

static bool wp__drain_mailbox(struct wp__worker *v, struct wp__worker *w,
                              wp_task *out, size_t max)
{
	size_t k = wp__fifo_pop_many(&v->mailbox, w->own.scratch, max, wp__own_ctr(w));
	if (k == 0)
		return false;
	if (v != w) {
		wp__counter_inc(&w->own.st.steals);
		wp__counter_add(&w->own.st.stolen_tasks, k);
	}
	return wp__take_staged(w, k, out, false);
}

/* One steal attempt on victim v. */
static bool wp__steal_from(struct wp__worker *w, struct wp__worker *v, wp_task *out)
{
	wp_pool *pool = w->pool;
	if (pool->cfg.policy == WP_POLICY_LOCKED) {
		size_t k = wp__ldeque_steal_half_thief(&v->ld, &w->own.scratch,
		                                       &w->own.scratch_cap, wp__own_ctr(w));
		if (k == 0)
			return false;
		wp__counter_inc(&w->own.st.steals);
		wp__counter_add(&w->own.st.stolen_tasks, k);
		/* Run the newest stolen task; the rest go to our back in order,
		 * so we keep working newest-first, as the seed's extend does. */
		return wp__take_staged(w, k, out, true);
	}

	/* Half of what we see, at most WP__CL_STEAL_BATCH, claimed with one
	 * CAS on the victim's top and copied straight into our own deque. */
	size_t got;
	int r = wp__deque_steal_batch_thief(&v->cl, &w->cl, WP__CL_STEAL_BATCH, out, &got);
	if (r == WP__CL_LOST) {
		wp__counter_inc(&w->own.st.cas_failures);
		return false;
	}
	if (r == WP__CL_GOT) {
		wp__counter_inc(&w->own.st.steals);
		wp__counter_add(&w->own.st.stolen_tasks, got);
		if (got > 1)
			wp__notify_stealable(pool, w, got - 1);
		return true;
	}
	/* The deque is empty; tasks may wait in its mailbox. */
	size_t mlen = wp__fifo_peek_len(&v->mailbox);
	if (mlen == 0)
		return false;
	size_t max = mlen / 2 + 1;
	return wp__drain_mailbox(v, w, out, max < WP__MAILBOX_BATCH ? max : WP__MAILBOX_BATCH);
}

static bool wp__steal(struct wp__worker *w, wp_task *out)
{
	wp_pool *pool = w->pool;
	unsigned n = pool->cfg.n;
	/* As the seed: `workers` tries at random victims (never ourselves); a
	 * per-worker RNG keeps idle workers from converging on one victim. */
	for (unsigned attempt = 0; attempt < n; attempt++) {
		unsigned v = (unsigned)(wp__rng_next(w) % (n - 1));
		if (v >= w->index)
			v++;
		if (wp__steal_from(w, &pool->cfg.w[v], out))
			return true;
		wp__counter_inc(&w->own.st.steal_failures);
	}
	return false;
}

bool wp__find_task(struct wp__worker *w, wp_task *out)
{
	wp_pool *pool = w->pool;

	if (pool->cfg.policy == WP_POLICY_GLOBAL) {
		if (!wp__fifo_pop(&pool->injector, out, wp__own_ctr(w)))
			return false;
		wp__counter_inc(&w->own.st.injector_pops);
		return true;
	}
	if (w->own.lifo_full) {
		w->own.lifo_full = false;
		if (w->own.lifo_streak < WP__LIFO_MAX) {
			w->own.lifo_streak++;
			wp__counter_inc(&w->own.st.lifo_hits);
			*out = w->own.lifo;
			return true;
		}
		/* A chain of spawns has held the slot long enough: make the task
		 * stealable and take work like any other. */
		struct wp__src src = { &w->own.lifo, NULL, 0 };
		if (wp__push_own(w, &src, 0, 1, 1, wp__own_ctr(w)) == 1) {
			wp__notify_stealable(pool, w, 1);
		} else {
			*out = w->own.lifo;
			return true;
		}
	}
	w->own.lifo_streak = 0;
	if (WP_UNLIKELY(++w->own.tick % WP__INJECTOR_INTERVAL == 0) &&
	    wp__take_injector(w, out))
		return true;
	if (wp__pop_own(w, out))
		return true;
	if (pool->cfg.policy == WP_POLICY_CHASE_LEV &&
	    wp__fifo_peek_len(&w->mailbox) > 0 &&
	    wp__drain_mailbox(w, w, out, WP__MAILBOX_BATCH))
		return true;
	if (wp__take_injector(w, out))
		return true;
	if (pool->cfg.stealing && pool->cfg.n > 1)
		return wp__steal(w, out);
	return false;
}

bool wp__work_visible(struct wp__worker *w)
{
	wp_pool *pool = w->pool;
	if (wp__fifo_peek_len(&pool->injector) > 0)
		return true;
	if (pool->cfg.policy == WP_POLICY_GLOBAL)
		return false;
	if (w->own.lifo_full || wp__own_len(pool, w) > 0)
		return true;
	if (!pool->cfg.stealing)
		return false;
	for (unsigned i = 0; i < pool->cfg.n; i++)
		if (i != w->index && wp__own_len(pool, &pool->cfg.w[i]) > 0)
			return true;
	return false;
}

/* ------------------------------------------------------------------------ */
/* Running tasks                                                              */
/* ------------------------------------------------------------------------ */

void wp__run_task(struct wp__worker *w, wp_task t)
{
	wp_pool *pool = w->pool;
	WP_ASSERT(t.fn != NULL);
	CONVOY_QUEUED(-1);   /* counted in wp__submit_tasks */
	if (pool->cfg.bounded)
		wp__admit_release(pool);
	if (WP_UNLIKELY(wp__load_relaxed(&pool->discarding))) {
		if (t.fn == wp__job_run)
			wp__job_drop(t.arg);
		wp__fetch_add_relaxed(&pool->ext.dropped, 1);
	} else if (t.fn == wp__job_run) {
		if (wp__job_execute(t.arg))
			wp__counter_inc(&w->own.st.tasks_run);
		else
			wp__counter_inc(&w->own.st.tasks_cancelled);
	} else {
		t.fn(t.arg);
		wp__counter_inc(&w->own.st.tasks_run);
	}
	/* Release: the task's effects (and any submission count it made)
	 * before the completion count quiescence acquires. */
	wp__store_release(&w->own.completed, wp__load_relaxed(&w->own.completed) + 1);
}

bool wp__quiescent(wp_pool *pool)
{
	uint64_t done = wp__load_acquire(&pool->ext.unplaced);
	for (unsigned i = 0; i < pool->cfg.n; i++)
		done += wp__load_acquire(&pool->cfg.w[i].own.completed);
	uint64_t sub = wp__load_acquire(&pool->ext.submitted);
	for (unsigned i = 0; i < pool->cfg.n; i++)
		sub += wp__load_acquire(&pool->cfg.w[i].own.submitted);
	WP_ASSERT(done <= sub);
	return done == sub;
}

static bool wp__closing_done(wp_pool *pool)
{
	return wp__load_acquire(&pool->state) >= WP__CLOSING && wp__quiescent(pool);
}

/* No task found. Returns false when the worker should exit. */
static bool wp__idle(struct wp__worker *w)
{
	wp_pool *pool = w->pool;
	wp__notify_idle(pool);
	if (wp__closing_done(pool)) {
		wp__wake_all(pool, w);
		return false;
	}
	uint64_t budget = pool->cfg.idle_spin_ns;
	if (budget) {
		uint64_t start = wp__now_ns();
		do {
			for (int i = 0; i < 32; i++)
				wp__cpu_relax();
			wp__counter_inc(&w->own.st.idle_spins);
			if (wp__work_visible(w) || wp__closing_done(pool))
				return true;
		} while (wp__now_ns() - start < budget);
	}
	wp__park(w, NULL, NULL);
	return true;
}

static void wp__report_counters(struct wp__worker *w)
{
#define WP__REPORT(field, text)                                                \
	CONVOY_COUNTER_SET(#field, (int64_t)wp__load_relaxed(&w->own.st.field));
	WP_WORKER_STATS_MAP(WP__REPORT)
#undef WP__REPORT
}

/* wp_config.spread_start: move to the (index mod n)-th CPU of the n in our
 * inherited mask, then take the whole mask back. Moving ourselves migrates
 * us at once; restoring the mask leaves us there, and the kernel free to
 * move us later. Every failure leaves the thread as it was (a hint). */
static void wp__spread_start(struct wp__worker *w)
{
	cpu_set_t all, one;
	if (pthread_getaffinity_np(pthread_self(), sizeof all, &all) != 0)
		return; /* e.g. more CPUs than a cpu_set_t holds */
	int n = CPU_COUNT(&all);
	if (n < 2)
		return;
	int k = (int)(w->index % (unsigned)n), cpu = -1;
	for (int c = 0; c < CPU_SETSIZE && cpu < 0; c++)
		if (CPU_ISSET(c, &all) && k-- == 0)
			cpu = c;
	if (cpu < 0)
		return;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0 &&
	    pthread_setaffinity_np(pthread_self(), sizeof all, &all) != 0)
		/* Never seen; do not leave a worker pinned by accident. */
		(void)pthread_setaffinity_np(pthread_self(), sizeof all, &all);
}

static void *wp__worker_main(void *arg)
{
	struct wp__worker *w = arg;
	wp_pool *pool = w->pool;
	char name[32];
	if (pool->config.spread_start && pool->cfg.n > 1)
		wp__spread_start(w);
	snprintf(name, sizeof name, "%s-%u", pool->name, w->index);
	name[15] = '\0'; /* the kernel's limit */
	pthread_setname_np(pthread_self(), name);
	wp__tls_self = w;
	for (;;) {
		wp_task t;
		if (wp__find_task(w, &t)) {
			wp__run_task(w, t);
			continue;
		}
		if (!wp__idle(w))
			break;
	}
	wp__report_counters(w);
	wp__tls_self = NULL;
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* Lifecycle                                                                  */
/* ------------------------------------------------------------------------ */

static void wp__join_started(wp_pool *pool)
{
	for (unsigned i = 0; i < pool->cfg.n; i++) {
		struct wp__worker *w = &pool->cfg.w[i];
		if (w->thread_started) {
			int err = pthread_join(w->thread, NULL);
			if (err)
				wp__abort_errno("pthread_join", err);
			w->thread_started = false;
		}
	}
}

/* Caller holds pool->lifecycle and saw WP__PAUSED. */
int wp__start_locked(wp_pool *pool)
{
	wp__store_release(&pool->state, WP__RUNNING);
	for (unsigned i = 0; i < pool->cfg.n; i++) {
		struct wp__worker *w = &pool->cfg.w[i];
		int err = pthread_create(&w->thread, NULL, wp__worker_main, w);
		if (err) {
			/* Cannot run as configured: stop the ones we have, drop
			 * everything (wp_pool_destroy sweeps what they miss). */
			wp__store_seq_cst(&pool->closed, true);
			wp__store_release(&pool->discarding, true);
			wp__store_release(&pool->state, WP__CLOSING);
			wp__wake_all(pool, NULL);
			wp__join_started(pool);
			wp__store_release(&pool->state, WP__JOINED);
			return -err;
		}
		w->thread_started = true;
	}
	return 0;
}

int wp_start(wp_pool *pool)
{
	if (!pool)
		return WP_EINVAL;
	wp__lock(&pool->lifecycle);
	int state = wp__load_relaxed(&pool->state);
	int rc = state == WP__PAUSED ? wp__start_locked(pool)
	       : state == WP__RUNNING ? WP_EALREADY : WP_ESHUTDOWN;
	wp__unlock(&pool->lifecycle);
	return rc;
}

static void wp__pool_free(wp_pool *pool)
{
	if (pool->cfg.w) {
		for (unsigned i = 0; i < pool->cfg.n; i++) {
			struct wp__worker *w = &pool->cfg.w[i];
			if (pool->cfg.policy == WP_POLICY_CHASE_LEV)
				wp__deque_destroy(&w->cl);
			if (pool->cfg.policy == WP_POLICY_LOCKED)
				wp__ldeque_destroy(&w->ld);
			wp__fifo_destroy(&w->mailbox);
			pthread_cond_destroy(&w->park_cond);
			free(w->own.scratch);
		}
		free(pool->cfg.w);
	}
	wp__fifo_destroy(&pool->injector);
	free(pool->park.stack);
	pthread_mutex_destroy(&pool->park.lock);
	pthread_mutex_destroy(&pool->idle.lock);
	pthread_cond_destroy(&pool->idle.cond);
	pthread_mutex_destroy(&pool->admit.lock);
	pthread_cond_destroy(&pool->admit.cond);
	pthread_mutex_destroy(&pool->lifecycle);
	free(pool);
}

static int wp__worker_init(wp_pool *pool, unsigned i, const wp_config *c)
{
	struct wp__worker *w = &pool->cfg.w[i];
	int err = 0;
	w->index = i;
	w->pool = pool;
	w->own.rng = wp__splitmix64(c->seed ^ wp__splitmix64(i + 1)) | 1;
	w->own.scratch_cap = WP__SCRATCH;
	w->own.scratch = malloc(WP__SCRATCH * sizeof(wp_task));
	if (!w->own.scratch)
		return WP_ENOMEM;
	if (pool->cfg.policy == WP_POLICY_CHASE_LEV) {
		err = wp__deque_init(&w->cl, c->deque_initial, 0);
		w->cl.own.take_max = c->take_batch;
	} else if (pool->cfg.policy == WP_POLICY_LOCKED)
		err = wp__ldeque_init(&w->ld, c->deque_initial);
	if (!err && (err = wp__fifo_init(&w->mailbox, 16))) {
		if (pool->cfg.policy == WP_POLICY_CHASE_LEV)
			wp__deque_destroy(&w->cl);
		else if (pool->cfg.policy == WP_POLICY_LOCKED)
			wp__ldeque_destroy(&w->ld);
	}
	if (err) {
		free(w->own.scratch);
		return err;
	}
	wp__cond_init_monotonic(&w->park_cond);
	if (pool->cfg.policy == WP_POLICY_LOCKED)
		CONVOY_NAME(&w->ld.lock, "workpool.deque");
	if (pool->cfg.policy == WP_POLICY_CHASE_LEV)
		CONVOY_NAME(&w->mailbox.lock, "workpool.mailbox");
	CONVOY_NAME(&w->park_cond, "workpool.park");
	return 0;
}

int wp_pool_create(wp_pool **out, const wp_config *config)
{
	if (!out)
		return WP_EINVAL;
	wp_config c = config ? *config : wp_config_default();
	if ((unsigned)c.policy >= WP_POLICY_COUNT || c.workers > WP__MAX_WORKERS)
		return WP_EINVAL;
	if (c.workers == 0) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		c.workers = cpus < 1 ? 1 : cpus > WP__MAX_WORKERS ? WP__MAX_WORKERS : (unsigned)cpus;
	}
	if (c.deque_initial == 0)
		c.deque_initial = 1024;
	if (c.deque_initial > ((size_t)1 << 30))
		return WP_EINVAL;
	if (c.take_batch == 0)
		c.take_batch = 1;
	if (c.take_batch > WP__CL_TAKE_LIMIT)
		return WP_EINVAL;

	wp_pool *pool = aligned_alloc(WP_CACHE_LINE, sizeof *pool);
	if (!pool)
		return WP_ENOMEM;
	memset(pool, 0, sizeof *pool);
	pool->config = c;
	pool->config.name = NULL; /* not kept: copied below */
	snprintf(pool->name, sizeof pool->name, "%s", c.name ? c.name : "wp");
	pool->name[10] = '\0'; /* room for "-NNNN" in a 15-byte thread name */
	pool->cfg.policy = c.policy;
	pool->cfg.n = c.workers;
	pool->cfg.stealing = c.stealing;
	pool->cfg.lifo = c.lifo_slot && c.policy != WP_POLICY_GLOBAL;
	pool->cfg.helping = c.helping;
	pool->cfg.bounded = c.capacity > 0;
	pool->cfg.capacity = c.capacity;
	pool->cfg.idle_spin_ns = c.idle_spin_ns;
	atomic_init(&pool->state, c.start_paused ? WP__PAUSED : WP__RUNNING);

	wp__mutex_init(&pool->lifecycle);
	wp__mutex_init(&pool->park.lock);
	wp__mutex_init(&pool->idle.lock);
	wp__cond_init_monotonic(&pool->idle.cond);
	wp__mutex_init(&pool->admit.lock);
	wp__cond_init_monotonic(&pool->admit.cond);

	int err = wp__fifo_init(&pool->injector, c.policy == WP_POLICY_GLOBAL ? c.deque_initial : 64);
	if (err) {
		free(pool);
		return err;
	}
	pool->park.stack = calloc(c.workers, sizeof *pool->park.stack);
	size_t wbytes = ((c.workers * sizeof(struct wp__worker)) + WP_CACHE_LINE - 1) &
	                ~(size_t)(WP_CACHE_LINE - 1);
	pool->cfg.w = aligned_alloc(WP_CACHE_LINE, wbytes);
	if (!pool->park.stack || !pool->cfg.w) {
		free(pool->cfg.w);
		pool->cfg.w = NULL;
		wp__pool_free(pool);
		return WP_ENOMEM;
	}
	memset(pool->cfg.w, 0, wbytes);
	for (unsigned i = 0; i < c.workers; i++) {
		err = wp__worker_init(pool, i, &c);
		if (err) {
			pool->cfg.n = i; /* free only those initialised */
			wp__pool_free(pool);
			return err;
		}
	}
	CONVOY_NAME(&pool->injector.lock, c.policy == WP_POLICY_GLOBAL
	                                  ? "workpool.global_queue" : "workpool.injector");
	CONVOY_NAME(&pool->park.lock, "workpool.park_lock");
	CONVOY_NAME(&pool->idle.cond, "workpool.idle");
	CONVOY_NAME(&pool->admit.cond, "workpool.admission");

	if (!c.start_paused) {
		atomic_init(&pool->state, WP__PAUSED);
		wp__lock(&pool->lifecycle);
		err = wp__start_locked(pool);
		wp__unlock(&pool->lifecycle);
		if (err) {
			wp__pool_free(pool);
			return err;
		}
	}
	*out = pool;
	return 0;
}

int wp_wait_idle(wp_pool *pool)
{
	if (!pool)
		return WP_EINVAL;
	if (wp__self_in(pool))
		return WP_EDEADLK;
	int rc = 0;
	wp__lock(&pool->idle.lock);
	wp__fetch_add_seq_cst(&pool->idle.waiters, 1);
	/* Orders our registration before reading the counters, against a
	 * worker's "complete; fence; read waiters" (park.c wp__notify_idle). */
	wp__fence_seq_cst();
	while (!wp__quiescent(pool)) {
		int state = wp__load_acquire(&pool->state);
		if (state == WP__PAUSED) {
			rc = WP_EDEADLK;
			break;
		}
		if (state == WP__JOINED)
			break; /* only after a failed start; nothing will run */
		pthread_cond_wait(&pool->idle.cond, &pool->idle.lock);
	}
	wp__fetch_sub_seq_cst(&pool->idle.waiters, 1);
	wp__unlock(&pool->idle.lock);
	return rc;
}

int wp_shutdown(wp_pool *pool, wp_shutdown_mode mode)
{
	if (!pool || (mode != WP_SHUTDOWN_DRAIN && mode != WP_SHUTDOWN_DISCARD))
		return WP_EINVAL;
	if (wp__self_in(pool))
		return WP_EDEADLK;
	if (wp__load_acquire(&pool->state) == WP__JOINED)
		return 0;

	/* 1. No new submissions from outside; wake those waiting for room so
	 *    they see it; wait for the ones already past the check. */
	wp__store_seq_cst(&pool->closed, true);
	wp__fence_seq_cst();
	wp__lock(&pool->admit.lock);
	pthread_cond_broadcast(&pool->admit.cond);
	wp__unlock(&pool->admit.lock);
	while (wp__load_acquire(&pool->ext.inflight) != 0)
		sched_yield();

	/* 2. Discard: workers drop queued tasks instead of running them. */
	if (mode == WP_SHUTDOWN_DISCARD)
		wp__store_release(&pool->discarding, true);

	/* 3. Workers exit once quiescent; a paused pool starts to drain. */
	wp__lock(&pool->lifecycle);
	int rc = 0;
	if (wp__load_relaxed(&pool->state) == WP__PAUSED)
		rc = wp__start_locked(pool);
	if (wp__load_relaxed(&pool->state) == WP__RUNNING)
		wp__store_seq_cst(&pool->state, WP__CLOSING);
	wp__unlock(&pool->lifecycle);
	wp__wake_all(pool, NULL);
	wp__join_started(pool);
	wp__store_release(&pool->state, WP__JOINED);
	return rc;
}

static void wp__sweep_task(wp_pool *pool, wp_task t)
{
	CONVOY_QUEUED(-1);
	if (t.fn == wp__job_run)
		wp__job_drop(t.arg);
	wp__fetch_add_relaxed(&pool->ext.dropped, 1);
}

/* After a failed start, tasks may remain in queues no worker drained. */
static void wp__sweep(wp_pool *pool)
{
	wp_task t;
	struct wp__ctr ctr = { &pool->ext.contended, true };
	while (wp__fifo_pop(&pool->injector, &t, ctr))
		wp__sweep_task(pool, t);
	for (unsigned i = 0; i < pool->cfg.n; i++) {
		struct wp__worker *w = &pool->cfg.w[i];
		if (w->own.lifo_full) {
			w->own.lifo_full = false;
			wp__sweep_task(pool, w->own.lifo);
		}
		while (wp__fifo_pop(&w->mailbox, &t, ctr))
			wp__sweep_task(pool, t);
		if (pool->cfg.policy == WP_POLICY_CHASE_LEV)
			while (wp__deque_pop_owner(&w->cl, &t) == WP__CL_GOT)
				wp__sweep_task(pool, t);
		if (pool->cfg.policy == WP_POLICY_LOCKED)
			while (wp__ldeque_pop_owner(&w->ld, &t, ctr))
				wp__sweep_task(pool, t);
	}
}

void wp_pool_destroy(wp_pool *pool)
{
	if (!pool)
		return;
	if (wp__self_in(pool)) {
		fprintf(stderr, "workpool: wp_pool_destroy called from one of the "
		                "pool's own workers\n");
		abort();
	}
	wp_shutdown(pool, WP_SHUTDOWN_DRAIN);
	wp__sweep(pool);
	wp__pool_free(pool);
}

unsigned wp_workers(const wp_pool *pool)
{
	return pool ? pool->cfg.n : 0;
}

wp_policy wp_pool_policy(const wp_pool *pool)
{
	return pool->cfg.policy;
}

int wp_current_worker(const wp_pool *pool)
{
	struct wp__worker *w = pool ? wp__self_in(pool) : NULL;
	return w ? (int)w->index : -1;
}

/* ------------------------------------------------------------------------ */
/* Counters                                                                   */
/* ------------------------------------------------------------------------ */

static void wp__stats_copy(const struct wp__worker *w, wp_worker_stats *out)
{
	struct wp__stats *st = (struct wp__stats *)&w->own.st;
#define WP__COPY(field, text) out->field = wp__load_relaxed(&st->field);
	WP_WORKER_STATS_MAP(WP__COPY)
#undef WP__COPY
}

int wp_worker_stats_get(const wp_pool *pool, unsigned worker, wp_worker_stats *out)
{
	if (!pool || !out)
		return WP_EINVAL;
	if (worker >= pool->cfg.n)
		return WP_ERANGE;
	wp__stats_copy(&pool->cfg.w[worker], out);
	return 0;
}

int wp_pool_stats_get(const wp_pool *pool, wp_pool_stats *out)
{
	if (!pool || !out)
		return WP_EINVAL;
	wp_pool *p = (wp_pool *)pool;
	memset(out, 0, sizeof *out);
	out->external_submits = wp__load_relaxed(&p->ext.submitted);
	out->submitted = out->external_submits;
	for (unsigned i = 0; i < p->cfg.n; i++) {
		struct wp__worker *w = &p->cfg.w[i];
		wp_worker_stats s;
		wp__stats_copy(w, &s);
#define WP__SUM(field, text) out->total.field += s.field;
		WP_WORKER_STATS_MAP(WP__SUM)
#undef WP__SUM
		out->submitted += wp__load_acquire(&w->own.submitted);
		out->completed += wp__load_acquire(&w->own.completed);
	}
	out->external_contended = wp__load_relaxed(&p->ext.contended);
	out->external_wakes = wp__load_relaxed(&p->ext.wakes);
	out->rejected = wp__load_relaxed(&p->ext.rejected);
	out->blocked_submits = wp__load_relaxed(&p->ext.blocked);
	out->dropped = wp__load_relaxed(&p->ext.dropped);
	out->max_queued = wp__load_relaxed(&p->admit.max_queued);
	return 0;
}
