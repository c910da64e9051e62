/* gvl — a global VM lock as Ruby 3.1 builds it (thread_pthread.c): a mutex,
 * an owner, and a condvar per thread, waited under the mutex. A thread that
 * wants the lock queues itself and waits on its own condvar with a 10 ms
 * timeout (the timeslice: when it expires the waiter asks the owner to let
 * go); the owner that lets go wakes the first thread queued, on that
 * thread's condvar. No wake is sent on a condvar its sender waits on, yet
 * the threads hand the lock to each other: the finding must be
 * lock-contention on the monitor (gvl_mutex with the threads' condvars),
 * not "none" (helper-130: ruby 3.1's threads parked 70% of a sweep and got
 * no finding). */
#include <errno.h>

#include "data_progs.h"

#define UNITS 1000            /* units of work in all, split over the threads */
#define UNIT_NS 100000        /* CPU per unit */
#define TIMESLICE_NS 10000000 /* the timeslice */
#define MAX_THREADS 64

static pthread_mutex_t gvl_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t own_cond[MAX_THREADS];
static int owned, yield_request;
static int queue[MAX_THREADS], head, len;   /* threads waiting, first at head */

static void deadline(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_nsec += TIMESLICE_NS;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static void acquire(int me)
{
	pthread_mutex_lock(&gvl_mutex);
	if (owned || len) {   /* behind the threads queued already, as Ruby's is fair */
		queue[(head + len++) % MAX_THREADS] = me;
		while (owned || queue[head] != me) {
			struct timespec ts;
			deadline(&ts);
			if (pthread_cond_timedwait(&own_cond[me], &gvl_mutex, &ts) == ETIMEDOUT && owned)
				yield_request = 1;   /* the timeslice passed: ask the owner */
		}
		head = (head + 1) % MAX_THREADS;
		len--;
	}
	owned = 1;
	yield_request = 0;
	pthread_mutex_unlock(&gvl_mutex);
}

static void release(void)
{
	pthread_mutex_lock(&gvl_mutex);
	owned = 0;
	if (len)
		pthread_cond_signal(&own_cond[queue[head]]);   /* the next thread's own condvar */
	pthread_mutex_unlock(&gvl_mutex);
}

static int workers;

static void *worker(void *arg)
{
	int me = (int)(intptr_t)arg;
	dp_name("rbthread");
	acquire(me);
	for (int i = 0; i < UNITS / workers; i++) {
		dp_spin(UNIT_NS);
		if (__atomic_load_n(&yield_request, __ATOMIC_RELAXED)) {
			release();
			acquire(me);
		}
	}
	release();
	return NULL;
}

int main(int argc, char **argv)
{
	workers = dp_workers(argc, argv);
	if (workers > MAX_THREADS)
		workers = MAX_THREADS;
	CONVOY_NAME(&gvl_mutex, "gvl_mutex");
	pthread_t t[MAX_THREADS];
	for (int i = 0; i < workers; i++) {
		pthread_cond_init(&own_cond[i], NULL);
		CONVOY_NAME(&own_cond[i], "thread_cond");
	}
	for (int i = 0; i < workers; i++)
		pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
	for (int i = 0; i < workers; i++)
		pthread_join(t[i], NULL);
	return 0;
}
