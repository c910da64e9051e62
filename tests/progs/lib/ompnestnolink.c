/* libompnestnolink.so: OpenMP nest locks in a library built with -fopenmp
 * but linked without libgomp (tests.mk): its references name no version,
 * and the loader binds such a reference to the base version of a
 * versioned name, libgomp's OMP_1.0 nest lock (the 8-byte one), where
 * dlsym gives the newest. The shim forwarded omp_set_nest_lock to the
 * OMP_3.0 function while init and unset went natively to OMP_1.0's: the
 * threads hung (helper-135). Two threads take the lock twice each time
 * and count; prints "nest nolink 4000". */
#include <omp.h>
#include <stdio.h>

int omp_plugin_run(void)
{
	omp_nest_lock_t lock;
	long counted = 0;
	omp_init_nest_lock(&lock);
#pragma omp parallel num_threads(2)
	for (int i = 0; i < 2000; i++) {
		omp_set_nest_lock(&lock);
		omp_set_nest_lock(&lock);
		counted++;
		omp_unset_nest_lock(&lock);
		omp_unset_nest_lock(&lock);
	}
	omp_destroy_nest_lock(&lock);
	printf("nest nolink %ld\n", counted);
	return 0;
}
