/* test_future.c — futures (value, error, cancelled, broken promise),
 * cancellation tokens, backpressure (blocking / try / timed submit against a
 * capacity), and nested submission with and without helping. Behaviour and
 * counts only; the one timeout used (helping off) must expire because the
 * awaited task cannot run, not because something was slow. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "workpool.h"

#define WAIT_UNTIL(cond)                                                       \
	do {                                                                    \
		unsigned long spins_ = 0;                                       \
		while (!(cond)) {                                               \
			cr_assert_lt(++spins_, 200000000ul, "waited forever for " #cond); \
			sched_yield();                                          \
		}                                                               \
	} while (0)

static wp_pool *make(wp_policy policy, unsigned workers, bool helping,
                     size_t capacity, bool paused)
{
	wp_config c = wp_config_default();
	c.policy = policy;
	c.workers = workers;
	c.helping = helping;
	c.capacity = capacity;
	c.start_paused = paused;
	wp_pool *p = NULL;
	int rc = wp_pool_create(&p, &c);
	cr_assert_eq(rc, 0, "wp_pool_create: %s", wp_strerror(rc));
	return p;
}

static _Atomic unsigned calls;

static int answer(void *arg, uint64_t *v)
{
	atomic_fetch_add(&calls, 1);
	*v = (uint64_t)(uintptr_t)arg;
	return 0;
}

static int fails(void *arg, uint64_t *v)
{
	atomic_fetch_add(&calls, 1);
	(void)arg;
	*v = 99;
	return -EIO;
}

/* ------------------------------------------------------------------------ */

Test(future, value_and_error, .timeout = 10)
{
	for (wp_policy pol = 0; pol < WP_POLICY_COUNT; pol++) {
		wp_pool *p = make(pol, 2, true, 0, false);
		wp_future *a, *b;
		uint64_t v = 0;
		cr_assert_eq(wp_submit(p, answer, (void *)42, &a), 0);
		cr_assert_eq(wp_submit_to(p, 1, fails, NULL, &b), 0);
		cr_assert_eq(wp_future_get(a, &v), 0);
		cr_assert_eq(v, 42);
		cr_assert_eq(wp_future_state_of(a), WP_FUTURE_VALUE);
		cr_assert_eq(wp_future_get(a, NULL), 0, "get twice is fine");
		v = 7;
		cr_assert_eq(wp_future_get(b, &v), -EIO);
		cr_assert_eq(v, 7, "no value on error");
		cr_assert_eq(wp_future_state_of(b), WP_FUTURE_ERROR);
		wp_future_release(a);
		wp_future_release(b);
		wp_pool_destroy(p);
	}
}

Test(future, outlives_its_pool, .timeout = 10)
{
	wp_pool *p = make(WP_POLICY_CHASE_LEV, 2, true, 0, false);
	wp_future *f;
	cr_assert_eq(wp_submit(p, answer, (void *)5, &f), 0);
	wp_pool_destroy(p); /* drains */
	uint64_t v;
	cr_assert_eq(wp_future_try_get(f, &v), 0);
	cr_assert_eq(v, 5);
	cr_assert_eq(wp_future_wait(f), 0);
	wp_future_release(f);
}

static _Atomic bool gate;
static _Atomic unsigned started;
static int gated(void *arg, uint64_t *v)
{
	atomic_fetch_add(&started, 1);
	WAIT_UNTIL(atomic_load(&gate));
	*v = (uint64_t)(uintptr_t)arg;
	return 0;
}

Test(future, pending_try_get_and_timedwait, .timeout = 10)
{
	atomic_store(&gate, false);
	wp_pool *p = make(WP_POLICY_LOCKED, 1, true, 0, false);
	wp_future *f;
	cr_assert_eq(wp_submit(p, gated, (void *)3, &f), 0);
	cr_assert_eq(wp_future_try_get(f, NULL), WP_EBUSY);
	cr_assert_eq(wp_future_state_of(f), WP_FUTURE_PENDING);
	cr_assert_eq(wp_future_timedwait(f, 1000000), WP_ETIMEDOUT,
	             "cannot be ready: the task waits for the gate");
	atomic_store(&gate, true);
	cr_assert_eq(wp_future_timedwait(f, 3600ull * 1000000000), 0);
	uint64_t v;
	cr_assert_eq(wp_future_get(f, &v), 0);
	cr_assert_eq(v, 3);
	wp_future_release(f);
	wp_pool_destroy(p);
}

