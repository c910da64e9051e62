/* sem_signal_post — sem_post from a signal handler (it is async-signal-safe)
 * while the interrupted thread keeps meeting new objects, so the handler
 * often lands inside the shim's own record lookup: the program must behave
 * as without the shim (no deadlock, every post counted by the program). */
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/time.h>

#include "prim_util.h"

#define OBJECTS 20000
static sem_t ticks;
static volatile sig_atomic_t posted;

static void on_alarm(int sig)
{
	int saved = errno;
	sem_post(&ticks);
	posted++;
	errno = saved;
}

int main(void)
{
	sem_init(&ticks, 0, 0);
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	setitimer(ITIMER_REAL, &it, NULL);
	static pthread_mutex_t locks[OBJECTS];
	static sem_t sems[OBJECTS / 10];
	for (int i = 0; i < OBJECTS; i++) {   /* each one a first use: a lookup */
		pthread_mutex_init(&locks[i], NULL);
		pthread_mutex_lock(&locks[i]);
		pthread_mutex_unlock(&locks[i]);
		if (i % 10 == 0) {
			sem_init(&sems[i / 10], 0, 1);
			sem_trywait(&sems[i / 10]);
		}
	}
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	int got = 0;
	while (sem_trywait(&ticks) == 0)
		got++;
	printf("posts received = posts sent: %d\n", got == posted);
	return 0;
}
