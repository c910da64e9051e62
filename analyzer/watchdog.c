/* watchdog.c — convoy run and scale notice a hung command (watchdog.h).
 *
 * It runs in the launcher, not in the program: the shim adds no thread, no
 * timer and no signal handler a plain preload would not have, and the
 * program pays nothing. What it reads is the kernel's view of each process
 * the command started (/proc/PID/task/TID/stat and .../syscall, readable by
 * the parent): a process is stuck when every one of its threads is asleep
 * in a futex wait with no deadline (a mutex, a condvar wait, a join, a
 * semaphore: synchronisation, never I/O or a sleep) and the process used no
 * CPU time since the previous look. Stuck at two looks a period apart, it is
 * hung: nothing inside it can wake it, and the launcher stops it with the
 * signal on which the shim writes its profile (launch.h), whose thread
 * states then show who waits for whom. With --on-hang continue it instead
 * queues the snapshot signal once: the shim writes the same state as a
 * snapshot, and the program goes on (another process, a signal or its own
 * timer may still wake it), until it ends or --timeout stops it.
 */
#include <ctype.h>
#include <signal.h>
#include <dirent.h>
#include <errno.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "convoy/profile.h"
#include "util.h"
#include "watchdog.h"

#define WATCHDOG_DEFAULT_S 10
#define WATCHDOG_MAX_PIDS  256

int watchdog__config(struct watchdog_config *c, const char *cmd, const char *on_hang_option)
{
	const char *s = getenv("CONVOY_WATCHDOG");
	c->period_s = WATCHDOG_DEFAULT_S;
	c->on_hang = WATCHDOG_STOP;
	if (s && *s) {
		char *end;
		errno = 0;
		double v = strtod(s, &end);
		if (errno || end == s || *end || !(v >= 0 && v <= 86400)) {
			cv_error("CONVOY_WATCHDOG=%s is not a number of seconds from 0 (off) to 86400", s);
			return -1;
		}
		c->period_s = v;
	}
	const char *action = on_hang_option ? on_hang_option : getenv("CONVOY_ON_HANG");
	if (!action || !*action || !strcmp(action, "stop"))
		return 0;
	if (!strcmp(action, "continue")) {
		c->on_hang = WATCHDOG_CONTINUE;
		return 0;
	}
	cv_error("%s: %s takes stop or continue, not '%s'", cmd, on_hang_option ? "--on-hang" : "CONVOY_ON_HANG",
		 action);
	return -1;
}

/* The mask a status file has on the line starting with key ("SigCgt:"). */
static int status_mask(const char *path, const char *key, unsigned long long *mask)
{
	char line[256], format[32];
	snprintf(format, sizeof(format), "%s %%llx", key);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int found = 0;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, format, mask) == 1;
	fclose(f);
	return found ? 0 : -1;
}

/* Whether some thread of pid does not block sig: one that can take it now.
 * Queued to a process whose every thread blocks it, it would stay pending,
 * where the program could see it (sigpending). */
static int deliverable(pid_t pid, int sig)
{
	char dir[64];
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int open_to_it = 0;
	struct dirent *e;
	while (!open_to_it && (e = readdir(d))) {
		char path[400];
		unsigned long long blocked;
		snprintf(path, sizeof(path), "%s/%s/status", dir, e->d_name);
		open_to_it = isdigit((unsigned char)e->d_name[0]) && status_mask(path, "SigBlk:", &blocked) == 0 &&
			     !(blocked >> (sig - 1) & 1);
	}
	closedir(d);
	return open_to_it;
}

int watchdog__snapshot(pid_t pid, int sig)
{
	char path[64];
	unsigned long long caught;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (status_mask(path, "SigCgt:", &caught) != 0 || !(caught >> (sig - 1) & 1) || !deliverable(pid, sig))
		return 0;
	union sigval mark = { .sival_int = CV_SNAPSHOT_MAGIC };
	return sigqueue(pid, sig, mark) == 0;
}

static int read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int ok = fgets(buf, (int)size, f) != NULL;
	fclose(f);
	return ok ? 0 : -1;
}