/* ------------------------------------------------------------------------ */

Test(cancel, token_basics, .timeout = 10)
{
	wp_token *t = wp_token_new();
	cr_assert_not_null(t);
	cr_assert_not(wp_token_cancelled(t));
	cr_assert(wp_token_cancel(t));
	cr_assert_not(wp_token_cancel(t), "second cancel changes nothing");
	cr_assert(wp_token_cancelled(t));
	cr_assert_eq(wp_token_retain(t), t);
	wp_token_release(t);
	wp_token_release(t);
	cr_assert_not(wp_token_cancelled(NULL));
	cr_assert_null(wp_current_token(), "not inside a task");
}

Test(cancel, queued_task_completes_cancelled_without_running, .timeout = 10)
{
	for (wp_policy pol = 0; pol < WP_POLICY_COUNT; pol++) {
		atomic_store(&calls, 0);
		wp_pool *p = make(pol, 2, true, 0, true);
		wp_token *t = wp_token_new();
		wp_submit_opts o = WP_SUBMIT_OPTS_INIT;
		o.token = t;
		wp_future *f, *g;
		cr_assert_eq(wp_submit_ex(p, answer, (void *)1, &o, &f), 0);
		o.worker = 1;
		cr_assert_eq(wp_spawn_ex(p, (wp_fn)abort, NULL, &o), 0,
		             "a cancelled fire-and-forget task must never run");
		o.token = NULL;
		cr_assert_eq(wp_submit_ex(p, answer, (void *)2, &o, &g), 0);
		wp_token_cancel(t);
		wp_token_release(t); /* the queued tasks hold their own references */
		cr_assert_eq(wp_start(p), 0);
		uint64_t v = 0;
		cr_assert_eq(wp_future_get(f, &v), WP_ECANCELED);
		cr_assert_eq(wp_future_state_of(f), WP_FUTURE_CANCELLED);
		cr_assert_eq(wp_future_get(g, &v), 0);
		cr_assert_eq(v, 2);
		cr_assert_eq(wp_wait_idle(p), 0);
		cr_assert_eq(atomic_load(&calls), 1, "only the uncancelled one ran");
		wp_pool_stats st;
		wp_pool_stats_get(p, &st);
		cr_assert_eq(st.total.tasks_cancelled, 2, "%s", wp_policy_name(pol));
		cr_assert_eq(st.total.tasks_run, 1);
		cr_assert_eq(st.completed, 3);
		wp_future_release(f);
		wp_future_release(g);
		wp_pool_destroy(p);
	}
}

static _Atomic bool spinning;
static int cooperative(void *arg, uint64_t *v)
{
	wp_token *t = wp_current_token();
	cr_assert_eq(t, arg, "the running task sees its own token");
	atomic_store(&spinning, true);
	while (!wp_token_cancelled(t))
		sched_yield();
	*v = 1;
	return WP_ECANCELED; /* acknowledged */
}

Test(cancel, running_task_observes_and_acknowledges, .timeout = 10)
{
	wp_pool *p = make(WP_POLICY_CHASE_LEV, 2, true, 0, false);
	wp_token *t = wp_token_new();
	wp_submit_opts o = WP_SUBMIT_OPTS_INIT;
	o.token = t;
	wp_future *f;
	cr_assert_eq(wp_submit_ex(p, cooperative, t, &o, &f), 0);
	WAIT_UNTIL(atomic_load(&spinning));
	cr_assert(wp_token_cancel(t));
	cr_assert_eq(wp_future_get(f, NULL), WP_ECANCELED);
	cr_assert_eq(wp_future_state_of(f), WP_FUTURE_CANCELLED);
	/* Counters are final once the pool is idle (a future is ready a moment
	 * before its worker counts the task). */
	cr_assert_eq(wp_wait_idle(p), 0);
	wp_pool_stats st;
	wp_pool_stats_get(p, &st);
	cr_assert_eq(st.total.tasks_run, 1, "it ran: cancelled cooperatively");
	cr_assert_eq(st.total.tasks_cancelled, 0);
	wp_future_release(f);
	wp_token_release(t);
	wp_pool_destroy(p);
}

