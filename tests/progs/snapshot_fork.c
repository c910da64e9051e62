/* snapshot_fork [send]: locks a mutex, then forks; with "send" (only ever
 * under the shim with CONVOY_SNAPSHOT_SIGNAL set to SIGRTMAX) that fork
 * queues convoy's snapshot request to this process from a fork handler
 * (libforkrequest.so), while the fork is in progress. The child locks the
 * mutex and exits. Prints the parent's pid and how the child ended. */
#include <signal.h>
#include <sys/wait.h>

#include "progs.h"

void forkrequest_arm(int sig);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int main(int argc, char **argv)
{
	MUST(pthread_mutex_lock(&lock));
	MUST(pthread_mutex_unlock(&lock));
	if (argc > 1 && !strcmp(argv[1], "send"))
		forkrequest_arm(SIGRTMAX);
	pid_t child = fork();
	if (child < 0)
		MUST(errno);
	if (child == 0) {
		MUST(pthread_mutex_lock(&lock));
		MUST(pthread_mutex_unlock(&lock));
		_exit(0);
	}
	int status;
	MUST(waitpid(child, &status, 0) == child ? 0 : errno);
	printf("parent: %d\nchild exit: %d\n", (int)getpid(), WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
