/* futures — seed 003, "The value could outlive the worker" and "Shutdown was
 * part of the algorithm".
 *
 * A task's result or its error travels through a future to the thread that
 * asks for it: one task returns 6 * 7, another fails (C has no exceptions:
 * it returns a negative errno, and wp_future_get hands that error to the
 * caller instead of it escaping the worker or being swallowed). Then the
 * shutdown contract: twelve sleeping tasks on two workers with room for four,
 * the pool destroyed (drain) before the last future is read, and a
 * submission after shutdown refused with a definite error. Last, the
 * dataflow version of the opening counter: two tasks each return 1, and the
 * caller adds the two ready values.
 */
#include "demo_common.h"
#include "workpool.h"

#include <stdlib.h>

#define TASK_FAILED (-EIO) /* the failing task's own error */

static int six_times_seven(void *arg, uint64_t *value)
{
	*value = 6 * 7;
	return 0;
}

static int fails(void *arg, uint64_t *value)
{
	return TASK_FAILED;
}

static _Atomic uint64_t completed;

static int sleepy_index(void *arg, uint64_t *value)
{
	dc_sleep_ns(1000000); /* 1 ms */
	atomic_fetch_add(&completed, 1);
	*value = (uint64_t)(uintptr_t)arg;
	return 0;
}

static int one(void *arg, uint64_t *value)
{
	*value = 1;
	return 0;
}

static wp_pool *make_pool(unsigned workers, size_t capacity)
{
	wp_config cfg = wp_config_default();
	cfg.workers = workers;
	cfg.capacity = capacity;
	cfg.name = "fut";
	wp_pool *pool;
	dc_check("futures", wp_pool_create(&pool, &cfg), "wp_pool_create");
	return pool;
}

int main(int argc, char **argv)
{
	uint64_t workers = 2, drain_tasks = 12;
	struct dc_opt opts[] = {
		DC_OPT_WORKERS(&workers, 256),
		DC_OPT_UINT("tasks", &drain_tasks, "tasks of the drain-on-shutdown part", 1, 100000),
		DC_OPT_END,
	};
	struct dc_prog prog = {
		.name = "futures",
		.summary = "Values and errors reach the caller through futures; shutdown drains, then refuses.",
		.seed = "seed 003, \"The value could outlive the worker\" and \"Shutdown was part of the algorithm\"",
		.examples = "  futures                  # the seed's lines\n"
			    "  futures --workers 4      # the same checks on four workers, one line\n",
		.opts = opts,
	};
	dc_parse(&prog, argc, argv);
	unsigned n = (unsigned)workers;

	/* Value and error propagation. */
	wp_pool *pool = make_pool(n, 0);
	wp_future *fv, *fe;
	dc_check("futures", wp_submit(pool, six_times_seven, NULL, &fv), "wp_submit");
	dc_check("futures", wp_submit(pool, fails, NULL, &fe), "wp_submit");
	uint64_t value = 0;
	int verr = wp_future_get(fv, &value);
	int eerr = wp_future_get(fe, NULL);
	wp_future_state es = wp_future_state_of(fe);
	wp_future_release(fv);
	wp_future_release(fe);

	/* The dataflow counter: owned results combined by the caller. */
	wp_future *a, *b;
	dc_check("futures", wp_submit(pool, one, NULL, &a), "wp_submit");
	dc_check("futures", wp_submit(pool, one, NULL, &b), "wp_submit");
	uint64_t va, vb;
	dc_check("futures", wp_future_get(a, &va), "wp_future_get");
	dc_check("futures", wp_future_get(b, &vb), "wp_future_get");
	wp_future_release(a);
	wp_future_release(b);
	wp_pool_destroy(pool);

	/* Drain: destroy the pool before reading the last future. */
	pool = make_pool(n, 4);
	wp_future **f = calloc(drain_tasks, sizeof *f);
	if (!f)
		dc_die(prog.name, "out of memory");
	for (uint64_t i = 0; i < drain_tasks; i++)
		dc_check("futures", wp_submit(pool, sleepy_index, (void *)(uintptr_t)i, &f[i]), "wp_submit");
	for (uint64_t i = 0; i + 1 < drain_tasks; i++)
		wp_future_release(f[i]);
	dc_check("futures", wp_shutdown(pool, WP_SHUTDOWN_DRAIN), "wp_shutdown");
	uint64_t drained = atomic_load(&completed);
	wp_future *late;
	int serr = wp_submit(pool, one, NULL, &late);
	wp_pool_destroy(pool);
	uint64_t last = 0;
	int lerr = wp_future_get(f[drain_tasks - 1], &last); /* the pool is gone */
	wp_future_release(f[drain_tasks - 1]);
	free(f);

	if (verr || value != 42 || eerr != TASK_FAILED || es != WP_FUTURE_ERROR || va + vb != 2 ||
	    drained != drain_tasks || lerr || last != drain_tasks - 1 || serr != WP_ESHUTDOWN)
		dc_die(prog.name, "unexpected: value=%llu (%s) error=%s drained=%llu last=%llu (%s) "
		       "late-submit=%s", (unsigned long long)value, wp_strerror(verr),
		       wp_strerror(eerr), (unsigned long long)drained, (unsigned long long)last,
		       wp_strerror(lerr), wp_strerror(serr));

	if (dc_given(&prog, "workers")) {
		printf("futures workers=%u future-value=%llu future-error=task failed (%s) counter=%llu "
		       "drain-completed=%llu last-value=%llu submit-after-shutdown=refused\n",
		       n, (unsigned long long)value, wp_strerror(eerr), (unsigned long long)(va + vb),
		       (unsigned long long)drained, (unsigned long long)last);
		return 0;
	}
	printf("future-value=%llu\n", (unsigned long long)value);
	printf("future-exception=task failed (the task returned %s; wp_future_get returned it to "
	       "the caller)\n", wp_strerror(eerr));
	printf("\ndrain-completed=%llu last-value=%llu\n", (unsigned long long)drained,
	       (unsigned long long)last);
	printf("submit-after-shutdown=%s\n", wp_strerror(serr));
	printf("\ncounter from two futures = %llu\n", (unsigned long long)(va + vb));
	return 0;
}
