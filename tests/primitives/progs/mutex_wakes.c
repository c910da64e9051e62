/* mutex_wakes — a normal mutex handed to a sleeping waiter 20 times by an
 * unlock on the shim's fast path: main, in a process that already has a
 * thread (so the shim takes and releases normal mutexes itself), holds
 * wake_lock while a new thread blocks in pthread_mutex_lock, waits until
 * the kernel says that thread sleeps, then unlocks. The unlock sees the
 * waiter only in the lock word it exchanges (preload/mutex.c,
 * mutex_unlock, unlocked_with_waiter).
 *
 * Expected: wake_lock has 40 acquisitions (main's 20, the waiters' 20), 20
 * contended, and 20 wake-ups, each with its latency: every wake stamped.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "prim_util.h"

pthread_mutex_t wake_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic pid_t waiter_tid;
static long counter;

static void *waiter(void *arg)
{
	(void)arg;
	atomic_store(&waiter_tid, gettid());
	pthread_mutex_lock(&wake_lock);   /* main holds it */
	counter++;
	pthread_mutex_unlock(&wake_lock);
	return NULL;
}

static void *nothing(void *arg)
{
	return arg;
}

int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, nothing, NULL) || pthread_join(t, NULL))
		prim_die("pthread_create");
	for (int i = 0; i < 20; i++) {
		pthread_mutex_lock(&wake_lock);
		atomic_store(&waiter_tid, 0);
		if (pthread_create(&t, NULL, waiter, NULL))
			prim_die("pthread_create");
		pid_t tid;
		while (!(tid = atomic_load(&waiter_tid)))
			sched_yield();
		prim_wait_blocked(tid);
		pthread_mutex_unlock(&wake_lock);
		if (pthread_join(t, NULL))
			prim_die("pthread_join");
	}
	printf("counter=%ld\n", counter);
	return 0;
}
