/* fork: the parent locks fork_lock 500 times before the fork and 1,500
 * after; the child 1,000 times. Each process writes its own profile; the
 * child's counts are its own (1,000), the parent's 2,000. */
#include <sys/wait.h>

#include "progs.h"

pthread_mutex_t fork_lock = PTHREAD_MUTEX_INITIALIZER;

static void lock_n(int n)
{
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(&fork_lock);
		pthread_mutex_unlock(&fork_lock);
	}
}

int main(void)
{
	lock_n(500);
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 98;
	if (pid == 0) {
		lock_n(1000);
		printf("child locked 1000\n");
		exit(0);
	}
	lock_n(1500);
	int status;
	if (waitpid(pid, &status, 0) != pid)
		return 97;
	printf("parent locked 2000; child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
