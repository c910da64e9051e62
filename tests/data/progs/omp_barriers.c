/* omp_barriers — the OpenMP shape of issue 13: one `#pragma omp parallel`
 * around 20,000 `omp for` loops, each ending in libgomp's barrier, whose
 * waiters park with the futex system call issued inline (invisible to the
 * pthread interposers). With more threads than the work can keep busy
 * between barriers, the lost time must show as barrier time on "omp
 * barrier", not as "off-CPU for other reasons"; a critical section adds a
 * lock wait on "omp critical". Built with -fopenmp; run with
 * OMP_NUM_THREADS set from --workers (omp_set_num_threads). */
#include <omp.h>

#include "data_progs.h"

#define LOOPS 20000
#define ITEMS 64

int main(int argc, char **argv)
{
	omp_set_num_threads(dp_workers(argc, argv));
	static double v[ITEMS];
	double sum = 0;
#pragma omp parallel
	{
		for (int l = 0; l < LOOPS; l++) {
#pragma omp for schedule(static)
			for (int i = 0; i < ITEMS; i++)
				v[i] = v[i] * 0.5 + (double)(i + l);
		}
#pragma omp critical
		sum += v[0];
	}
	printf("%g\n", sum > 0 ? 1.0 : 0.0);
	return 0;
}
