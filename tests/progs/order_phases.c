/* order_phases [THREADS]: every thread takes lock_a then lock_b, many times
 * (contended); all meet at a barrier; then every thread takes lock_b then
 * lock_a. The two orders never overlap in time, so the run completes, but
 * the order is a cycle: any interleaving of the phases would deadlock. */
#include "progs.h"

#define ROUNDS 2000

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER, lock_b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t between;
static volatile unsigned long shared;

static void both(pthread_mutex_t *first, pthread_mutex_t *second)
{
	for (int i = 0; i < ROUNDS; i++) {
		MUST(pthread_mutex_lock(first));
		MUST(pthread_mutex_lock(second));
		for (int k = 0; k < 200; k++)
			shared++;
		MUST(pthread_mutex_unlock(second));
		MUST(pthread_mutex_unlock(first));
	}
}

static void *phases(void *arg)
{
	both(&lock_a, &lock_b);
	pthread_barrier_wait(&between);
	both(&lock_b, &lock_a);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	if (n < 1 || n > 64)
		n = 4;
	pthread_t t[64];
	MUST(pthread_barrier_init(&between, NULL, (unsigned)n));
	for (int i = 0; i < n; i++)
		MUST(pthread_create(&t[i], NULL, phases, NULL));
	for (int i = 0; i < n; i++)
		MUST(pthread_join(t[i], NULL));
	printf("order_phases: %lu\n", shared);
	return 0;
}
