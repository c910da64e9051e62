/* counted_pool N: a pool whose scheduler counts its queue (CONVOY_QUEUED,
 * include/convoy.h) with N tasks queued that no worker ever takes: two
 * workers wait on a condvar for a wake-up that never comes, and main waits
 * on a semaphore for their results. Every thread blocks for good, with no
 * deadline. N > 0: a starved pool (work queued, no worker free); N = 0: an
 * idle one, which the count tells apart although main waits on it too. */
#include "convoy.h"
#include "progs.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
static sem_t results;
static int woken;

static void *worker(void *arg)
{
	MUST(pthread_mutex_lock(&lock));
	while (!woken)
		MUST(pthread_cond_wait(&work, &lock));
	MUST(pthread_mutex_unlock(&lock));
	return NULL;
}

int main(int argc, char **argv)
{
	MUST(sem_init(&results, 0, 0));
	for (int i = 0; i < 2; i++) {
		pthread_t t;
		MUST(pthread_create(&t, NULL, worker, NULL));
	}
	CONVOY_QUEUED(argc > 1 ? atoi(argv[1]) : 0);   /* queued, and the wake-up forgotten */
	while (sem_wait(&results) != 0)
		MUST(errno == EINTR ? 0 : errno);
	return 0;
}
