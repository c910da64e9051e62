/* Threads that end one after another, each before the next is made, so
 * that the shim hands each the state of the one before (thread.c,
 * thread_retire), then two it keeps whole:
 *   row-0 .. row-49  name themselves, lock row_lock once, end
 *   holder           ends holding held_lock
 *   sleeper          running, and waiting for good, when main returns
 * Prints what it did. */
#include "progs.h"

#define ROWS 50

pthread_mutex_t row_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t never, sleeping;

static void *row(void *arg)
{
	char name[16];
	snprintf(name, sizeof(name), "row-%ld", (long)(intptr_t)arg);
	MUST(pthread_setname_np(pthread_self(), name));
	MUST(pthread_mutex_lock(&row_lock));
	MUST(pthread_mutex_unlock(&row_lock));
	return NULL;
}

static void *holder(void *arg)
{
	MUST(pthread_setname_np(pthread_self(), "holder"));
	MUST(pthread_mutex_lock(&held_lock));
	return arg;
}

static void *sleeper(void *arg)
{
	MUST(pthread_setname_np(pthread_self(), "sleeper"));
	MUST(sem_post(&sleeping));
	while (sem_wait(&never) != 0)
		;
	return arg;
}

int main(void)
{
	MUST(sem_init(&never, 0, 0));
	MUST(sem_init(&sleeping, 0, 0));
	pthread_t th;
	for (long i = 0; i < ROWS; i++) {
		MUST(pthread_create(&th, NULL, row, (void *)(intptr_t)i));
		MUST(pthread_join(th, NULL));
	}
	MUST(pthread_create(&th, NULL, holder, NULL));
	MUST(pthread_join(th, NULL));
	MUST(pthread_create(&th, NULL, sleeper, NULL));
	while (sem_wait(&sleeping) != 0)   /* running, so in the profile */
		;
	printf("%d rows, a holder and a sleeper\n", ROWS);
	return 0;
}
