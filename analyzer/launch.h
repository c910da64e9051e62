/* launch.h — running a command under the shim (convoy run, convoy scale). */
#ifndef CONVOY_LAUNCH_H
#define CONVOY_LAUNCH_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

/* What a time limit sends first, and how long it then waits before SIGKILL:
 * the shim writes its profile on this signal when the launcher asks
 * (CONVOY_DUMP_SIGNAL, docs/lifecycle.md), so a hung program is explained. */
#define LAUNCH_STOP_SIGNAL  SIGTERM
#define LAUNCH_STOP_GRACE_S 10
/* What the watchdog sends, with convoy's mark, to have the shim write a
 * snapshot of a hung process and let it go on (CONVOY_SNAPSHOT_SIGNAL,
 * --on-hang auto, continue). A real-time signal: programs rarely handle the last
 * one, and sent to a process that does not catch it (no shim) it would end
 * it, so watchdog__snapshot sends it only to one that does. */
#define LAUNCH_SNAPSHOT_SIGNAL SIGRTMAX

/* Prepares this process's environment for children: libconvoy.so appended
 * to LD_PRELOAD, profiles to dir (created if missing), the shim quiet and
 * writing its profile on LAUNCH_STOP_SIGNAL; and
 * launch__run's CPU sampling at sample_hz per thread (0: off; sampler.h),
 * its files beside the profiles. Returns 0, or -1 after one error line.
 * absdir receives dir's absolute path. */
int launch__prepare(const char *dir, unsigned sample_hz, char *absdir, size_t size);

/* The sampling rate for cmd ("run", "scale"): --sample-hz's text when
 * given, else CONVOY_SAMPLE_HZ, else SAMPLER_DEFAULT_HZ; 0 turns sampling
 * off. Also reads CONVOY_SAMPLE_SWITCHES (0, 1 or unset: sampler.h,
 * enum sampler_records) and CONVOY_SAMPLE_STACK (bytes of user stack per
 * sample, sampler.h) for launch__run. Returns 0, or -1 after one error
 * line. */
#define LAUNCH_MAX_SAMPLE_HZ 20000
int launch__sample_hz(const char *cmd, const char *option, unsigned *hz);

struct launch_result {
	pid_t pid;
	int status;          /* as waitpid */
	int timed_out;       /* the time limit passed: sent LAUNCH_STOP_SIGNAL, then SIGKILL if needed */
	int hung;            /* the watchdog found it hung (every process of it: watchdog.h) */
	int snapshot_asked;  /* on_hang auto or continue: the snapshot signal was sent (watchdog__snapshot) */
	int snapshot;        /* and the shim wrote a snapshot (a handler of the program's may take it instead) */
	int deadlock;        /* on_hang auto: a snapshot proved a deadlock, and the command was stopped */
	int exec_errno;      /* the command could not be run: why exec failed (0: it ran, or another failure) */
	double wall_ns;      /* fork to exit */
};

/* Runs argv with the environment set by launch__prepare, optionally with
 * stdout and stderr sent to log_path (NULL: inherited), a time limit (0:
 * none) and a watchdog (watchdog.h). Returns 0 when the command ran
 * (whatever its status), -1 after one error line when it could not be
 * started. */
struct watchdog_config;
int launch__run(char *const argv[], const char *log_path, double timeout_s, const struct watchdog_config *wdc,
		struct launch_result *r);

/* The exit status convoy should return for a command's waitpid status. */
int launch__exit_code(int status);

/* The last signal convoy was sent and passed on to a command (SIGTERM,
 * SIGHUP; SIGINT, SIGQUIT under a time limit), 0: none since the start:
 * convoy scale stops its sweep there. */
int launch__passed_on(void);

#endif
