/* prim_util.h — helpers for the primitives test programs.
 *
 * The programs make contention happen on purpose and deterministically: a
 * thread that must be blocked before the next step is waited for until the
 * kernel says it sleeps (state S in /proc/self/task/TID/stat), never with a
 * timed sleep. They print only what is the same with and without the shim.
 */
#ifndef PRIM_UTIL_H
#define PRIM_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/types.h>

static inline void prim_die(const char *what)
{
	fprintf(stderr, "%s failed\n", what);
	exit(1);
}

static inline char prim_state(pid_t tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return '?';
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

/* Returns once thread tid sleeps in the kernel (a futex wait, here). */
static inline void prim_wait_blocked(pid_t tid)
{
	for (long i = 0;; i++) {
		if (prim_state(tid) == 'S')
			return;
		if (i < 1000)
			sched_yield();
		else
			usleep(50);
	}
}

static inline long long prim_cpu_ns_of(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

#endif
