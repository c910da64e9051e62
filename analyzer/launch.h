/* launch.h — running a command under the shim (convoy run, convoy scale). */
#ifndef CONVOY_LAUNCH_H
#define CONVOY_LAUNCH_H

#include <stddef.h>
#include <sys/types.h>

/* Prepares this process's environment for children: libconvoy.so appended
 * to LD_PRELOAD, profiles to dir (created if missing), the shim quiet.
 * Returns 0, or -1 after one error line. absdir receives dir's absolute path. */
int launch__prepare(const char *dir, char *absdir, size_t size);

struct launch_result {
	pid_t pid;
	int status;          /* as waitpid */
	int timed_out;
	double wall_ns;      /* fork to exit */
};

/* Runs argv with the environment set by launch__prepare, optionally with
 * stdout and stderr sent to log_path (NULL: inherited) and a time limit
 * (0: none). Returns 0 when the command ran (whatever its status), -1 after
 * one error line when it could not be started. */
int launch__run(char *const argv[], const char *log_path, double timeout_s, struct launch_result *r);

/* The exit status convoy should return for a command's waitpid status. */
int launch__exit_code(int status);

#endif
