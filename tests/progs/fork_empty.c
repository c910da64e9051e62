/* fork_empty HOW: locks fork_lock 100 times (the parent's profile), then
 * forks a child that takes no lock and makes no thread, waits for it and
 * prints "child exit N". The child ends through HOW: "exit" (status 0),
 * "_exit" (3) or "quick_exit" (4) at once; or first has a child of its own
 * and then exits 0: "grandchild" (a fork child that exits at once, waited
 * for), "spawn" (system("exec true"): glibc's own spawn, which the shim
 * does not see, of a shell that execs true; waited for by system), or
 * "unwaited" (a fork child still running when the child exits: it reads a
 * pipe until the child's end of it closes, then exits). */
#include <sys/wait.h>

#include "progs.h"

pthread_mutex_t fork_lock = PTHREAD_MUTEX_INITIALIZER;

static int child(const char *how)
{
	if (!strcmp(how, "exit"))
		exit(0);
	if (!strcmp(how, "_exit"))
		_exit(3);
	if (!strcmp(how, "quick_exit"))
		quick_exit(4);
	if (!strcmp(how, "grandchild")) {
		pid_t pid = fork();
		if (pid == 0)
			exit(0);
		int status;
		if (pid < 0 || waitpid(pid, &status, 0) != pid)
			_exit(97);
		exit(0);
	}
	if (!strcmp(how, "spawn"))
		exit(system("exec true") == 0 ? 0 : 96);
	if (!strcmp(how, "unwaited")) {
		int fds[2];
		MUST(pipe(fds));
		pid_t pid = fork();
		if (pid == 0) {
			char c;
			close(fds[1]);
			while (read(fds[0], &c, 1) > 0)
				;
			_exit(0);
		}
		if (pid < 0)
			_exit(95);
		exit(0);   /* its end of the pipe closes after the shim's destructor ran */
	}
	_exit(2);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	for (int i = 0; i < 100; i++) {
		pthread_mutex_lock(&fork_lock);
		pthread_mutex_unlock(&fork_lock);
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0)
		return child(argv[1]);
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 98;
	printf("child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
