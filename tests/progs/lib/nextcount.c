/* libnextcount.so: an interposer that comes after the shim
 * (LD_PRELOAD="libconvoy.so libnextcount.so"), as a sanitizer's runtime or
 * a second tracer would: it counts the mutex, spinlock and semaphore calls
 * that reach it, passes each to glibc, and prints the counts when the
 * process ends. The shim must
 * pass it every call the program makes, including those it would
 * otherwise make itself (trust::an_interposer_after_the_shim_sees_every_call). */
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

static unsigned long locks, trylocks, unlocks, spin_locks, spin_unlocks, sem_waits, sem_trywaits, sem_posts;

/* A wrapper of fn(type *) that counts its calls in counter and passes
 * each to the next definition. */
#define COUNTED(fn, type, counter)                                                     \
	int fn(type *p)                                                                \
	{                                                                              \
		static int (*next)(type *);                                            \
		if (!next)                                                             \
			next = (int (*)(type *))dlsym(RTLD_NEXT, #fn);                 \
		__atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);                     \
		return next(p);                                                        \
	}

COUNTED(pthread_mutex_lock, pthread_mutex_t, locks)
COUNTED(pthread_mutex_trylock, pthread_mutex_t, trylocks)
COUNTED(pthread_mutex_unlock, pthread_mutex_t, unlocks)
COUNTED(pthread_spin_lock, pthread_spinlock_t, spin_locks)
COUNTED(pthread_spin_unlock, pthread_spinlock_t, spin_unlocks)
COUNTED(sem_wait, sem_t, sem_waits)
COUNTED(sem_trywait, sem_t, sem_trywaits)
COUNTED(sem_post, sem_t, sem_posts)

__attribute__((destructor)) static void counts(void)
{
	printf("next: lock %lu, trylock %lu, unlock %lu, spin lock %lu, spin unlock %lu, sem wait %lu, trywait %lu, "
	       "post %lu\n",
	       locks, trylocks, unlocks, spin_locks, spin_unlocks, sem_waits, sem_trywaits, sem_posts);
	fflush(stdout);
}
