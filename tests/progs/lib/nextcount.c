/* libnextcount.so: an interposer that comes after the shim
 * (LD_PRELOAD="libconvoy.so libnextcount.so"), as a sanitizer's runtime or
 * a second tracer would: it counts the mutex calls that reach it, passes
 * each to glibc, and prints the counts when the process ends. The shim must
 * pass it every call the program makes, including those it would
 * otherwise make itself (trust::an_interposer_after_the_shim_sees_every_call). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static unsigned long locks, trylocks, unlocks;

#define NEXT(name) \
	static int (*next)(pthread_mutex_t *); \
	if (!next) \
		next = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, name)

int pthread_mutex_lock(pthread_mutex_t *m)
{
	NEXT("pthread_mutex_lock");
	__atomic_add_fetch(&locks, 1, __ATOMIC_RELAXED);
	return next(m);
}

int pthread_mutex_trylock(pthread_mutex_t *m)
{
	NEXT("pthread_mutex_trylock");
	__atomic_add_fetch(&trylocks, 1, __ATOMIC_RELAXED);
	return next(m);
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
	NEXT("pthread_mutex_unlock");
	__atomic_add_fetch(&unlocks, 1, __ATOMIC_RELAXED);
	return next(m);
}

__attribute__((destructor)) static void counts(void)
{
	printf("next: lock %lu, trylock %lu, unlock %lu\n", locks, trylocks, unlocks);
	fflush(stdout);
}
