/* run.c — `convoy run`: run a command under the shim, then report.
 *
 * The library is appended to any LD_PRELOAD the user already has (never
 * replacing it), the profile goes to -o DIR, and the command's own exit status
 * becomes convoy's, so `convoy run` can stand in for the command in scripts.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profile.h"
#include "report.h"
#include "util.h"

#ifndef CONVOY_LIBDIR
#define CONVOY_LIBDIR "/usr/local/lib/convoy"
#endif

/* libconvoy.so: beside this binary (the build tree), in ../lib/convoy (an
 * installed prefix), or in the configured library directory. */
static int find_shim(char *out, size_t size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			const char *candidates[] = { "%s/libconvoy.so", "%s/../lib/convoy/libconvoy.so" };
			for (size_t i = 0; i < 2; i++) {
				char path[PATH_MAX + 64];
				snprintf(path, sizeof(path), candidates[i], self);
				if (access(path, R_OK) == 0 && realpath(path, out))
					return 0;
			}
		}
	}
	snprintf(out, size, "%s/libconvoy.so", CONVOY_LIBDIR);
	return access(out, R_OK) == 0 ? 0 : -1;
}

static int set_preload(const char *shim)
{
	const char *old = getenv("LD_PRELOAD");
	if (!old || !*old)
		return setenv("LD_PRELOAD", shim, 1);
	if (strstr(old, shim))
		return 0;
	size_t len = strlen(old) + strlen(shim) + 2;
	char *v = xcalloc(1, len);
	snprintf(v, len, "%s:%s", old, shim);
	int rc = setenv("LD_PRELOAD", v, 1);
	free(v);
	return rc;
}

/* The profile the command's own process wrote: convoy-*-<pid>.convoy. */
static char *find_profile(const char *dir, pid_t pid)
{
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	char suffix[64], *found = NULL;
	snprintf(suffix, sizeof(suffix), "-%d.%s", (int)pid, CV_PROFILE_EXT);
	size_t sl = strlen(suffix);
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n > sl && strncmp(e->d_name, "convoy-", 7) == 0 && strcmp(e->d_name + n - sl, suffix) == 0) {
			size_t len = strlen(dir) + n + 2;
			found = xcalloc(1, len);
			snprintf(found, len, "%s/%s", dir, e->d_name);
			break;
		}
	}
	closedir(d);
	return found;
}

static void run_usage(FILE *f)
{
	fputs("usage: convoy run [-o DIR] [--json] [-v] -- COMMAND [ARG...]\n"
	      "\n"
	      "Runs COMMAND with libconvoy.so preloaded (appended to any LD_PRELOAD),\n"
	      "then prints the report of its profile. Exits with COMMAND's status.\n"
	      "\n"
	      "  -o DIR       write profiles to DIR (created if missing; default: .)\n"
	      "  --json       print the report as JSON\n"
	      "  -v           every thread's share of every mutex\n"
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
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct report_options ro = { .limit = 20 };
	const char *dir = ".";
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': dir = optarg; break;
		case 'j': ro.json = 1; break;
		case 'v': ro.verbose = 1; break;
		case 'h': run_usage(stdout); return 0;
		case ':':
		default:
			if (optopt == 'o')
				cv_error("run: -o needs a directory");
			else
				cv_error("run: unknown option '%s' (try 'convoy run --help')", argv[optind - 1]);
			return 2;
		}
	}
	if (optind >= argc) {
		cv_error("run: no command given (usage: convoy run [-o DIR] -- COMMAND [ARG...])");
		return 2;
	}
	char shim[PATH_MAX];
	if (find_shim(shim, sizeof(shim)) != 0) {
		cv_error("run: cannot find libconvoy.so beside convoy or in %s", CONVOY_LIBDIR);
		return 1;
	}
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		cv_error("run: cannot create %s: %s", dir, strerror(errno));
		return 1;
	}
	char absdir[PATH_MAX];
	if (!realpath(dir, absdir) || access(absdir, W_OK) != 0) {
		cv_error("run: cannot write profiles to %s: %s", dir, strerror(errno ? errno : EACCES));
		return 1;
	}
	if (set_preload(shim) != 0 || setenv("CONVOY_DIR", absdir, 1) != 0 ||
	    setenv("CONVOY_QUIET", "1", 1) != 0) {
		cv_error("run: cannot set the environment: %s", strerror(errno));
		return 1;
	}

	/* Like system(): a ^C goes to the command; convoy waits and reports. */
	struct sigaction ignore = { .sa_handler = SIG_IGN }, old_int, old_quit;
	sigaction(SIGINT, &ignore, &old_int);
	sigaction(SIGQUIT, &ignore, &old_quit);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		cv_error("run: fork: %s", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		execvp(argv[optind], argv + optind);
		cv_error("run: cannot run %s: %s", argv[optind], strerror(errno));
		_exit(127);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);

	int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		char *none = find_profile(absdir, pid);
		if (!none)
			return 127;   /* exec failed; the child said why */
		free(none);
	}
	char *path = find_profile(absdir, pid);
	if (!path) {
		if (WIFSIGNALED(status))
			cv_error("run: %s was killed by signal %d (%s) before it wrote a profile",
				 argv[optind], WTERMSIG(status), strsignal(WTERMSIG(status)));
		else
			cv_error("run: %s exited with status %d but wrote no profile "
				 "(statically linked, setuid, or it exited with _exit())",
				 argv[optind], WEXITSTATUS(status));
		return exit_code ? exit_code : 1;
	}
	if (WIFSIGNALED(status))
		cv_error("run: %s was killed by signal %d (%s)", argv[optind], WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	struct profile *p = profile__load(path);
	free(path);
	if (!p)
		return exit_code ? exit_code : 1;
	int rc = report__write(p, &ro, stdout);
	profile__free(p);
	if (rc)
		return exit_code ? exit_code : 1;
	return exit_code;
}
