/* run.c — `convoy run`: run a command under the shim, then report.
 *
 * The profile goes to -o DIR, and the command's own exit status becomes
 * convoy's, so `convoy run` can stand in for the command in scripts.
 */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis.h"
#include "launch.h"
#include "outcome.h"
#include "profile.h"
#include "report.h"
#include "util.h"
#include "watchdog.h"

static void run_usage(FILE *f)
{
	fputs("usage: convoy run [-o DIR] [--json] [-v] [--comm NAME] [--timeout S] [--sample-hz N]\n"
	      "                  [--trace] [--on-hang auto|stop|continue] -- COMMAND [ARG...]\n"
	      "\n"
	      "Runs COMMAND with libconvoy.so preloaded (appended to any LD_PRELOAD),\n"
	      "then prints the report of its profile, whether COMMAND succeeded, failed\n"
	      "or hung. Exits with COMMAND's status.\n"
	      "\n"
	      "  -o DIR       write profiles to DIR (created if missing; default: .)\n"
	      "  --timeout S  stop COMMAND after S seconds (SIGTERM, on which the shim\n"
	      "               writes its profile; SIGKILL 10 s later) and explain it\n"
	      "  --on-hang A  what the watchdog (CONVOY_WATCHDOG) does when every process\n"
	      "               of COMMAND is blocked for good: have the shim write a\n"
	      "               snapshot and stop COMMAND the same way only when it shows a\n"
	      "               deadlock, else let it go on and say so (auto, the default);\n"
	      "               always stop it (stop); never (continue). The report explains\n"
	      "               the hang from the snapshot and the rest of the run from the\n"
	      "               profile (default CONVOY_ON_HANG)\n"
	      "  --json       print the report as JSON, alone on stdout: COMMAND's own\n"
	      "               stdout goes to stderr\n"
	      "  -v           every thread's share of every mutex\n"
	      "  --comm NAME  report the process named NAME (default: of the processes\n"
	      "               COMMAND started, the one that did the most threaded work)\n"
	      "  --sample-hz N  sample each thread's CPU time N times a second from outside\n"
	      "               the command (default CONVOY_SAMPLE_HZ, else 1000; 0: off); the\n"
	      "               samples go beside the profile (convoy-PID.samples)\n"
	      "  --trace      also record when each wait, sampled hold and wake happened\n"
	      "               (CONVOY_TRACE=1; for convoy view and export --perfetto)\n"
	      "\n"
	      "examples:\n"
	      "  convoy run -- ./myprog --threads 4\n"
	      "  convoy run -o /tmp/prof --json -- build/demos/global_queue --workers 2\n", f);
}

int cmd_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "comm", required_argument, NULL, 'c' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "sample-hz", required_argument, NULL, 's' },
		{ "trace", no_argument, NULL, 'E' },
		{ "on-hang", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct report_options ro = { .limit = 20 };
	const char *dir = ".", *comm = NULL, *sample_hz = NULL, *on_hang = NULL;
	double timeout_s = 0;
	char *end;
	int c;
	optind = 1;
	while ((c = cv_getopt("run", argc, argv, "o:vh", longopts)) != -1) {
		switch (c) {
		case 'o': dir = optarg; break;
		case 'j': ro.json = 1; break;
		case 'v': ro.verbose = 1; break;
		case 'c': comm = optarg; break;
		case 'T':
			timeout_s = strtod(optarg, &end);
			if (end == optarg || *end || !(timeout_s > 0 && timeout_s <= 86400)) {
				cv_error("run: --timeout takes a number of seconds above 0, up to 86400, not '%s'", optarg);
				return 2;
			}
			break;
		case 's': sample_hz = optarg; break;
		case 'H': on_hang = optarg; break;
		case 'E':
			if (setenv("CONVOY_TRACE", "1", 1) != 0) {
				cv_error("run: cannot set CONVOY_TRACE: %s", strerror(errno));
				return 1;
			}
			break;
		case 'h': run_usage(stdout); return 0;
		default:
			return 2;   /* cv_getopt said why */
		}
	}
	if (optind >= argc) {
		cv_error("run: no command given (usage: convoy run [-o DIR] -- COMMAND [ARG...])");
		return 2;
	}
	char absdir[PATH_MAX];
	unsigned hz;
	struct watchdog_config wdc;
	if (launch__sample_hz("run", sample_hz, &hz) != 0 || watchdog__config(&wdc, "run", on_hang) != 0)
		return 2;
	if (launch__prepare(dir, hz, absdir, sizeof(absdir)) != 0)
		return 1;
	/* With --json, stdout is the report alone: the command's own output
	 * goes to stderr for as long as it runs. */
	int saved_stdout = -1;
	if (ro.json) {
		fflush(stdout);
		saved_stdout = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
		if (saved_stdout < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
			cv_error("run: cannot send the command's output to stderr: %s", strerror(errno));
			return 1;
		}
	}
	struct launch_result r;
	time_t since = time(NULL);
	int launched = launch__run(argv + optind, NULL, timeout_s, &wdc, &r);
	if (saved_stdout >= 0) {
		dup2(saved_stdout, STDOUT_FILENO);
		close(saved_stdout);
	}
	if (launched != 0)   /* as a shell says it: not found 127, found but not runnable 126 */
		return r.exec_errno && r.exec_errno != ENOENT ? 126 : 127;
	int exit_code = launch__exit_code(r.status);
	char *path = analysis__find_profile(absdir, r.pid, since, comm, FIND_SAY_CHOICE | FIND_SAY_UNTHREADED);
	char *other = !path && comm ? analysis__find_profile(absdir, r.pid, since, NULL, 0) : NULL;
	if (other) {
		free(other);
		cv_error("run: no process of %s named %s wrote a profile (one the command started writes none when it "
			 "made no thread, used no synchronisation object and under 10 ms of CPU)",
			 argv[optind], comm);
		return exit_code ? exit_code : 1;
	}
	if (!path) {
		if (r.timed_out)
			cv_error("run: %s ran past --timeout (%g s) and was stopped before it wrote a profile",
				 argv[optind], timeout_s);
		else if (WIFSIGNALED(r.status))
			cv_error("run: %s was killed by signal %d (%s) before it wrote a profile",
				 argv[optind], WTERMSIG(r.status), strsignal(WTERMSIG(r.status)));
		else
			cv_error("run: %s exited with status %d but wrote no profile "
				 "(statically linked, setuid, under a seccomp filter or Valgrind, its profile could not "
				 "be written in -o's directory after a chroot or a change of user, or it ended by the "
				 "exit_group system call itself, as Go's runtime does)",
				 argv[optind], WEXITSTATUS(r.status));
		return exit_code ? exit_code : 1;
	}
	if (WIFSIGNALED(r.status))   /* said on stderr too: the report may be long */
		cv_error("run: %s was killed by signal %d (%s)%s", argv[optind], WTERMSIG(r.status),
			 strsignal(WTERMSIG(r.status)), r.timed_out ? " after --timeout" : r.hung ? ", hung" : "");
	struct analysis a;
	int loaded = analysis__load(&a, path);
	free(path);
	if (loaded != 0)
		return exit_code ? exit_code : 1;
	outcome__set(&a.run, &r, timeout_s, &wdc);
	analysis__diagnose(&a);
	/* The command has ended (no disposition of ours reaches it now): a
	 * reader of the report that has gone (| head) leaves convoy to exit as
	 * the command did, not by SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	int rc = report__write(&a, &ro, stdout);
	int write_errno = errno;
	analysis__free(&a);
	if (rc && write_errno != EPIPE)
		return exit_code ? exit_code : 1;
	return exit_code;
}
