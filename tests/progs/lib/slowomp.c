/* libslowomp.so: an omp_set_lock that takes 2 ms before it calls
 * libgomp's, as a thread preempted inside the call would. Preloaded after
 * the shim, it is the "real" omp_set_lock the shim finds and calls
 * (tests/progs/omp_lock_alone.c). */
#include <dlfcn.h>
#include <time.h>

void omp_set_lock(void *lock)
{
	static void (*next)(void *);
	if (!next)
		next = (void (*)(void *))dlsym(RTLD_NEXT, "omp_set_lock");
	struct timespec pause = { 0, 2 * 1000 * 1000 };
	while (nanosleep(&pause, &pause) != 0)
		;
	next(lock);
}
