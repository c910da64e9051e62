/* imbalance — seed 003, "The empty workers could see the work".
 *
 * Four workers, each with its own deque, but all forty 5 ms tasks are put on
 * worker 0's deque before the workers start. With stealing off only worker 0
 * may take them: three threads sit idle beside queued work. With stealing on
 * an empty worker takes work from the other end of a victim's deque and the
 * same bad placement evens out. Prints tasks executed per worker.
 */
#include "demo_common.h"
#include "workpool.h"

#include <stdlib.h>

static uint64_t task_ns;
static _Atomic uint64_t done;

static void occupy(void *arg)
{
	dc_sleep_ns(task_ns); /* the task occupies its worker for task_ns */
	atomic_fetch_add_explicit(&done, 1, memory_order_relaxed);
}

static const char *const onoff[] = { "off", "on", NULL };
static const char *const deque_names[] = { "locked", "chase-lev", NULL };
static const wp_policy deque_policy[] = { WP_POLICY_LOCKED, WP_POLICY_CHASE_LEV };

static void run(unsigned workers, uint64_t tasks, bool stealing, int deque)
{
	wp_config cfg = wp_config_default();
	cfg.policy = deque_policy[deque];
	cfg.workers = workers;
	cfg.stealing = stealing;
	cfg.start_paused = true;
	cfg.name = "imb";
	wp_pool *pool;
	dc_check("imbalance", wp_pool_create(&pool, &cfg), "wp_pool_create");
	atomic_store(&done, 0);
	dc_check("imbalance", wp_spawn_range(pool, 0, occupy, 0, (size_t)tasks), "wp_spawn_range"); /* all on worker 0 */
	uint64_t start = dc_now_ns();
	dc_check("imbalance", wp_start(pool), "wp_start");
	dc_check("imbalance", wp_wait_idle(pool), "wp_wait_idle");
	uint64_t ns = dc_now_ns() - start;

	wp_pool_stats st;
	dc_check("imbalance", wp_pool_stats_get(pool, &st), "wp_pool_stats_get");
	printf("local-deques steal=%s ms=%.0f steals=%llu stolen-tasks=%llu executed=",
	       stealing ? "on" : "off", dc_ms(ns), (unsigned long long)st.total.steals,
	       (unsigned long long)st.total.stolen_tasks);
	uint64_t sum = 0;
	for (unsigned i = 0; i < workers; i++) {
		wp_worker_stats ws;
		dc_check("imbalance", wp_worker_stats_get(pool, i, &ws), "wp_worker_stats_get");
		printf("%s%llu", i ? "," : "", (unsigned long long)ws.tasks_run);
		sum += ws.tasks_run;
	}
	printf("\n");
	fflush(stdout);
	wp_pool_destroy(pool);
	if (sum != tasks || atomic_load(&done) != tasks)
		dc_die("imbalance", "executed %llu tasks, expected %llu", (unsigned long long)sum,
		       (unsigned long long)tasks);
}

int main(int argc, char **argv)
{
	uint64_t workers = 4, tasks = 40, task_ms = 5;
	int stealing = 1, deque = 0;
	struct dc_opt opts[] = {
		DC_OPT_WORKERS(&workers, 1024),
		DC_OPT_CHOICE("stealing", &stealing, "idle workers may take work from others", onoff),
		DC_OPT_CHOICE("deque", &deque, "workpool's per-worker deque", deque_names),
		DC_OPT_UINT("tasks", &tasks, "tasks, all placed on worker 0", 1, 1000000),
		DC_OPT_UINT("task-ms", &task_ms, "ms each task occupies its worker (a sleep)", 0, 60000),
		DC_OPT_END,
	};
	struct dc_prog prog = {
		.name = "imbalance",
		.summary = "Every task placed on worker 0: idle workers beside queued work until stealing is on.",
		.seed = "seed 003, \"The empty workers could see the work\" (steal=off / steal=on lines)",
		.details = "A task sleeps, so four workers on two cores still overlap.",
		.examples = "  imbalance                              # steal=off, then steal=on, 4 workers\n"
			    "  imbalance --workers 4 --stealing off   # one run\n"
			    "  convoy run -- build/demos/imbalance --workers 4 --stealing off\n",
		.opts = opts,
	};
	dc_parse(&prog, argc, argv);
	task_ns = task_ms * 1000000ull;

	if (dc_given(&prog, "workers")) {
		run((unsigned)workers, tasks, stealing, deque);
		return 0;
	}
	if (dc_given(&prog, "stealing"))
		dc_usage_error(&prog, "--stealing chooses a single run: add --workers N");
	printf("%llu tasks of %llu ms, all on worker 0's deque, %llu workers (deque: %s)\n\n",
	       (unsigned long long)tasks, (unsigned long long)task_ms, (unsigned long long)workers,
	       deque_names[deque]);
	run((unsigned)workers, tasks, false, deque);
	run((unsigned)workers, tasks, true, deque);
	printf("\nideal: %llu ms on one worker, %.0f ms on %llu\n",
	       (unsigned long long)(tasks * task_ms), (double)(tasks * task_ms) / (double)workers,
	       (unsigned long long)workers);
	return 0;
}
