/* handler_fork_child: a 2 kHz timer's handler forks while the main thread
 * takes 200 mutexes in turn (more than the shim's cache holds: much of
 * its time is inside the shim's guard, where the fork then comes); each
 * child takes child_lock 1,000 times and exits. 60 children. Prints how
 * many children there were and how many failed. */
#include <sys/wait.h>

#include "progs.h"

#define LOCKS    200
#define CHILDREN 60

static pthread_mutex_t locks[LOCKS];
pthread_mutex_t child_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t forks, in_child;

static void on_alarm(int sig)
{
	(void)sig;
	if (in_child || forks >= CHILDREN)
		return;
	int saved = errno;
	pid_t pid = fork();
	if (pid == 0)
		in_child = 1;   /* goes on from the interrupted instruction */
	else if (pid > 0)
		forks++;
	errno = saved;
}

int main(void)
{
	for (int i = 0; i < LOCKS; i++)
		MUST(pthread_mutex_init(&locks[i], NULL));
	alarm_every(on_alarm, 500);   /* 2 kHz */
	while (!in_child && forks < CHILDREN)
		for (int i = 0; i < LOCKS && !in_child; i++) {
			MUST(pthread_mutex_lock(&locks[i]));
			MUST(pthread_mutex_unlock(&locks[i]));
		}
	if (in_child) {
		for (int k = 0; k < 1000; k++) {
			MUST(pthread_mutex_lock(&child_lock));
			MUST(pthread_mutex_unlock(&child_lock));
		}
		_exit(0);
	}
	alarm_stop();
	int status, children = 0, failed = 0;
	while (wait(&status) > 0) {
		children++;
		failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	}
	printf("children %d, failed %d\n", children, failed);
	return 0;
}
