/* atomic_scaling — seed 003, "What the atomic costs": one shared atomic gets
 * slower, not faster, as threads are added.
 *
 * The sweep prints the seed's three tables:
 *   1. one thread, `total` increments: a plain += (which the optimiser folds),
 *      and atomic_fetch_add with relaxed, acq_rel and seq_cst order;
 *   2. ns per op for a volatile increment on one thread, two threads each on
 *      their own atomic (separate lines), two threads on the SAME atomic;
 *   3. the fixed total of increments of one shared atomic split across
 *      1, 2, 4, 8, 10 threads: ns per increment by thread count.
 * --workers N runs table 3's experiment once at N threads.
 *
 * Every count is checked: the shared atomic must end at exactly `total`.
 */
#include "demo_common.h"

#include <stdatomic.h>
#include <stdlib.h>

static _Alignas(DC_CACHE_LINE) _Atomic uint64_t shared_counter;
static _Alignas(DC_CACHE_LINE) uint64_t plain_counter;
static _Alignas(DC_CACHE_LINE) volatile uint64_t volatile_counter;

/* Two atomics on separate lines for "own atomics". */
static struct {
	_Alignas(DC_CACHE_LINE) _Atomic uint64_t v;
} own[2];

enum op { OP_PLAIN, OP_VOLATILE, OP_RELAXED, OP_ACQ_REL, OP_SEQ_CST, OP_OWN };

struct job {
	enum op op;
	uint64_t n;
	unsigned index; /* OP_OWN: which own[] */
};

__attribute__((noinline)) static void loop_plain(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		plain_counter += 1; /* folded into one add of n by the optimiser */
}

__attribute__((noinline)) static void loop_volatile(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		volatile_counter += 1;
}

#define LOOP_ATOMIC(fn, order)                                           \
	__attribute__((noinline)) static void fn(_Atomic uint64_t *c, uint64_t n) \
	{                                                                   \
		for (uint64_t i = 0; i < n; i++)                            \
			atomic_fetch_add_explicit(c, 1, order);             \
	}
LOOP_ATOMIC(loop_relaxed, memory_order_relaxed)
LOOP_ATOMIC(loop_acq_rel, memory_order_acq_rel)
LOOP_ATOMIC(loop_seq_cst, memory_order_seq_cst)

static void *worker(void *arg)
{
	const struct job *j = arg;
	switch (j->op) {
	case OP_PLAIN: loop_plain(j->n); break;
	case OP_VOLATILE: loop_volatile(j->n); break;
	case OP_RELAXED: loop_relaxed(&shared_counter, j->n); break;
	case OP_ACQ_REL: loop_acq_rel(&shared_counter, j->n); break;
	case OP_SEQ_CST: loop_seq_cst(&shared_counter, j->n); break;
	case OP_OWN: loop_relaxed(&own[j->index].v, j->n); break;
	}
	return NULL;
}

/* Runs `threads` threads; thread i does jobs[i]. Returns wall ns. */
static uint64_t run_threads(unsigned threads, struct job *jobs)
{
	pthread_t *t = calloc(threads, sizeof *t);
	if (!t)
		dc_die("atomic_scaling", "out of memory");
	uint64_t start = dc_now_ns();
	for (unsigned i = 0; i < threads; i++)
		dc_spawn("atomic_scaling", &t[i], worker, &jobs[i]);
	for (unsigned i = 0; i < threads; i++)
		dc_join("atomic_scaling", t[i]);
	uint64_t ns = dc_now_ns() - start;
	free(t);
	return ns;
}

/* The total split across `threads` (the remainder to the first ones), relaxed
 * increments of the one shared atomic; checks the final count. */
static uint64_t run_shared(unsigned threads, uint64_t total)
{
	struct job *jobs = calloc(threads, sizeof *jobs);
	if (!jobs)
		dc_die("atomic_scaling", "out of memory");
	for (unsigned i = 0; i < threads; i++)
		jobs[i] = (struct job){ OP_RELAXED, total / threads + (i < total % threads), 0 };
	atomic_store(&shared_counter, 0);
	uint64_t ns = run_threads(threads, jobs);
	free(jobs);
	if (atomic_load(&shared_counter) != total)
		dc_die("atomic_scaling", "shared counter %llu, expected %llu",
		       (unsigned long long)atomic_load(&shared_counter), (unsigned long long)total);
	return ns;
}

