/* serial_memset — a serial phase spent in the C library, in code built
 * without frame pointers (-fomit-frame-pointer, data.mk; as Debian builds
 * its programs and libc). The main thread clears its table ROUNDS times in
 * clear_table (memset, the C library's), called from prepare, before it
 * starts N workers that share as much CPU time as the clearing took and
 * meet at a barrier. The phase's CPU samples are in memset, which keeps no
 * frame: the recording's chains were unwound by the launcher from
 * call-frame information (samples file version 4, "cfi"), and the phase
 * must be named with clear_table in prepare, not memset. */
#include "data_progs.h"

#define TABLE (8 << 20)
#define ROUNDS 100

static unsigned char *table;
static size_t table_size = TABLE;   /* not a constant: memset stays a call */
static unsigned long checksum;
static uint64_t share_ns;
static pthread_barrier_t done;

/* noipa: neither inlined nor cloned, so the frame keeps its name; the
 * read after the call keeps it from being a tail call. */
__attribute__((noipa)) static void clear_table(int round)
{
	memset(table, round, table_size);
	checksum += table[round];
}

__attribute__((noipa)) static void prepare(void)
{
	for (int r = 0; r < ROUNDS; r++)
		clear_table(r);
}

static void *worker(void *arg)
{
	dp_name("worker");
	dp_spin(share_ns);
	pthread_barrier_wait(&done);
	return arg;
}

int main(int argc, char **argv)
{
	int workers = dp_workers(argc, argv);
	if (workers > 64 || !(table = malloc(TABLE)))
		return 99;
	uint64_t start = dp_cpu_ns();
	prepare();
	share_ns = (dp_cpu_ns() - start) / (uint64_t)workers;
	pthread_barrier_init(&done, NULL, (unsigned)workers);
	pthread_t t[64];
	dp_start(t, workers, worker, NULL, 0);
	dp_join(t, workers);
	printf("checksum: %lu\n", checksum);
	return 0;
}
