/* spin_contend — a pthread spinlock: 1,000 uncontended pairs, one trylock
 * that fails (the lock is held), and one acquisition that spins (on-CPU)
 * until main lets go.
 * Main knows the other thread is spinning when that thread's CPU clock has
 * advanced 2 ms after it announced the lock call.
 *
 * Expected (counter_lock): acquisitions 1,004 (1,000, main's hold, the
 * spinner's, main's two more), contended 1, trylocks 1 with 1 failure, spin
 * time about the 2 ms of CPU main waited for (the test asks for 1 ms).
 */
#include <pthread.h>
#include <stdatomic.h>

#include "prim_util.h"

pthread_spinlock_t counter_lock;
static long counter;
static atomic_int about_to_lock;

static void *spinner(void *arg)
{
	atomic_store(&about_to_lock, 1);
	pthread_spin_lock(&counter_lock);
	counter++;
	pthread_spin_unlock(&counter_lock);
	return NULL;
}

int main(void)
{
	pthread_spin_init(&counter_lock, PTHREAD_PROCESS_PRIVATE);
	for (int i = 0; i < 1000; i++) {
		pthread_spin_lock(&counter_lock);
		counter++;
		pthread_spin_unlock(&counter_lock);
	}
	pthread_spin_lock(&counter_lock);
	pthread_t t;
	if (pthread_create(&t, NULL, spinner, NULL))
		prim_die("pthread_create");
	int busy = 0;
	{
		while (!atomic_load(&about_to_lock))
			sched_yield();
		clockid_t clock;
		pthread_getcpuclockid(t, &clock);
		long long start = prim_cpu_ns_of(clock);
		while (prim_cpu_ns_of(clock) < start + 2000000)
			sched_yield();
	}
	pthread_spin_unlock(&counter_lock);
	pthread_join(t, NULL);
	pthread_spin_lock(&counter_lock);
	pthread_spin_unlock(&counter_lock);
	/* one trylock that fails: main holds it */
	pthread_spin_lock(&counter_lock);
	busy = pthread_spin_trylock(&counter_lock) == EBUSY;
	pthread_spin_unlock(&counter_lock);
	pthread_spin_destroy(&counter_lock);
	printf("counter=%ld busy=%d\n", counter, busy);
	return 0;
}
