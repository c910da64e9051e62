/* racy_counter — seed 003, "counter++ is a lie" and the three builds after it.
 *
 * N threads each add one to a shared long `increments` times. Four variants,
 * all in this one binary:
 *
 *   unoptimised  the loop compiled at -O0 (a per-function attribute): one
 *                load, add, store per iteration; a million tiny races.
 *   folded       the same loop at -O2: the compiler proves the loop is
 *                `counter += n` and emits one load-add-store for the whole
 *                call; it prints the right total for the wrong reason...
 *   --together   ...until the threads are released at the same instant
 *                (they spin on a flag main raises), when one whole thread's
 *                contribution can vanish.
 *   volatile     -O2, but volatile forbids the fold: the racy load-add-store
 *                happens every iteration again.
 *   atomic       atomic_fetch_add: always exact.
 *
 * These data races are undefined behaviour on purpose: this is the program
 * the seed wrote so convoy can show it. Do not copy it.
 */
#include "demo_common.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum variant { V_UNOPTIMISED, V_FOLDED, V_VOLATILE, V_ATOMIC };
static const char *const variant_names[] = { "unoptimised", "folded", "volatile", "atomic", NULL };

/* The shared counters, each on its own line. Racy on purpose. */
static _Alignas(DC_CACHE_LINE) long counter;
static _Alignas(DC_CACHE_LINE) volatile long volatile_counter;
static _Alignas(DC_CACHE_LINE) _Atomic long atomic_counter;

/* Per-call bound: a global so no variant can see a constant it could pre-fold
 * across calls; the fold inside one call is exactly the seed's. */
static long increments;

/* The start line for --together: each thread announces itself, then spins
 * until main has seen all of them and raises `go`. */
static _Atomic unsigned ready;
static _Atomic bool go;

/* -O0 for this function only: the seed's three-instruction counter++. */
__attribute__((optimize("O0"), noinline)) static void add_unoptimised(void)
{
	for (long i = 0; i < increments; i++)
		counter++;
}

__attribute__((noinline)) static void add_folded(void)
{
	for (long i = 0; i < increments; i++)
		counter++;
}

__attribute__((noinline)) static void add_volatile(void)
{
	for (long i = 0; i < increments; i++)
		volatile_counter++;
}

__attribute__((noinline)) static void add_atomic(void)
{
	for (long i = 0; i < increments; i++)
		atomic_fetch_add_explicit(&atomic_counter, 1, memory_order_relaxed);
}

struct config {
	enum variant variant;
	bool together;
};

static void *worker(void *arg)
{
	const struct config *c = arg;
	if (c->together) {
		atomic_fetch_add(&ready, 1);
		while (!atomic_load_explicit(&go, memory_order_acquire))
			__builtin_ia32_pause();
	}
	switch (c->variant) {
	case V_UNOPTIMISED: add_unoptimised(); break;
	case V_FOLDED: add_folded(); break;
	case V_VOLATILE: add_volatile(); break;
	case V_ATOMIC: add_atomic(); break;
	}
	return NULL;
}

/* One run: returns the final counter and the wall time in *ns. */
static long run(unsigned workers, struct config c, uint64_t *ns)
{
	pthread_t *threads = calloc(workers, sizeof *threads);
	if (!threads)
		dc_die("racy_counter", "out of memory");
	counter = 0;
	volatile_counter = 0;
	atomic_store(&atomic_counter, 0);
	atomic_store(&ready, 0);
	atomic_store(&go, false);
	uint64_t start = dc_now_ns();
	for (unsigned w = 0; w < workers; w++)
		dc_spawn("racy_counter", &threads[w], worker, &c);
	if (c.together) {
		while (atomic_load(&ready) < workers)
			__builtin_ia32_pause();
		atomic_store_explicit(&go, true, memory_order_release);
	}
	for (unsigned w = 0; w < workers; w++)
		dc_join("racy_counter", threads[w]);
	*ns = dc_now_ns() - start;
	free(threads);
	switch (c.variant) {
	case V_UNOPTIMISED:
	case V_FOLDED: return counter;
	case V_VOLATILE: return volatile_counter;
	case V_ATOMIC: return atomic_load(&atomic_counter);
	}
	abort();
}

