/* libompplugin.so: count_omp's body as a plugin built with -fopenmp,
 * whose libgomp is in its own scope only when it is opened with
 * RTLD_LOCAL (tests/progs/omp_plugin.c): its calls to GOMP_* and
 * omp_set_lock still find the shim's first, and the shim must find this
 * libgomp behind them (preload/gomp.c, in_callers_scope). Prints the
 * team's size and what each counter counted. */
#include <omp.h>
#include <stdio.h>

int omp_plugin_run(void)
{
	omp_lock_t lock;
	omp_init_lock(&lock);
	long critical = 0, named = 0, locked = 0;
	int team = 0;
#pragma omp parallel num_threads(2)
	{
#pragma omp single
		team = omp_get_num_threads();
		for (int i = 0; i < 100; i++) {
#pragma omp barrier
		}
		for (int i = 0; i < 50; i++) {
#pragma omp critical
			critical++;
		}
		for (int i = 0; i < 20; i++) {
#pragma omp critical(named_section)
			named++;
		}
		for (int i = 0; i < 10; i++) {
			omp_set_lock(&lock);
			locked++;
			omp_unset_lock(&lock);
		}
	}
	omp_destroy_lock(&lock);
	printf("team %d critical %ld named %ld lock %ld\n", team, critical, named, locked);
	return 0;
}
