/* exec_via HOW [fail|show-preload|bare]: locks exec_lock 100 times (with
 * bare: not at all), prints "before", then replaces itself with
 * "exec_via child" through HOW: execve, execv, execvp,
 * execvpe, execl, execle, execlp, fexecve, execveat, or posix_spawn (which
 * starts the child beside it and waits). The child locks exec_lock 7 times,
 * prints "child" (with show-preload, LD_PRELOAD as it sees it) and exits 0. With "fail" the exec names a
 * file that does not exist: the program prints the error, locks 100 more
 * times and exits 0. */
#include <fcntl.h>
#include <libgen.h>
#include <spawn.h>
#include <stdbool.h>
#include <sys/wait.h>

#include "progs.h"

extern char **environ;
pthread_mutex_t exec_lock = PTHREAD_MUTEX_INITIALIZER;

static void lock_n(int n)
{
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(&exec_lock);
		pthread_mutex_unlock(&exec_lock);
	}
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "child") == 0) {
		lock_n(7);
		const char *v = getenv("LD_PRELOAD");
		if (argc > 2)
			printf("child LD_PRELOAD=%s\n", v ? v : "(unset)");
		else
			printf("child\n");
		return 0;
	}
	if (argc < 2)
		return 2;
	const char *how = argv[1];
	bool fail = argc > 2 && strcmp(argv[2], "fail") == 0;
	bool show = argc > 2 && strcmp(argv[2], "show-preload") == 0;
	bool bare = argc > 2 && strcmp(argv[2], "bare") == 0;
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 98;
	self[n] = '\0';
	const char *path = fail ? "/nonexistent/exec_via" : self;
	/* The p variants search PATH for a bare name: put our directory there. */
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", path);
	MUST(setenv("PATH", dirname(dir), 1) ? errno : 0);
	const char *file = strrchr(path, '/') + 1;
	char *child_argv[] = { (char *)"exec_via", (char *)"child", show ? (char *)"show-preload" : NULL, NULL };

	lock_n(bare ? 0 : 100);
	printf("before\n");
	fflush(stdout);
	int rc = 0;
	if (!strcmp(how, "execve"))
		rc = execve(path, child_argv, environ);
	else if (!strcmp(how, "execv"))
		rc = execv(path, child_argv);
	else if (!strcmp(how, "execvp"))
		rc = execvp(file, child_argv);
	else if (!strcmp(how, "execvpe"))
		rc = execvpe(file, child_argv, environ);
	else if (!strcmp(how, "execl"))
		rc = show ? execl(path, "exec_via", "child", "show-preload", (char *)NULL)
			  : execl(path, "exec_via", "child", (char *)NULL);
	else if (!strcmp(how, "execle"))
		rc = show ? execle(path, "exec_via", "child", "show-preload", (char *)NULL, environ)
			  : execle(path, "exec_via", "child", (char *)NULL, environ);
	else if (!strcmp(how, "execlp"))
		rc = show ? execlp(file, "exec_via", "child", "show-preload", (char *)NULL)
			  : execlp(file, "exec_via", "child", (char *)NULL);
	else if (!strcmp(how, "fexecve")) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		rc = fd < 0 ? -1 : fexecve(fd, child_argv, environ);
	} else if (!strcmp(how, "execveat"))
		rc = execveat(AT_FDCWD, path, child_argv, environ, 0);
	else if (!strcmp(how, "posix_spawn")) {
		pid_t pid;
		int status;
		int err = posix_spawn(&pid, path, NULL, NULL, child_argv, environ);
		if (err == 0 && waitpid(pid, &status, 0) == pid)
			printf("spawned child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		else
			printf("spawn failed: %s\n", rc_name(err));
		lock_n(fail ? 100 : 0);
		return 0;
	} else
		return 2;
	printf("%s failed: %d %s\n", how, rc, rc_name(errno));
	lock_n(100);
	return 0;
}
