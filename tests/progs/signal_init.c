/* A 20 kHz timer signal whose handler initialises, locks, unlocks and
 * destroys a mutex, a condvar and a rwlock of its own (on its stack), while
 * the interrupted code does the same with its own: the shim's bookkeeping
 * of init and destroy runs on both sides of the interruption. The same
 * stack addresses are re-initialised thousands of times. Fixed work;
 * prints the rounds done, never how many signals arrived. */

#include "progs.h"

#define ROUNDS 100000

static void cycle(void)
{
	pthread_mutex_t m;
	pthread_cond_t c;
	pthread_rwlock_t rw;
	MUST(pthread_mutex_init(&m, NULL));
	MUST(pthread_mutex_lock(&m));
	MUST(pthread_cond_init(&c, NULL));
	MUST(pthread_cond_signal(&c));
	MUST(pthread_mutex_unlock(&m));
	MUST(pthread_cond_destroy(&c));
	MUST(pthread_mutex_destroy(&m));
	MUST(pthread_rwlock_init(&rw, NULL));
	MUST(pthread_rwlock_wrlock(&rw));
	MUST(pthread_rwlock_unlock(&rw));
	MUST(pthread_rwlock_destroy(&rw));
}

static void on_alarm(int sig)
{
	int saved = errno;
	cycle();
	errno = saved;
}

int main(void)
{
	alarm_every(on_alarm, 50);   /* 20 kHz */
	long rounds = 0;
	for (int i = 0; i < ROUNDS; i++, rounds++)
		cycle();
	alarm_stop();
	printf("rounds %ld\n", rounds);
	return 0;
}
