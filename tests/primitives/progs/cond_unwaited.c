/* cond_unwaited — exactly 1,000 condvar signals with nobody waiting; then
 * 10 signals, each to a waiter already asleep; then a herd: three waiters
 * asleep on one condvar, woken three times by broadcasts, each time only one
 * of them has work.
 *
 * Expected: nobody_cond 1,010 signals, 1,000 of them unwaited, 10 wake-ups
 * with a latency; herd_cond 3 broadcasts waking 3 + 2 + 1 waiters, 3 futile
 * wake-ups (woken, nothing to do, asleep again), all after a broadcast.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "prim_util.h"

pthread_mutex_t nobody_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t nobody_cond = PTHREAD_COND_INITIALIZER;
pthread_mutex_t herd_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t herd_cond = PTHREAD_COND_INITIALIZER;

static int ready, taken, turn = -1;
static _Atomic pid_t waiter_tid, herd_tid[3];
static atomic_int waiter_in, herd_in[3], herd_waits[3];

static void *waiter(void *arg)
{
	waiter_tid = gettid();
	pthread_mutex_lock(&nobody_lock);
	for (int i = 0; i < 10; i++) {
		atomic_store(&waiter_in, i + 1);
		while (ready == taken)
			pthread_cond_wait(&nobody_cond, &nobody_lock);
		taken++;
	}
	pthread_mutex_unlock(&nobody_lock);
	return NULL;
}

static void *herd(void *arg)
{
	int me = (int)(long)arg;
	herd_tid[me] = gettid();
	pthread_mutex_lock(&herd_lock);
	atomic_store(&herd_in[me], 1);
	while (turn != me) {
		atomic_fetch_add(&herd_waits[me], 1);   /* under the mutex, just before sleeping */
		pthread_cond_wait(&herd_cond, &herd_lock);
	}
	atomic_store(&herd_in[me], 2);   /* done */
	pthread_mutex_unlock(&herd_lock);
	return NULL;
}

int main(void)
{
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&nobody_lock);
		pthread_cond_signal(&nobody_cond);
		pthread_mutex_unlock(&nobody_lock);
	}
	pthread_t w;
	if (pthread_create(&w, NULL, waiter, NULL))
		prim_die("pthread_create");
	for (int i = 0; i < 10; i++) {
		while (atomic_load(&waiter_in) != i + 1)
			sched_yield();
		prim_wait_blocked(waiter_tid);
		pthread_mutex_lock(&nobody_lock);
		ready++;
		pthread_cond_signal(&nobody_cond);
		pthread_mutex_unlock(&nobody_lock);
	}
	pthread_join(w, NULL);

	pthread_t h[3];
	for (long i = 0; i < 3; i++)
		if (pthread_create(&h[i], NULL, herd, (void *)i))
			prim_die("pthread_create");
	for (int round = 0; round < 3; round++) {
		for (int i = round; i < 3; i++) {   /* every one still waiting is asleep, again */
			while (atomic_load(&herd_waits[i]) != round + 1)
				sched_yield();
			prim_wait_blocked(herd_tid[i]);
		}
		pthread_mutex_lock(&herd_lock);
		turn = round;
		pthread_cond_broadcast(&herd_cond);
		pthread_mutex_unlock(&herd_lock);
		while (atomic_load(&herd_in[round]) != 2)
			sched_yield();
	}
	for (int i = 0; i < 3; i++)
		pthread_join(h[i], NULL);
	printf("taken=%d turn=%d\n", taken, turn);
	return 0;
}
