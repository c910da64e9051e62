/* libompctorthread.so: a plugin whose constructor starts a thread (not an
 * OpenMP team's) that enters an OpenMP critical section, and joins it,
 * while dlopen holds the loader's lock. The thread's call is the plugin's
 * first: looking its runtime up with the loader's lock hung it, and the
 * constructor with it (helper-134). Beside a libgomp in the global scope
 * (count_omp) the shim finds it without the loader (preload/gomp.c,
 * from_global). Prints "ctor thread critical 1000". Built with -fopenmp. */
#include <pthread.h>
#include <stdio.h>

static int entered;

static void *enter(void *arg)
{
	for (int i = 0; i < 1000; i++) {
#pragma omp critical
		entered++;
	}
	return arg;
}

__attribute__((constructor)) static void thread_at_load(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, enter, NULL) == 0)
		pthread_join(t, NULL);
}

int omp_plugin_run(void)
{
	printf("ctor thread critical %d\n", entered);
	return 0;
}
