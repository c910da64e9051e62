/* fork_empty HOW: locks fork_lock 100 times (the parent's profile), then
 * forks a child that takes no lock and makes no thread, waits for it and
 * prints "child exit N". The child ends through HOW: "exit" (status 0),
 * "_exit" (3) or "quick_exit" (4) at once; or "compute": exits 0 once it
 * has used 30 ms of CPU; or first has a child of its own and then exits
 * 0: "grandchild" (a fork child that exits at once, waited for), "spawn"
 * (system("exec true"): glibc's own spawn, which the shim does not see,
 * of a shell that execs true; waited for by system), "unwaited" (a fork
 * child still running when the child exits: it reads a pipe until the
 * child's end of it closes, then exits), "ignored" (with SIGCHLD ignored,
 * system("exec true"), whose child the kernel reaps itself, unseen:
 * "ignored-reset", the same, then SIGCHLD back to SIG_DFL; "inherited",
 * the parent ignores SIGCHLD before the fork; "preignored", SIGCHLD was
 * ignored before the program started), "popen" (popen
 * of a shell that execs "fork_empty reader FD", glibc's own spawn again,
 * left running once it has said on FD that it started: it reads its input
 * until the child's end closes it), "orphan" (a fork child that waits
 * for the child's end, then locks fork_lock once: its profile, written
 * after its parent's end, names the child as its parent), or
 * "ignored-exec" (with SIGCHLD ignored, posix_spawn of "fork_empty
 * locker", which locks fork_lock once, waited for until the kernel reaped
 * it; then SIGCHLD back to SIG_DFL and an exec of /bin/true: the new image
 * cannot tell that its process had a child). */
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <time.h>
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
	if (!strcmp(how, "compute")) {
		struct timespec cpu;
		volatile unsigned long spin = 0;
		do {
			for (int i = 0; i < 100000; i++)
				spin++;
			MUST(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu));
		} while (cpu.tv_sec == 0 && cpu.tv_nsec < 30000000);
		exit(0);
	}
	if (!strcmp(how, "ignored") || !strcmp(how, "ignored-reset") || !strcmp(how, "inherited") ||
	    !strcmp(how, "preignored")) {
		if (!strcmp(how, "ignored") || !strcmp(how, "ignored-reset"))
			signal(SIGCHLD, SIG_IGN);
		(void)system("exec true");   /* -1 (ECHILD) once the kernel reaped it */
		if (!strcmp(how, "ignored-reset"))
			signal(SIGCHLD, SIG_DFL);
		exit(0);
	}
	if (!strcmp(how, "ignored-exec")) {
		char *locker[] = { "fork_empty", "locker", NULL };
		pid_t pid;
		int status;
		signal(SIGCHLD, SIG_IGN);
		MUST(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, locker, environ));   /* this program */
		if (waitpid(pid, &status, 0) != -1 || errno != ECHILD)   /* returns once the kernel reaped it */
			_exit(89);
		signal(SIGCHLD, SIG_DFL);
		execl("/bin/true", "true", (char *)NULL);
		_exit(90);
	}
	if (!strcmp(how, "popen")) {
		int fds[2];
		char cmd[64], c;
		MUST(pipe(fds));
		snprintf(cmd, sizeof(cmd), "exec /proc/%d/exe reader %d", (int)getpid(), fds[1]);   /* this program */
		if (!popen(cmd, "w"))
			_exit(93);
		close(fds[1]);
		exit(read(fds[0], &c, 1) == 1 ? 0 : 92);
	}
	if (!strcmp(how, "unwaited") || !strcmp(how, "orphan")) {
		int fds[2];
		MUST(pipe(fds));
		pid_t pid = fork();
		if (pid == 0) {
			char c;
			close(fds[1]);
			while (read(fds[0], &c, 1) > 0)
				;
			if (!strcmp(how, "orphan")) {
				pthread_mutex_lock(&fork_lock);
				pthread_mutex_unlock(&fork_lock);
			}
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
	if (argc == 3 && !strcmp(argv[1], "reader")) {   /* "popen"'s grandchild */
		char c;
		int fd = atoi(argv[2]);
		if (write(fd, "s", 1) != 1)
			return 91;
		close(fd);
		while (read(0, &c, 1) > 0)
			;
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "locker")) {   /* "ignored-exec"'s grandchild */
		pthread_mutex_lock(&fork_lock);
		pthread_mutex_unlock(&fork_lock);
		return 0;
	}
	if (argc != 2)
		return 2;
	for (int i = 0; i < 100; i++) {
		pthread_mutex_lock(&fork_lock);
		pthread_mutex_unlock(&fork_lock);
	}
	fflush(stdout);
	if (!strcmp(argv[1], "inherited"))
		signal(SIGCHLD, SIG_IGN);
	struct sigaction chld;
	MUST(sigaction(SIGCHLD, NULL, &chld));
	pid_t pid = fork();
	if (pid == 0)
		return child(argv[1]);
	int status;
	if (chld.sa_handler == SIG_IGN) {   /* the kernel reaps the child: waitpid returns once it has ended */
		if (pid < 0 || waitpid(pid, &status, 0) != -1 || errno != ECHILD)
			return 98;
		printf("child exit 0\n");
		return 0;
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 98;
	printf("child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
