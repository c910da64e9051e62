/* Deterministic trylock: 10 trylocks from another thread while main holds
 * try_lock (all EBUSY), then 5 successful ones. Expected for try_lock:
 * trylocks 15, trylock_failures 10, acquisitions 1 (main) + 5 = 6. */
#include "progs.h"

pthread_mutex_t try_lock = PTHREAD_MUTEX_INITIALIZER;

static void *try_busy(void *arg)
{
	int busy = 0;
	for (int i = 0; i < 10; i++)
		busy += pthread_mutex_trylock(&try_lock) == EBUSY;
	printf("busy %d of 10\n", busy);
	return arg;
}

static void *try_free(void *arg)
{
	int ok = 0;
	for (int i = 0; i < 5; i++) {
		if (pthread_mutex_trylock(&try_lock) == 0) {
			ok++;
			pthread_mutex_unlock(&try_lock);
		}
	}
	printf("acquired %d of 5\n", ok);
	return arg;
}

int main(void)
{
	pthread_t t;
	MUST(pthread_mutex_lock(&try_lock));
	MUST(pthread_create(&t, NULL, try_busy, NULL));
	MUST(pthread_join(t, NULL));
	MUST(pthread_mutex_unlock(&try_lock));
	MUST(pthread_create(&t, NULL, try_free, NULL));
	MUST(pthread_join(t, NULL));
	return 0;
}
