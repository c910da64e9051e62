/* barrier — seed 002's yardstick (timely dataflow's examples/barrier.rs) in C:
 * a loop whose only work is one progress round per iteration.
 *
 * Each of N workers, in iteration r: publishes "I reached r" in its own
 * cache line, announces it to every peer (an unpark: a token if the peer is
 * running, a condvar signal if it is parked), then waits until every peer
 * has reached r. An idle worker polls for at most --idle-spin µs and then
 * parks (seed 002's poll-before-parking; 0 parks at once, the old behaviour).
 *
 * Reports µs per iteration, parks (times a worker blocked) and wakes (signals
 * sent to parked workers). workpool's own parking is internal to its workers,
 * so this demo carries the same poll-then-park protocol (dc_poll_then_park).
 */
#include "demo_common.h"

#include <convoy.h>
#include <stdlib.h>

struct bworker {
	_Alignas(DC_CACHE_LINE) _Atomic uint64_t round; /* last round reached */
	struct dc_parker parker;
};

struct barrier {
	unsigned workers;
	uint64_t iterations, spin_ns;
	struct bworker *w;
};

struct warg {
	struct barrier *b;
	unsigned me;
	uint64_t target; /* the round being waited for */
};

static bool peers_reached(void *p)
{
	const struct warg *a = p;
	for (unsigned i = 0; i < a->b->workers; i++)
		if (atomic_load_explicit(&a->b->w[i].round, memory_order_acquire) < a->target)
			return false;
	return true;
}

static void *worker(void *p)
{
	struct warg *a = p;
	struct barrier *b = a->b;
	struct bworker *me = &b->w[a->me];
	for (uint64_t r = 1; r <= b->iterations; r++) {
		/* Progress round: publish, announce to every peer, wait for all. */
		atomic_store_explicit(&me->round, r, memory_order_release);
		for (unsigned i = 0; i < b->workers; i++)
			if (i != a->me)
				dc_unpark(&b->w[i].parker);
		a->target = r;
		dc_poll_then_park(&me->parker, b->spin_ns, peers_reached, a);
		if (a->me == 0)   /* one unit per iteration, so convoy's parks per unit = parks/iteration */
			CONVOY_PROGRESS("iteration");
	}
	return NULL;
}

struct result {
	uint64_t ns, parks, wakes;
};

static struct result run(unsigned workers, uint64_t iterations, uint64_t spin_us)
{
	struct barrier b = { .workers = workers, .iterations = iterations, .spin_ns = spin_us * 1000 };
	b.w = aligned_alloc(DC_CACHE_LINE, workers * sizeof *b.w);
	struct warg *args = calloc(workers, sizeof *args);
	pthread_t *t = calloc(workers, sizeof *t);
	if (!b.w || !args || !t)
		dc_die("barrier", "out of memory");
	for (unsigned i = 0; i < workers; i++) {
		atomic_init(&b.w[i].round, 0);
		dc_parker_init(&b.w[i].parker);
		CONVOY_NAME(&b.w[i].parker.cond, "worker_park");
	}
	uint64_t start = dc_now_ns();
	for (unsigned i = 0; i < workers; i++) {
		args[i] = (struct warg){ &b, i, 0 };
		dc_spawn("barrier", &t[i], worker, &args[i]);
		dc_name_thread(t[i], "barrier-%u", i);
	}
	for (unsigned i = 0; i < workers; i++)
		dc_join("barrier", t[i]);
	struct result r = { .ns = dc_now_ns() - start };
	for (unsigned i = 0; i < workers; i++) {
		if (atomic_load(&b.w[i].round) != iterations)
			dc_die("barrier", "worker %u stopped at round %llu of %llu", i,
			       (unsigned long long)atomic_load(&b.w[i].round),
			       (unsigned long long)iterations);
		r.parks += b.w[i].parker.parks;
		r.wakes += b.w[i].parker.wakes_received;
		dc_parker_destroy(&b.w[i].parker);
	}
	free(b.w);
	free(args);
	free(t);
	return r;
}

