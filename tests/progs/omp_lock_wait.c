/* omp_lock_wait: one certain wait on an OpenMP lock, timed by the program
 * itself. Thread 0 holds the lock until thread 1, having spun in it for
 * libgomp's spin count, marks it -1 (a waiter about to sleep:
 * config/linux/mutex.c, gomp_mutex_lock_slow), then lets go; the spin
 * alone makes the wait far longer than a microsecond, whatever the
 * machine's load (tests/shim/counts.c runs it with libgomp's default spin
 * count). Prints how long thread 1's omp_set_lock took by
 * CLOCK_MONOTONIC: the shim's own timing of that call (preload/gomp.c,
 * the TSC) lies inside it. Built with -fopenmp (tests.mk). */
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(void)
{
	omp_lock_t lock;
	omp_init_lock(&lock);
	int held = 0;
	long long waited = 0;
#pragma omp parallel num_threads(2)
	{
		if (omp_get_thread_num() == 0) {
			omp_set_lock(&lock);
			__atomic_store_n(&held, 1, __ATOMIC_RELEASE);
			while (__atomic_load_n((int *)(void *)&lock, __ATOMIC_ACQUIRE) != -1)
				sched_yield();
			omp_unset_lock(&lock);
		} else {
			while (!__atomic_load_n(&held, __ATOMIC_ACQUIRE))
				sched_yield();
			long long t0 = now_ns();
			omp_set_lock(&lock);
			waited = now_ns() - t0;
			omp_unset_lock(&lock);
		}
	}
	omp_destroy_lock(&lock);
	printf("waited %lld ns\n", waited);
	return 0;
}
