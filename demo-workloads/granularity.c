/* granularity — seed 003, "The queue eventually became the work".
 *
 * Fixed useful work (120 million xorshift iterations) cut into 4 ... 400,000
 * tasks on a pool of 4 workers that exists before the clock starts. Every
 * task goes through the complete submit -> run -> future -> get path, so the
 * rows differ only in how many envelopes carry the same payload. Each task
 * returns its xorshift state; the sum must equal the serial computation.
 */
#include "demo_common.h"
#include "workpool.h"

#include <stdlib.h>

static uint64_t per_task;

static int chunk(void *arg, uint64_t *value)
{
	*value = dc_xorshift_work((uint64_t)(uintptr_t)arg + 1, per_task);
	return 0;
}

static uint64_t serial(uint64_t tasks)
{
	uint64_t sum = 0;
	for (uint64_t i = 0; i < tasks; i++)
		sum += dc_xorshift_work(i + 1, per_task);
	return sum;
}

/* One timed run: submit every task, get every future. */
static uint64_t run(wp_pool *pool, uint64_t tasks, wp_future **f, uint64_t *sum)
{
	uint64_t start = dc_now_ns();
	for (uint64_t i = 0; i < tasks; i++)
		dc_check("granularity", wp_submit(pool, chunk, (void *)(uintptr_t)i, &f[i]), "wp_submit");
	*sum = 0;
	for (uint64_t i = 0; i < tasks; i++) {
		uint64_t v;
		dc_check("granularity", wp_future_get(f[i], &v), "wp_future_get");
		*sum += v;
		wp_future_release(f[i]);
	}
	return dc_now_ns() - start;
}

int main(int argc, char **argv)
{
	uint64_t workers = 4, total = 120000000, tasks = 400000, runs = 5;
	struct dc_list sweep = { 6, { 4, 40, 400, 4000, 40000, 400000 } };
	struct dc_opt opts[] = {
		DC_OPT_WORKERS(&workers, 1024),
		DC_OPT_UINT("total", &total, "xorshift iterations of useful work, split over the tasks",
			    1, 1ull << 40),
		DC_OPT_UINT("tasks", &tasks, "tasks of a single run (--workers)", 1, 100000000),
		DC_OPT_UINT("runs", &runs, "runs per row of the sweep", 1, 1000),
		DC_OPT_LIST("sweep", &sweep, "task counts of the sweep", 1, 100000000),
		DC_OPT_END,
	};
	struct dc_prog prog = {
		.name = "granularity",
		.summary = "Fixed work cut into 4 ... 400,000 tasks: per-task dispatch cost becomes the work.",
		.seed = "seed 003, \"The queue eventually became the work\" (tasks x ms table)",
		.examples = "  granularity                                # the seed's table, 4 workers, 5 runs\n"
			    "  granularity --workers 4 --tasks 400000     # one run of the finest split\n"
			    "  convoy run -- build/demos/granularity --workers 4 --tasks 400000\n",
		.opts = opts,
	};
	dc_parse(&prog, argc, argv);

	wp_config cfg = wp_config_default();
	cfg.workers = (unsigned)workers;
	cfg.name = "gran";
	wp_pool *pool;
	dc_check("granularity", wp_pool_create(&pool, &cfg), "wp_pool_create");

	if (dc_given(&prog, "workers")) {
		wp_future **f = calloc(tasks, sizeof *f);
		if (!f)
			dc_die(prog.name, "out of memory");
		per_task = total / tasks;
		uint64_t sum, ns = run(pool, tasks, f, &sum);
		if (sum != serial(tasks))
			dc_die(prog.name, "sum of task results differs from the serial sum");
		printf("granularity: workers=%llu tasks=%llu iterations-per-task=%llu time=%.1fms "
		       "ns-per-task=%.0f checksum=%016llx (equals serial)\n",
		       (unsigned long long)workers, (unsigned long long)tasks,
		       (unsigned long long)per_task, dc_ms(ns), (double)ns / (double)tasks,
		       (unsigned long long)sum);
		free(f);
		wp_pool_destroy(pool);
		return 0;
	}

	printf("%llu xorshift iterations per row, %llu workers, %llu runs each\n\n",
	       (unsigned long long)total, (unsigned long long)workers, (unsigned long long)runs);
	printf("tasks      iterations per task    min ms    median ms    max ms\n");
	uint64_t *ms = calloc(runs, sizeof *ms);
	uint64_t base_median = 0, last_median = 0, last_tasks = 0;
	for (size_t i = 0; i < sweep.n; i++) {
		uint64_t n = sweep.v[i];
		wp_future **f = calloc(n, sizeof *f);
		if (!f || !ms)
			dc_die(prog.name, "out of memory");
		per_task = total / n;
		uint64_t expect = serial(n);
		for (uint64_t k = 0; k < runs; k++) {
			uint64_t sum;
			ms[k] = run(pool, n, f, &sum);
			if (sum != expect)
				dc_die(prog.name, "tasks=%llu: sum differs from the serial sum",
				       (unsigned long long)n);
		}
		free(f);
		struct dc_stats s = dc_stats_of(ms, runs);
		char a[32], b[32];
		printf("%7s%24s%10.0f%13.0f%10.0f\n", dc_fmt_grouped(a, sizeof a, n),
		       dc_fmt_grouped(b, sizeof b, per_task), dc_ms(s.min), dc_ms(s.median),
		       dc_ms(s.max));
		fflush(stdout);
		if (i == 0)
			base_median = s.median;
		last_median = s.median;
		last_tasks = n;
	}
	printf("\n(%.0f ms - %.0f ms) / %llu tasks = %.0f ns per task; every sum equals the serial sum\n",
	       dc_ms(last_median), dc_ms(base_median), (unsigned long long)last_tasks,
	       last_median > base_median ? (double)(last_median - base_median) / (double)last_tasks : 0.0);
	free(ms);
	wp_pool_destroy(pool);
	return 0;
}
