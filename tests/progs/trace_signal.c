/* Signal handlers that post a semaphore while the shim may be recording:
 * a 50 µs interval timer's SIGALRM handler posts `ticks` (sem_post is
 * async-signal-safe), main waits for 2,000 of them, and two workers fight
 * over a mutex meanwhile, so a handler often interrupts a thread in the
 * middle of the shim's own bookkeeping (a trace event being written, with
 * CONVOY_TRACE=1). The output is the same whatever the timing. */
#include <signal.h>
#include <sys/time.h>

#include "progs.h"

#define TICKS 2000

static sem_t ticks;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t stop;
static long shared;

static void on_alarm(int sig)
{
	(void)sig;
	int saved = errno;
	sem_post(&ticks);
	errno = saved;
}

static void *fight(void *arg)
{
	while (!stop) {
		pthread_mutex_lock(&lock);
		shared++;
		pthread_mutex_unlock(&lock);
	}
	return arg;
}

int main(void)
{
	MUST(sem_init(&ticks, 0, 0));
	struct sigaction sa = { .sa_handler = on_alarm };
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	MUST(sigaction(SIGALRM, &sa, NULL));
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		MUST(pthread_create(&t[i], NULL, fight, NULL));
	struct itimerval every = { { 0, 50 }, { 0, 50 } }, off = { { 0, 0 }, { 0, 0 } };
	MUST(setitimer(ITIMER_REAL, &every, NULL));
	int waited = 0;
	while (waited < TICKS)
		if (sem_wait(&ticks) == 0)
			waited++;
	MUST(setitimer(ITIMER_REAL, &off, NULL));
	stop = 1;
	for (int i = 0; i < 2; i++)
		MUST(pthread_join(t[i], NULL));
	printf("waited for %d ticks\n", waited);
	return 0;
}
