/* cas_retry — seed 003, the compare-and-swap retry loop: a counter built from
 * compare_exchange, and how often the swap fails as threads are added.
 *
 * Each thread performs `increments` successful increments of one shared
 * counter by read, compute, compare-and-swap; a failed swap changes nothing,
 * is counted, and the thread retries with the value the CAS returned. The
 * counter is always exact; the failed fraction is the work thrown away.
 */
#include "demo_common.h"

#include <stdatomic.h>
#include <stdlib.h>

static _Alignas(DC_CACHE_LINE) _Atomic uint64_t counter;

struct worker_result {
	_Alignas(DC_CACHE_LINE) uint64_t retries;
	uint64_t increments;
};

static void *worker(void *arg)
{
	struct worker_result *r = arg;
	uint64_t retries = 0;
	for (uint64_t i = 0; i < r->increments; i++) {
		uint64_t seen = atomic_load_explicit(&counter, memory_order_relaxed);
		while (!atomic_compare_exchange_weak_explicit(&counter, &seen, seen + 1,
							      memory_order_relaxed,
							      memory_order_relaxed))
			retries++; /* `seen` now holds the value that beat us */
	}
	r->retries = retries;
	return NULL;
}

struct run {
	uint64_t retries, attempts, counter, ns;
};

static struct run run(unsigned threads, uint64_t increments)
{
	pthread_t *t = calloc(threads, sizeof *t);
	struct worker_result *res = aligned_alloc(DC_CACHE_LINE, threads * sizeof *res);
	if (!t || !res)
		dc_die("cas_retry", "out of memory");
	atomic_store(&counter, 0);
	uint64_t start = dc_now_ns();
	for (unsigned i = 0; i < threads; i++) {
		res[i] = (struct worker_result){ .increments = increments };
		dc_spawn("cas_retry", &t[i], worker, &res[i]);
	}
	for (unsigned i = 0; i < threads; i++)
		dc_join("cas_retry", t[i]);
	struct run r = { .ns = dc_now_ns() - start, .counter = atomic_load(&counter) };
	for (unsigned i = 0; i < threads; i++)
		r.retries += res[i].retries;
	r.attempts = r.retries + (uint64_t)threads * increments;
	if (r.counter != (uint64_t)threads * increments)
		dc_die("cas_retry", "counter %llu, expected %llu", (unsigned long long)r.counter,
		       (unsigned long long)threads * increments);
	free(t);
	free(res);
	return r;
}

int main(int argc, char **argv)
{
	uint64_t workers = 1, increments = 5000000;
	struct dc_list sweep = { 4, { 1, 2, 4, 8 } };
	struct dc_opt opts[] = {
		DC_OPT_WORKERS(&workers, 1024),
		DC_OPT_UINT("increments", &increments, "successful increments per thread", 1, 1ull << 36),
		DC_OPT_LIST("sweep", &sweep, "thread counts of the sweep", 1, 1024),
		DC_OPT_END,
	};
	struct dc_prog prog = {
		.name = "cas_retry",
		.summary = "A counter incremented by a compare-and-swap loop; the failed-CAS share by thread count.",
		.seed = "seed 003, the compare_exchange counter (retries by threads)",
		.examples = "  cas_retry                    # 1, 2, 4, 8 threads\n"
			    "  cas_retry --workers 4        # one run\n",
		.opts = opts,
	};
	dc_parse(&prog, argc, argv);

	if (dc_given(&prog, "workers")) {
		struct run r = run((unsigned)workers, increments);
		printf("cas retry: workers=%llu increments=%llu retries=%llu failed=%.1f%% "
		       "counter=%llu time=%.0fms\n",
		       (unsigned long long)workers, (unsigned long long)increments,
		       (unsigned long long)r.retries, 100.0 * (double)r.retries / (double)r.attempts,
		       (unsigned long long)r.counter, dc_ms(r.ns));
		return 0;
	}
	printf("cas counter: %llu successful increments per thread\n\n",
	       (unsigned long long)increments);
	for (size_t i = 0; i < sweep.n; i++) {
		struct run r = run((unsigned)sweep.v[i], increments);
		char num[32];
		snprintf(num, sizeof num, "%llu,", (unsigned long long)r.retries);
		printf("%llu threads: retries=%-10s %4.1f%% of CAS attempts failed   (counter=%llu exact, %.0f ms)\n",
		       (unsigned long long)sweep.v[i], num,
		       100.0 * (double)r.retries / (double)r.attempts, (unsigned long long)r.counter,
		       dc_ms(r.ns));
		fflush(stdout);
	}
	return 0;
}
