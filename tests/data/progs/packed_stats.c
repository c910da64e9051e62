/* packed_stats — per-thread statistics in one packed global array: worker k
 * updates only stats[k] (plain loads and stores, the same total work at every count), but four workers' entries
 * share each 64-byte line, so at 2 threads both write one line: the
 * decoder must call it false-sharing and name stats[0].hits and
 * stats[1].hits (member paths from DWARF). The padded control, padded_stats,
 * gives each entry its own line and must stay clean. */
#include "data_progs.h"

#define TOTAL 60000000L   /* split over the workers: the same work at every count */

struct stats {
	long hits;
	long misses;
};

struct padded {
	_Alignas(64) long hits;
	long misses;
};

struct stats stats[8];
struct padded padded_stats[8];
static int padded;
static long per_worker;

static void *worker(void *arg)
{
	dp_name("counter");
	long k = (long)(intptr_t)arg;
	volatile long *hits = padded ? &padded_stats[k].hits : &stats[k].hits;
	volatile long *misses = padded ? &padded_stats[k].misses : &stats[k].misses;
	for (long i = 0; i < per_worker; i++) {
		*hits = *hits + 1;
		if ((i & 15) == 0)
			*misses = *misses + 1;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = dp_workers(argc, argv);
	if (n > 8)
		n = 8;
	for (int i = 1; i < argc; i++)
		padded |= !strcmp(argv[i], "--padded");
	per_worker = TOTAL / n;
	pthread_t t[8];
	for (int k = 0; k < n; k++)
		if (pthread_create(&t[k], NULL, worker, (void *)(intptr_t)k))
			return 1;
	for (int k = 0; k < n; k++)
		pthread_join(t[k], NULL);
	long hits = 0;
	for (int k = 0; k < n; k++)
		hits += padded ? padded_stats[k].hits : stats[k].hits;
	printf("hits %ld\n", hits);
	return 0;
}
