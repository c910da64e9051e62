/* A thread's 1000 rounds of sem_wait, sem_post, sem_trywait and sem_post on
 * one semaphore, each finding a token and no waiter: the steps sem.c makes
 * itself. Fixed work (trust::an_interposer_after_the_shim_sees_every_call). */
#include "progs.h"

#define ROUNDS 1000

static sem_t sem;

static void *work(void *arg)
{
	for (int i = 0; i < ROUNDS; i++) {
		MUST(sem_wait(&sem));
		MUST(sem_post(&sem));
		MUST(sem_trywait(&sem));
		MUST(sem_post(&sem));
	}
	return arg;
}

int main(void)
{
	MUST(sem_init(&sem, 0, 1));
	pthread_t t;
	MUST(pthread_create(&t, NULL, work, NULL));
	MUST(pthread_join(t, NULL));
	printf("sem rounds %d\n", ROUNDS);
	return 0;
}
