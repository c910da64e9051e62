/* test_stress.c — the randomized stress tests at full size (stress.c), one
 * Criterion test per policy and configuration. The same functions run under
 * ThreadSanitizer at reduced size in test_workpool_tsan. */
#include <criterion/criterion.h>

#include "stress.h"

#define ERRBUF 512

#define STRESS_POOL_TEST(name, policy, workers, tasks, seed, spin)             \
	Test(stress, name, .timeout = 30)                                       \
	{                                                                       \
		char err[ERRBUF] = "";                                          \
		cr_assert_eq(stress_pool(policy, workers, tasks, seed, spin, err, \
		                         sizeof err), 0, "%s", err);            \
	}

STRESS_POOL_TEST(pool_global_2w, WP_POLICY_GLOBAL, 2, 60000, 11, 10000)
STRESS_POOL_TEST(pool_global_3w_nospin, WP_POLICY_GLOBAL, 3, 30000, 12, 0)
STRESS_POOL_TEST(pool_locked_2w, WP_POLICY_LOCKED, 2, 60000, 21, 10000)
STRESS_POOL_TEST(pool_locked_4w_nospin, WP_POLICY_LOCKED, 4, 30000, 22, 0)
STRESS_POOL_TEST(pool_chase_lev_2w, WP_POLICY_CHASE_LEV, 2, 60000, 31, 10000)
STRESS_POOL_TEST(pool_chase_lev_4w_nospin, WP_POLICY_CHASE_LEV, 4, 30000, 32, 0)
STRESS_POOL_TEST(pool_chase_lev_1w, WP_POLICY_CHASE_LEV, 1, 20000, 33, 0)

Test(stress, pool_many_seeds, .timeout = 60)
{
	/* Small forests, many seeds and shapes: different interleavings of
	 * start-up, parking and shutdown rather than volume. */
	for (uint64_t seed = 100; seed < 130; seed++) {
		char err[ERRBUF] = "";
		wp_policy p = (wp_policy)(seed % WP_POLICY_COUNT);
		unsigned workers = 1 + seed % 4;
		cr_assert_eq(stress_pool(p, workers, 500 + seed * 7, seed,
		                         (seed & 2) ? 0 : 2000, err, sizeof err), 0,
		             "%s", err);
	}
}

Test(stress, chase_lev_owner_thieves, .timeout = 30)
{
	char err[ERRBUF] = "";
	cr_assert_eq(stress_deque(3, 400000, 0, 7, err, sizeof err), 0, "%s", err);
}

Test(stress, chase_lev_wraparound, .timeout = 30)
{
	/* Indices start 100k below SIZE_MAX and run past it. */
	char err[ERRBUF] = "";
	cr_assert_eq(stress_deque(2, 300000, SIZE_MAX - 100000, 8, err, sizeof err), 0,
	             "%s", err);
}

Test(stress, chase_lev_batch_steals, .timeout = 30)
{
	/* Four owners stealing batches from each other. */
	char err[ERRBUF] = "";
	cr_assert_eq(stress_deque_batch(4, 400000, 0, 9, err, sizeof err), 0, "%s", err);
}

Test(stress, chase_lev_batch_wraparound, .timeout = 30)
{
	char err[ERRBUF] = "";
	cr_assert_eq(stress_deque_batch(3, 300000, SIZE_MAX - 100000, 10, err, sizeof err),
	             0, "%s", err);
}

Test(stress, submitters_bounded_shutdown, .timeout = 30)
{
	for (wp_policy p = 0; p < WP_POLICY_COUNT; p++) {
		char err[ERRBUF] = "";
		cr_assert_eq(stress_submitters(p, 2, 4, 20000, 64, 40 + p, err, sizeof err),
		             0, "%s: %s", wp_policy_name(p), err);
	}
}

Test(stress, submitters_unbounded_shutdown, .timeout = 30)
{
	for (wp_policy p = 0; p < WP_POLICY_COUNT; p++) {
		char err[ERRBUF] = "";
		cr_assert_eq(stress_submitters(p, 3, 3, 20000, 0, 50 + p, err, sizeof err),
		             0, "%s: %s", wp_policy_name(p), err);
	}
}

Test(stress, futures_tokens_discard, .timeout = 30)
{
	for (uint64_t seed = 60; seed < 69; seed++) {
		char err[ERRBUF] = "";
		wp_policy p = (wp_policy)(seed % WP_POLICY_COUNT);
		cr_assert_eq(stress_futures(p, 2, 4000, seed, err, sizeof err), 0,
		             "%s: %s", wp_policy_name(p), err);
	}
}

Test(stress, nested_futures_helping, .timeout = 30)
{
	for (wp_policy p = 0; p < WP_POLICY_COUNT; p++) {
		char err[ERRBUF] = "";
		cr_assert_eq(stress_nested(p, 3, 18, 0, err, sizeof err), 0, "%s: %s",
		             wp_policy_name(p), err);
		cr_assert_eq(stress_nested(p, 2, 18, 10000, err, sizeof err), 0, "%s: %s",
		             wp_policy_name(p), err);
	}
}
