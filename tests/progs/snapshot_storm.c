/* snapshot_storm [send]: a worker takes two mutexes nested (the held set's
 * push, the lock-order edge lookup, the pop) and posts and waits on a
 * semaphore, in a loop, while main (with "send", only ever under the shim
 * with CONVOY_SNAPSHOT_SIGNAL set to SIGRTMAX) sends it convoy's snapshot
 * request REQUESTS times, each once the previous snapshot exists: each lands
 * at whatever instruction the worker is at, in the shim's bookkeeping or the
 * program's. Then main stops the worker (without "send", once it has run
 * ROUNDS rounds). Prints what the worker saw go wrong, which must be
 * nothing, as in a run that sent nothing: a lock or semaphore call that
 * failed, errno changed by a call that succeeded, the pairs and waits out of
 * step. Every wait is on state, never on time. */
#include <dirent.h>
#include <signal.h>

#include "progs.h"

#define CV_SNAPSHOT_MAGIC 0x636f6e76   /* include/convoy/profile.h */
#define ROUNDS   100000
#define REQUESTS 40

static pthread_mutex_t outer = PTHREAD_MUTEX_INITIALIZER, inner = PTHREAD_MUTEX_INITIALIZER;
static sem_t ticks;
static int stop;
static unsigned long rounds, pairs, waits, failures, errno_changes;

static void *worker(void *arg)
{
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		errno = EDOM;
		failures += pthread_mutex_lock(&outer) != 0;
		failures += pthread_mutex_lock(&inner) != 0;
		pairs++;
		failures += pthread_mutex_unlock(&inner) != 0;
		failures += pthread_mutex_unlock(&outer) != 0;
		failures += sem_post(&ticks) != 0;
		failures += sem_wait(&ticks) != 0;
		waits++;
		errno_changes += errno != EDOM;
		__atomic_store_n(&rounds, rounds + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int send = argc > 1 && !strcmp(argv[1], "send");
	MUST(sem_init(&ticks, 0, 0));
	pthread_t t;
	MUST(pthread_create(&t, NULL, worker, NULL));
	for (int i = 0; send && i < REQUESTS; i++) {
		int before = hang_snapshots();
		union sigval mark = { .sival_int = CV_SNAPSHOT_MAGIC };
		MUST(pthread_sigqueue(t, SIGRTMAX, mark));
		while (hang_snapshots() == before)
			nap();
	}
	while (__atomic_load_n(&rounds, __ATOMIC_ACQUIRE) < ROUNDS)
		nap();
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	MUST(pthread_join(t, NULL));
	printf("failed calls %lu, errno changed %lu times, pairs - waits %ld\n", failures, errno_changes,
	       (long)(pairs - waits));
	return 0;
}
