/* rlock — a recursive lock built from a mutex and a condvar, as Perl's
 * threads::shared `lock` is: the mutex guards an owner and a count, and a
 * thread that finds another owner waits on the condvar. Each thread does
 * all of its work holding the lock (taken twice, recursively), so threads
 * run one at a time: the finding must be lock-contention on the monitor
 * (rlock_mutex with rlock_cond), one cause, not a mutex finding and a
 * park-wake finding. */
#include "data_progs.h"

#define UNITS 2000
#define UNIT_NS 50000

static pthread_mutex_t rlock_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t rlock_cond = PTHREAD_COND_INITIALIZER;
static pthread_t owner;
static int owned, count;

static void rlock_take(void)
{
	pthread_mutex_lock(&rlock_mutex);
	while (owned && !pthread_equal(owner, pthread_self()))
		pthread_cond_wait(&rlock_cond, &rlock_mutex);
	owner = pthread_self();
	owned = 1;
	count++;
	pthread_mutex_unlock(&rlock_mutex);
}

static void rlock_release(void)
{
	pthread_mutex_lock(&rlock_mutex);
	if (--count == 0) {
		owned = 0;
		pthread_cond_signal(&rlock_cond);
	}
	pthread_mutex_unlock(&rlock_mutex);
}

static int workers;

static void *worker(void *arg)
{
	(void)arg;
	dp_name("perlthread");
	for (int i = 0; i < UNITS / workers; i++) {
		rlock_take();
		rlock_take();   /* recursive */
		dp_spin(UNIT_NS);
		rlock_release();
		rlock_release();
		sched_yield();   /* let a waiter in, as a Perl op boundary does */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	workers = dp_workers(argc, argv);
	pthread_t t[64];
	CONVOY_NAME(&rlock_mutex, "rlock_mutex");
	CONVOY_NAME(&rlock_cond, "rlock_cond");
	dp_start(t, workers, worker, t, 0);
	dp_join(t, workers);
	return 0;
}
