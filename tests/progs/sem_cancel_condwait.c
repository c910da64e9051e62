/* pthread_cancel of a thread blocked in pthread_cond_wait: the wait
 * re-acquires the mutex and the thread's cleanup handler runs (its unlock
 * of the errorcheck mutex succeeds only because it owns it again, as POSIX
 * says); join returns PTHREAD_CANCELED. Afterwards cancel_cond is signalled
 * 10 times with no thread waiting (the profile must count all 10 as
 * unwaited: the cancelled waiter has left). */
#include "progs.h"

static pthread_mutex_t cancel_lock;
pthread_cond_t cancel_cond = PTHREAD_COND_INITIALIZER;
static int in_wait, never;
static int cleanup_ran, cleanup_unlock_rc = -1;

static void cleanup(void *arg)
{
	cleanup_unlock_rc = pthread_mutex_unlock(&cancel_lock);
	cleanup_ran = 1;   /* printed by main after the join: one order in every run */
}

static void *cancel_waiter(void *arg)
{
	pthread_mutex_lock(&cancel_lock);
	pthread_cleanup_push(cleanup, NULL);
	in_wait = 1;
	while (!never)
		pthread_cond_wait(&cancel_cond, &cancel_lock);
	pthread_cleanup_pop(1);
	printf("not reached\n");
	return arg;
}

int main(void)
{
	pthread_mutexattr_t a;
	MUST(pthread_mutexattr_init(&a));
	MUST(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK));
	MUST(pthread_mutex_init(&cancel_lock, &a));
	pthread_t t;
	MUST(pthread_create(&t, NULL, cancel_waiter, NULL));
	for (;;) {
		MUST(pthread_mutex_lock(&cancel_lock));
		if (in_wait)
			break;   /* it released the mutex inside the wait */
		MUST(pthread_mutex_unlock(&cancel_lock));
		sched_yield();
	}
	SHOW("cancel", pthread_cancel(t));
	SHOW("unlock", pthread_mutex_unlock(&cancel_lock));
	void *ret = NULL;
	SHOW("join", pthread_join(t, &ret));
	printf("canceled: %s\n", ret == PTHREAD_CANCELED ? "yes" : "no");
	printf("cleanup ran: %s\n", cleanup_ran ? "yes" : "no");
	SHOW("cleanup's unlock", cleanup_unlock_rc);
	SHOW("trylock after cancel", pthread_mutex_trylock(&cancel_lock));
	SHOW("unlock", pthread_mutex_unlock(&cancel_lock));
	for (int i = 0; i < 10; i++)
		MUST(pthread_cond_signal(&cancel_cond));
	printf("signalled 10\n");
	return 0;
}
