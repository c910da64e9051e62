/* stress.c — deterministic randomized stress tests (see stress.h).
 *
 * Do not use these as benchmarks: they check that every task runs exactly
 * once and that the counters add up, under as many interleavings as the
 * machine produces. The structure of the work (the task forest, who spawns
 * how, which tokens get cancelled) comes from a seeded RNG, so a failure
 * names a seed that reproduces the same work.
 */
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "stress.h"

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return 1;
}

/* ------------------------------------------------------------------------ */
/* Chase-Lev: one owner, several thieves                                      */
/* ------------------------------------------------------------------------ */

static void dq_marker(void *arg) { (void)arg; }

struct dq_ctx {
	struct wp__deque d;
	_Atomic unsigned *counts;
	size_t items;
	_Atomic bool done;
	_Atomic uint64_t stolen;
	_Atomic uint64_t lost;
	_Atomic uint64_t torn;
	_Atomic uint64_t out_of_range;
};

static void dq_take(struct dq_ctx *c, wp_task t)
{
	uintptr_t id = (uintptr_t)t.arg;
	if (t.fn != dq_marker) {
		atomic_fetch_add(&c->torn, 1);
		return;
	}
	if (id >= c->items) {
		atomic_fetch_add(&c->out_of_range, 1);
		return;
	}
	atomic_fetch_add_explicit(&c->counts[id], 1, memory_order_relaxed);
}

static void *dq_thief(void *arg)
{
	struct dq_ctx *c = arg;
	for (;;) {
		wp_task t;
		int r = wp__deque_steal_thief(&c->d, &t, NULL);
		if (r == WP__CL_GOT) {
			dq_take(c, t);
			atomic_fetch_add_explicit(&c->stolen, 1, memory_order_relaxed);
		} else if (r == WP__CL_LOST) {
			atomic_fetch_add_explicit(&c->lost, 1, memory_order_relaxed);
		} else if (atomic_load(&c->done)) {
			break;
		} else {
			sched_yield();
		}
	}
	return NULL;
}

