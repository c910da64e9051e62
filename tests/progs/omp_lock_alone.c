/* omp_lock_alone: one thread takes an OpenMP lock 10 times; nobody else
 * ever holds it. Under tests/progs/lib/slowomp.c each take lasts 2 ms,
 * as a preempted one on a busy machine does: none is contended (the shim
 * peeks at the lock word: preload/gomp.c, lock_call). Prints "locked 10".
 * Built with -fopenmp (tests.mk). */
#include <omp.h>
#include <stdio.h>

int main(void)
{
	omp_lock_t lock;
	omp_init_lock(&lock);
	int locked = 0;
	for (int i = 0; i < 10; i++) {
		omp_set_lock(&lock);
		locked++;
		omp_unset_lock(&lock);
	}
	omp_destroy_lock(&lock);
	printf("locked %d\n", locked);
	return 0;
}
