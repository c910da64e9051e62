/* exit_underscore HOW: locks quick_lock 100 times, prints a line that stays
 * in stdio's buffer, and ends through HOW: _exit (status 5), _Exit (6),
 * quick_exit (7; its at_quick_exit handler locks 10 more times and writes a
 * line), vfork (a vfork child whose exec fails calls _exit(127); the
 * parent prints the child's status and returns 0), or fork (a fork child
 * locks 10 times and calls _exit(3); the parent likewise). */
#include <sys/wait.h>

#include "progs.h"

pthread_mutex_t quick_lock = PTHREAD_MUTEX_INITIALIZER;

static void lock_n(int n)
{
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(&quick_lock);
		pthread_mutex_unlock(&quick_lock);
	}
}

static void on_quick_exit(void)
{
	static const char msg[] = "at_quick_exit handler\n";
	lock_n(10);
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(98);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	const char *how = argv[1];
	MUST(at_quick_exit(on_quick_exit));
	lock_n(100);
	printf("buffered, never flushed\n");
	if (!strcmp(how, "_exit"))
		_exit(5);
	if (!strcmp(how, "_Exit"))
		_Exit(6);
	if (!strcmp(how, "quick_exit"))
		quick_exit(7);
	if (!strcmp(how, "vfork")) {
		fflush(stdout);
		pid_t pid = vfork();
		if (pid == 0) {
			execl("/nonexistent/exit_underscore", "x", (char *)NULL);
			_exit(127);
		}
		int status;
		if (pid < 0 || waitpid(pid, &status, 0) != pid)
			return 97;
		printf("vfork child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return 0;
	}
	if (!strcmp(how, "fork")) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			lock_n(10);
			_exit(3);
		}
		int status;
		if (pid < 0 || waitpid(pid, &status, 0) != pid)
			return 97;
		printf("fork child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return 0;
	}
	return 2;
}
