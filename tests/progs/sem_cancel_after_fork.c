/* A child made by fork() can still be cancelled: its main thread cancels
 * itself and reaches pthread_testcancel, so it ends there (as a last thread
 * that called pthread_exit: exit status 0) and never prints "not reached". */
#include <sys/wait.h>

#include "progs.h"

static void cleanup(void *arg)
{
	printf("child's cleanup ran\n");
	fflush(stdout);
}

int main(void)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		pthread_cleanup_push(cleanup, NULL);
		SHOW("child cancels itself", pthread_cancel(pthread_self()));
		fflush(stdout);
		pthread_testcancel();
		printf("not reached\n");
		pthread_cleanup_pop(0);
		return 1;
	}
	int status;
	if (waitpid(pid, &status, 0) != pid)
		return 99;
	printf("child: %s %d\n", WIFEXITED(status) ? "exit" : "signal",
	       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return 0;
}
