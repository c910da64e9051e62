/* libomphigh.so: an OpenMP library linked at a high base address, as is
 * libomphighfirst.so (tests.mk); opened after that one, which takes the
 * address, it is loaded lower: its load bias is "negative" (a large
 * unsigned number). The shim reads the versions its references name from
 * its dynamic section; it took the relocated addresses there for
 * unrelocated ones, added the bias again and crashed (helper-133). Prints
 * "high team 2". Built with -fopenmp. */
#include <omp.h>
#include <stdio.h>

int omp_plugin_run(void)
{
	int team = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
	team = omp_get_num_threads();
	printf("high team %d\n", team);
	return 0;
}