static void table_orders(uint64_t total)
{
	static const struct { enum op op; const char *name; } rows[] = {
		{ OP_PLAIN, "plain non-atomic +=" },
		{ OP_RELAXED, "atomic relaxed" },
		{ OP_ACQ_REL, "atomic acq_rel" },
		{ OP_SEQ_CST, "atomic seq_cst" },
	};
	printf("one thread, %llu increments, by memory order:\n\n", (unsigned long long)total);
	for (size_t i = 0; i < DC_ARRAY_SIZE(rows); i++) {
		struct job j = { rows[i].op, total, 0 };
		plain_counter = 0;
		atomic_store(&shared_counter, 0);
		uint64_t ns = run_threads(1, &j);
		uint64_t got = rows[i].op == OP_PLAIN ? plain_counter : atomic_load(&shared_counter);
		if (got != total)
			dc_die("atomic_scaling", "%s: counter %llu, expected %llu", rows[i].name,
			       (unsigned long long)got, (unsigned long long)total);
		double per = (double)ns / (double)total;
		printf("%-22s %8.0f ms   %.2f ns/op%s\n", rows[i].name, dc_ms(ns), per,
		       per < 0.05 ? "    <- compiler folded it away" : "");
		fflush(stdout);
	}
	printf("(x86-64: all three orders compile to the same `lock add`)\n\n");
}

static void table_contention(uint64_t per_thread)
{
	printf("%llu increments per thread:\n\n", (unsigned long long)per_thread);
	struct job v = { OP_VOLATILE, per_thread, 0 };
	volatile_counter = 0;
	uint64_t ns = run_threads(1, &v);
	if (volatile_counter != per_thread)
		dc_die("atomic_scaling", "volatile counter wrong on one thread");
	printf("plain volatile 1 thread   %6.2f ns/op\n", (double)ns / (double)per_thread);

	struct job o[2] = { { OP_OWN, per_thread, 0 }, { OP_OWN, per_thread, 1 } };
	atomic_store(&own[0].v, 0);
	atomic_store(&own[1].v, 0);
	ns = run_threads(2, o);
	if (atomic_load(&own[0].v) != per_thread || atomic_load(&own[1].v) != per_thread)
		dc_die("atomic_scaling", "own atomics wrong");
	printf("2 threads, own atomics    %6.2f ns/op   (uncontended)\n",
	       (double)ns / (double)(2 * per_thread));

	ns = run_shared(2, 2 * per_thread);
	printf("2 threads, SAME atomic    %6.2f ns/op   (contended)\n\n",
	       (double)ns / (double)(2 * per_thread));
	fflush(stdout);
}

int main(int argc, char **argv)
{
	uint64_t workers = 1, total = 200000000;
	struct dc_list sweep = { 5, { 1, 2, 4, 8, 10 } };
	bool scaling_only = false;
	struct dc_opt opts[] = {
		DC_OPT_WORKERS(&workers, 1024),
		DC_OPT_UINT("total", &total, "increments of the shared atomic, split across the threads",
			    1, 1ull << 40),
		DC_OPT_LIST("sweep", &sweep, "thread counts of the scaling table", 1, 1024),
		DC_OPT_FLAG("scaling-only", &scaling_only, "print only the scaling table"),
		DC_OPT_END,
	};
	struct dc_prog prog = {
		.name = "atomic_scaling",
		.summary = "A fixed number of increments of one shared atomic, split across more threads, takes longer.",
		.seed = "seed 003, \"What the atomic costs\" (the three atomic tables)",
		.examples = "  atomic_scaling                       # the seed's three tables\n"
			    "  atomic_scaling --workers 4           # one run: 200M increments over 4 threads\n"
			    "  atomic_scaling --scaling-only --total 20000000\n"
			    "  convoy scale --threads 1,2,4 -- build/demos/atomic_scaling --workers {threads}\n",
		.opts = opts,
	};
	dc_parse(&prog, argc, argv);

	if (dc_given(&prog, "workers")) {
		uint64_t ns = run_shared((unsigned)workers, total);
		printf("atomic scaling: workers=%llu increments=%llu time=%.0fms ns/increment=%.2f "
		       "counter=%llu\n",
		       (unsigned long long)workers, (unsigned long long)total, dc_ms(ns),
		       (double)ns / (double)total, (unsigned long long)total);
		return 0;
	}
	if (!scaling_only) {
		table_orders(total);
		table_contention(total / 2);
	}
	printf("%llu increments of one shared atomic, split across the threads:\n\n",
	       (unsigned long long)total);
	for (size_t i = 0; i < sweep.n; i++) {
		uint64_t ns = run_shared((unsigned)sweep.v[i], total);
		printf("%2llu threads %6.0f ms %6.2f ns per increment\n",
		       (unsigned long long)sweep.v[i], dc_ms(ns), (double)ns / (double)total);
		fflush(stdout);
	}
	printf("\nevery count exact: %llu\n", (unsigned long long)total);
	return 0;
}