/* ppid and CPU ticks (utime + stime) of a process or thread, from stat. */
static int read_stat(const char *path, pid_t *ppid, unsigned long long *ticks, char *state)
{
	char buf[1024];
	if (read_line(path, buf, sizeof(buf)))
		return -1;
	char *p = strrchr(buf, ')');   /* the comm may hold spaces and parentheses */
	unsigned long long ut, st;
	int pp;
	if (!p || sscanf(p + 1, " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", state, &pp, &ut, &st) != 4)
		return -1;
	*ppid = pp;
	*ticks = ut + st;
	return 0;
}

/* Whether the thread sleeps in a futex wait without a deadline. */
static int futex_wait_forever(const char *task_dir)
{
	char path[512], buf[512];
	snprintf(path, sizeof(path), "%s/syscall", task_dir);
	if (read_line(path, buf, sizeof(buf)))
		return 0;   /* not ours to read: never call it stuck */
	long nr;
	unsigned long long addr, op, val, timeout;
	if (sscanf(buf, "%ld %llx %llx %llx %llx", &nr, &addr, &op, &val, &timeout) != 5 || nr != SYS_futex)
		return 0;
	switch ((int)(op & FUTEX_CMD_MASK)) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET:
	case FUTEX_LOCK_PI:
	case FUTEX_WAIT_REQUEUE_PI:
		return timeout == 0;
	default:
		return 0;
	}
}

/* Whether every thread of pid sleeps in such a wait; *ticks gets its CPU. */
static int all_threads_stuck(pid_t pid, unsigned long long *ticks)
{
	char dir[64], state;
	pid_t ppid;
	snprintf(dir, sizeof(dir), "/proc/%d/stat", (int)pid);
	if (read_stat(dir, &ppid, ticks, &state))
		return 0;
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int stuck = 1, threads = 0;
	struct dirent *e;
	while (stuck && (e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		char task[320], path[400];
		unsigned long long t;
		snprintf(task, sizeof(task), "%s/%s", dir, e->d_name);
		snprintf(path, sizeof(path), "%s/stat", task);
		threads++;
		stuck = read_stat(path, &ppid, &t, &state) == 0 && state == 'S' && futex_wait_forever(task);
	}
	closedir(d);
	return stuck && threads > 0;
}

/* The processes under root (root included), by parent links in /proc. */
static size_t descendants(pid_t root, pid_t *out, size_t max)
{
	pid_t pids[4096], parents[4096];
	size_t n = 0, k = 0;
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < 4096) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		char path[300], state;
		unsigned long long ticks;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		if (read_stat(path, &parents[n], &ticks, &state) == 0)
			pids[n++] = (pid_t)atoi(e->d_name);
	}
	closedir(d);
	out[k++] = root;
	for (size_t i = 0; i < k && k < max; i++)   /* breadth first: out grows as children are found */
		for (size_t j = 0; j < n && k < max; j++)
			if (parents[j] == out[i])
				out[k++] = pids[j];
	return k;
}

void watchdog__start(struct watchdog *w, pid_t root, double period_s, double now_ns)
{
	memset(w, 0, sizeof(*w));
	w->root = root;
	w->period_ns = period_s * 1e9;
	w->next_ns = now_ns + w->period_ns;
}

pid_t watchdog__check(struct watchdog *w, double now_ns)
{
	if (w->period_ns <= 0 || now_ns < w->next_ns)
		return 0;
	w->next_ns = now_ns + w->period_ns;
	pid_t pids[WATCHDOG_MAX_PIDS];
	size_t n = descendants(w->root, pids, WATCHDOG_MAX_PIDS);
	struct watchdog_look look[WATCHDOG_MAX_LOOKS];
	size_t nlook = 0;
	pid_t hung = 0;
	for (size_t i = 0; i < n && nlook < WATCHDOG_MAX_LOOKS; i++) {
		unsigned long long ticks;
		if (!all_threads_stuck(pids[i], &ticks))
			continue;
		look[nlook++] = (struct watchdog_look){ pids[i], ticks };
		for (size_t k = 0; k < w->nlooks && !hung; k++)
			if (w->looks[k].pid == pids[i] && w->looks[k].ticks == ticks)
				hung = pids[i];   /* stuck at the last look too, and no CPU since */
	}
	memcpy(w->looks, look, nlook * sizeof(look[0]));
	w->nlooks = nlook;
	return hung;
}
