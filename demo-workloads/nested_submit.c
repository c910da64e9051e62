/* nested_submit — seed 003, "The future could block the only worker".
 *
 * A one-worker pool. Task A submits task B and waits on B's future. Without
 * helping, the only worker is blocked inside A while B waits in the queue
 * for that worker: a wait cycle through a queue and a future, no user mutex
 * involved. A watchdog (a timed wait on A's future) reports the starvation
 * and ends the process (exit status 0: the starvation is the demonstration;
 * nothing inside the pool can break the cycle, a discarding shutdown included,
 * because the blocked worker is the one that would have to drop B). With
 * helping, the worker waiting on B runs B itself and A completes.
 *
 * With N workers, N parent tasks each submit a child and wait. The parents
 * meet at a barrier before submitting, so every worker is occupied by a
 * parent before any child is queued: otherwise an idle worker could take a
 * child first and the starvation would depend on thread timing.
 */
#include "demo_common.h"
#include "workpool.h"

#include <pthread.h>
#include <stdlib.h>

static const char *const onoff[] = { "off", "on", NULL };

static wp_pool *pool;
static pthread_barrier_t parents_running;

static int child(void *arg, uint64_t *value)
{
	*value = 7;
	return 0;
}

/* Task A: submit B from inside the pool, wait for it, return its value + 1. */
static int parent(void *arg, uint64_t *value)
{
	wp_future *b;
	pthread_barrier_wait(&parents_running);
	int err = wp_submit(pool, child, NULL, &b);
	if (err)
		return err;
	uint64_t v = 0;
	err = wp_future_get(b, &v);
	wp_future_release(b);
	if (err)
		return err; /* B's failure (a broken promise) becomes A's */
	*value = v + 1;
	return 0;
}

static void run(unsigned workers, bool helping, uint64_t timeout_ms)
{
	wp_config cfg = wp_config_default();
	cfg.workers = workers;
	cfg.helping = helping;
	cfg.name = "nest";
	dc_check("nested_submit", wp_pool_create(&pool, &cfg), "wp_pool_create");
	dc_check("nested_submit", pthread_barrier_init(&parents_running, NULL, workers), "pthread_barrier_init");
	wp_future **a = calloc(workers, sizeof *a);
	if (!a)
		dc_die("nested_submit", "out of memory");
	uint64_t start = dc_now_ns();
	for (unsigned i = 0; i < workers; i++)
		dc_check("nested_submit", wp_submit(pool, parent, NULL, &a[i]), "wp_submit");

	unsigned finished = 0;
	for (unsigned i = 0; i < workers; i++) {
		uint64_t left = timeout_ms * 1000000ull, spent = dc_now_ns() - start;
		if (wp_future_timedwait(a[i], spent < left ? left - spent : 0) == 0)
			finished++;
	}
	wp_pool_stats st;
	dc_check("nested_submit", wp_pool_stats_get(pool, &st), "wp_pool_stats_get");
	if (finished == workers) {
		uint64_t sum = 0, v;
		for (unsigned i = 0; i < workers; i++) {
			dc_check("nested_submit", wp_future_get(a[i], &v), "parent");
			sum += v;
		}
		printf("nested helping=%s workers=%u completed parents=%u children-helped=%llu "
		       "value=%llu ms=%.1f\n",
		       helping ? "on" : "off", workers, workers,
		       (unsigned long long)st.total.tasks_helped, (unsigned long long)(sum / workers),
		       dc_ms(dc_now_ns() - start));
	} else {
		printf("nested helping=%s workers=%u STARVED after %llu ms: %u of %u parents still "
		       "waiting, tasks finished=%llu of %llu submitted\n",
		       helping ? "on" : "off", workers, (unsigned long long)timeout_ms,
		       workers - finished, workers, (unsigned long long)st.total.tasks_run,
		       (unsigned long long)st.submitted);
		printf("  worker runs A\n  A waits for B's future\n  B waits in the pool queue\n"
		       "  pool queue waits for the worker\n");
		printf("WATCHDOG: pool starved; ending the process\n");
		fflush(stdout);
		exit(0); /* the workers can never be joined */
	}
	fflush(stdout);
	for (unsigned i = 0; i < workers; i++)
		wp_future_release(a[i]);
	free(a);
	wp_pool_destroy(pool);
	pool = NULL;
	pthread_barrier_destroy(&parents_running);
}

struct scene {
	unsigned workers;
	bool helping;
	uint64_t timeout_ms;
};

static void scene(void *p)
{
	const struct scene *s = p;
	run(s->workers, s->helping, s->timeout_ms);
}

int main(int argc, char **argv)
{
	uint64_t workers = 1, timeout = 1000;
	int helping = 0;
	struct dc_opt opts[] = {
		DC_OPT_WORKERS(&workers, 256),
		DC_OPT_CHOICE("helping", &helping, "a worker waiting on a future runs other tasks", onoff),
		DC_OPT_UINT("timeout-ms", &timeout, "ms the watchdog waits before declaring starvation", 1,
			    3600000),
		DC_OPT_END,
	};
	struct dc_prog prog = {
		.name = "nested_submit",
		.summary = "A task that waits on its child's future starves a one-worker pool unless the waiter helps.",
		.seed = "seed 003, \"The future could block the only worker\"",
		.details = "Exits 0 after reporting starvation: the starvation is the demonstration.",
		.examples = "  nested_submit                               # helping off (starves), then on\n"
			    "  nested_submit --workers 2 --helping off     # one run\n"
			    "  convoy run -- build/demos/nested_submit --workers 1 --timeout-ms 300\n",
		.opts = opts,
	};
	dc_parse(&prog, argc, argv);

	if (dc_given(&prog, "workers")) {
		run((unsigned)workers, helping, timeout);
		return 0;
	}
	if (dc_given(&prog, "helping"))
		dc_usage_error(&prog, "--helping chooses a single run: add --workers N");
	struct scene off = { 1, false, timeout };
	dc_run_child(prog.name, scene, &off); /* ends its own process */
	putchar('\n');
	run(1, true, timeout);
	return 0;
}
