/* sem_as_locks: two semaphores used as locks (initial value 1, each taken
 * with sem_wait and given back with sem_post by the thread that took it),
 * taken in opposite orders: thread a holds s1 and wants s2, thread b holds
 * s2 and wants s1. A barrier between the first and the second wait makes
 * the deadlock certain, with no timing. */
#include "progs.h"

static sem_t s1, s2;
static pthread_barrier_t both_hold_one;

static void *take(sem_t *first, sem_t *second)
{
	while (sem_wait(first) != 0)
		MUST(errno == EINTR ? 0 : errno);
	pthread_barrier_wait(&both_hold_one);
	while (sem_wait(second) != 0)
		MUST(errno == EINTR ? 0 : errno);
	sem_post(second);
	sem_post(first);
	return NULL;
}

static void *a(void *arg) { return take(&s1, &s2); }
static void *b(void *arg) { return take(&s2, &s1); }

int main(void)
{
	MUST(sem_init(&s1, 0, 1));
	MUST(sem_init(&s2, 0, 1));
	MUST(pthread_barrier_init(&both_hold_one, NULL, 2));
	pthread_t ta, tb;
	MUST(pthread_create(&ta, NULL, a, NULL));
	MUST(pthread_create(&tb, NULL, b, NULL));
	MUST(pthread_join(ta, NULL));
	MUST(pthread_join(tb, NULL));
	printf("never\n");
	return 0;
}
