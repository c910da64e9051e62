/* libompplugin.so: count_omp's body as a plugin built with -fopenmp,
 * whose libgomp is in its own scope only when it is opened with
 * RTLD_LOCAL (tests/progs/omp_plugin.c): its calls to GOMP_* and
 * omp_set_lock still find the shim's first, and the shim must find this
 * libgomp behind them (preload/gomp.c, "which runtime"). Prints the
 * team's size and what each counter counted. */
#include <stdio.h>

#include "../omp_counts.h"

int omp_plugin_run(void)
{
	struct omp_counts c = omp_counts_run();
	printf("team %d critical %ld named %ld lock %ld\n", c.team, c.critical, c.named, c.locked);
	return 0;
}