Test(cancel, discarded_task_is_a_broken_promise, .timeout = 10)
{
	for (wp_policy pol = 0; pol < WP_POLICY_COUNT; pol++) {
		atomic_store(&calls, 0);
		wp_pool *p = make(pol, 2, true, 0, true);
		wp_future *f[10];
		for (int i = 0; i < 10; i++)
			cr_assert_eq(wp_submit_to(p, i % 2, answer, NULL, &f[i]), 0);
		cr_assert_eq(wp_shutdown(p, WP_SHUTDOWN_DISCARD), 0);
		for (int i = 0; i < 10; i++) {
			cr_assert_eq(wp_future_get(f[i], NULL), WP_EBROKEN);
			cr_assert_eq(wp_future_state_of(f[i]), WP_FUTURE_BROKEN);
			wp_future_release(f[i]);
		}
		cr_assert_eq(atomic_load(&calls), 0);
		wp_pool_stats st;
		wp_pool_stats_get(p, &st);
		cr_assert_eq(st.dropped, 10, "%s", wp_policy_name(pol));
		wp_pool_destroy(p);
	}
}

Test(cancel, released_future_still_runs, .timeout = 10)
{
	atomic_store(&calls, 0);
	wp_pool *p = make(WP_POLICY_LOCKED, 2, true, 0, false);
	for (int i = 0; i < 100; i++)
		cr_assert_eq(wp_submit(p, answer, NULL, NULL), 0, "out may be NULL");
	wp_future *f;
	cr_assert_eq(wp_submit(p, answer, NULL, &f), 0);
	wp_future_release(f);
	cr_assert_eq(wp_wait_idle(p), 0);
	cr_assert_eq(atomic_load(&calls), 101);
	wp_pool_destroy(p);
}

/* ------------------------------------------------------------------------ */

static void gated_fn(void *arg)
{
	uint64_t v;
	gated(arg, &v);
}

struct blocked_spawn { wp_pool *p; _Atomic int rc; _Atomic bool done; };
static void *blocking_spawner(void *arg)
{
	struct blocked_spawn *b = arg;
	atomic_store(&b->rc, wp_spawn(b->p, gated_fn, NULL));
	atomic_store(&b->done, true);
	return NULL;
}

Test(backpressure, block_try_timed_against_capacity, .timeout = 20)
{
	for (wp_policy pol = 0; pol < WP_POLICY_COUNT; pol++) {
		atomic_store(&gate, false);
		atomic_store(&started, 0);
		wp_pool *p = make(pol, 1, true, 2, false);
		/* One task runs (and holds the only worker), two wait: full. */
		cr_assert_eq(wp_spawn(p, gated_fn, NULL), 0);
		WAIT_UNTIL(atomic_load(&started) == 1);
		cr_assert_eq(wp_spawn(p, gated_fn, NULL), 0);
		cr_assert_eq(wp_spawn_to(p, 0, gated_fn, NULL), 0);
		cr_assert_eq(wp_try_spawn(p, gated_fn, NULL), WP_EAGAIN);
		wp_submit_opts o = WP_SUBMIT_OPTS_INIT;
		o.admit = WP_ADMIT_TRY;
		cr_assert_eq(wp_submit_ex(p, answer, NULL, &o, NULL), WP_EAGAIN);
		cr_assert_eq(wp_spawn_timed(p, gated_fn, NULL, 2000000), WP_ETIMEDOUT);
		/* A blocking submitter waits until the gate lets tasks finish. */
		struct blocked_spawn b = { .p = p };
		pthread_t th;
		pthread_create(&th, NULL, blocking_spawner, &b);
		wp_pool_stats st;
		WAIT_UNTIL((wp_pool_stats_get(p, &st), st.blocked_submits >= 2));
		cr_assert_not(atomic_load(&b.done), "%s: must still be blocked",
		              wp_policy_name(pol));
		atomic_store(&gate, true);
		pthread_join(th, NULL);
		cr_assert_eq(atomic_load(&b.rc), 0);
		cr_assert_eq(wp_wait_idle(p), 0);
		wp_pool_stats_get(p, &st);
		cr_assert_eq(st.total.tasks_run, 4);
		cr_assert_eq(st.rejected, 3);
		cr_assert_leq(st.max_queued, 2);
		cr_assert_eq(st.max_queued, 2);
		wp_pool_destroy(p);
	}
}

