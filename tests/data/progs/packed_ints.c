/* packed_ints — per-thread 4-byte counters packed in one global array:
 * worker k updates only its own element, the same total work at every
 * count, but elements 0 and 1 share one 8-byte word. By default plain loads
 * and stores (worker_hits); with --atomic, atomic_fetch_add
 * (thread_ops). The decoder must call it false-sharing naming both
 * elements, not true-sharing on the 8-byte word that holds them (issue
 * 12: each access keeps its own address and size), and the watchpoints,
 * 4 bytes wide, confirm it. */
#include <stdatomic.h>

#include "data_progs.h"

#define TOTAL_PLAIN 60000000L    /* split over the workers */
#define TOTAL_ATOMIC 30000000L

int worker_hits[16];
_Atomic int thread_ops[16];
static int atomic;
static long per_worker;

static void *worker(void *arg)
{
	dp_name("counter");
	long k = (long)(intptr_t)arg;
	volatile int *hits = &worker_hits[k];
	for (long i = 0; i < per_worker; i++)
		if (atomic)
			atomic_fetch_add_explicit(&thread_ops[k], 1, memory_order_relaxed);
		else
			*hits = *hits + 1;
	return NULL;
}

int main(int argc, char **argv)
{
	int n = dp_workers(argc, argv);
	if (n > 16)
		n = 16;
	for (int i = 1; i < argc; i++)
		atomic |= !strcmp(argv[i], "--atomic");
	per_worker = (atomic ? TOTAL_ATOMIC : TOTAL_PLAIN) / n;
	pthread_t t[16];
	for (int k = 0; k < n; k++)
		if (pthread_create(&t[k], NULL, worker, (void *)(intptr_t)k))
			return 1;
	for (int k = 0; k < n; k++)
		pthread_join(t[k], NULL);
	long total = 0;
	for (int k = 0; k < n; k++)
		total += atomic ? thread_ops[k] : worker_hits[k];
	printf("total %ld\n", total);
	return 0;
}
