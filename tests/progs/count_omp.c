/* count_omp: a GCC OpenMP program with known counts: 2 threads, each
 * passing 100 explicit barriers, entering an unnamed critical section 50
 * times, a named one 20 times and an OpenMP lock 10 times. Prints what each
 * counted (each counter under its own lock), which the shim must not change.
 * Built with -fopenmp (tests.mk). */
#include <omp.h>
#include <stdio.h>

int main(void)
{
	omp_lock_t lock;
	omp_init_lock(&lock);
	long critical = 0, named = 0, locked = 0;
#pragma omp parallel num_threads(2)
	{
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
	printf("critical %ld named %ld lock %ld\n", critical, named, locked);
	return 0;
}
