/* libompctor.so: a library whose constructor runs an OpenMP parallel region
 * with a critical section, while dlopen, which runs the constructor, holds
 * the loader's lock. The master sleeps first, so that the team thread
 * enters the critical first: a lookup of the real function from there
 * waited for the loader's lock forever (helper-131). The shim resolves
 * every function on the master, in GOMP_parallel (preload/gomp.c). Prints
 * "ctor critical 2". Built with -fopenmp (tests.mk). */
#include <omp.h>
#include <stdio.h>
#include <time.h>

static long entered;

__attribute__((constructor)) static void parallel_at_load(void)
{
#pragma omp parallel num_threads(2)
	{
		if (omp_get_thread_num() == 0) {
			struct timespec pause = { 0, 100 * 1000 * 1000 };
			nanosleep(&pause, NULL);
		}
#pragma omp critical
		entered++;
	}
	printf("ctor critical %ld\n", entered);
	fflush(stdout);
}
