/* serial_nofp — a serial phase spent in the C library, called from the
 * program's own function, in code without frame pointers (-O2
 * -fomit-frame-pointer, tests.mk, as Debian builds its programs and libc).
 *
 * The main thread clears a table ROUNDS times in clear_table (memset: its
 * CPU time is the C library's), called from prepare, before it starts two
 * workers that each spin for as much CPU time as the clearing took, then
 * meet at a barrier (so neither runs alone at the end, whatever the
 * scheduler does). While main prepares, no other thread has work: a serial
 * phase, a third to a half of the run whatever the machine's speed or load,
 * whose CPU samples land in memset, which keeps no frame, so only
 * call-frame information leads from it to clear_table. */
#include <stdint.h>

#include "progs.h"

#define TABLE (8 << 20)
#define ROUNDS 100

static unsigned char *table;
static size_t table_size = TABLE;   /* not a constant: memset stays a call */
static unsigned long checksum;
static uint64_t serial_cpu_ns;
static pthread_barrier_t done;

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

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

static void *spin(void *arg)
{
	volatile uint64_t x = 0;
	uint64_t end = thread_cpu_ns() + serial_cpu_ns;
	while (thread_cpu_ns() < end)
		for (int i = 0; i < 64; i++)
			x += (uint64_t)i;
	pthread_barrier_wait(&done);
	return arg;
}

int main(void)
{
	pthread_t t[2];
	MUST((table = malloc(TABLE)) ? 0 : ENOMEM);
	uint64_t start = thread_cpu_ns();
	prepare();
	serial_cpu_ns = thread_cpu_ns() - start;
	MUST(pthread_barrier_init(&done, NULL, 2));
	for (int i = 0; i < 2; i++)
		MUST(pthread_create(&t[i], NULL, spin, NULL));
	for (int i = 0; i < 2; i++)
		MUST(pthread_join(t[i], NULL));
	printf("checksum: %lu\n", checksum);
	return 0;
}