int stress_deque(unsigned thieves, size_t items, size_t start, uint64_t seed,
                 char *err, size_t errlen)
{
	struct dq_ctx *c = calloc(1, sizeof *c);
	pthread_t th[16];
	int rc = 0;
	if (!c || thieves > 16)
		return fail(err, errlen, "setup: calloc or thieves %u > 16", thieves);
	c->items = items;
	c->counts = calloc(items, sizeof *c->counts);
	if (!c->counts || wp__deque_init(&c->d, 16, start))
		return fail(err, errlen, "setup: out of memory");
	for (unsigned i = 0; i < thieves; i++)
		pthread_create(&th[i], NULL, dq_thief, c);

	uint64_t rng = seed | 1, popped = 0;
	size_t next = 0;
	while (next < items) {
		/* Bursts of pushes (to grow the buffer) and pops. */
		unsigned burst = 1 + stress_rng(&rng) % 64;
		bool push = stress_rng(&rng) % 10 < 6;
		for (unsigned b = 0; b < burst && next < items; b++) {
			if (push) {
				wp_task t = { dq_marker, (void *)(uintptr_t)next++ };
				if (wp__deque_push_owner(&c->d, t)) {
					rc = fail(err, errlen, "push_owner: out of memory");
					goto out;
				}
			} else {
				wp_task t;
				if (wp__deque_pop_owner(&c->d, &t) == WP__CL_GOT) {
					dq_take(c, t);
					popped++;
				}
			}
		}
		if (!wp__deque_valid(&c->d)) {
			rc = fail(err, errlen, "deque invalid after %zu pushes", next);
			goto out;
		}
	}
	for (;;) {
		wp_task t;
		int r = wp__deque_pop_owner(&c->d, &t);
		if (r == WP__CL_GOT) {
			dq_take(c, t);
			popped++;
		} else if (wp__deque_peek_len(&c->d) == 0) {
			break;
		}
	}
out:
	atomic_store(&c->done, true);
	for (unsigned i = 0; i < thieves; i++)
		pthread_join(th[i], NULL);
	if (!rc && !wp__deque_valid(&c->d))
		rc = fail(err, errlen, "deque invalid at the end");
	if (!rc && atomic_load(&c->torn))
		rc = fail(err, errlen, "%lu torn/garbage tasks taken",
		          (unsigned long)atomic_load(&c->torn));
	if (!rc && atomic_load(&c->out_of_range))
		rc = fail(err, errlen, "%lu ids out of range",
		          (unsigned long)atomic_load(&c->out_of_range));
	for (size_t i = 0; !rc && i < items; i++) {
		unsigned n = atomic_load(&c->counts[i]);
		if (n != 1)
			rc = fail(err, errlen, "item %zu taken %u times (expected 1), "
			          "seed %lu", i, n, (unsigned long)seed);
	}
	uint64_t stolen = atomic_load(&c->stolen);
	if (!rc && popped + stolen != items)
		rc = fail(err, errlen, "popped %lu + stolen %lu != items %zu",
		          (unsigned long)popped, (unsigned long)stolen, items);
	if (!rc && items >= 64 && wp__deque_retired_count(&c->d) == 0)
		rc = fail(err, errlen, "buffer never grew (capacity %zu)",
		          wp__deque_capacity(&c->d));
	wp__deque_destroy(&c->d);
	free(c->counts);
	free(c);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Chase-Lev: batch takes and batch steals, every thread an owner             */
/* ------------------------------------------------------------------------ */

/* Thread 0 fills its deque in bursts and pops; threads 1..n pop their own
 * deques and batch-steal from random others (thread 0 and each other), so
 * every deque sees private zones, near-top takes, claims in flight and
 * `wanted` at once. */
struct bq_ctx {
	struct wp__deque *d;     /* one per thread */
	unsigned n;              /* threads */
	_Atomic unsigned *counts;
	size_t items;
	_Atomic bool filled;     /* thread 0 pushed everything */
	_Atomic uint64_t taken;  /* items counted, by anyone */
	_Atomic uint64_t bad;    /* torn or out of range */
	_Atomic uint64_t batches, lost, invalid;
	uint64_t seed;
	uint64_t deadline_ns;    /* give up (and report) after this */
};

struct bq_arg {
	struct bq_ctx *c;
	unsigned me;
};

static void bq_take(struct bq_ctx *c, wp_task t)
{
	uintptr_t id = (uintptr_t)t.arg;
	if (t.fn != dq_marker || id >= c->items) {
		atomic_fetch_add(&c->bad, 1);
		return;
	}
	atomic_fetch_add_explicit(&c->counts[id], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->taken, 1, memory_order_relaxed);
}

/* Pops up to `max` of our own tasks, sharing our private zone when asked. */
static size_t bq_pop_some(struct bq_ctx *c, unsigned me, size_t max)
{
	struct wp__deque *d = &c->d[me];
	size_t n = 0;
	wp_task t;
	while (n < max) {
		int r = wp__deque_pop_owner(d, &t);
		if (wp__deque_wanted(d))
			wp__deque_share_owner(d);
		if (r == WP__CL_LOST)
			atomic_fetch_add_explicit(&c->lost, 1, memory_order_relaxed);
		if (r != WP__CL_GOT)
			break;
		bq_take(c, t);
		n++;
	}
	if (!wp__deque_valid(d))
		atomic_fetch_add(&c->invalid, 1);
	return n;
}

static void *bq_thread(void *p)
{
	struct bq_arg *a = p;
	struct bq_ctx *c = a->c;
	unsigned me = a->me;
	uint64_t rng = (c->seed + me) * 0x9E3779B97F4A7C15u | 1;
	size_t next = 0;
	for (;;) {
		if (me == 0 && next < c->items) {
			/* Bursts of pushes (single and batch) and pops. */
			unsigned burst = 1 + stress_rng(&rng) % 300;
			if (stress_rng(&rng) % 10 < 6) {
				size_t k = burst;
				if (k > c->items - next)
					k = c->items - next;
				int rc = 0;
				if (k > 1 && stress_rng(&rng) % 2) {
					struct wp__src src = { NULL, dq_marker, next };
					rc = wp__deque_push_many_owner(&c->d[0], &src, 0, 1, k);
				} else {
					for (size_t i = 0; rc == 0 && i < k; i++)
						rc = wp__deque_push_owner(&c->d[0],
						        (wp_task){ dq_marker, (void *)(uintptr_t)(next + i) });
				}
				if (rc)
					atomic_fetch_add(&c->invalid, 1);
				next += k;
				if (next == c->items)
					atomic_store(&c->filled, true);
			} else {
				bq_pop_some(c, 0, burst);
			}
			continue;
		}
		if (bq_pop_some(c, me, 64) > 0)
			continue;
		/* Our deque is empty: one batch steal from a random other. */
		unsigned v = (unsigned)(stress_rng(&rng) % (c->n - 1));
		if (v >= me)
			v++;
		wp_task t;
		size_t got;
		int r = wp__deque_steal_batch_thief(&c->d[v], &c->d[me],
		                                    1 + stress_rng(&rng) % WP__CL_BATCH_MAX,
		                                    &t, &got);
		if (r == WP__CL_GOT) {
			bq_take(c, t);
			atomic_fetch_add_explicit(&c->batches, 1, memory_order_relaxed);
		} else if (r == WP__CL_LOST) {
			atomic_fetch_add_explicit(&c->lost, 1, memory_order_relaxed);
		} else if (atomic_load(&c->filled) &&
		           atomic_load(&c->taken) >= c->items) {
			break;
		} else if (wp__now_ns() > c->deadline_ns) {
			break; /* an item was lost: the counts will say which */
		} else {
			sched_yield();
		}
	}
	return NULL;
}

int stress_deque_batch(unsigned threads, size_t items, size_t start, uint64_t seed,
                       char *err, size_t errlen)
{
	if (threads < 2 || threads > 16)
		return fail(err, errlen, "setup: threads %u not in 2..16", threads);
	struct bq_ctx *c = calloc(1, sizeof *c);
	struct bq_arg args[16];
	pthread_t th[16];
	int rc = 0;
	if (!c)
		return fail(err, errlen, "setup: out of memory");
	c->n = threads;
	c->items = items;
	c->seed = seed;
	c->deadline_ns = wp__now_ns() + 20ull * 1000000000u;
	c->counts = calloc(items, sizeof *c->counts);
	c->d = aligned_alloc(WP_CACHE_LINE, threads * sizeof *c->d);
	if (!c->counts || !c->d)
		return fail(err, errlen, "setup: out of memory");
	for (unsigned i = 0; i < threads; i++)
		if (wp__deque_init(&c->d[i], 16, start))
			return fail(err, errlen, "setup: out of memory");
	if (items == 0)
		atomic_store(&c->filled, true);
	for (unsigned i = 0; i < threads; i++) {
		args[i] = (struct bq_arg){ c, i };
		pthread_create(&th[i], NULL, bq_thread, &args[i]);
	}
	for (unsigned i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	if (atomic_load(&c->bad))
		rc = fail(err, errlen, "%lu torn/garbage tasks taken",
		          (unsigned long)atomic_load(&c->bad));
	if (!rc && atomic_load(&c->invalid))
		rc = fail(err, errlen, "%lu invalid deque checks (or push failures)",
		          (unsigned long)atomic_load(&c->invalid));
	for (size_t i = 0; !rc && i < items; i++) {
		unsigned n = atomic_load(&c->counts[i]);
		if (n != 1)
			rc = fail(err, errlen, "item %zu taken %u times (expected 1), "
			          "seed %lu", i, n, (unsigned long)seed);
	}
	for (unsigned i = 0; !rc && i < threads; i++)
		if (!wp__deque_valid(&c->d[i]) || wp__deque_peek_len(&c->d[i]) != 0)
			rc = fail(err, errlen, "deque %u invalid or not empty at the end", i);
	for (unsigned i = 0; i < threads; i++)
		wp__deque_destroy(&c->d[i]);
	free(c->d);
	free(c->counts);
	free(c);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* A random task forest on a pool                                             */
/* ------------------------------------------------------------------------ */

enum mode { M_SPAWN, M_SPAWN_TO, M_BATCH, M_RANGE, M_FUTURE, M_MODES };

struct node {
	uint32_t first_child;
	uint16_t n_children;
	uint8_t mode;
};

static struct forest {
	wp_pool *pool;
	struct node *nodes;
	_Atomic unsigned *counts;
	size_t n;
	_Atomic bool failed;
	_Atomic int first_error;
	_Atomic unsigned not_worker;
	_Atomic unsigned bad_future;
} F;

static void forest_task(void *arg);

static int forest_call(void *arg, uint64_t *value)
{
	forest_task(arg);
	*value = (uint64_t)(uintptr_t)arg;
	return 0;
}

static void forest_error(int rc)
{
	int zero = 0;
	atomic_compare_exchange_strong(&F.first_error, &zero, rc);
	atomic_store(&F.failed, true);
}

static void forest_task(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	atomic_fetch_add_explicit(&F.counts[id], 1, memory_order_relaxed);
	if (wp_current_worker(F.pool) < 0)
		atomic_fetch_add(&F.not_worker, 1);
	const struct node *nd = &F.nodes[id];
	unsigned n = wp_workers(F.pool);
	uint64_t h = id * 0x9E3779B97F4A7C15u;
	int rc = 0;
	switch (nd->mode) {
	case M_SPAWN:
		for (unsigned k = 0; k < nd->n_children && !rc; k++)
			rc = wp_spawn(F.pool, forest_task, (void *)(uintptr_t)(nd->first_child + k));
		break;
	case M_SPAWN_TO:
		for (unsigned k = 0; k < nd->n_children && !rc; k++)
			rc = wp_spawn_to(F.pool, (int)((h >> (8 * k)) % n), forest_task,
			                 (void *)(uintptr_t)(nd->first_child + k));
		break;
	case M_BATCH: {
		wp_task t[8];
		for (unsigned k = 0; k < nd->n_children; k++)
			t[k] = (wp_task){ forest_task, (void *)(uintptr_t)(nd->first_child + k) };
		rc = wp_spawn_batch(F.pool, (h & 1) ? WP_DEAL : WP_ANY, t, nd->n_children);
		break;
	}
	case M_RANGE:
		rc = wp_spawn_range(F.pool, WP_DEAL, forest_task, nd->first_child, nd->n_children);
		break;
	case M_FUTURE: {
		wp_future *f[8];
		unsigned made = 0;
		for (unsigned k = 0; k < nd->n_children && !rc; k++) {
			rc = wp_submit(F.pool, forest_call,
			               (void *)(uintptr_t)(nd->first_child + k), &f[k]);
			if (!rc)
				made++;
		}
		for (unsigned k = 0; k < made; k++) {
			uint64_t v = 0;
			int g = wp_future_get(f[k], &v);
			if (g != 0 || v != nd->first_child + k)
				atomic_fetch_add(&F.bad_future, 1);
			wp_future_release(f[k]);
		}
		break;
	}
	}
	if (rc)
		forest_error(rc);
}

static void forest_build(size_t total, size_t roots, uint64_t seed)
{
	uint64_t rng = seed | 1;
	size_t next = roots;
	for (size_t i = 0; i < total; i++) {
		struct node *nd = &F.nodes[i];
		unsigned k = (unsigned)(stress_rng(&rng) % 6); /* mean 2.5 */
		if (k > total - next)
			k = (unsigned)(total - next);
		nd->first_child = (uint32_t)next;
		nd->n_children = (uint16_t)k;
		nd->mode = (uint8_t)(stress_rng(&rng) % M_MODES);
		next += k;
	}
}

int stress_pool(wp_policy policy, unsigned workers, size_t tasks,
                uint64_t seed, uint64_t idle_spin_ns, char *err, size_t errlen)
{
	int rc = 0;
	memset(&F, 0, sizeof F);
	F.n = tasks;
	F.nodes = calloc(tasks, sizeof *F.nodes);
	F.counts = calloc(tasks, sizeof *F.counts);
	if (!F.nodes || !F.counts)
		return fail(err, errlen, "setup: out of memory");
	size_t roots = tasks / 16 + 1;
	forest_build(tasks, roots, seed);

	wp_config c = wp_config_default();
	c.policy = policy;
	c.workers = workers;
	c.idle_spin_ns = idle_spin_ns;
	c.seed = seed;
	c.deque_initial = 16; /* grow under load */
	c.start_paused = seed & 1;
	c.take_batch = (seed >> 2) & 1 ? 1 : 32; /* private zones off / on */
	int e = wp_pool_create(&F.pool, &c);
	if (e)
		return fail(err, errlen, "wp_pool_create: %s", wp_strerror(e));

	/* Roots from outside, with every placement API, in four slices. */
	size_t q = roots / 4, r0 = 0;
	for (size_t i = r0; i < q && !rc; i++)
		rc = wp_spawn(F.pool, forest_task, (void *)(uintptr_t)i);
	for (size_t i = q; i < 2 * q && !rc; i++)
		rc = wp_spawn_to(F.pool, (int)(i % workers), forest_task, (void *)(uintptr_t)i);
	if (!rc)
		rc = wp_spawn_range(F.pool, WP_DEAL, forest_task, 2 * q, q);
	wp_future **futs = calloc(roots, sizeof *futs);
	size_t nf = 0;
	for (size_t i = 3 * q; i < roots && !rc; i++)
		if (!(rc = wp_submit(F.pool, forest_call, (void *)(uintptr_t)i, &futs[nf])))
			nf++;
	if (rc) {
		rc = fail(err, errlen, "submitting roots: %s", wp_strerror(rc));
		goto out;
	}
	if (c.start_paused && (e = wp_start(F.pool))) {
		rc = fail(err, errlen, "wp_start: %s", wp_strerror(e));
		goto out;
	}
	for (size_t k = 0; k < nf; k++) {
		uint64_t v = 0;
		int g = wp_future_get(futs[k], &v);
		if (g != 0 || v != 3 * q + k) {
			rc = fail(err, errlen, "root future %zu: rc %d value %lu (expected 0, %zu)",
			          k, g, (unsigned long)v, 3 * q + k);
			goto out;
		}
	}
	if ((e = wp_wait_idle(F.pool))) {
		rc = fail(err, errlen, "wp_wait_idle: %s", wp_strerror(e));
		goto out;
	}
	if (atomic_load(&F.failed)) {
		rc = fail(err, errlen, "a task's submission failed: %s",
		          wp_strerror(atomic_load(&F.first_error)));
		goto out;
	}
	for (size_t i = 0; i < tasks; i++) {
		unsigned n = atomic_load(&F.counts[i]);
		if (n != 1) {
			rc = fail(err, errlen, "task %zu ran %u times (expected 1); policy %s "
			          "seed %lu", i, n, wp_policy_name(policy), (unsigned long)seed);
			goto out;
		}
	}
	if (atomic_load(&F.not_worker) || atomic_load(&F.bad_future)) {
		rc = fail(err, errlen, "%u tasks ran off-worker, %u bad child futures",
		          atomic_load(&F.not_worker), atomic_load(&F.bad_future));
		goto out;
	}
	wp_pool_stats st;
	wp_pool_stats_get(F.pool, &st);
	if (st.total.tasks_run != tasks || st.submitted != tasks || st.completed != tasks) {
		rc = fail(err, errlen, "stats: tasks_run %lu submitted %lu completed %lu "
		          "(expected %zu each)", (unsigned long)st.total.tasks_run,
		          (unsigned long)st.submitted, (unsigned long)st.completed, tasks);
		goto out;
	}
	if (policy == WP_POLICY_GLOBAL && (st.total.steals || st.total.lifo_hits)) {
		rc = fail(err, errlen, "global policy stole %lu / used LIFO %lu",
		          (unsigned long)st.total.steals, (unsigned long)st.total.lifo_hits);
		goto out;
	}
	if (policy != WP_POLICY_CHASE_LEV && st.total.cas_failures) {
		rc = fail(err, errlen, "%s policy reports %lu CAS failures",
		          wp_policy_name(policy), (unsigned long)st.total.cas_failures);
		goto out;
	}
out:
	for (size_t k = 0; k < nf; k++)
		wp_future_release(futs[k]);
	free(futs);
	wp_pool_destroy(F.pool);
	free(F.nodes);
	free(F.counts);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Several outside submitters, bounded pool, shutdown in the middle           */
/* ------------------------------------------------------------------------ */

struct sub_ctx {
	wp_pool *pool;
	_Atomic unsigned *counts;     /* per task id */
	_Atomic unsigned char *accepted;
	size_t per;
	_Atomic size_t progress;
	_Atomic unsigned bad_rc;
	_Atomic int bad_rc_value;
};

struct sub_arg {
	struct sub_ctx *c;
	unsigned index;
	uint64_t seed;
};

static struct sub_ctx *SC;

static void sub_count(void *arg)
{
	atomic_fetch_add_explicit(&SC->counts[(uintptr_t)arg], 1, memory_order_relaxed);
	if (((uintptr_t)arg & 63) == 0)
		sched_yield(); /* let queues fill up */
}

static void *submitter(void *p)
{
	struct sub_arg *a = p;
	struct sub_ctx *c = a->c;
	uint64_t rng = a->seed | 1;
	for (size_t k = 0; k < c->per; k++) {
		uintptr_t id = a->index * c->per + k;
		int rc;
		switch (stress_rng(&rng) % 4) {
		case 0: rc = wp_spawn(c->pool, sub_count, (void *)id); break;
		case 1: rc = wp_try_spawn(c->pool, sub_count, (void *)id); break;
		case 2: rc = wp_spawn_timed(c->pool, sub_count, (void *)id, 1000000); break;
		default: rc = wp_spawn_to(c->pool, (int)(id % wp_workers(c->pool)), sub_count, (void *)id); break;
		}
		if (rc == 0)
			c->accepted[id] = 1;
		else if (rc != WP_EAGAIN && rc != WP_ETIMEDOUT && rc != WP_ESHUTDOWN) {
			atomic_fetch_add(&c->bad_rc, 1);
			atomic_store(&c->bad_rc_value, rc);
		}
		atomic_fetch_add(&c->progress, 1);
	}
	return NULL;
}

int stress_submitters(wp_policy policy, unsigned workers, unsigned submitters,
                      size_t per, size_t capacity, uint64_t seed,
                      char *err, size_t errlen)
{
	int rc = 0;
	struct sub_ctx c = { 0 };
	size_t total = submitters * per;
	c.per = per;
	c.counts = calloc(total, sizeof *c.counts);
	c.accepted = calloc(total, 1);
	if (!c.counts || !c.accepted || submitters > 16)
		return fail(err, errlen, "setup");
	SC = &c;
	wp_config cfg = wp_config_default();
	cfg.policy = policy;
	cfg.workers = workers;
	cfg.capacity = capacity;
	cfg.seed = seed;
	int e = wp_pool_create(&c.pool, &cfg);
	if (e)
		return fail(err, errlen, "wp_pool_create: %s", wp_strerror(e));
	pthread_t th[16];
	struct sub_arg args[16];
	for (unsigned i = 0; i < submitters; i++) {
		args[i] = (struct sub_arg){ &c, i, seed * 31 + i };
		pthread_create(&th[i], NULL, submitter, &args[i]);
	}
	/* Shut down (draining) once about half the submissions were made. */
	while (atomic_load(&c.progress) < total / 2)
		sched_yield();
	e = wp_shutdown(c.pool, WP_SHUTDOWN_DRAIN);
	for (unsigned i = 0; i < submitters; i++)
		pthread_join(th[i], NULL);
	if (e) {
		rc = fail(err, errlen, "wp_shutdown: %s", wp_strerror(e));
		goto out;
	}
	if (atomic_load(&c.bad_rc)) {
		rc = fail(err, errlen, "%u submissions failed with %s",
		          atomic_load(&c.bad_rc), wp_strerror(atomic_load(&c.bad_rc_value)));
		goto out;
	}
	/* After shutdown: definite refusal. */
	if ((e = wp_spawn(c.pool, sub_count, (void *)0)) != WP_ESHUTDOWN) {
		rc = fail(err, errlen, "spawn after shutdown returned %d (expected %d)",
		          e, WP_ESHUTDOWN);
		goto out;
	}
	size_t accepted = 0;
	for (size_t i = 0; i < total; i++) {
		unsigned n = atomic_load(&c.counts[i]);
		accepted += c.accepted[i];
		if (n != c.accepted[i]) {
			rc = fail(err, errlen, "task %zu ran %u times, accepted %u; seed %lu",
			          i, n, c.accepted[i], (unsigned long)seed);
			goto out;
		}
	}
	wp_pool_stats st;
	wp_pool_stats_get(c.pool, &st);
	if (st.total.tasks_run != accepted || st.submitted != accepted) {
		rc = fail(err, errlen, "tasks_run %lu submitted %lu, accepted %zu",
		          (unsigned long)st.total.tasks_run, (unsigned long)st.submitted, accepted);
		goto out;
	}
	if (capacity && st.max_queued > capacity) {
		rc = fail(err, errlen, "max_queued %lu > capacity %zu",
		          (unsigned long)st.max_queued, capacity);
		goto out;
	}
	/* + 1: the refused probe after shutdown. */
	if (accepted + st.rejected != total + 1) {
		rc = fail(err, errlen, "accepted %zu + rejected %lu != %zu + 1", accepted,
		          (unsigned long)st.rejected, total);
		goto out;
	}
out:
	wp_pool_destroy(c.pool);
	free(c.counts);
	free(c.accepted);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Futures, tokens and a discarding shutdown                                  */
/* ------------------------------------------------------------------------ */

struct fut_ctx {
	_Atomic unsigned *ran;
	wp_token **tokens;
};
static struct fut_ctx FC;

static int fut_call(void *arg, uint64_t *value)
{
	uintptr_t id = (uintptr_t)arg;
	atomic_fetch_add_explicit(&FC.ran[id], 1, memory_order_relaxed);
	if (wp_current_token() != FC.tokens[id])
		return -EFAULT;
	if (wp_token_cancelled(wp_current_token()))
		return WP_ECANCELED;
	if (id % 7 == 0)
		return -EIO;
	if (id % 5 == 0)
		sched_yield();
	*value = id * 3;
	return 0;
}

struct fut_waiter {
	wp_future **futs;
	size_t from, to;
};

static void *fut_wait_thread(void *p)
{
	struct fut_waiter *w = p;
	for (size_t i = w->from; i < w->to; i++)
		if (w->futs[i])
			wp_future_wait(w->futs[i]);
	return NULL;
}

int stress_futures(wp_policy policy, unsigned workers, size_t tasks,
                   uint64_t seed, char *err, size_t errlen)
{
	int rc = 0;
	FC.ran = calloc(tasks, sizeof *FC.ran);
	FC.tokens = calloc(tasks, sizeof *FC.tokens);
	wp_future **futs = calloc(tasks, sizeof *futs);
	if (!FC.ran || !FC.tokens || !futs)
		return fail(err, errlen, "setup");
	wp_config cfg = wp_config_default();
	cfg.policy = policy;
	cfg.workers = workers;
	cfg.seed = seed;
	wp_pool *pool;
	int e = wp_pool_create(&pool, &cfg);
	if (e)
		return fail(err, errlen, "wp_pool_create: %s", wp_strerror(e));
	uint64_t rng = seed | 1;
	size_t cut = tasks / 2 + stress_rng(&rng) % (tasks / 2);
	pthread_t waiter;
	struct fut_waiter wa = { futs, 0, tasks / 2 };
	bool waiter_started = false;
	for (size_t i = 0; i < tasks; i++) {
		FC.tokens[i] = wp_token_new();
		wp_submit_opts o = WP_SUBMIT_OPTS_INIT;
		o.token = FC.tokens[i];
		o.worker = (int)(stress_rng(&rng) % (workers + 1)) - 1; /* ANY or an index */
		e = wp_submit_ex(pool, fut_call, (void *)(uintptr_t)i, &o, &futs[i]);
		if (e) {
			rc = fail(err, errlen, "wp_submit_ex %zu: %s", i, wp_strerror(e));
			break;
		}
		if (stress_rng(&rng) % 4 == 0)
			wp_token_cancel(FC.tokens[i]);
		if (i == tasks / 2) {
			pthread_create(&waiter, NULL, fut_wait_thread, &wa);
			waiter_started = true;
		}
		if (i == cut)
			break; /* the rest is never submitted */
	}
	/* Cancel a few more while they may be running. */
	for (size_t i = 0; i < tasks; i += 3)
		if (futs[i])
			wp_token_cancel(FC.tokens[i]);
	e = wp_shutdown(pool, WP_SHUTDOWN_DISCARD);
	if (!rc && e)
		rc = fail(err, errlen, "wp_shutdown: %s", wp_strerror(e));
	if (waiter_started)
		pthread_join(waiter, NULL);
	size_t counts[5] = { 0 };
	for (size_t i = 0; !rc && i < tasks; i++) {
		if (!futs[i])
			continue;
		uint64_t v = 0;
		int g = wp_future_try_get(futs[i], &v);
		wp_future_state s = wp_future_state_of(futs[i]);
		unsigned ran = atomic_load(&FC.ran[i]);
		counts[s]++;
		bool ok;
		switch (s) {
		case WP_FUTURE_VALUE:
			ok = g == 0 && v == i * 3 && ran == 1;
			break;
		case WP_FUTURE_ERROR:
			ok = g == -EIO && ran == 1 && i % 7 == 0;
			break;
		case WP_FUTURE_CANCELLED:
			ok = g == WP_ECANCELED && ran <= 1 && wp_token_cancelled(FC.tokens[i]);
			break;
		case WP_FUTURE_BROKEN:
			ok = g == WP_EBROKEN && ran == 0;
			break;
		default:
			ok = false; /* still pending after shutdown */
		}
		if (!ok)
			rc = fail(err, errlen, "future %zu: state %d rc %d value %lu ran %u "
			          "cancelled %d; seed %lu", i, (int)s, g, (unsigned long)v, ran,
			          (int)wp_token_cancelled(FC.tokens[i]), (unsigned long)seed);
	}
	for (size_t i = 0; i < tasks; i++) {
		wp_future_release(futs[i]);
		wp_token_release(FC.tokens[i]);
	}
	wp_pool_destroy(pool);
	free(futs);
	free(FC.ran);
	free(FC.tokens);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Nested futures with helping: fib through the pool                          */
/* ------------------------------------------------------------------------ */

static wp_pool *NP;
static _Atomic unsigned nested_bad;

static int nested_fib(void *arg, uint64_t *v)
{
	uint64_t n = (uint64_t)(uintptr_t)arg;
	if (n < 2) {
		*v = n;
		return 0;
	}
	wp_future *a = NULL, *b = NULL;
	uint64_t x = 0, y = 0;
	/* Alternate placements: own queue, a given worker, anywhere. */
	int w = (int)(n % (wp_workers(NP) + 1)) - 1;
	if (wp_submit_to(NP, w, nested_fib, (void *)(uintptr_t)(n - 1), &a) ||
	    wp_submit(NP, nested_fib, (void *)(uintptr_t)(n - 2), &b)) {
		atomic_fetch_add(&nested_bad, 1);
	}
	if (b && wp_future_get(b, &y))
		atomic_fetch_add(&nested_bad, 1);
	if (a && wp_future_get(a, &x))
		atomic_fetch_add(&nested_bad, 1);
	wp_future_release(a);
	wp_future_release(b);
	*v = x + y;
	return 0;
}

int stress_nested(wp_policy policy, unsigned workers, unsigned n,
                  uint64_t idle_spin_ns, char *err, size_t errlen)
{
	static const uint64_t fibs[] = { 0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89,
	                                 144, 233, 377, 610, 987, 1597, 2584, 4181,
	                                 6765 };
	if (n >= sizeof fibs / sizeof fibs[0])
		return fail(err, errlen, "n %u too large", n);
	wp_config c = wp_config_default();
	c.policy = policy;
	c.workers = workers;
	c.idle_spin_ns = idle_spin_ns;
	atomic_store(&nested_bad, 0);
	int e = wp_pool_create(&NP, &c);
	if (e)
		return fail(err, errlen, "wp_pool_create: %s", wp_strerror(e));
	wp_future *f;
	uint64_t v = 0;
	int rc = 0;
	e = wp_submit(NP, nested_fib, (void *)(uintptr_t)n, &f);
	if (e)
		rc = fail(err, errlen, "wp_submit: %s", wp_strerror(e));
	else if ((e = wp_future_get(f, &v)) || v != fibs[n])
		rc = fail(err, errlen, "fib(%u): rc %d value %lu (expected 0, %lu)", n, e,
		          (unsigned long)v, (unsigned long)fibs[n]);
	else if (atomic_load(&nested_bad))
		rc = fail(err, errlen, "%u nested submissions or waits failed",
		          atomic_load(&nested_bad));
	if (!e)
		wp_future_release(f);
	wp_pool_destroy(NP);
	return rc;
}
