/* libompnolink.so: OpenMP code in a library built with -fopenmp but linked
 * without libgomp (tests.mk): its GOMP_ and omp_ references have no version
 * and no library named, and the loader binds them through the scope of
 * the plugin that loaded it (libompnolinkuser.so), not through its own
 * dependencies, where the shim's handle to it finds nothing. A combined
 * schedule(dynamic) loop (GOMP_parallel_loop_*: with no runtime found,
 * its body ran outside the work share the entry point sets up, and
 * crashed: helper-133) with a critical section in it. */
#include <omp.h>

int omp_nolink_sum(int *team, int *entered)
{
	int a[100], sum = 0;
#pragma omp parallel for schedule(dynamic) num_threads(2)
	for (int i = 0; i < 100; i++) {
		if (i == 0)
			*team = omp_get_num_threads();
		a[i] = i;
#pragma omp critical
		++*entered;
	}
	for (int i = 0; i < 100; i++)
		sum += a[i];
	return sum;
}
