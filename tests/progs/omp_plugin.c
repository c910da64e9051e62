/* omp_plugin LIB: opens LIB (libompplugin.so) with RTLD_LOCAL, as Python's
 * ctypes and extension modules open theirs, and runs its OpenMP code. The
 * program itself is not linked with libgomp. Prints the plugin's line:
 * "team 2 critical 100 named 40 lock 20". */
#include <dlfcn.h>

#include "progs.h"

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: omp_plugin LIB\n");
		return 2;
	}
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	int (*run)(void) = (int (*)(void))dlsym(h, "omp_plugin_run");
	return run ? run() : 1;
}
