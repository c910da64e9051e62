/* parked_at_exit [N]: N workers (default 2) park on a condvar nobody
 * signals, and main exits without joining them once all N are inside their
 * wait (each counts itself under the mutex, which only its pthread_cond_wait
 * releases: main sees N only then). The profile is written with the N waits
 * still in progress, as xz's is. No timing: main waits for that state. */
#include <sched.h>

#include "progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle = PTHREAD_COND_INITIALIZER;
static int parked, never;

static void *worker(void *arg)
{
	MUST(pthread_mutex_lock(&m));
	parked++;
	while (!never)
		MUST(pthread_cond_wait(&idle, &m));
	MUST(pthread_mutex_unlock(&m));
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	for (int i = 0; i < n; i++) {
		pthread_t t;
		MUST(pthread_create(&t, NULL, worker, NULL));
	}
	for (;;) {
		MUST(pthread_mutex_lock(&m));
		int all = parked == n;
		MUST(pthread_mutex_unlock(&m));
		if (all)
			break;
		sched_yield();
	}
	exit(0);
}
