/* omp_plugin LIB...: opens each LIB with RTLD_LOCAL, as Python's ctypes and
 * extension modules open theirs, and runs its OpenMP code: its
 * omp_plugin_run if it has one (libompplugin.so, and the same code built
 * against a copy of libgomp under a soname of its own,
 * libompplugin_copy.so), else only its constructor's (libompctor.so). The
 * program itself is not linked with libgomp. Prints what each plugin
 * prints: "team 2 critical 100 named 40 lock 20" for a run. */
#include <dlfcn.h>

#include "progs.h"

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: omp_plugin LIB...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			return 1;
		}
		int (*run)(void) = (int (*)(void))dlsym(h, "omp_plugin_run");
		if (run && run() != 0)
			return 1;
	}
	return 0;
}
