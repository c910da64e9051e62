/* count_omp: a GCC OpenMP program with known counts (omp_counts.h): 2
 * threads, each passing 100 explicit barriers, entering an unnamed
 * critical section 50 times, a named one 20 times and an OpenMP lock 10
 * times. Prints what each counted (each counter under its own lock), which
 * the shim must not change. Built with -fopenmp (tests.mk). */
#include <stdio.h>

#include "omp_counts.h"

int main(void)
{
	struct omp_counts c = omp_counts_run();
	printf("critical %ld named %ld lock %ld\n", c.critical, c.named, c.locked);
	return 0;
}
