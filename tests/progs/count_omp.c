/* count_omp [LIB...]: a GCC OpenMP program with known counts
 * (omp_counts.h): 2 threads, each passing 100 explicit barriers, entering
 * an unnamed critical section 50 times, a named one 20 times and an OpenMP
 * lock 10 times. Prints what each counted (each counter under its own
 * lock), which the shim must not change. Then opens each LIB with
 * RTLD_LOCAL, as Python's ctypes opens a plugin, beside its own libgomp in
 * the global scope, and runs its omp_plugin_run, which prints its own
 * line. Built with -fopenmp (tests.mk). */
#include <dlfcn.h>
#include <stdio.h>

#include "omp_counts.h"

int main(int argc, char **argv)
{
	struct omp_counts c = omp_counts_run();
	printf("critical %ld named %ld lock %ld\n", c.critical, c.named, c.locked);
	fflush(stdout);
	for (int i = 1; i < argc; i++) {
		void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
		int (*run)(void) = h ? (int (*)(void))dlsym(h, "omp_plugin_run") : NULL;
		if (!run) {
			fprintf(stderr, "%s: %s\n", argv[i], h ? "no omp_plugin_run" : dlerror());
			return 1;
		}
		if (run() != 0)
			return 1;
		fflush(stdout);
	}
	return 0;
}
