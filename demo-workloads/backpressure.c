/* backpressure — seed 003, "The full queue moved the waiting upstream".
 *
 * Two workers, room for four accepted-but-unstarted tasks, twenty tasks that
 * each sleep 10 ms and return their index. The producer submits with the
 * blocking admission: once the queue is full, submit waits for a worker to
 * take a task, so the wait moves to the producer instead of memory growing.
 * workpool counts what the seed counted: the most tasks queued and the
 * submissions that found the pool full and had to wait.
 */
#include "demo_common.h"
#include "workpool.h"

#include <stdlib.h>

static uint64_t task_ns;

static int slow(void *arg, uint64_t *value)
{
	dc_sleep_ns(task_ns);
	*value = (uint64_t)(uintptr_t)arg;
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t workers = 2, capacity = 4, tasks = 20, task_ms = 10;
	struct dc_opt opts[] = {
		DC_OPT_WORKERS(&workers, 1024),
		DC_OPT_UINT("capacity", &capacity, "tasks accepted but not started, at most", 1, 1000000),
		DC_OPT_UINT("tasks", &tasks, "tasks submitted", 1, 1000000),
		DC_OPT_UINT("task-ms", &task_ms, "ms each task sleeps", 0, 60000),
		DC_OPT_END,
	};
	struct dc_prog prog = {
		.name = "backpressure",
		.summary = "A bounded queue: a producer faster than the workers waits in submit instead of growing memory.",
		.seed = "seed 003, \"The full queue moved the waiting upstream\"",
		.examples = "  backpressure                          # the seed's run: capacity 4, 2 workers, 20 x 10 ms\n"
			    "  backpressure --workers 4              # same load, more workers\n",
		.opts = opts,
	};
	dc_parse(&prog, argc, argv);
	task_ns = task_ms * 1000000ull;

	wp_config cfg = wp_config_default();
	cfg.workers = (unsigned)workers;
	cfg.capacity = (size_t)capacity;
	cfg.name = "bp";
	wp_pool *pool;
	wp_future **f = calloc(tasks, sizeof *f);
	if (!f)
		dc_die(prog.name, "out of memory");
	dc_check("backpressure", wp_pool_create(&pool, &cfg), "wp_pool_create");

	uint64_t start = dc_now_ns();
	for (uint64_t i = 0; i < tasks; i++)
		dc_check("backpressure", wp_submit(pool, slow, (void *)(uintptr_t)i, &f[i]), "wp_submit");
	uint64_t submitted = dc_now_ns();
	uint64_t sum = 0;
	for (uint64_t i = 0; i < tasks; i++) {
		uint64_t v;
		dc_check("backpressure", wp_future_get(f[i], &v), "wp_future_get");
		sum += v;
		wp_future_release(f[i]);
	}
	uint64_t end = dc_now_ns();
	wp_pool_stats st;
	dc_check("backpressure", wp_pool_stats_get(pool, &st), "wp_pool_stats_get");
	wp_pool_destroy(pool);
	free(f);

	if (sum != tasks * (tasks - 1) / 2)
		dc_die(prog.name, "sum %llu, expected %llu", (unsigned long long)sum,
		       (unsigned long long)(tasks * (tasks - 1) / 2));
	if (st.max_queued > capacity)
		dc_die(prog.name, "max queued %llu exceeds the capacity %llu",
		       (unsigned long long)st.max_queued, (unsigned long long)capacity);

	if (dc_given(&prog, "workers")) {
		printf("backpressure workers=%llu capacity=%llu max-queued=%llu blocked-submissions=%llu "
		       "submit-ms=%.0f total-ms=%.0f sum=%llu\n",
		       (unsigned long long)workers, (unsigned long long)capacity,
		       (unsigned long long)st.max_queued, (unsigned long long)st.blocked_submits,
		       dc_ms(submitted - start), dc_ms(end - start), (unsigned long long)sum);
		return 0;
	}
	printf("backpressure max-queued=%llu blocked-submissions=%llu\n",
	       (unsigned long long)st.max_queued, (unsigned long long)st.blocked_submits);
	printf("submit-ms=%.0f total-ms=%.0f sum=%llu\n", dc_ms(submitted - start), dc_ms(end - start),
	       (unsigned long long)sum);
	printf("\n%llu tasks * %llu ms per task / %llu workers = %.0f ms (lower bound)\n",
	       (unsigned long long)tasks, (unsigned long long)task_ms, (unsigned long long)workers,
	       (double)(tasks * task_ms) / (double)workers);
	return 0;
}
