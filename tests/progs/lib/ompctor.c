/* libompctor.so: a library whose constructor runs OpenMP parallel regions
 * while dlopen, which runs the constructor, holds the loader's lock: a
 * schedule(dynamic) loop (the combined GOMP_parallel_loop_* entry point)
 * and a plain region, each with a critical section, then a region whose
 * body is one call to a function ending in a barrier (at -O2 both calls
 * are jumps: the barrier's return address is the shim's own region_body).
 * The master sleeps first in each, so that the team thread calls first: a
 * lookup of the real function from there waited for the loader's lock
 * forever (helper-131, helper-132 for the loop, helper-133 for the jump,
 * which also, resolved as a call from the shim, found the shim's own
 * GOMP_barrier and recursed). The shim resolves every function on the
 * master, in the entry point that starts the region, and gives the
 * region's calls by a jump the region's table (preload/gomp.c). Prints
 * "ctor critical 6 barrier 3". Built with -fopenmp (tests.mk). */
#include <omp.h>
#include <stdio.h>
#include <time.h>

static long entered;
static int arrived[2];

static void master_sleeps(void)
{
	if (omp_get_thread_num() == 0) {
		struct timespec pause = { 0, 100 * 1000 * 1000 };
		nanosleep(&pause, NULL);
	}
}

__attribute__((noinline)) static void arrive(void)
{
	master_sleeps();
	arrived[omp_get_thread_num() & 1] = omp_get_thread_num() + 1;
#pragma omp barrier
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
#pragma omp parallel num_threads(2)
	arrive();
	printf("ctor critical %ld barrier %d\n", entered, arrived[0] + arrived[1]);
	fflush(stdout);
}
