/* tsan_main.c — the stress tests as a plain program, built with
 * -fsanitize=thread against build/tsan/libworkpool.a.
 *
 * Why not Criterion itself: Criterion runs each test in a child process it
 * forks from a runner that already has threads, and TSan does not support
 * starting threads after a multi-threaded fork (and Criterion's own
 * uninstrumented IPC would add noise). So this program runs one named case
 * per invocation, and test_workpool_tsan (tsan_wrapper.c, a normal Criterion
 * binary) runs it with TSAN_OPTIONS=halt_on_error=1 and fails on a non-zero
 * exit or any "ThreadSanitizer" line on stderr.
 *
 * Usage: workpool_tsan_stress CASE    (CASE: see the table below; "list")
 */
#include <stdio.h>
#include <string.h>

#include "stress.h"

#define ERRBUF 512

static int run_case(const char *name, char *err)
{
	if (!strcmp(name, "deque"))
		return stress_deque(3, STRESS_SCALE(400000, 100000), 0, 7, err, ERRBUF);
	if (!strcmp(name, "deque_wrap"))
		return stress_deque(2, STRESS_SCALE(300000, 100000), SIZE_MAX - 10000, 8,
		                    err, ERRBUF);
	if (!strcmp(name, "deque_batch"))
		return stress_deque_batch(3, STRESS_SCALE(400000, 100000), SIZE_MAX - 10000,
		                          9, err, ERRBUF);
	/* Pool cases: five seeds each (different forests, placements and
	 * start-up orders: odd seeds start paused). */
	static const struct {
		const char *name;
		wp_policy policy;
		unsigned workers;
		uint64_t seed, spin;
	} pools[] = {
		{ "pool_global", WP_POLICY_GLOBAL, 2, 11, 10000 },
		{ "pool_locked", WP_POLICY_LOCKED, 3, 21, 0 },
		{ "pool_chase_lev", WP_POLICY_CHASE_LEV, 3, 31, 10000 },
		{ "pool_chase_lev_nospin", WP_POLICY_CHASE_LEV, 2, 36, 0 },
	};
	for (size_t i = 0; i < sizeof pools / sizeof pools[0]; i++) {
		if (strcmp(name, pools[i].name))
			continue;
		for (uint64_t s = pools[i].seed; s < pools[i].seed + 5; s++) {
			int rc = stress_pool(pools[i].policy, pools[i].workers,
			                     STRESS_SCALE(60000, 15000), s, pools[i].spin,
			                     err, ERRBUF);
			if (rc)
				return rc;
		}
		return 0;
	}
	if (!strcmp(name, "submitters")) {
		for (wp_policy p = 0; p < WP_POLICY_COUNT; p++) {
			int rc = stress_submitters(p, 2, 3, STRESS_SCALE(20000, 6000),
			                           p == WP_POLICY_LOCKED ? 0 : 32, 40 + p,
			                           err, ERRBUF);
			if (rc)
				return rc;
		}
		return 0;
	}
	if (!strcmp(name, "futures")) {
		for (uint64_t seed = 60; seed < 63; seed++) {
			int rc = stress_futures((wp_policy)(seed % WP_POLICY_COUNT), 2,
			                        STRESS_SCALE(4000, 2000), seed, err, ERRBUF);
			if (rc)
				return rc;
		}
		return 0;
	}
	if (!strcmp(name, "nested")) {
		for (wp_policy p = 0; p < WP_POLICY_COUNT; p++) {
			int rc = stress_nested(p, 3, STRESS_SCALE(18, 14), 0, err, ERRBUF);
			if (!rc)
				rc = stress_nested(p, 2, STRESS_SCALE(18, 14), 10000, err, ERRBUF);
			if (rc)
				return rc;
		}
		return 0;
	}
	snprintf(err, ERRBUF, "unknown case '%s'", name);
	return 2;
}

int main(int argc, char **argv)
{
	char err[ERRBUF] = "";
	if (argc != 2) {
		fprintf(stderr, "usage: %s CASE\n", argv[0]);
		return 2;
	}
	int rc = run_case(argv[1], err);
	if (rc)
		fprintf(stderr, "workpool_tsan_stress %s: FAILED: %s\n", argv[1], err);
	return rc;
}