Test(backpressure, paused_pool_full_is_a_deadlock_not_a_hang, .timeout = 10)
{
	wp_pool *p = make(WP_POLICY_LOCKED, 2, true, 4, true);
	cr_assert_eq(wp_spawn_range(p, WP_DEAL, (wp_fn)abort, 0, 4), 0);
	cr_assert_eq(wp_spawn((wp_pool *)p, (wp_fn)abort, NULL), WP_EDEADLK);
	cr_assert_eq(wp_shutdown(p, WP_SHUTDOWN_DISCARD), 0);
	wp_pool_destroy(p);
}

static void nop(void *arg) { (void)arg; }
static _Atomic bool worker_spawned_all;
static void spawns_past_capacity(void *arg)
{
	/* Inside a worker: never refused or blocked for capacity. */
	for (int i = 0; i < 50; i++)
		cr_assert_eq(wp_try_spawn(arg, nop, NULL), 0);
	atomic_store(&worker_spawned_all, true);
}

Test(backpressure, workers_are_never_blocked_by_capacity, .timeout = 10)
{
	wp_pool *p = make(WP_POLICY_CHASE_LEV, 1, true, 2, false);
	cr_assert_eq(wp_spawn(p, spawns_past_capacity, p), 0);
	cr_assert_eq(wp_wait_idle(p), 0);
	cr_assert(atomic_load(&worker_spawned_all));
	wp_pool_stats st;
	wp_pool_stats_get(p, &st);
	cr_assert_eq(st.total.tasks_run, 51);
	wp_pool_destroy(p);
}

/* ------------------------------------------------------------------------ */
/* Nested submission                                                          */

static wp_pool *fib_pool;
static int fib(void *arg, uint64_t *v)
{
	uint64_t n = (uint64_t)(uintptr_t)arg;
	if (n < 2) {
		*v = n;
		return 0;
	}
	wp_future *a, *b;
	cr_assert_eq(wp_submit(fib_pool, fib, (void *)(uintptr_t)(n - 1), &a), 0);
	cr_assert_eq(wp_submit(fib_pool, fib, (void *)(uintptr_t)(n - 2), &b), 0);
	uint64_t x = 0, y = 0;
	cr_assert_eq(wp_future_get(a, &x), 0);
	cr_assert_eq(wp_future_get(b, &y), 0);
	wp_future_release(a);
	wp_future_release(b);
	*v = x + y;
	return 0;
}

Test(nested, helping_completes_on_one_worker, .timeout = 20)
{
	for (wp_policy pol = 0; pol < WP_POLICY_COUNT; pol++) {
		fib_pool = make(pol, 1, true, 0, false);
		uint64_t v = 0;
		wp_future *f;
		cr_assert_eq(wp_submit(fib_pool, fib, (void *)16, &f), 0);
		cr_assert_eq(wp_future_get(f, &v), 0);
		cr_assert_eq(v, 987, "%s", wp_policy_name(pol));
		cr_assert_eq(wp_wait_idle(fib_pool), 0);
		wp_pool_stats st;
		wp_pool_stats_get(fib_pool, &st);
		cr_assert_gt(st.total.tasks_helped, 0);
		wp_future_release(f);
		wp_pool_destroy(fib_pool);
	}
}

