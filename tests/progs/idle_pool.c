/* idle_pool [N]: N workers (default 2) parked on one condvar waiting for
 * work that never comes, while the main thread sleeps (not in any pthread
 * wait) until a time limit stops it. The control for pool-starvation: every
 * worker is blocked in a condvar wait when --timeout writes the profile, but
 * they are idle with an empty queue and nothing waits on them. */
#include "progs.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
static int queued;

static void *worker(void *arg)
{
	MUST(pthread_mutex_lock(&lock));
	while (!queued)
		MUST(pthread_cond_wait(&work, &lock));
	MUST(pthread_mutex_unlock(&lock));
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	for (int i = 0; i < n; i++) {
		pthread_t t;
		MUST(pthread_create(&t, NULL, worker, NULL));
	}
	for (;;)
		pause();
}
