/* count_omp: a GCC OpenMP program with known counts: 2 threads, each
 * passing 100 explicit barriers, entering an unnamed critical section 50
 * times, a named one 20 times and an OpenMP lock 10 times. Prints a sum the
 * shim must not change. Built with -fopenmp (tests.mk). */
#include <omp.h>
#include <stdio.h>

int main(void)
{
	omp_lock_t lock;
	omp_init_lock(&lock);
	long sum = 0;
#pragma omp parallel num_threads(2)
	{
		for (int i = 0; i < 100; i++) {
#pragma omp barrier
		}
		for (int i = 0; i < 50; i++) {
#pragma omp critical
			sum += 1;
		}
		for (int i = 0; i < 20; i++) {
#pragma omp critical(named_section)
			sum += 10;
		}
		for (int i = 0; i < 10; i++) {
			omp_set_lock(&lock);
			sum += 100;
			omp_unset_lock(&lock);
		}
	}
	omp_destroy_lock(&lock);
	printf("sum %ld threads %d\n", sum, 2);
	return 0;
}
