/* stacks_progs.h — shared by the programs the call-stack tests run.
 *
 * Contention is made, not hoped for: a thread holds the lock, another blocks
 * on it, and the holder lets go only once glibc's lock word says a waiter is
 * asleep on it (2: "locked, with waiters"). Every contended wait here is
 * therefore certain, whatever the machine's speed or load.
 */
#ifndef CONVOY_STACKS_PROGS_H
#define CONVOY_STACKS_PROGS_H

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Returns once a thread is blocked in pthread_mutex_lock(m); exits 3 after
 * 20 s without one (the test's own timeout is the real limit). */
static inline void wait_for_waiter(pthread_mutex_t *m)
{
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (__atomic_load_n(&m->__data.__lock, __ATOMIC_ACQUIRE) != 2) {
		sched_yield();
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec > 20) {
			fprintf(stderr, "no thread came to wait for the lock\n");
			exit(3);
		}
	}
}

/* With m held: returns (m held) once a thread waits on cv. glibc counts a
 * condvar's waiters in __wrefs (<< 3), raised before the waiter lets go of
 * the mutex, so under m the count is exact. */
static inline void wait_for_cond_waiter(pthread_cond_t *cv, pthread_mutex_t *m)
{
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((__atomic_load_n(&cv->__data.__wrefs, __ATOMIC_ACQUIRE) >> 3) == 0) {
		pthread_mutex_unlock(m);
		sched_yield();
		pthread_mutex_lock(m);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec > 20) {
			fprintf(stderr, "no thread came to wait on the condvar\n");
			exit(3);
		}
	}
}

#define MUST(expr)                                                            \
	do {                                                                  \
		if ((expr) != 0) {                                            \
			fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #expr); \
			exit(99);                                             \
		}                                                             \
	} while (0)

#endif
