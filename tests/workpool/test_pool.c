/* test_pool.c — pool behaviour: configuration, placement, stealing on and
 * off, LIFO slot, paused pre-fill, parking and wake-ups, lifecycle errors,
 * counters and their convoy report. Behaviour and counts only, no timings:
 * where a test needs an interleaving it makes one with flags, not sleeps. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "workpool.h"

/* Spin (yielding) until cond, failing after a very generous bound of
 * iterations rather than time: a hang is a bug, not a slow machine. */
#define WAIT_UNTIL(cond)                                                       \
	do {                                                                    \
		unsigned long spins_ = 0;                                       \
		while (!(cond)) {                                               \
			cr_assert_lt(++spins_, 200000000ul, "waited forever for " #cond); \
			sched_yield();                                          \
		}                                                               \
	} while (0)

/* The convoy annotation API is weak in the library; defining it here makes
 * the workers' end-of-life reports observable. */
static pthread_mutex_t counters_lock = PTHREAD_MUTEX_INITIALIZER;
static struct { char name[32]; int64_t sum; unsigned reports; } counters[32];
void convoy_counter_set(const char *name, int64_t value)
{
	pthread_mutex_lock(&counters_lock);
	for (int i = 0; i < 32; i++) {
		if (!counters[i].reports || !strcmp(counters[i].name, name)) {
			snprintf(counters[i].name, sizeof counters[i].name, "%s", name);
			counters[i].sum += value;
			counters[i].reports++;
			break;
		}
	}
	pthread_mutex_unlock(&counters_lock);
}

static int64_t counter_sum(const char *name, unsigned *reports)
{
	for (int i = 0; i < 32; i++) {
		if (counters[i].reports && !strcmp(counters[i].name, name)) {
			*reports = counters[i].reports;
			return counters[i].sum;
		}
	}
	*reports = 0;
	return -1;
}

static wp_pool *make(wp_policy policy, unsigned workers, bool stealing, bool paused)
{
	wp_config c = wp_config_default();
	c.policy = policy;
	c.workers = workers;
	c.stealing = stealing;
	c.start_paused = paused;
	wp_pool *p = NULL;
	int rc = wp_pool_create(&p, &c);
	cr_assert_eq(rc, 0, "wp_pool_create: %s", wp_strerror(rc));
	return p;
}

/* ------------------------------------------------------------------------ */

Test(config, defaults_and_names, .timeout = 10)
{
	wp_config c = wp_config_default();
	cr_assert_eq(c.policy, WP_POLICY_CHASE_LEV);
	cr_assert_eq(c.idle_spin_ns, 10000);
	cr_assert_eq(c.capacity, 0);
	cr_assert(c.helping && c.stealing && c.lifo_slot);
	cr_assert_not(c.start_paused);
	cr_assert_eq(c.take_batch, 1);   /* safe by default: every queued task stealable */
	cr_assert(c.spread_start);
	for (wp_policy p = 0; p < WP_POLICY_COUNT; p++) {
		wp_policy back;
		cr_assert_eq(wp_policy_parse(wp_policy_name(p), &back), 0);
		cr_assert_eq(back, p);
	}
	wp_policy p;
	cr_assert_eq(wp_policy_parse("stealing", &p), 0);
	cr_assert_eq(p, WP_POLICY_CHASE_LEV);
	cr_assert_eq(wp_policy_parse("nonsense", &p), WP_EINVAL);
	cr_assert_null(wp_policy_name(WP_POLICY_COUNT));
	cr_assert_str_eq(wp_strerror(0), "success");
	cr_assert_not_null(strstr(wp_strerror(WP_EBROKEN), "broken"));
	cr_assert_not_null(strstr(wp_strerror(WP_ESHUTDOWN), "shut down"));
	cr_assert_not_null(wp_strerror(-ENOENT));
}

Test(config, invalid_and_defaults_applied, .timeout = 10)
{
	wp_pool *p;
	wp_config c = wp_config_default();
	c.policy = WP_POLICY_COUNT;
	cr_assert_eq(wp_pool_create(&p, &c), WP_EINVAL);
	c = wp_config_default();
	c.workers = 100000;
	cr_assert_eq(wp_pool_create(&p, &c), WP_EINVAL);
	c = wp_config_default();
	c.take_batch = 1025;
	cr_assert_eq(wp_pool_create(&p, &c), WP_EINVAL);
	cr_assert_eq(wp_pool_create(NULL, NULL), WP_EINVAL);
	cr_assert_eq(wp_pool_create(&p, NULL), 0);
	cr_assert_geq(wp_workers(p), 1, "workers = online CPUs");
	cr_assert_eq(wp_pool_policy(p), WP_POLICY_CHASE_LEV);
	cr_assert_eq(wp_current_worker(p), -1, "main thread is not a worker");
	cr_assert_eq(wp_spawn_to(p, (int)wp_workers(p), (wp_fn)abort, NULL), WP_ERANGE);
	cr_assert_eq(wp_spawn_to(p, -3, (wp_fn)abort, NULL), WP_ERANGE);
	cr_assert_eq(wp_spawn(p, NULL, NULL), WP_EINVAL);
	wp_pool_destroy(p);
	wp_pool_destroy(NULL);
}

/* ------------------------------------------------------------------------ */

static _Atomic unsigned ran_on[4];
static void where(void *arg)
{
	wp_pool *p = arg;
	int w = wp_current_worker(p);
	cr_assert_geq(w, 0);
	atomic_fetch_add(&ran_on[w], 1);
}

Test(placement, paused_deal_without_stealing_splits_evenly, .timeout = 10)
{
	for (wp_policy pol = WP_POLICY_LOCKED; pol < WP_POLICY_COUNT; pol++) {
		memset(ran_on, 0, sizeof ran_on);
		wp_pool *p = make(pol, 2, false, true);
		wp_task t[1000];
		for (int i = 0; i < 1000; i++)
			t[i] = (wp_task){ where, p };
		cr_assert_eq(wp_spawn_batch(p, WP_DEAL, t, 1000), 0);
		cr_assert_eq(wp_wait_idle(p), WP_EDEADLK, "paused with work queued");
		cr_assert_eq(wp_start(p), 0);
		cr_assert_eq(wp_start(p), WP_EALREADY);
		cr_assert_eq(wp_wait_idle(p), 0);
		cr_assert_eq(atomic_load(&ran_on[0]), 500, "%s", wp_policy_name(pol));
		cr_assert_eq(atomic_load(&ran_on[1]), 500, "%s", wp_policy_name(pol));
		wp_worker_stats s0, s1;
		wp_worker_stats_get(p, 0, &s0);
		wp_worker_stats_get(p, 1, &s1);
		cr_assert_eq(s0.tasks_run, 500);
		cr_assert_eq(s1.tasks_run, 500);
		cr_assert_eq(s0.steals + s1.steals, 0, "stealing is off");
		cr_assert_eq(wp_worker_stats_get(p, 2, &s0), WP_ERANGE);
		wp_pool_destroy(p);
	}
}

Test(placement, submit_to_a_running_worker_runs_there, .timeout = 10)
{
	for (wp_policy pol = WP_POLICY_LOCKED; pol < WP_POLICY_COUNT; pol++) {
		memset(ran_on, 0, sizeof ran_on);
		wp_pool *p = make(pol, 3, false, false);
		for (int i = 0; i < 300; i++)
			cr_assert_eq(wp_spawn_to(p, 2, where, p), 0);
		cr_assert_eq(wp_spawn_range(p, 1, (wp_fn)where, (uintptr_t)p, 1), 0);
		cr_assert_eq(wp_wait_idle(p), 0);
		cr_assert_eq(atomic_load(&ran_on[2]), 300, "%s", wp_policy_name(pol));
		cr_assert_eq(atomic_load(&ran_on[1]), 1);
		cr_assert_eq(atomic_load(&ran_on[0]), 0);
		wp_pool_destroy(p);
	}
}

/* Imbalance: everything on worker 0, whose first task waits until some other
 * worker has run a task — which only a steal can give it. */
static _Atomic bool other_ran;
static void imbalanced(void *arg)
{
	wp_pool *p = arg;
	if (wp_current_worker(p) == 0)
		WAIT_UNTIL(atomic_load(&other_ran));
	else
		atomic_store(&other_ran, true);
	atomic_fetch_add(&ran_on[wp_current_worker(p)], 1);
}

Test(placement, stealing_rebalances_work_placed_on_one_worker, .timeout = 20)
{
	for (wp_policy pol = WP_POLICY_LOCKED; pol < WP_POLICY_COUNT; pol++) {
		memset(ran_on, 0, sizeof ran_on);
		atomic_store(&other_ran, false);
		wp_pool *p = make(pol, 2, true, true);
		wp_task t[1001];
		for (int i = 0; i < 1001; i++)
			t[i] = (wp_task){ imbalanced, p };
		cr_assert_eq(wp_spawn_batch(p, 0, t, 1001), 0);
		cr_assert_eq(wp_start(p), 0);
		cr_assert_eq(wp_wait_idle(p), 0);
		wp_worker_stats s1;
		wp_worker_stats_get(p, 1, &s1);
		cr_assert_geq(s1.steals, 1, "%s", wp_policy_name(pol));
		cr_assert_geq(s1.tasks_run, 1);
		cr_assert_eq(atomic_load(&ran_on[0]) + atomic_load(&ran_on[1]), 1001);
		if (pol == WP_POLICY_LOCKED)
			cr_assert_geq(s1.stolen_tasks, 500,
			              "first steal takes half of the 1000 queued: %lu",
			              (unsigned long)s1.stolen_tasks);
		wp_pool_destroy(p);
	}
}

/* Task 62 raises a flag that task 63, the newest and so the first its owner
 * runs, waits for without a future. Only a thief can run task 62. */
static _Atomic bool pair_flag, pair_gave_up;
static void pair_task(void *arg)
{
	uintptr_t i = (uintptr_t)arg;
	if (i == 62)
		atomic_store(&pair_flag, true);
	if (i != 63)
		return;
	for (unsigned long spins = 0; !atomic_load(&pair_flag); spins++) {
		if (spins > 200000000ul) {
			atomic_store(&pair_gave_up, true);
			return;
		}
		sched_yield();
	}
}

Test(placement, take_batch_1_keeps_every_queued_task_stealable, .timeout = 30)
{
	wp_config c = wp_config_default();
	c.workers = 2;
	c.start_paused = true;
	c.take_batch = 1;
	wp_pool *p;
	cr_assert_eq(wp_pool_create(&p, &c), 0);
	cr_assert_eq(wp_spawn_range(p, 0, pair_task, 0, 64), 0);
	cr_assert_eq(wp_start(p), 0);
	cr_assert_eq(wp_wait_idle(p), 0);
	cr_assert_not(atomic_load(&pair_gave_up),
	              "task 62 stayed hidden while its owner waited in task 63");
	wp_pool_destroy(p);
}

/* Each task records whether its worker's mask equals the caller's. */
static cpu_set_t caller_mask;
static _Atomic unsigned mask_same, mask_other;
static void check_mask(void *arg)
{
	(void)arg;
	cpu_set_t m;
	cr_assert_eq(pthread_getaffinity_np(pthread_self(), sizeof m, &m), 0);
	atomic_fetch_add(CPU_EQUAL(&m, &caller_mask) ? &mask_same : &mask_other, 1);
}

Test(placement, spread_start_leaves_no_worker_pinned, .timeout = 10)
{
	cr_assert_eq(pthread_getaffinity_np(pthread_self(), sizeof caller_mask, &caller_mask), 0);
	wp_config c = wp_config_default();
	c.workers = 3;
	c.stealing = false;
	c.start_paused = true;
	wp_pool *p;
	cr_assert_eq(wp_pool_create(&p, &c), 0);
	cr_assert_eq(wp_spawn_range(p, WP_DEAL, check_mask, 0, 30), 0);
	cr_assert_eq(wp_start(p), 0);
	cr_assert_eq(wp_wait_idle(p), 0);
	cr_assert_eq(atomic_load(&mask_same), 30, "every worker kept the caller's mask");
	cr_assert_eq(atomic_load(&mask_other), 0);
	wp_pool_destroy(p);
}

Test(placement, stealing_off_leaves_work_where_it_was_put, .timeout = 10)
{
	for (wp_policy pol = WP_POLICY_LOCKED; pol < WP_POLICY_COUNT; pol++) {
		memset(ran_on, 0, sizeof ran_on);
		wp_pool *p = make(pol, 2, false, true);
		cr_assert_eq(wp_spawn_range(p, 0, (wp_fn)where, (uintptr_t)p, 0), 0);
		for (int i = 0; i < 2000; i++)
			cr_assert_eq(wp_spawn_to(p, 0, where, p), 0);
		cr_assert_eq(wp_start(p), 0);
		cr_assert_eq(wp_wait_idle(p), 0);
		cr_assert_eq(atomic_load(&ran_on[0]), 2000);
		cr_assert_eq(atomic_load(&ran_on[1]), 0);
		wp_pool_destroy(p);
	}
}

/* A chain: each task spawns the next from inside the worker. */
static _Atomic unsigned chain_left;
static void chain(void *arg)
{
	if (atomic_fetch_sub(&chain_left, 1) > 1)
		cr_assert_eq(wp_spawn(arg, chain, arg), 0);
}

Test(placement, spawn_from_a_worker_uses_the_lifo_slot, .timeout = 10)
{
	for (wp_policy pol = 0; pol < WP_POLICY_COUNT; pol++) {
		wp_pool *p = make(pol, 2, true, false);
		atomic_store(&chain_left, 200);
		cr_assert_eq(wp_spawn(p, chain, p), 0);
		cr_assert_eq(wp_wait_idle(p), 0);
		cr_assert_eq(atomic_load(&chain_left), 0);
		wp_pool_stats st;
		wp_pool_stats_get(p, &st);
		cr_assert_eq(st.total.tasks_run, 200);
		if (pol == WP_POLICY_GLOBAL)
			cr_assert_eq(st.total.lifo_hits, 0, "global: one queue only");
		else
			cr_assert_geq(st.total.lifo_hits, 150, "%s: lifo_hits %lu",
			              wp_policy_name(pol), (unsigned long)st.total.lifo_hits);
		cr_assert_eq(st.external_submits, 1);
		cr_assert_eq(st.submitted, 200);
		wp_pool_destroy(p);
	}
}

/* ------------------------------------------------------------------------ */

static void nop(void *arg) { (void)arg; }
static int value_fn(void *arg, uint64_t *v) { (void)arg; *v = 1; return 0; }

Test(parking, no_wake_signal_while_nobody_is_parked, .timeout = 20)
{
	for (wp_policy pol = 0; pol < WP_POLICY_COUNT; pol++) {
		wp_config c = wp_config_default();
		c.policy = pol;
		c.workers = 2;
		c.idle_spin_ns = 60ull * 1000000000; /* never parks during the test */
		wp_pool *p;
		cr_assert_eq(wp_pool_create(&p, &c), 0);
		for (int i = 0; i < 5000; i++)
			cr_assert_eq(wp_spawn(p, nop, NULL), 0);
		cr_assert_eq(wp_spawn_range(p, WP_DEAL, nop, 0, 5000), 0);
		cr_assert_eq(wp_wait_idle(p), 0);
		wp_pool_stats st;
		wp_pool_stats_get(p, &st);
		cr_assert_eq(st.total.parks, 0);
		cr_assert_eq(st.external_wakes, 0, "%s", wp_policy_name(pol));
		cr_assert_eq(st.total.wakes, 0);
		/* No assertion on idle_spins: on a busy machine the pool can go
		 * idle before any worker has run out of work and spun. */
		wp_pool_destroy(p);
	}
}

Test(parking, one_submission_wakes_exactly_one_parked_worker, .timeout = 20)
{
	for (wp_policy pol = 0; pol < WP_POLICY_COUNT; pol++) {
		wp_config c = wp_config_default();
		c.policy = pol;
		c.workers = 3;
		c.idle_spin_ns = 0; /* park at once, as seed 002's --idle-spin 0 */
		wp_pool *p;
		cr_assert_eq(wp_pool_create(&p, &c), 0);
		wp_pool_stats st;
		/* Wait until all three have parked. */
		WAIT_UNTIL((wp_pool_stats_get(p, &st), st.total.parks >= 3));
		cr_assert_eq(wp_spawn(p, nop, NULL), 0);
		cr_assert_eq(wp_wait_idle(p), 0);
		wp_pool_stats_get(p, &st);
		cr_assert_eq(st.external_wakes, 1, "%s: %lu wakes", wp_policy_name(pol),
		             (unsigned long)st.external_wakes);
		cr_assert_eq(st.total.tasks_run, 1);
		cr_assert_eq(st.total.idle_spins, 0, "idle_spin_ns = 0 never polls");
		wp_pool_destroy(p);
	}
}

/* ------------------------------------------------------------------------ */

static _Atomic int inner_rc[2];
static void call_lifecycle_from_worker(void *arg)
{
	atomic_store(&inner_rc[0], wp_wait_idle(arg));
	atomic_store(&inner_rc[1], wp_shutdown(arg, WP_SHUTDOWN_DRAIN));
}

Test(lifecycle, waits_from_a_worker_are_refused, .timeout = 10)
{
	wp_pool *p = make(WP_POLICY_CHASE_LEV, 2, true, false);
	cr_assert_eq(wp_spawn(p, call_lifecycle_from_worker, p), 0);
	cr_assert_eq(wp_wait_idle(p), 0);
	cr_assert_eq(atomic_load(&inner_rc[0]), WP_EDEADLK);
	cr_assert_eq(atomic_load(&inner_rc[1]), WP_EDEADLK);
	wp_pool_destroy(p);
}

static _Atomic unsigned drained;
static void slow_count(void *arg)
{
	for (int i = 0; i < 100; i++)
		sched_yield();
	atomic_fetch_add(&drained, 1);
	(void)arg;
}

Test(lifecycle, shutdown_drains_then_refuses, .timeout = 20)
{
	for (wp_policy pol = 0; pol < WP_POLICY_COUNT; pol++) {
		atomic_store(&drained, 0);
		wp_pool *p = make(pol, 2, true, false);
		for (int i = 0; i < 500; i++)
			cr_assert_eq(wp_spawn(p, slow_count, NULL), 0);
		cr_assert_eq(wp_shutdown(p, WP_SHUTDOWN_DRAIN), 0);
		cr_assert_eq(atomic_load(&drained), 500, "%s", wp_policy_name(pol));
		cr_assert_eq(wp_spawn(p, nop, NULL), WP_ESHUTDOWN);
		cr_assert_eq(wp_try_spawn(p, nop, NULL), WP_ESHUTDOWN);
		cr_assert_eq(wp_spawn_range(p, WP_DEAL, nop, 0, 10), WP_ESHUTDOWN);
		wp_future *f = NULL;
		cr_assert_eq(wp_submit(p, value_fn, NULL, &f), WP_ESHUTDOWN);
		cr_assert_null(f);
		cr_assert_eq(wp_start(p), WP_ESHUTDOWN);
		cr_assert_eq(wp_shutdown(p, WP_SHUTDOWN_DRAIN), 0, "idempotent");
		cr_assert_eq(wp_wait_idle(p), 0);
		wp_pool_stats st;
		wp_pool_stats_get(p, &st);
		cr_assert_eq(st.rejected, 4);
		wp_pool_destroy(p);
	}
}

Test(lifecycle, destroying_a_paused_pool_runs_its_work, .timeout = 10)
{
	atomic_store(&drained, 0);
	wp_pool *p = make(WP_POLICY_LOCKED, 2, true, true);
	cr_assert_eq(wp_spawn_range(p, WP_DEAL, slow_count, 0, 100), 0);
	wp_pool_destroy(p);
	cr_assert_eq(atomic_load(&drained), 100);
}

Test(lifecycle, discard_drops_queued_work, .timeout = 10)
{
	atomic_store(&drained, 0);
	wp_pool *p = make(WP_POLICY_CHASE_LEV, 2, true, true);
	cr_assert_eq(wp_spawn_range(p, WP_DEAL, slow_count, 0, 100), 0);
	cr_assert_eq(wp_shutdown(p, WP_SHUTDOWN_DISCARD), 0);
	cr_assert_eq(atomic_load(&drained), 0);
	wp_pool_stats st;
	wp_pool_stats_get(p, &st);
	cr_assert_eq(st.dropped, 100);
	cr_assert_eq(st.total.tasks_run, 0);
	cr_assert_eq(st.completed, 100, "dropped tasks complete (unrun)");
	wp_pool_destroy(p);
}

/* ------------------------------------------------------------------------ */

Test(counters, reported_through_convoy_at_worker_exit, .timeout = 10)
{
	wp_pool *p = make(WP_POLICY_LOCKED, 2, true, false);
	cr_assert_eq(wp_spawn_range(p, WP_DEAL, nop, 0, 3000), 0);
	cr_assert_eq(wp_wait_idle(p), 0);
	/* Once quiescent, steals and tasks_run no longer change (idle spins
	 * and parks still may). */
	wp_pool_stats st;
	wp_pool_stats_get(p, &st);
	wp_pool_destroy(p);
	unsigned reports;
	cr_assert_eq(counter_sum("tasks_run", &reports), 3000);
	cr_assert_eq(reports, 2, "one report per worker");
	cr_assert_eq(counter_sum("steals", &reports), (int64_t)st.total.steals);
	cr_assert_geq(counter_sum("parks", &reports), (int64_t)st.total.parks);
	cr_assert_geq(counter_sum("lock_contended", &reports), 0);
	cr_assert_geq(counter_sum("idle_spins", &reports), 0);
	cr_assert_geq(counter_sum("cas_failures", &reports), 0);
	cr_assert_geq(counter_sum("wakes", &reports), 0);
	cr_assert_geq(counter_sum("steal_failures", &reports), 0);
}
