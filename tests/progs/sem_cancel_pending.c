/* A cancellation request that is pending (deferred type) while the thread
 * makes calls that are not cancellation points: a contended mutex lock and
 * two barrier waits, the calls after which the shim records a wait and
 * captures its call stack. The thread must return from each of them, still
 * holding what it locked, and be cancelled only at its own
 * pthread_testcancel. Each step is printed by main after the join, in one
 * order in every run. */
#include "progs.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t bar;
static int locked_rc = -1, unlocked_rc = -1, barrier_rc = -1, cleanup_ran;

static void cleanup(void *arg)
{
	cleanup_ran = 1;
}

static void *victim(void *arg)
{
	pthread_cleanup_push(cleanup, NULL);
	pthread_barrier_wait(&bar);             /* 1: main holds the lock */
	locked_rc = pthread_mutex_lock(&lock);  /* contended: main unlocks after cancelling */
	unlocked_rc = pthread_mutex_unlock(&lock);
	barrier_rc = pthread_barrier_wait(&bar);   /* 2: with the cancel pending */
	if (barrier_rc == PTHREAD_BARRIER_SERIAL_THREAD)
		barrier_rc = 0;
	pthread_testcancel();
	pthread_cleanup_pop(0);
	printf("not reached\n");
	return arg;
}

int main(void)
{
	MUST(pthread_barrier_init(&bar, NULL, 2));
	MUST(pthread_mutex_lock(&lock));
	pthread_t t;
	MUST(pthread_create(&t, NULL, victim, NULL));
	int rc = pthread_barrier_wait(&bar);
	if (rc != PTHREAD_BARRIER_SERIAL_THREAD)
		MUST(rc);
	SHOW("cancel", pthread_cancel(t));
	SHOW("unlock", pthread_mutex_unlock(&lock));
	rc = pthread_barrier_wait(&bar);
	SHOW("barrier", rc == PTHREAD_BARRIER_SERIAL_THREAD ? 0 : rc);
	void *ret = NULL;
	SHOW("join", pthread_join(t, &ret));
	printf("canceled: %s\n", ret == PTHREAD_CANCELED ? "yes" : "no");
	SHOW("victim's lock", locked_rc);
	SHOW("victim's unlock", unlocked_rc);
	SHOW("victim's barrier", barrier_rc);
	printf("cleanup ran: %s\n", cleanup_ran ? "yes" : "no");
	SHOW("trylock after cancel", pthread_mutex_trylock(&lock));
	return 0;
}
