/* A watchdog's SIGALRM handler forks (the child exits at once) while two
 * threads take a contended lock whose every wait the shim captures a stack
 * for. Fixed work: 100 forks; prints how many children exited cleanly.
 *
 * The timer starts after pthread_create: a fork in a handler that
 * interrupted pthread_create's calloc (the new thread's TLS) waits for the
 * malloc arena its own thread holds, natively as under the shim (seen on a
 * busy machine, where more than the timer's first millisecond can pass
 * between setitimer and pthread_create). */
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "progs.h"

#define FORKS 100

static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;
static pid_t children[FORKS];
static volatile sig_atomic_t forks;

static void on_alarm(int sig)
{
	int saved = errno;
	if (forks < FORKS) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid > 0)
			children[forks++] = pid;
	}
	errno = saved;
}

static void *work(void *arg)
{
	volatile long sum = 0;
	while (forks < FORKS) {
		MUST(pthread_mutex_lock(&shared));
		for (int i = 0; i < 100; i++)
			sum++;
		MUST(pthread_mutex_unlock(&shared));
	}
	return NULL;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	MUST(sigaction(SIGALRM, &sa, NULL));
	pthread_t th;
	MUST(pthread_create(&th, NULL, work, NULL));
	struct itimerval it = { .it_interval = { 0, 1000 }, .it_value = { 0, 1000 } };
	MUST(setitimer(ITIMER_REAL, &it, NULL));
	work(NULL);
	MUST(pthread_join(th, NULL));
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	MUST(setitimer(ITIMER_REAL, &off, NULL));
	int clean = 0;
	for (int i = 0; i < FORKS; i++) {
		int status;
		if (waitpid(children[i], &status, 0) == children[i] && WIFEXITED(status) &&
		    WEXITSTATUS(status) == 0)
			clean++;
	}
	printf("children %d of %d exited cleanly\n", clean, FORKS);
	return 0;
}
