/* serial_nofp — a serial phase spent in the C library, called from the
 * program's own function, in code without frame pointers (-O2
 * -fomit-frame-pointer, tests.mk, as Debian builds its programs and libc).
 *
 * The main thread clears a table ROUNDS times in clear_table (memset: its
 * CPU time is the C library's), called from prepare, before it starts two
 * workers that sum halves of the table PASSES times. While main prepares,
 * no other thread has work: a serial phase, whose CPU samples land in
 * memset, which keeps no frame, so only call-frame information leads from
 * it to clear_table. The work is fixed (passes over TABLE bytes), whatever
 * the machine's speed. */
#include <stdint.h>

#include "progs.h"

#define TABLE (8 << 20)
#define ROUNDS 40
#define PASSES 16

static unsigned char *table;
static size_t table_size = TABLE;   /* not a constant: memset stays a call */
static unsigned long sums[2];

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

static void *sum_half(void *arg)
{
	size_t half = (size_t)(uintptr_t)arg;
	unsigned long s = 0;
	for (int p = 0; p < PASSES; p++)
		for (size_t i = half * table_size / 2; i < (half + 1) * table_size / 2; i++)
			s += table[i] ^ (unsigned long)p;
	sums[half] += s;
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	MUST((table = malloc(TABLE)) ? 0 : ENOMEM);
	prepare();
	for (uintptr_t i = 0; i < 2; i++)
		MUST(pthread_create(&t[i], NULL, sum_half, (void *)i));
	for (int i = 0; i < 2; i++)
		MUST(pthread_join(t[i], NULL));
	printf("sum: %lu\n", sums[0] + sums[1]);
	return 0;
}
