/* adjacent_locks — two pthread mutexes side by side in one struct (one
 * cache line), each taken by one worker only: no lock is ever contended,
 * yet both lock words are written on one line by two threads. The samples
 * land in glibc's lock code (a cmpxchg retry loop by shape); a word only
 * its own thread touches is no spin on a contended lock, so the line is
 * false sharing naming ingest.in_lock and ingest.out_lock (issue 12:
 * "adjacent locks"). The counters they guard lie on lines of their own.
 * Two workers. */
#include <stdint.h>

#include "progs.h"

#define TOTAL 20000000L

struct ingest {
	pthread_mutex_t in_lock;
	pthread_mutex_t out_lock;
} __attribute__((aligned(64)));

struct ingest ingest = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER };
_Alignas(64) long in_count;
_Alignas(64) long out_count;
static long per_worker;

static void *worker(void *arg)
{
	int odd = (int)(uintptr_t)arg & 1;
	pthread_mutex_t *lock = odd ? &ingest.out_lock : &ingest.in_lock;
	long *count = odd ? &out_count : &in_count;
	for (long i = 0; i < per_worker; i++) {
		pthread_mutex_lock(lock);
		++*count;
		pthread_mutex_unlock(lock);
	}
	return NULL;
}

int main(void)
{
	int n = 2;
	pthread_t t[2];
	per_worker = TOTAL / n;
	for (int i = 0; i < n; i++)
		MUST(pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i));
	for (int i = 0; i < n; i++)
		MUST(pthread_join(t[i], NULL));
	printf("in %ld out %ld\n", in_count, out_count);
	return 0;
}
