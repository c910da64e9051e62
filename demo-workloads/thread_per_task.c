/* thread_per_task — seed 003, "The thread lasted longer than the work".
 *
 * The same 2,000 tiny units of work dispatched two ways: a fresh thread per
 * task, created and joined at once (each returns its index), and a pool whose
 * workers exist before the clock starts, with one future per task. Both sums
 * must equal 0 + 1 + ... + (tasks - 1).
 */
#include "demo_common.h"
#include "workpool.h"

#include <stdlib.h>

static void *fresh(void *arg)
{
	return arg; /* the task: return its index */
}

static int pooled(void *arg, uint64_t *value)
{
	*value = (uint64_t)(uintptr_t)arg;
	return 0;
}

struct result {
	uint64_t fresh_ns, pool_ns, fresh_sum, pool_sum;
};

static struct result run(unsigned workers, uint64_t tasks)
{
	struct result r = { 0 };
	uint64_t start = dc_now_ns();
	for (uint64_t i = 0; i < tasks; i++) {
		pthread_t t;
		dc_spawn("thread_per_task", &t, fresh, (void *)(uintptr_t)i);
		r.fresh_sum += (uint64_t)(uintptr_t)dc_join("thread_per_task", t);
	}
	r.fresh_ns = dc_now_ns() - start;

	wp_config cfg = wp_config_default();
	cfg.workers = workers;
	cfg.name = "pool";
	wp_pool *pool;
	wp_future **f = calloc(tasks, sizeof *f);
	if (!f)
		dc_die("thread_per_task", "out of memory");
	dc_check("thread_per_task", wp_pool_create(&pool, &cfg), "wp_pool_create");
	start = dc_now_ns(); /* the workers exist: steady-state dispatch only */
	for (uint64_t i = 0; i < tasks; i++)
		dc_check("thread_per_task", wp_submit(pool, pooled, (void *)(uintptr_t)i, &f[i]), "wp_submit");
	for (uint64_t i = 0; i < tasks; i++) {
		uint64_t v;
		dc_check("thread_per_task", wp_future_get(f[i], &v), "wp_future_get");
		r.pool_sum += v;
		wp_future_release(f[i]);
	}
	r.pool_ns = dc_now_ns() - start;
	wp_pool_destroy(pool);
	free(f);

	uint64_t expect = tasks * (tasks - 1) / 2;
	if (r.fresh_sum != expect || r.pool_sum != expect)
		dc_die("thread_per_task", "sums %llu (fresh) and %llu (pool), expected %llu",
		       (unsigned long long)r.fresh_sum, (unsigned long long)r.pool_sum,
		       (unsigned long long)expect);
	return r;
}

int main(int argc, char **argv)
{
	uint64_t workers = 4, tasks = 2000, runs = 5;
	struct dc_opt opts[] = {
		DC_OPT_WORKERS(&workers, 1024),
		DC_OPT_UINT("tasks", &tasks, "tasks dispatched each way", 1, 10000000),
		DC_OPT_UINT("runs", &runs, "runs in the sweep (min/median/max)", 1, 1000),
		DC_OPT_END,
	};
	struct dc_prog prog = {
		.name = "thread_per_task",
		.summary = "A fresh thread per tiny task vs dispatch to a pool whose workers already exist.",
		.seed = "seed 003, \"The thread lasted longer than the work\" (dispatch line)",
		.examples = "  thread_per_task                   # the seed's line (4 pool workers), then 5 runs\n"
			    "  thread_per_task --workers 2       # one run, one line\n"
			    "  convoy run -- build/demos/thread_per_task --workers 4\n",
		.opts = opts,
	};
	dc_parse(&prog, argc, argv);

	if (dc_given(&prog, "workers")) {
		struct result r = run((unsigned)workers, tasks);
		printf("dispatch workers=%llu fresh-threads-ms=%.1f pool-ms=%.1f tasks=%llu sum=%llu\n",
		       (unsigned long long)workers, dc_ms(r.fresh_ns), dc_ms(r.pool_ns),
		       (unsigned long long)tasks, (unsigned long long)r.pool_sum);
		return 0;
	}
	uint64_t *fresh_ms = calloc(runs, sizeof *fresh_ms), *pool_us = calloc(runs, sizeof *pool_us);
	if (!fresh_ms || !pool_us)
		dc_die(prog.name, "out of memory");
	struct result r = { 0 };
	for (uint64_t i = 0; i < runs; i++) {
		r = run((unsigned)workers, tasks);
		fresh_ms[i] = r.fresh_ns / 1000; /* µs, for the stats below */
		pool_us[i] = r.pool_ns / 1000;
		if (i == 0)
			printf("dispatch fresh-threads-ms=%llu pool-ms=%llu tasks=%llu sum=%llu\n\n",
			       (unsigned long long)(r.fresh_ns / 1000000),
			       (unsigned long long)(r.pool_ns / 1000000), (unsigned long long)tasks,
			       (unsigned long long)r.pool_sum);
	}
	struct dc_stats fs = dc_stats_of(fresh_ms, runs), ps = dc_stats_of(pool_us, runs);
	printf("%llu runs, %llu pool workers      min ms   median ms   max ms\n",
	       (unsigned long long)runs, (unsigned long long)workers);
	printf("fresh thread per task        %9.2f   %9.2f   %6.2f\n", fs.min / 1e3, fs.median / 1e3,
	       fs.max / 1e3);
	printf("pool dispatch (futures)      %9.2f   %9.2f   %6.2f\n", ps.min / 1e3, ps.median / 1e3,
	       ps.max / 1e3);
	printf("\nfresh / pool (medians) = %.1fx; every sum = %llu\n",
	       (double)fs.median / (double)(ps.median ? ps.median : 1), (unsigned long long)r.pool_sum);
	free(fresh_ms);
	free(pool_us);
	return 0;
}