/* One row of the sweep: `runs` runs, the seed's number layout. */
static void sweep_row(const char *title, unsigned workers, struct config c, unsigned runs)
{
	long expected = (long)workers * increments;
	unsigned exact = 0, lost_whole = 0, other = 0;
	printf("%s, %u runs:\n", title, runs);
	for (unsigned i = 0; i < runs; i++) {
		uint64_t ns;
		long v = run(workers, c, &ns);
		exact += v == expected;
		lost_whole += v != expected && v % increments == 0;
		other += v != expected && v % increments != 0;
		if (c.together)
			printf("%ld%s", v, (i % 10 == 9 || i + 1 == runs) ? "\n" : " ");
		else
			printf("%ld%s", v, i + 1 == runs ? "\n" : "  ");
		fflush(stdout);
	}
	printf(" exact=%u lost-a-whole-thread=%u other=%u\n\n", exact, lost_whole, other);
}

int main(int argc, char **argv)
{
	uint64_t workers = 2, n = 1000000, runs = 0;
	int variant = V_UNOPTIMISED;
	bool together = false;
	struct dc_opt opts[] = {
		DC_OPT_WORKERS(&workers, 256),
		DC_OPT_CHOICE("variant", &variant, "how the loop is compiled", variant_names),
		DC_OPT_FLAG("together", &together, "release the threads at the same instant"),
		DC_OPT_UINT("increments", &n, "increments per thread", 1, 1ull << 36),
		DC_OPT_UINT("runs", &runs, "runs per sweep row (0: the seed's 6/8/20/6/3)", 0, 1000),
		DC_OPT_END,
	};
	struct dc_prog prog = {
		.name = "racy_counter",
		.summary = "Threads increment one shared long: lost updates, the optimiser's fold, volatile, atomic.",
		.seed = "seed 003, \"counter++ is a lie\" through \"The indivisible add\"",
		.details = "The unoptimised variant is compiled at -O0 by a per-function attribute\n"
			   "(objdump -d shows the load/add/store); the others are -O2. The races\n"
			   "are undefined behaviour on purpose. Exits 0 whatever the counter reads:\n"
			   "a wrong total is the demonstration, not a failure.",
		.examples = "  racy_counter                                 # every variant, the seed's runs\n"
			    "  racy_counter --workers 2                     # one unoptimised run\n"
			    "  racy_counter --workers 2 --variant folded --together\n"
			    "  convoy run -- build/demos/racy_counter --workers 2 --variant volatile\n",
		.opts = opts,
	};
	dc_parse(&prog, argc, argv);
	increments = (long)n;
	struct config c = { .variant = (enum variant)variant, .together = together };

	if (dc_given(&prog, "workers")) {
		uint64_t ns;
		char d[32];
		long v = run((unsigned)workers, c, &ns);
		long expected = (long)workers * increments;
		printf("racy counter: variant=%s together=%s workers=%llu increments=%ld expected=%ld "
		       "counter=%ld lost=%ld time=%s\n",
		       variant_names[variant], together ? "yes" : "no", (unsigned long long)workers,
		       increments, expected, v, expected - v, dc_fmt_duration(d, sizeof d, ns));
		return 0;
	}
	if (dc_given(&prog, "variant") || dc_given(&prog, "together"))
		dc_usage_error(&prog, "--variant and --together choose a single run: add --workers N");

	unsigned w = (unsigned)workers;
	printf("racy counter: %u threads x %ld increments, expected %ld\n\n", w, increments,
	       (long)w * increments);
	sweep_row("unoptimised (-O0: load, add, store per iteration)", w,
		  (struct config){ V_UNOPTIMISED, false }, runs ? (unsigned)runs : 6);
	sweep_row("folded (-O2: the loop becomes one add of n)", w,
		  (struct config){ V_FOLDED, false }, runs ? (unsigned)runs : 8);
	sweep_row("folded, threads released together", w, (struct config){ V_FOLDED, true },
		  runs ? (unsigned)runs : 20);
	sweep_row("volatile (-O2, load, add, store per iteration again)", w,
		  (struct config){ V_VOLATILE, false }, runs ? (unsigned)runs : 6);
	sweep_row("atomic (atomic_fetch_add)", w, (struct config){ V_ATOMIC, false },
		  runs ? (unsigned)runs : 3);
	return 0;
}
