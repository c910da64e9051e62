/* omp_counts.h — count_omp's and libompplugin.so's OpenMP work, with known
 * counts: a team of 2 threads, each passing 100 explicit barriers,
 * entering an unnamed critical section 50 times, a named one 20 times and
 * an OpenMP lock 10 times; each counter under its own lock. Built with
 * -fopenmp. */
#ifndef OMP_COUNTS_H
#define OMP_COUNTS_H

#include <omp.h>

struct omp_counts {
	int team;
	long critical, named, locked;
};

static inline struct omp_counts omp_counts_run(void)
{
	struct omp_counts c = { 0, 0, 0, 0 };
	omp_lock_t lock;
	omp_init_lock(&lock);
#pragma omp parallel num_threads(2)
	{
#pragma omp master   /* no barrier: count_omp counts its barriers */
		c.team = omp_get_num_threads();
		for (int i = 0; i < 100; i++) {
#pragma omp barrier
		}
		for (int i = 0; i < 50; i++) {
#pragma omp critical
			c.critical++;
		}
		for (int i = 0; i < 20; i++) {
#pragma omp critical(named_section)
			c.named++;
		}
		for (int i = 0; i < 10; i++) {
			omp_set_lock(&lock);
			c.locked++;
			omp_unset_lock(&lock);
		}
	}
	omp_destroy_lock(&lock);
	return c;
}

#endif