Test(nested, helping_completes_on_many_workers, .timeout = 20)
{
	for (wp_policy pol = 0; pol < WP_POLICY_COUNT; pol++) {
		fib_pool = make(pol, 3, true, 0, false);
		uint64_t v = 0;
		wp_future *f;
		cr_assert_eq(wp_submit(fib_pool, fib, (void *)18, &f), 0);
		cr_assert_eq(wp_future_get(f, &v), 0);
		cr_assert_eq(v, 2584, "%s", wp_policy_name(pol));
		wp_future_release(f);
		wp_pool_destroy(fib_pool);
	}
}

static _Atomic int parent_rc;
static _Atomic bool child_ran;
static int child(void *arg, uint64_t *v)
{
	atomic_store(&child_ran, true);
	*v = 1;
	return 0;
}
static void parent(void *arg)
{
	wp_future *c;
	cr_assert_eq(wp_submit(arg, child, NULL, &c), 0);
	/* With helping off and one worker, the child cannot run while we wait. */
	atomic_store(&parent_rc, wp_future_timedwait(c, 20000000));
	wp_future_release(c);
}

Test(nested, without_helping_the_only_worker_starves, .timeout = 10)
{
	for (wp_policy pol = 0; pol < WP_POLICY_COUNT; pol++) {
		atomic_store(&child_ran, false);
		wp_pool *p = make(pol, 1, false, 0, false);
		cr_assert_eq(wp_spawn(p, parent, p), 0);
		cr_assert_eq(wp_wait_idle(p), 0);
		cr_assert_eq(atomic_load(&parent_rc), WP_ETIMEDOUT, "%s",
		             wp_policy_name(pol));
		cr_assert(atomic_load(&child_ran), "the child ran after the parent gave up");
		wp_pool_stats st;
		wp_pool_stats_get(p, &st);
		cr_assert_eq(st.total.tasks_helped, 0);
		wp_pool_destroy(p);
	}
}

/* A worker helping-waits with nothing to run, parks, and is woken by the
 * completion of what it waits for (not by new work). */
static wp_pool *hp;
static _Atomic uint64_t parks_before;
static int slow_child(void *arg, uint64_t *v)
{
	wp_worker_stats s;
	/* Wait until the parent (worker 0) has parked once more. */
	WAIT_UNTIL((wp_worker_stats_get(hp, 0, &s), s.parks > atomic_load(&parks_before)));
	*v = 77;
	return 0;
}
static int parent_on_0(void *arg, uint64_t *v)
{
	wp_worker_stats s;
	wp_worker_stats_get(hp, 0, &s);
	atomic_store(&parks_before, s.parks);
	wp_future *c;
	cr_assert_eq(wp_submit_to(hp, 1, slow_child, NULL, &c), 0);
	int rc = wp_future_get(c, v);
	wp_future_release(c);
	return rc;
}

Test(nested, parked_helper_is_woken_by_completion, .timeout = 20)
{
	for (wp_policy pol = WP_POLICY_LOCKED; pol < WP_POLICY_COUNT; pol++) {
		wp_config c = wp_config_default();
		c.policy = pol;
		c.workers = 2;
		c.stealing = false; /* the child stays on worker 1 */
		c.idle_spin_ns = 0;
		cr_assert_eq(wp_pool_create(&hp, &c), 0);
		wp_future *f;
		cr_assert_eq(wp_submit_to(hp, 0, parent_on_0, NULL, &f), 0);
		uint64_t v = 0;
		cr_assert_eq(wp_future_get(f, &v), 0);
		cr_assert_eq(v, 77, "%s", wp_policy_name(pol));
		wp_worker_stats s;
		wp_worker_stats_get(hp, 1, &s);
		cr_assert_geq(s.wakes, 1, "the child's completion woke the parent");
		wp_future_release(f);
		wp_pool_destroy(hp);
	}
}
