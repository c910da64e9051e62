/* pingpong — seed 002's second yardstick (timely dataflow's
 * examples/pingpong.rs: one element cycling through an exchange, +1 per
 * round, so it moves to the next worker every round) in C.
 *
 * One token travels round a ring of N workers. In round h the worker
 * h mod N waits for it (polls for --idle-spin µs, then parks), adds one, and
 * hands it to the next worker: publish in the receiver's line, unpark the
 * receiver. Every other worker is idle meanwhile, so with --idle-spin 0 each
 * hop costs an OS wake-up; with a poll budget the receiver is often still
 * polling when the token lands.
 *
 * The token's final value must equal the number of rounds (checked).
 */
#include "demo_common.h"

#include <convoy.h>
#include <stdlib.h>

struct pworker {
	_Alignas(DC_CACHE_LINE) _Atomic uint64_t inbox; /* the round it may play */
	struct dc_parker parker;
};

struct ring {
	unsigned workers;
	uint64_t rounds, spin_ns;
	struct pworker *w;
	_Alignas(DC_CACHE_LINE) uint64_t token; /* passed by release/acquire on inbox */
};

struct parg {
	struct ring *r;
	unsigned me;
	uint64_t want;
};

static bool token_here(void *p)
{
	const struct parg *a = p;
	return atomic_load_explicit(&a->r->w[a->me].inbox, memory_order_acquire) == a->want;
}

static void *worker(void *p)
{
	struct parg *a = p;
	struct ring *r = a->r;
	unsigned next = (a->me + 1) % r->workers;
	for (uint64_t h = a->me; h < r->rounds; h += r->workers) {
		a->want = h;
		dc_poll_then_park(&r->w[a->me].parker, r->spin_ns, token_here, a);
		r->token++; /* the round's work: the element's +1 */
		CONVOY_PROGRESS("round");   /* one unit per hop: convoy's parks per unit = parks/round */
		atomic_store_explicit(&r->w[next].inbox, h + 1, memory_order_release);
		if (next != a->me)
			dc_unpark(&r->w[next].parker);
	}
	return NULL;
}

struct result {
	uint64_t ns, parks, wakes, token;
};

static struct result run(unsigned workers, uint64_t rounds, uint64_t spin_us)
{
	struct ring *r = aligned_alloc(DC_CACHE_LINE, sizeof *r);
	if (!r)
		dc_die("pingpong", "out of memory");
	*r = (struct ring){ .workers = workers, .rounds = rounds, .spin_ns = spin_us * 1000 };
	r->w = aligned_alloc(DC_CACHE_LINE, workers * sizeof *r->w);
	struct parg *args = calloc(workers, sizeof *args);
	pthread_t *t = calloc(workers, sizeof *t);
	if (!r->w || !args || !t)
		dc_die("pingpong", "out of memory");
	for (unsigned i = 0; i < workers; i++) {
		atomic_init(&r->w[i].inbox, i == 0 ? 0 : UINT64_MAX);
		dc_parker_init(&r->w[i].parker);
		CONVOY_NAME(&r->w[i].parker.cond, "worker_park");
	}
	uint64_t start = dc_now_ns();
	for (unsigned i = 0; i < workers; i++) {
		args[i] = (struct parg){ r, i, 0 };
		dc_spawn("pingpong", &t[i], worker, &args[i]);
		dc_name_thread(t[i], "pingpong-%u", i);
	}
	for (unsigned i = 0; i < workers; i++)
		dc_join("pingpong", t[i]);
	struct result res = { .ns = dc_now_ns() - start, .token = r->token };
	for (unsigned i = 0; i < workers; i++) {
		res.parks += r->w[i].parker.parks;
		res.wakes += r->w[i].parker.wakes_received;
		dc_parker_destroy(&r->w[i].parker);
	}
	if (res.token != rounds)
		dc_die("pingpong", "token is %llu after %llu rounds", (unsigned long long)res.token,
		       (unsigned long long)rounds);
	free(r->w);
	free(r);
	free(args);
	free(t);
	return res;
}

