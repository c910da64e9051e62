/* data_progs.h — what the recorded programs share: --workers N, named
 * objects and threads (so a report names them without symbols), pinning. */
#ifndef DATA_PROGS_H
#define DATA_PROGS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <convoy.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline int dp_workers(int argc, char **argv)
{
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--workers"))
			return atoi(argv[i + 1]) > 0 ? atoi(argv[i + 1]) : 1;
	return 2;
}

static inline uint64_t dp_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Work: ns of this thread's CPU time, however long the wait for a CPU. */
static inline uint64_t dp_spin(uint64_t ns)
{
	volatile uint64_t x = 0;
	uint64_t end = dp_cpu_ns() + ns;
	while (dp_cpu_ns() < end)
		for (int i = 0; i < 64; i++)
			x += (uint64_t)i;
	return x;
}

static inline void dp_sleep_ns(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };
	nanosleep(&ts, NULL);
}

/* The whole process on its first n allowed CPUs. */
static inline void dp_pin(int n)
{
	cpu_set_t allowed, set;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
		return;
	for (int c = 0, k = 0; c < CPU_SETSIZE && k < n; c++)
		if (CPU_ISSET(c, &allowed)) {
			CPU_SET(c, &set);
			k++;
		}
	sched_setaffinity(0, sizeof(set), &set);
}

/* Threads name themselves (a thread may end before its creator could). */
#define dp_name(name) pthread_setname_np(pthread_self(), name)

static inline void dp_start(pthread_t *t, int n, void *(*fn)(void *), void *args, size_t size)
{
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, fn, (char *)args + i * size);
}

static inline void dp_join(pthread_t *t, int n)
{
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

#endif