int main(int argc, char **argv)
{
	uint64_t workers = 1, iterations = 1000000, spin = 10, runs = 1;
	struct dc_list sweep = { 4, { 1, 2, 3, 4 } };
	struct dc_list spins = { 3, { 0, 1, 10 } };
	struct dc_opt opts[] = {
		DC_OPT_WORKERS(&workers, 256),
		DC_OPT_UINT("idle-spin", &spin, "µs an idle worker polls before parking (0: park at once)",
			    0, 1000000),
		DC_OPT_UINT("iterations", &iterations,
			    "barrier rounds (the sweep's default is 100000: oversubscribed cells take 15-50 µs each)",
			    1, 1ull << 40),
		DC_OPT_UINT("runs", &runs, "runs per sweep cell; the best is printed (seed 002: best of 3)",
			    1, 100),
		DC_OPT_LIST("sweep", &sweep, "worker counts (columns) of the sweep", 1, 256),
		DC_OPT_LIST("spins", &spins, "idle-spin values (rows) of the sweep", 0, 1000000),
		DC_OPT_END,
	};
	struct dc_prog prog = {
		.name = "barrier",
		.summary = "Workers whose only work is a progress round per iteration: park/wake cost vs idle spin.",
		.seed = "seed 002 (examples/barrier.rs, --idle-spin MICROS)",
		.examples = "  barrier                                    # rows idle-spin 0,1,10 x columns w=1..4\n"
			    "  barrier --workers 2 --idle-spin 0          # parks at once: OS wake per iteration\n"
			    "  barrier --workers 2                        # default 10 µs poll budget\n"
			    "  convoy scale --threads 1,2,4 -- build/demos/barrier --workers {threads} --iterations 200000\n",
		.opts = opts,
	};
	dc_parse(&prog, argc, argv);

	if (dc_given(&prog, "workers")) {
		struct result r = run((unsigned)workers, iterations, spin);
		printf("barrier: workers=%llu idle-spin=%lluus iterations=%llu time=%.3fs "
		       "us/iteration=%.3f parks=%llu wakes=%llu parks/iteration=%.3f\n",
		       (unsigned long long)workers, (unsigned long long)spin,
		       (unsigned long long)iterations, dc_ms(r.ns) / 1000.0,
		       (double)r.ns / 1000.0 / (double)iterations, (unsigned long long)r.parks,
		       (unsigned long long)r.wakes, (double)r.parks / (double)iterations);
		return 0;
	}

	if (!dc_given(&prog, "iterations"))
		iterations = 100000;
	printf("barrier, %llu iterations, µs per iteration (best of %llu; at 1M iterations "
	       "this is wall seconds, as in seed 002)\n\n",
	       (unsigned long long)iterations, (unsigned long long)runs);
	struct result *cell = calloc(sweep.n * spins.n, sizeof *cell);
	if (!cell)
		dc_die(prog.name, "out of memory");
	for (size_t i = 0; i < sweep.n; i++)
		printf("\tw=%llu", (unsigned long long)sweep.v[i]);
	putchar('\n');
	for (size_t s = 0; s < spins.n; s++) {
		printf("idle-spin %llu", (unsigned long long)spins.v[s]);
		for (size_t i = 0; i < sweep.n; i++) {
			struct result best = { UINT64_MAX, 0, 0 };
			for (uint64_t k = 0; k < runs; k++) {
				struct result r = run((unsigned)sweep.v[i], iterations, spins.v[s]);
				if (r.ns < best.ns)
					best = r;
			}
			cell[s * sweep.n + i] = best;
			printf("\t%.2f", (double)best.ns / 1000.0 / (double)iterations);
			fflush(stdout);
		}
		putchar('\n');
	}
	printf("\nparks / wakes per iteration (same runs):\n\n");
	for (size_t i = 0; i < sweep.n; i++)
		printf("\tw=%llu", (unsigned long long)sweep.v[i]);
	putchar('\n');
	for (size_t s = 0; s < spins.n; s++) {
		printf("idle-spin %llu", (unsigned long long)spins.v[s]);
		for (size_t i = 0; i < sweep.n; i++) {
			const struct result *r = &cell[s * sweep.n + i];
			printf("\t%.2f/%.2f", (double)r->parks / (double)iterations,
			       (double)r->wakes / (double)iterations);
		}
		putchar('\n');
	}
	free(cell);
	return 0;
}
