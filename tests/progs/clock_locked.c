/* clock_locked: a program with a virtual clock of its own, as some test
 * harnesses and simulators have: it defines clock_gettime (exported:
 * -rdynamic), which takes clk_lock around the C library's. The shim reads
 * its clocks around every wait; through this definition that read would
 * lock clk_lock again from inside the shim: a worker that waits for
 * clk_lock recursed until its stack ran out, and the release of clk_lock
 * with that worker waiting locked clk_lock from inside the unlock, a
 * deadlock (helper-127, with libfaketimeMT). The wait here is certain:
 * main holds clk_lock until the worker sleeps on it. Prints "clock_locked:
 * N calls" (N: the program's own calls, 2, whoever else calls it). */
#include <dlfcn.h>

#include "progs.h"

static pthread_mutex_t clk_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long calls;

int clock_gettime(clockid_t clock, struct timespec *ts)
{
	static int (*next)(clockid_t, struct timespec *);
	pthread_mutex_lock(&clk_lock);
	if (!next)
		next = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
	calls++;
	int rc = next(clock, ts);
	pthread_mutex_unlock(&clk_lock);
	return rc;
}

static void *worker(void *arg)
{
	struct timespec ts;
	MUST(clock_gettime(CLOCK_MONOTONIC, &ts));   /* waits for clk_lock */
	return arg;
}

int main(void)
{
	struct timespec ts;
	MUST(clock_gettime(CLOCK_MONOTONIC, &ts));
	pthread_t th;
	MUST(pthread_mutex_lock(&clk_lock));
	MUST(pthread_create(&th, NULL, worker, NULL));
	while (__atomic_load_n(&clk_lock.__data.__lock, __ATOMIC_ACQUIRE) != 2)   /* glibc's "locked, a waiter" */
		nap();
	MUST(pthread_mutex_unlock(&clk_lock));
	MUST(pthread_join(th, NULL));
	printf("clock_locked: %lu calls\n", calls);
	return 0;
}
