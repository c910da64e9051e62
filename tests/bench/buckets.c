/* buckets.c — a hash table with a lock per bucket (make bench; not a test).
 *
 *   buckets N [THREADS]   N mutexes made with pthread_mutex_init, then
 *                         THREADS (default 2) threads each take every one
 *                         of them, twice, each in an order of its own
 *
 * The shape of programs with many fine-grained locks: every (lock, thread)
 * pair is a first use for the shim (an object, a record, an init stack),
 * so this measures what the shim pays per object rather than per
 * acquisition. tests/bench/peers.sh times whole runs of it. Prints the
 * total of a counter the locks protect, so the work cannot be elided. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct bucket {
	pthread_mutex_t lock;
	long count;
};

static struct bucket *table;
static long nbuckets;

static void *worker(void *arg)
{
	long step = 2 * (long)(uintptr_t)arg + 1;   /* each thread its own walk through the table */
	for (int pass = 0; pass < 2; pass++)
		for (long i = 0, b = 0; i < nbuckets; i++, b = (b + step) % nbuckets) {
			pthread_mutex_lock(&table[b].lock);
			table[b].count++;
			pthread_mutex_unlock(&table[b].lock);
		}
	return NULL;
}

int main(int argc, char **argv)
{
	nbuckets = argc > 1 ? atol(argv[1]) : 0;
	long threads = argc > 2 ? atol(argv[2]) : 2;
	if (argc < 2 || argc > 3 || nbuckets < 1 || threads < 1 || threads > 64) {
		fprintf(stderr, "usage: buckets N [THREADS]\n");
		return 2;
	}
	table = calloc((size_t)nbuckets, sizeof(*table));
	if (!table)
		return 1;
	for (long i = 0; i < nbuckets; i++)
		pthread_mutex_init(&table[i].lock, NULL);
	pthread_t th[64];
	for (long i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i);
	for (long i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	long total = 0;
	for (long i = 0; i < nbuckets; i++)
		total += table[i].count;
	printf("%ld\n", total);
	return 0;
}
