/* omp_lock_wait: one certain wait on an OpenMP lock. Thread 0 holds the
 * lock until thread 1 sleeps in it (libgomp marks a lock with a sleeping
 * waiter -1: config/linux/mutex.h), then lets go, so thread 1's
 * omp_set_lock waited, whatever the machine's speed or load. The shim
 * times OpenMP lock calls with the TSC (preload/gomp.c): the profile must
 * count that one wait, and its length in ns, at most the run's.
 * Built with -fopenmp (tests.mk). */
#include <omp.h>
#include <sched.h>
#include <stdio.h>

int main(void)
{
	omp_lock_t lock;
	omp_init_lock(&lock);
	int held = 0;
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
			omp_set_lock(&lock);
			omp_unset_lock(&lock);
		}
	}
	omp_destroy_lock(&lock);
	puts("waited once");
	return 0;
}
