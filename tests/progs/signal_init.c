/* A 20 kHz timer signal whose handler initialises, locks, unlocks and
 * destroys a mutex, a condvar and a rwlock of its own (on its stack), while
 * the interrupted code does the same with its own: the shim's bookkeeping
 * of init and destroy runs on both sides of the interruption. The same
 * stack addresses are re-initialised thousands of times. Fixed work;
 * prints the rounds done, never how many signals arrived. */
#include <signal.h>
#include <sys/time.h>

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
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	MUST(sigaction(SIGALRM, &sa, NULL));
	struct itimerval it = { .it_interval = { 0, 50 }, .it_value = { 0, 50 } };   /* 20 kHz */
	MUST(setitimer(ITIMER_REAL, &it, NULL));
	long rounds = 0;
	for (int i = 0; i < ROUNDS; i++, rounds++)
		cycle();
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	MUST(setitimer(ITIMER_REAL, &off, NULL));
	printf("rounds %ld\n", rounds);
	return 0;
}
