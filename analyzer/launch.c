/* launch.c — running a command under the shim.
 *
 * The library is appended to any LD_PRELOAD the user already has (never
 * replacing it). While the command runs, ^C and ^\ go to it, as with
 * system(), and convoy reports what the command wrote. The launcher samples
 * the command's CPU time from outside it (sampler.c): the child waits for
 * the events to be opened on it before it execs.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "convoy/profile.h"
#include "deadlock.h"
#include "launch.h"
#include "model.h"
#include "profile.h"
#include "sampler.h"
#include "symbols.h"
#include "util.h"
#include "watchdog.h"

#ifndef CONVOY_LIBDIR
#define CONVOY_LIBDIR "/usr/local/lib/convoy"
#endif

/* libconvoy.so: beside this binary (the build tree), in ../lib/convoy (an
 * installed prefix), or in the configured library directory. */
static int find_shim(char *out)
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
	snprintf(out, PATH_MAX, "%s/libconvoy.so", CONVOY_LIBDIR);
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

static int mkdirs(const char *dir)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s", dir);
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0777) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(path, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

/* Set by launch__prepare for launch__run: where the profiles go, and the
 * sampling rate (0: none). */
static char profile_dir[PATH_MAX];
static unsigned sampling_hz;
static enum sampler_records sampling_records = SAMPLER_RECORDS_BUDGET;   /* CONVOY_SAMPLE_SWITCHES */
static unsigned sampling_stack = SAMPLER_DEFAULT_STACK;                 /* CONVOY_SAMPLE_STACK */

int launch__prepare(const char *dir, unsigned sample_hz, char *absdir, size_t size)
{
	char shim[PATH_MAX];
	if (find_shim(shim) != 0) {
		cv_error("cannot find libconvoy.so beside convoy or in %s", CONVOY_LIBDIR);
		return -1;
	}
	if (mkdirs(dir) != 0) {
		cv_error("cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	char resolved[PATH_MAX];
	if (!realpath(dir, resolved) || access(resolved, W_OK) != 0) {
		cv_error("cannot write profiles to %s: %s", dir, strerror(errno ? errno : EACCES));
		return -1;
	}
	snprintf(absdir, size, "%s", resolved);
	char dump_sig[16], snapshot_sig[16], launcher[16];
	snprintf(launcher, sizeof(launcher), "%d", (int)getpid());
	snprintf(dump_sig, sizeof(dump_sig), "%d", LAUNCH_STOP_SIGNAL);
	snprintf(snapshot_sig, sizeof(snapshot_sig), "%d", LAUNCH_SNAPSHOT_SIGNAL);
	snprintf(profile_dir, sizeof(profile_dir), "%s", resolved);
	sampling_hz = sample_hz;
	/* Hardware counters (a machine with a PMU): the program's environment
	 * may say otherwise (CONVOY_PERF=0 keeps its descriptors to itself). */
	if (set_preload(shim) != 0 || setenv("CONVOY_DIR", resolved, 1) != 0 || setenv("CONVOY_PERF", "hw", 0) != 0 ||
	    setenv("CONVOY_QUIET", "1", 1) != 0 || setenv("CONVOY_DUMP_SIGNAL", dump_sig, 1) != 0 ||
	    setenv("CONVOY_SNAPSHOT_SIGNAL", snapshot_sig, 1) != 0 || setenv("CONVOY_LAUNCHER_PID", launcher, 1) != 0) {
		cv_error("cannot set the environment: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static volatile sig_atomic_t child_group, child_pid, passed_on_sig;

/* A signal convoy is sent goes on to the command: to the group a time
 * limit gave it, else to it alone (it shares convoy's group, where a
 * terminal's signals reach it without convoy's help; a signal sent to the
 * whole group, as timeout(1) sends it, reaches it twice, as it would
 * under timeout(1) itself). */
static void forward_signal(int sig, siginfo_t *si, void *context)
{
	(void)context;
	if (child_group > 0)
		kill(-child_group, sig);
	else if (child_pid > 0 && si->si_code != SI_KERNEL)
		kill(child_pid, sig);
	else
		return;
	passed_on_sig = sig;
}

int launch__passed_on(void)
{
	return passed_on_sig;
}

/* The signals convoy passes on while the command runs: SIGTERM and SIGHUP
 * always (a supervisor that stops convoy stops what it runs, as timeout(1)
 * does), unless convoy was started with them ignored (nohup), which the
 * command then inherits; SIGINT and SIGQUIT with a time limit only (without
 * one the terminal sends them to the command too: convoy ignores them and
 * reports). */
static const int passed_on[] = { SIGTERM, SIGHUP, SIGINT, SIGQUIT };
#define NPASSED (sizeof(passed_on) / sizeof(passed_on[0]))

static void pass_on_signals(bool own_group, struct sigaction old[NPASSED])
{
	for (size_t i = 0; i < NPASSED; i++) {
		struct sigaction pass = { .sa_sigaction = forward_signal, .sa_flags = SA_SIGINFO | SA_RESTART };
		sigemptyset(&pass.sa_mask);
		bool terminal = passed_on[i] == SIGINT || passed_on[i] == SIGQUIT;
		if (terminal && !own_group)
			pass = (struct sigaction){ .sa_handler = SIG_IGN };
		sigaction(passed_on[i], NULL, &old[i]);
		if (terminal || old[i].sa_handler != SIG_IGN)
			sigaction(passed_on[i], &pass, NULL);
	}
}

static void restore_signals(const struct sigaction old[NPASSED])
{
	for (size_t i = 0; i < NPASSED; i++)
		sigaction(passed_on[i], &old[i], NULL);
}

/* The passed-on signals held back around the fork, so that none is lost
 * before child_pid says where it goes; the mask before into *saved. */
static void hold_signals(sigset_t *saved)
{
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < NPASSED; i++)
		sigaddset(&set, passed_on[i]);
	sigprocmask(SIG_BLOCK, &set, saved);
}

int launch__sample_hz(const char *cmd, const char *option, unsigned *hz)
{
	const char *records = getenv("CONVOY_SAMPLE_SWITCHES");   /* docs/samples-format.md */
	if (!records || !*records)
		sampling_records = SAMPLER_RECORDS_BUDGET;
	else if (!strcmp(records, "0") || !strcmp(records, "1"))
		sampling_records = records[0] == '1' ? SAMPLER_RECORDS_ALL : SAMPLER_RECORDS_OFF;
	else {
		cv_error("%s: CONVOY_SAMPLE_SWITCHES is 0 (no switch records), 1 (all) or unset (within a budget), "
			 "not '%s'", cmd, records);
		return -1;
	}
	const char *stack = getenv("CONVOY_SAMPLE_STACK");   /* docs/samples-format.md */
	long long bytes = stack && *stack ? parse_count(stack) : SAMPLER_DEFAULT_STACK;
	if (bytes < 0 || bytes > SAMPLER_MAX_STACK || bytes % 8) {
		cv_error("%s: CONVOY_SAMPLE_STACK is the bytes of user stack copied per sample, a multiple of 8 up to "
			 "%d (0: none), not '%s'", cmd, SAMPLER_MAX_STACK, stack);
		return -1;
	}
	sampling_stack = (unsigned)bytes;
	const char *text = option ? option : getenv("CONVOY_SAMPLE_HZ");
	if (!text || !*text) {
		*hz = SAMPLER_DEFAULT_HZ;
		return 0;
	}
	long long v = parse_count(text);
	if (v < 0 || v > LAUNCH_MAX_SAMPLE_HZ) {
		cv_error("%s: %s takes samples a second from 0 (off) to %d, not '%s'", cmd,
			 option ? "--sample-hz" : "CONVOY_SAMPLE_HZ", LAUNCH_MAX_SAMPLE_HZ, text);
		return -1;
	}
	*hz = (unsigned)v;
	return 0;
}

/* Opens the sampling events on the child waiting before its exec and starts
 * draining them; NULL when sampling is off or refused (said once). */
static struct sampler *start_sampling(pid_t pid)
{
	static int said;
	if (!sampling_hz)
		return NULL;
	char why[512];
	struct sampler *s = sampler__open(pid, sampling_hz, sampling_records, sampling_stack, why, sizeof(why));
	if (s && sampler__start(s, profile_dir, why, sizeof(why)) != 0) {
		sampler__stop(s);
		s = NULL;
	}
	if (!s && !said++)
		cv_error("CPU sampling off: %s; the report cannot say where on-CPU time went", why);
	return s;
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Whether name (its extension taken off: len bytes) ends with tail (-PID),
 * or with tail and -N: the shim's name for another file of that process. */
static int names_pid(const char *name, size_t len, const char *tail, size_t tail_len)
{
	if (len >= tail_len && !memcmp(name + len - tail_len, tail, tail_len))
		return 1;
	size_t n = len;
	while (n && isdigit((unsigned char)name[n - 1]))
		n--;
	return n < len && n > tail_len && name[n - 1] == '-' && !memcmp(name + n - 1 - tail_len, tail, tail_len);
}

/* The path of a hang snapshot of pid in the profile directory
 * (convoy-COMM-PID.hang, or -PID-N.hang when that name was taken) written
 * since then (0: any), into path; whether there is one. */
static int find_snapshot(pid_t pid, time_t since, char *path, size_t size)
{
	char tail[32];
	size_t tail_len = (size_t)snprintf(tail, sizeof(tail), "-%d", (int)pid), ext = strlen(CV_SNAPSHOT_EXT);
	DIR *d = opendir(profile_dir);
	int found = 0;
	struct dirent *e;
	while (d && !found && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		struct stat sb;
		snprintf(path, size, "%s/%s", profile_dir, e->d_name);
		found = !strncmp(e->d_name, "convoy-", 7) && len > ext && !strcmp(e->d_name + len - ext, CV_SNAPSHOT_EXT) &&
			names_pid(e->d_name, len - ext, tail, tail_len) && stat(path, &sb) == 0 && sb.st_mtime >= since;
	}
	if (d)
		closedir(d);
	return found;
}

/* Whether the shim wrote a hang snapshot of pid. Looked at once the command
 * has ended: where the program handles the snapshot signal itself, its
 * handler took the request and there is none. */
static int snapshot_written(pid_t pid)
{
	char path[PATH_MAX + 300];
	return find_snapshot(pid, 0, path, sizeof(path));
}

/* ---- a hung command ---------------------------------------------------------- */

/* The processes of a hung command asked for a snapshot, and the verdict on each. */
struct hang {
	pid_t pids[WATCHDOG_MAX_LOOKS];
	size_t n;                          /* asked */
	size_t processes;                  /* hung (asked or not) */
	int verdict[WATCHDOG_MAX_LOOKS];   /* -1: not read yet; else deadlock__at_hang's */
	time_t since;                      /* when the snapshots were asked for */
	double wait_until_ns, next_look_ns;
	char what[1024];                   /* what the first snapshot read shows (a deadlock's first) */
};

/* deadlock__at_hang on the snapshot pid wrote into the profile directory
 * since (renamed into place whole); -1 while there is none. */
static int snapshot_verdict(pid_t pid, time_t since, char *what, size_t size)
{
	char path[PATH_MAX + 300];
	if (!find_snapshot(pid, since, path, sizeof(path)))
		return -1;
	struct profile *p = profile__has_magic(path) ? profile__load(path) : NULL;
	int verdict = -1;
	if (p && p->process.pid == pid && p->process.exit_reason == CV_EXIT_HANG_SNAPSHOT) {
		struct syms *syms = syms__load(p, 1);
		struct model m;
		model__build(&m, p, syms);
		verdict = deadlock__at_hang(&m, what, size);
		model__free(&m);
		syms__free(syms);
	}
	profile__free(p);
	return verdict;
}

/* The watchdog's default (--on-hang auto) once the command hung and the n
 * pids were asked for a snapshot (of processes hung in all). */
static struct hang *hang_start(const pid_t *pids, size_t n, size_t processes, double now)
{
	struct hang *h = xcalloc(1, sizeof(*h));
	memcpy(h->pids, pids, n * sizeof(pid_t));
	h->n = n;
	h->processes = processes;
	h->since = time(NULL) - 1;   /* mtimes are whole seconds */
	for (size_t i = 0; i < n; i++)
		h->verdict[i] = -1;
	h->wait_until_ns = now + LAUNCH_STOP_GRACE_S * 1e9;
	return h;
}

/* Reads the snapshots that have come (every 100 ms); once all have, or the
 * grace passed, returns 1 when one proves a deadlock and 0 when none does
 * (saying so on stderr); -1 while waiting. */
static int hang_decide(struct hang *h, double now, const struct watchdog_config *wdc)
{
	if (now < h->next_look_ns)
		return -1;
	h->next_look_ns = now + 100e6;
	size_t waiting = 0, snapshots = 0;
	for (size_t i = 0; i < h->n; i++) {
		if (h->verdict[i] >= 0)
			continue;
		char what[sizeof(h->what)];
		h->verdict[i] = snapshot_verdict(h->pids[i], h->since, what, sizeof(what));
		if (h->verdict[i] == 1 || (h->verdict[i] == 0 && !h->what[0]))
			snprintf(h->what, sizeof(h->what), "%s", what);
		if (h->verdict[i] == 1)
			return 1;
		waiting += h->verdict[i] < 0;
	}
	if (waiting && now < h->wait_until_ns)
		return -1;
	for (size_t i = 0; i < h->n; i++)
		snapshots += h->verdict[i] >= 0;
	const char *es = h->processes == 1 ? "" : "es";
	if (snapshots)
		cv_error("the command looks hung (every thread of its %zu process%s blocked with no deadline, no CPU "
			 "used for %g s), but its snapshot proves no deadlock, so it goes on (--on-hang stop would "
			 "stop it). At the hang: %s", h->processes, es, wdc->period_s, h->what);
	else
		cv_error("the command looks hung (every thread of its %zu process%s blocked with no deadline, no CPU "
			 "used for %g s); no snapshot of it was written (no shim in it, the signal blocked, or the "
			 "program's own handler took it), so it goes on (--on-hang stop would stop it)",
			 h->processes, es, wdc->period_s);
	return 0;
}

int launch__run(char *const argv[], const char *log_path, double timeout_s, const struct watchdog_config *wdc,
		struct launch_result *r)
{
	memset(r, 0, sizeof(*r));
	int log_fd = -1;
	if (log_path && (log_fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
		cv_error("cannot write %s: %s", log_path, strerror(errno));
		return -1;
	}
	/* A pipe closed by exec tells the parent whether exec worked; the child
	 * execs once the parent closes go_pipe (after opening the sampling
	 * events on it). */
	int exec_pipe[2] = { -1, -1 }, go_pipe[2];
	if (pipe2(exec_pipe, O_CLOEXEC) != 0 || pipe2(go_pipe, O_CLOEXEC) != 0) {
		cv_error("pipe: %s", strerror(errno));
		if (exec_pipe[0] >= 0) {   /* the second one failed */
			close(exec_pipe[0]);
			close(exec_pipe[1]);
		}
		if (log_fd >= 0)
			close(log_fd);
		return -1;
	}
	/* Signals for the command (pass_on_signals). With a time limit it has a
	 * process group of its own, so the limit can kill all it started. */
	struct sigaction old_actions[NPASSED];
	sigset_t old_mask;
	child_group = 0;
	child_pid = 0;
	pass_on_signals(timeout_s > 0, old_actions);
	hold_signals(&old_mask);
	fflush(NULL);
	double t0 = now_ns();
	pid_t pid = fork();
	if (pid < 0) {
		cv_error("fork: %s", strerror(errno));
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		restore_signals(old_actions);
		close(exec_pipe[0]);
		close(exec_pipe[1]);
		close(go_pipe[0]);
		close(go_pipe[1]);
		if (log_fd >= 0)
			close(log_fd);
		return -1;
	}
	if (pid > 0) {
		if (timeout_s > 0) {
			setpgid(pid, pid);   /* as the child does: whichever runs first */
			child_group = pid;
		}
		child_pid = pid;
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
	}
	if (pid == 0) {
		restore_signals(old_actions);
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		if (timeout_s > 0)
			setpgid(0, 0);   /* so a timeout can kill what it started too */
		if (log_fd >= 0) {
			dup2(log_fd, STDOUT_FILENO);
			dup2(log_fd, STDERR_FILENO);
		}
		char go;
		close(go_pipe[1]);
		while (read(go_pipe[0], &go, 1) < 0 && errno == EINTR)
			;
		execvp(argv[0], argv);
		int err = errno;
		if (write(exec_pipe[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(exec_pipe[1]);
	close(go_pipe[0]);
	if (log_fd >= 0)
		close(log_fd);
	struct sampler *sampler = start_sampling(pid);
	close(go_pipe[1]);
	int exec_errno = 0;
	ssize_t got;
	while ((got = read(exec_pipe[0], &exec_errno, sizeof(exec_errno))) < 0 && errno == EINTR)
		;
	close(exec_pipe[0]);

	int status = 0;
	if (timeout_s > 0 || wdc->period_s > 0) {
		/* The stop signal first: the shim writes the profile of a hung
		 * program on it (CONVOY_DUMP_SIGNAL); SIGKILL after the grace. */
		double deadline = timeout_s > 0 ? t0 + timeout_s * 1e9 : 0, kill_at = 0;
		/* What is stopped: -group for the time limit, the hung processes for the watchdog. */
		pid_t target[WATCHDOG_MAX_LOOKS], hung[WATCHDOG_MAX_LOOKS];
		pid_t asked[WATCHDOG_MAX_LOOKS];   /* the hung processes asked for a snapshot (auto, continue) */
		size_t ntarget = 0, nhung = 0, nasked = 0;
		struct watchdog wd;
		struct hang *h = NULL;   /* --on-hang auto: deciding from the snapshots */
		watchdog__start(&wd, pid, wdc->period_s, t0);
		for (;;) {
			pid_t w = waitpid(pid, &status, WNOHANG);
			if (w == pid)
				break;
			if (w < 0 && errno != EINTR)
				break;
			double now = now_ns();
			if (!ntarget && deadline && now > deadline) {
				target[ntarget++] = -pid;
				r->timed_out = 1;
			} else if (!ntarget && !r->hung &&
				   (nhung = watchdog__check(&wd, now, hung, WATCHDOG_MAX_LOOKS))) {
				r->hung = 1;
				if (wdc->on_hang == WATCHDOG_STOP) {
					memcpy(target, hung, nhung * sizeof(pid_t));
					ntarget = nhung;
				} else {   /* once: the program goes on, as it may, unless a snapshot proves a deadlock */
					for (size_t i = 0; i < nhung; i++)
						if (watchdog__snapshot(hung[i], LAUNCH_SNAPSHOT_SIGNAL))
							asked[nasked++] = hung[i];
					if (wdc->on_hang == WATCHDOG_AUTO)
						h = hang_start(asked, nasked, nhung, now);
				}
			} else if (!ntarget && h) {
				int verdict = hang_decide(h, now, wdc);
				if (verdict == 1) {   /* deadlocked for good: stop it, as --on-hang stop would */
					r->deadlock = 1;
					memcpy(target, hung, nhung * sizeof(pid_t));
					ntarget = nhung;
				}
				if (verdict >= 0) {
					free(h);
					h = NULL;
				}
			}
			if (ntarget && !kill_at) {
				for (size_t i = 0; i < ntarget; i++)
					kill(target[i], LAUNCH_STOP_SIGNAL);
				kill_at = now + LAUNCH_STOP_GRACE_S * 1e9;
			} else if (kill_at && now > kill_at) {
				for (size_t i = 0; i < ntarget; i++)
					kill(target[i], SIGKILL);
				kill(pid, SIGKILL);
				while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
					;
				break;
			}
			struct timespec nap = { 0, 2000000 };
			nanosleep(&nap, NULL);
		}
		if (h && !r->timed_out)   /* it went on before the verdict: said all the same, from the snapshots there are */
			hang_decide(h, INFINITY, wdc);
		free(h);
		r->snapshot_asked = nasked > 0;
		for (size_t i = 0; i < nasked; i++)
			r->snapshot |= snapshot_written(asked[i]);
	} else {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	child_group = 0;   /* reaped: its pid may be another process's soon */
	child_pid = 0;
	r->wall_ns = now_ns() - t0;
	sampler__stop(sampler);
	restore_signals(old_actions);
	r->pid = pid;
	r->status = status;
	if (got == sizeof(exec_errno)) {
		cv_error("cannot run %s: %s", argv[0], strerror(exec_errno));
		r->exec_errno = exec_errno;
		return -1;
	}
	return 0;
}

int launch__exit_code(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
