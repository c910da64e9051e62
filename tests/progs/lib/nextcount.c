/* libnextcount.so: an interposer that comes after the shim
 * (LD_PRELOAD="libconvoy.so libnextcount.so"), as a sanitizer's runtime or
 * a second tracer would: it counts the mutex, spinlock and semaphore calls
 * that reach it, passes
 * each to glibc, and prints the counts when the process ends. The shim must
 * pass it every call the program makes, including those it would
 * otherwise make itself (trust::an_interposer_after_the_shim_sees_every_call). */
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

static unsigned long locks, trylocks, unlocks, spin_locks, spin_unlocks, sem_waits, sem_trywaits, sem_posts;

#define NEXT(name, type) \
	static int (*next)(type *); \
	if (!next) \
		next = (int (*)(type *))dlsym(RTLD_NEXT, name)

int pthread_mutex_lock(pthread_mutex_t *m)
{
	NEXT("pthread_mutex_lock", pthread_mutex_t);
	__atomic_add_fetch(&locks, 1, __ATOMIC_RELAXED);
	return next(m);
}

int pthread_mutex_trylock(pthread_mutex_t *m)
{
	NEXT("pthread_mutex_trylock", pthread_mutex_t);
	__atomic_add_fetch(&trylocks, 1, __ATOMIC_RELAXED);
	return next(m);
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
	NEXT("pthread_mutex_unlock", pthread_mutex_t);
	__atomic_add_fetch(&unlocks, 1, __ATOMIC_RELAXED);
	return next(m);
}

int pthread_spin_lock(pthread_spinlock_t *l)
{
	NEXT("pthread_spin_lock", pthread_spinlock_t);
	__atomic_add_fetch(&spin_locks, 1, __ATOMIC_RELAXED);
	return next(l);
}

int pthread_spin_unlock(pthread_spinlock_t *l)
{
	NEXT("pthread_spin_unlock", pthread_spinlock_t);
	__atomic_add_fetch(&spin_unlocks, 1, __ATOMIC_RELAXED);
	return next(l);
}

int sem_wait(sem_t *s)
{
	NEXT("sem_wait", sem_t);
	__atomic_add_fetch(&sem_waits, 1, __ATOMIC_RELAXED);
	return next(s);
}

int sem_trywait(sem_t *s)
{
	NEXT("sem_trywait", sem_t);
	__atomic_add_fetch(&sem_trywaits, 1, __ATOMIC_RELAXED);
	return next(s);
}

int sem_post(sem_t *s)
{
	NEXT("sem_post", sem_t);
	__atomic_add_fetch(&sem_posts, 1, __ATOMIC_RELAXED);
	return next(s);
}

__attribute__((destructor)) static void counts(void)
{
	printf("next: lock %lu, trylock %lu, unlock %lu, spin lock %lu, spin unlock %lu, sem wait %lu, trywait %lu, "
	       "post %lu\n",
	       locks, trylocks, unlocks, spin_locks, spin_unlocks, sem_waits, sem_trywaits, sem_posts);
	fflush(stdout);
}
