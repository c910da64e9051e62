/* worker_count — seed 003, "Ten hardware threads did not justify thirty-two
 * workers".
 *
 * Fixed CPU work (600 million xorshift iterations) split into one equal task
 * per worker, on pools of 1 ... 32 workers built before the clock starts.
 * Independent arithmetic with no shared state: past the core count the curve
 * flattens instead of collapsing (this machine has 2 cores, so everything
 * above 2 workers is oversubscribed, which is the point of those rows).
 * Each task returns its xorshift state; the trials must agree (and with
 * --check, equal the serial computation).
 */
#include "demo_common.h"
#include "workpool.h"

#include <stdlib.h>

static uint64_t per_task;

static int slice(void *arg, uint64_t *value)
{
	*value = dc_xorshift_work((uint64_t)(uintptr_t)arg + 1, per_task);
	return 0;
}

/* One trial on a ready pool: one task per worker, each to its own worker. */
static uint64_t run(wp_pool *pool, unsigned workers, uint64_t *sum)
{
	wp_future **f = calloc(workers, sizeof *f);
	if (!f)
		dc_die("worker_count", "out of memory");
	uint64_t start = dc_now_ns();
	for (unsigned i = 0; i < workers; i++)
		dc_check("worker_count", wp_submit_to(pool, (int)i, slice, (void *)(uintptr_t)i, &f[i]), "wp_submit_to");
	*sum = 0;
	for (unsigned i = 0; i < workers; i++) {
		uint64_t v;
		dc_check("worker_count", wp_future_get(f[i], &v), "wp_future_get");
		*sum += v;
		wp_future_release(f[i]);
	}
	uint64_t ns = dc_now_ns() - start;
	free(f);
	return ns;
}

static wp_pool *make_pool(unsigned workers)
{
	wp_config cfg = wp_config_default();
	cfg.workers = workers;
	cfg.name = "wc";
	/* One slice per worker, as in the seed: an idle worker must not take
	 * another worker's slice before that worker wakes (it would then run two
	 * slices back to back and the row would measure that instead). */
	cfg.stealing = false;
	wp_pool *pool;
	dc_check("worker_count", wp_pool_create(&pool, &cfg), "wp_pool_create");
	return pool;
}

static uint64_t serial(unsigned workers)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < workers; i++)
		sum += dc_xorshift_work((uint64_t)i + 1, per_task);
	return sum;
}

int main(int argc, char **argv)
{
	uint64_t workers = 1, total = 600000000, runs = 5;
	bool check_serial = false;
	struct dc_list sweep = { 7, { 1, 2, 4, 8, 10, 16, 32 } };
	struct dc_opt opts[] = {
		DC_OPT_WORKERS(&workers, 1024),
		DC_OPT_UINT("total", &total, "xorshift iterations, split equally over the workers", 1,
			    1ull << 40),
		DC_OPT_UINT("runs", &runs, "trials per worker count in the sweep", 1, 1000),
		DC_OPT_LIST("sweep", &sweep, "worker counts of the sweep", 1, 1024),
		DC_OPT_FLAG("check", &check_serial, "also compare with the serial computation"),
		DC_OPT_END,
	};
	struct dc_prog prog = {
		.name = "worker_count",
		.summary = "Fixed independent CPU work over 1 ... 32 workers: scaling stops at the core count and flattens.",
		.seed = "seed 003, \"Ten hardware threads did not justify thirty-two workers\" (workers x ms table)",
		.examples = "  worker_count                          # the seed's table, 5 trials each\n"
			    "  worker_count --workers 8               # one trial\n"
			    "  convoy scale --threads 1,2,4,8 -- build/demos/worker_count --workers {threads}\n",
		.opts = opts,
	};
	dc_parse(&prog, argc, argv);

	if (dc_given(&prog, "workers")) {
		per_task = total / workers;
		wp_pool *pool = make_pool((unsigned)workers);
		uint64_t sum, ns = run(pool, (unsigned)workers, &sum);
		wp_pool_destroy(pool);
		if (check_serial && sum != serial((unsigned)workers))
			dc_die(prog.name, "sum differs from the serial computation");
		printf("worker count: workers=%llu iterations=%llu per-worker=%llu time=%.0fms "
		       "checksum=%016llx%s\n",
		       (unsigned long long)workers, (unsigned long long)total,
		       (unsigned long long)per_task, dc_ms(ns), (unsigned long long)sum,
		       check_serial ? " check=ok" : "");
		return 0;
	}

	printf("%llu xorshift iterations, one equal task per worker, %llu trials\n\n",
	       (unsigned long long)total, (unsigned long long)runs);
	printf("workers    min    median    max\n");
	uint64_t *ns = calloc(runs, sizeof *ns);
	if (!ns)
		dc_die(prog.name, "out of memory");
	for (size_t i = 0; i < sweep.n; i++) {
		unsigned w = (unsigned)sweep.v[i];
		per_task = total / w;
		wp_pool *pool = make_pool(w);
		uint64_t first = 0;
		for (uint64_t k = 0; k < runs; k++) {
			uint64_t sum;
			ns[k] = run(pool, w, &sum);
			if (k == 0)
				first = sum;
			if (sum != first)
				dc_die(prog.name, "workers=%u: trials disagree", w);
		}
		wp_pool_destroy(pool);
		if (check_serial && first != serial(w))
			dc_die(prog.name, "workers=%u: sum differs from the serial computation", w);
		struct dc_stats s = dc_stats_of(ns, runs);
		printf("%7u    %3.0f    %6.0f    %3.0f\n", w, dc_ms(s.min), dc_ms(s.median), dc_ms(s.max));
		fflush(stdout);
	}
	printf("\nevery trial's checksum agreed%s\n",
	       check_serial ? " and equalled the serial computation" : "");
	free(ns);
	return 0;
}
