/* tsan_wrapper.c — test_workpool_tsan: runs each case of the TSan-built
 * stress program (tsan_main.c) in a child process and fails on a non-zero
 * exit status or on any ThreadSanitizer report in its stderr. */
#include <criterion/criterion.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef WP_TSAN_STRESS_BIN
#error "build with -DWP_TSAN_STRESS_BIN=\"path\""
#endif

extern char **environ;

static void run_tsan_case(const char *name)
{
	char log[] = "/tmp/workpool-tsan-XXXXXX";
	int fd = mkstemp(log);
	cr_assert_geq(fd, 0, "mkstemp");
	/* halt_on_error: the first report ends the run with exitcode 66. */
	setenv("TSAN_OPTIONS", "halt_on_error=1 exitcode=66 second_deadlock_stack=1", 1);

	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd, STDERR_FILENO);
	posix_spawn_file_actions_adddup2(&fa, fd, STDOUT_FILENO);
	char *argv[] = { (char *)WP_TSAN_STRESS_BIN, (char *)name, NULL };
	pid_t pid;
	int err = posix_spawn(&pid, WP_TSAN_STRESS_BIN, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	cr_assert_eq(err, 0, "posix_spawn %s: %s", WP_TSAN_STRESS_BIN, strerror(err));
	int status = 0;
	waitpid(pid, &status, 0);

	/* Read what it printed. */
	char buf[8192] = "";
	lseek(fd, 0, SEEK_SET);
	ssize_t n = read(fd, buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(log);

	cr_expect_null(strstr(buf, "ThreadSanitizer"), "TSan report in case %s:\n%s",
	               name, buf);
	cr_assert(WIFEXITED(status), "case %s did not exit normally (status %d):\n%s",
	          name, status, buf);
	cr_assert_eq(WEXITSTATUS(status), 0, "case %s exited %d:\n%s", name,
	             WEXITSTATUS(status), buf);
}

#define TSAN_CASE(name)                                                        \
	Test(tsan, name, .timeout = 60) { run_tsan_case(#name); }

TSAN_CASE(deque)
TSAN_CASE(deque_wrap)
TSAN_CASE(deque_batch)
TSAN_CASE(pool_global)
TSAN_CASE(pool_locked)
TSAN_CASE(pool_chase_lev)
TSAN_CASE(pool_chase_lev_nospin)
TSAN_CASE(submitters)
TSAN_CASE(futures)
TSAN_CASE(nested)
