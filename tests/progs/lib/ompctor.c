/* libompctor.so: a library whose constructor runs OpenMP parallel regions
 * with a critical section, while dlopen, which runs the constructor, holds
 * the loader's lock: first a schedule(dynamic) loop (the combined
 * GOMP_parallel_loop_* entry point), then a plain region. In each the
 * master sleeps first, so that the team thread enters the critical first:
 * a lookup of the real function from there waited for the loader's lock
 * forever (helper-131, and helper-132 for the loop). The shim resolves
 * every function on the master, in the entry point that starts the region
 * (preload/gomp.c). Prints "ctor critical 6". Built with -fopenmp
 * (tests.mk). */
#include <omp.h>
#include <stdio.h>
#include <time.h>

static long entered;

static void master_sleeps(void)
{
	if (omp_get_thread_num() == 0) {
		struct timespec pause = { 0, 100 * 1000 * 1000 };
		nanosleep(&pause, NULL);
	}
}

__attribute__((constructor)) static void parallel_at_load(void)
{
#pragma omp parallel for schedule(dynamic) num_threads(2)
	for (int i = 0; i < 4; i++) {
		master_sleeps();
#pragma omp critical
		entered++;
	}
#pragma omp parallel num_threads(2)
	{
		master_sleeps();
#pragma omp critical
		entered++;
	}
	printf("ctor critical %ld\n", entered);
	fflush(stdout);
}
