/* lock_ring [N] [--phased] [--fixed]: N threads (default 2) and N mutexes
 * in a ring; thread i takes lock i, then lock i+1 (mod N).
 *
 * By default every thread takes its first lock, all meet at a barrier, then
 * each asks for its second: a deadlock on every run, with no timing, that
 * only a time limit or a watchdog ends. --phased runs the threads one after
 * another (each waits for the previous to finish), so the order is reversed
 * in the ring but no two threads ever hold locks at once: the run completes,
 * with the lock-order cycle latent. --fixed takes the lower-numbered lock
 * first: no cycle at all. */
#include "progs.h"

#define MAX_RING 16

static int nthreads = 2, phased, fixed;
static pthread_mutex_t locks[MAX_RING];
static pthread_barrier_t all_hold;
static sem_t turn[MAX_RING + 1];

static void *ring_member(void *arg)
{
	int i = (int)(intptr_t)arg, a = i, b = (i + 1) % nthreads;
	if (fixed && b < a) {
		int t = a;
		a = b;
		b = t;
	}
	if (phased)
		MUST(sem_wait(&turn[i]));
	MUST(pthread_mutex_lock(&locks[a]));
	if (!phased && !fixed)
		pthread_barrier_wait(&all_hold);
	MUST(pthread_mutex_lock(&locks[b]));
	MUST(pthread_mutex_unlock(&locks[b]));
	MUST(pthread_mutex_unlock(&locks[a]));
	if (phased)
		MUST(sem_post(&turn[i + 1]));
	return NULL;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--phased"))
			phased = 1;
		else if (!strcmp(argv[i], "--fixed"))
			fixed = 1;
		else
			nthreads = atoi(argv[i]);
	}
	if (nthreads < 2 || nthreads > MAX_RING) {
		fprintf(stderr, "lock_ring: 2 to %d threads\n", MAX_RING);
		return 2;
	}
	pthread_t t[MAX_RING];
	MUST(pthread_barrier_init(&all_hold, NULL, (unsigned)nthreads));
	for (int i = 0; i <= nthreads; i++)
		MUST(sem_init(&turn[i], 0, i == 0));
	for (int i = 0; i < nthreads; i++)   /* all before any thread: thread i takes lock i + 1 */
		MUST(pthread_mutex_init(&locks[i], NULL));
	for (int i = 0; i < nthreads; i++)
		MUST(pthread_create(&t[i], NULL, ring_member, (void *)(intptr_t)i));
	for (int i = 0; i < nthreads; i++)
		MUST(pthread_join(t[i], NULL));
	printf("lock_ring: done\n");
	return 0;
}
