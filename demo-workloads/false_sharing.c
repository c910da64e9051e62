/* false_sharing — seed 003, "Correct and still slow: false sharing".
 *
 * Storage aligned to 256 bytes; worker k's atomic counter lives at
 * base + k * offset. Each worker does `increments` relaxed atomic increments
 * of its own counter only, so no object is shared, every final count is
 * exact, and yet counters closer than a cache line slow each other down.
 *
 * The sweep is the seed's: two workers, offsets 8 ... 256, seven runs each,
 * min / median / max milliseconds, with the address residues printed so the
 * layout is evidence rather than assumption. --offset N --workers W is one
 * configuration, so `convoy` can compare offsets 8 and 64.
 */
#include "demo_common.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct worker {
	_Atomic uint64_t *counter;
	uint64_t increments;
};

static void *worker_main(void *arg)
{
	const struct worker *w = arg;
	_Atomic uint64_t *c = w->counter;
	for (uint64_t i = 0; i < w->increments; i++)
		atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
	return NULL;
}

/* The aligned storage, allocated once per process at the size the largest
 * configuration needs. */
static unsigned char *storage;
static size_t storage_size;

static void ensure_storage(size_t need)
{
	if (need <= storage_size)
		return;
	free(storage);
	storage_size = (need + 255) & ~(size_t)255;
	storage = aligned_alloc(256, storage_size);
	if (!storage)
		dc_die("false_sharing", "out of memory");
}

static _Atomic uint64_t *counter_at(unsigned k, uint64_t offset)
{
	return (_Atomic uint64_t *)(void *)(storage + (size_t)k * offset);
}

static uint64_t run(unsigned workers, uint64_t offset, uint64_t increments)
{
	pthread_t *t = calloc(workers, sizeof *t);
	struct worker *w = calloc(workers, sizeof *w);
	if (!t || !w)
		dc_die("false_sharing", "out of memory");
	memset(storage, 0, storage_size);
	for (unsigned k = 0; k < workers; k++) {
		w[k] = (struct worker){ counter_at(k, offset), increments };
		atomic_init(w[k].counter, 0);
	}
	uint64_t start = dc_now_ns();
	for (unsigned k = 0; k < workers; k++)
		dc_spawn("false_sharing", &t[k], worker_main, &w[k]);
	for (unsigned k = 0; k < workers; k++)
		dc_join("false_sharing", t[k]);
	uint64_t ns = dc_now_ns() - start;
	for (unsigned k = 0; k < workers; k++)
		if (atomic_load(w[k].counter) != increments)
			dc_die("false_sharing", "offset %llu: counter %u is %llu, expected %llu",
			       (unsigned long long)offset, k,
			       (unsigned long long)atomic_load(w[k].counter),
			       (unsigned long long)increments);
	free(t);
	free(w);
	return ns;
}

int main(int argc, char **argv)
{
	uint64_t workers = 2, offset = 8, increments = 20000000, runs = 7;
	struct dc_list offsets = { 9, { 8, 16, 32, 64, 96, 120, 128, 192, 256 } };
	struct dc_opt opts[] = {
		DC_OPT_WORKERS(&workers, 256),
		DC_OPT_UINT("offset", &offset, "bytes between consecutive workers' counters (multiple of 8)",
			    8, 4096),
		DC_OPT_UINT("increments", &increments, "increments per worker", 1, 1ull << 36),
		DC_OPT_UINT("runs", &runs, "runs per offset in the sweep", 1, 1000),
		DC_OPT_LIST("offsets", &offsets, "offsets of the sweep", 8, 4096),
		DC_OPT_END,
	};
	struct dc_prog prog = {
		.name = "false_sharing",
		.summary = "Each worker increments only its own atomic; counters closer than a cache line slow each other down.",
		.seed = "seed 003, \"Correct and still slow: false sharing\" (the offset table)",
		.details = "Storage is aligned to 256 bytes; worker k's counter is at base + k*offset.\n"
			   "With --offset alone (no --workers) the sweep runs only that offset.",
		.examples = "  false_sharing                              # offsets 8..256, 7 runs each\n"
			    "  false_sharing --workers 2 --offset 8       # one run, same line\n"
			    "  false_sharing --workers 2 --offset 64      # one run, own lines\n"
			    "  convoy diff <(convoy run -- ... --offset 8) <(convoy run -- ... --offset 64)\n",
		.opts = opts,
	};
	dc_parse(&prog, argc, argv);
	if (offset % 8 != 0)
		dc_usage_error(&prog, "--offset: '%llu' is not a multiple of 8", (unsigned long long)offset);
	for (size_t i = 0; i < offsets.n; i++)
		if (offsets.v[i] % 8 != 0)
			dc_usage_error(&prog, "--offsets: '%llu' is not a multiple of 8",
				       (unsigned long long)offsets.v[i]);
	if (dc_given(&prog, "offset") && !dc_given(&prog, "workers")) {
		offsets.n = 1;
		offsets.v[0] = offset;
	}

	long line = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);
	if (dc_given(&prog, "workers")) {
		ensure_storage(512 + (size_t)workers * offset);
		uint64_t ns = run((unsigned)workers, offset, increments);
		printf("false sharing: workers=%llu offset=%llu base%%128=%llu second%%128=%llu "
		       "time=%.0fms increments=%llu each, all exact\n",
		       (unsigned long long)workers, (unsigned long long)offset,
		       (unsigned long long)((uintptr_t)storage % 128),
		       (unsigned long long)((uintptr_t)counter_at(1, offset) % 128), dc_ms(ns),
		       (unsigned long long)increments);
		return 0;
	}

	uint64_t max_offset = 0;
	for (size_t i = 0; i < offsets.n; i++)
		max_offset = offsets.v[i] > max_offset ? offsets.v[i] : max_offset;
	ensure_storage(512 + (size_t)workers * max_offset);
	printf("%llu workers x %llu relaxed atomic increments, %llu runs per offset\n",
	       (unsigned long long)workers, (unsigned long long)increments,
	       (unsigned long long)runs);
	printf("base address modulo 128: %llu\n\n", (unsigned long long)((uintptr_t)storage % 128));
	printf("offset    second address mod 128    min    median    max\n");
	uint64_t *ms = calloc(runs, sizeof *ms);
	if (!ms)
		dc_die(prog.name, "out of memory");
	for (size_t i = 0; i < offsets.n; i++) {
		for (uint64_t r = 0; r < runs; r++)
			ms[r] = (run((unsigned)workers, offsets.v[i], increments) + 500000) / 1000000;
		struct dc_stats s = dc_stats_of(ms, runs);
		printf("%6llu    %22llu    %3llu    %6llu    %3llu\n",
		       (unsigned long long)offsets.v[i],
		       (unsigned long long)((uintptr_t)counter_at(1, offsets.v[i]) % 128),
		       (unsigned long long)s.min, (unsigned long long)s.median,
		       (unsigned long long)s.max);
		fflush(stdout);
	}
	printf("\nevery counter exact; sysconf(_SC_LEVEL1_DCACHE_LINESIZE): %ld\n", line);
	free(ms);
	return 0;
}
