/* serial_memset — a serial phase spent in the C library, in code built
 * without frame pointers (-fomit-frame-pointer, data.mk; as Debian builds
 * its programs and libc). The main thread clears its table ROUNDS times in
 * clear_table (memset, the C library's), called from prepare, before it
 * starts N workers that share the summing. The phase's CPU samples are in
 * memset, which keeps no frame: the recording's chains were unwound by the
 * launcher from call-frame information (samples file version 4, "cfi"),
 * and the phase must be named with clear_table in prepare, not memset. */
#include "data_progs.h"

#define TABLE (8 << 20)
#define ROUNDS 40
#define PASSES 16

static unsigned char *table;
static size_t table_size = TABLE;   /* not a constant: memset stays a call */
static int workers;
static unsigned long sums[1];

/* noipa: neither inlined nor cloned, so the frame keeps its name; the
 * read after the call keeps it from being a tail call. */
__attribute__((noipa)) static void clear_table(int round)
{
	memset(table, round, table_size);
	sums[0] += table[round];
}

__attribute__((noipa)) static void prepare(void)
{
	for (int r = 0; r < ROUNDS; r++)
		clear_table(r);
}

static void *worker(void *arg)
{
	dp_name("worker");
	unsigned long s = 0;
	for (int p = 0; p < PASSES / workers; p++)
		for (size_t i = 0; i < table_size; i++)
			s += table[i] ^ (unsigned long)p;
	volatile unsigned long sink = s;   /* the sum is the work, not a result */
	(void)sink;
	return arg;
}

int main(int argc, char **argv)
{
	workers = dp_workers(argc, argv);
	if (!(table = malloc(TABLE)))
		return 99;
	prepare();
	pthread_t t[64];
	dp_start(t, workers, worker, NULL, 0);
	dp_join(t, workers);
	printf("sum: %lu\n", sums[0]);
	return 0;
}
