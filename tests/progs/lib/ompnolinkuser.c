/* libompnolinkuser.so: a plugin linked against libgomp and
 * libompnolink.so, whose OpenMP it lends its scope. Prints "nolink team 2
 * sum 4950 critical 100". */
#include <stdio.h>

int omp_nolink_sum(int *team, int *entered);

int omp_plugin_run(void)
{
	int team = 0, entered = 0;
	int sum = omp_nolink_sum(&team, &entered);
	printf("nolink team %d sum %d critical %d\n", team, sum, entered);
	return 0;
}