int main(int argc, char **argv)
{
	uint64_t workers = 4, rounds = 200000, spin = 10, runs = 1;
	struct dc_list sweep = { 4, { 1, 2, 3, 4 } };
	struct dc_list spins = { 3, { 0, 1, 10 } };
	struct dc_opt opts[] = {
		DC_OPT_WORKERS(&workers, 256),
		DC_OPT_UINT("idle-spin", &spin, "µs an idle worker polls before parking (0: park at once)",
			    0, 1000000),
		DC_OPT_UINT("iterations", &rounds, "rounds (hops of the element)", 1, 1ull << 40),
		DC_OPT_UINT("runs", &runs, "runs per sweep cell; the best is printed", 1, 100),
		DC_OPT_LIST("sweep", &sweep, "worker counts (columns) of the sweep", 1, 256),
		DC_OPT_LIST("spins", &spins, "idle-spin values (rows) of the sweep", 0, 1000000),
		DC_OPT_END,
	};
	struct dc_prog prog = {
		.name = "pingpong",
		.summary = "One element hops from worker to worker each round; every hop wakes the receiver.",
		.seed = "seed 002 (examples/pingpong.rs, 200k rounds, four workers)",
		.examples = "  pingpong                                # rows idle-spin 0,1,10 x columns w=1..4\n"
			    "  pingpong --workers 4 --idle-spin 0      # the seed's \"before\"\n"
			    "  pingpong --workers 4                    # default 10 µs poll budget\n",
		.opts = opts,
	};
	dc_parse(&prog, argc, argv);

	if (dc_given(&prog, "workers")) {
		struct result r = run((unsigned)workers, rounds, spin);
		printf("pingpong: workers=%llu idle-spin=%lluus iterations=%llu time=%.3fs "
		       "us/iteration=%.3f parks=%llu wakes=%llu token=%llu\n",
		       (unsigned long long)workers, (unsigned long long)spin,
		       (unsigned long long)rounds, dc_ms(r.ns) / 1000.0,
		       (double)r.ns / 1000.0 / (double)rounds, (unsigned long long)r.parks,
		       (unsigned long long)r.wakes, (unsigned long long)r.token);
		return 0;
	}

	printf("pingpong, %llu rounds, wall seconds (best of %llu)\n\n", (unsigned long long)rounds,
	       (unsigned long long)runs);
	for (size_t i = 0; i < sweep.n; i++)
		printf("\tw=%llu", (unsigned long long)sweep.v[i]);
	printf("\tparks/round at w=%llu\n", (unsigned long long)sweep.v[sweep.n - 1]);
	double first = 0, last = 0;
	for (size_t s = 0; s < spins.n; s++) {
		struct result best = { 0 };
		printf("idle-spin %llu", (unsigned long long)spins.v[s]);
		for (size_t i = 0; i < sweep.n; i++) {
			best.ns = UINT64_MAX;
			for (uint64_t k = 0; k < runs; k++) {
				struct result r = run((unsigned)sweep.v[i], rounds, spins.v[s]);
				if (r.ns < best.ns)
					best = r;
			}
			printf("\t%.3f", dc_ms(best.ns) / 1000.0);
			fflush(stdout);
		}
		printf("\t%.2f\n", (double)best.parks / (double)rounds);
		if (s == 0)
			first = dc_ms(best.ns) / 1000.0;
		last = dc_ms(best.ns) / 1000.0;
	}
	printf("\npingpong with %llu rounds and %llu workers: %.2f s (idle-spin %llu) to %.2f s "
	       "(idle-spin %llu)\n",
	       (unsigned long long)rounds, (unsigned long long)sweep.v[sweep.n - 1], first,
	       (unsigned long long)spins.v[0], last, (unsigned long long)spins.v[spins.n - 1]);
	return 0;
}
