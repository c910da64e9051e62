/* omp_critical — the cost of preload/gomp.c on an uncontended OpenMP
 * critical section: 2,000,000 entries on one thread, ns per entry printed.
 * `make bench-omp` runs it natively and preloaded, interleaved, 5 times
 * each, and prints the medians. A benchmark, never a test. */
#include <omp.h>
#include <stdio.h>
#include <time.h>

#define ENTRIES 2000000

int main(void)
{
	long n = 0;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < ENTRIES; i++) {
#pragma omp critical
		n++;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
	printf("%.1f\n", ns / ENTRIES);
	return n != ENTRIES;
}
