/* libnextpost.so: an interposer after the shim (libnextcount.c says why)
 * that wraps sem_post alone: the shim, which makes some posts itself
 * (sem.c), must pass it every one, though the next sem_wait and
 * sem_trywait are glibc's (trust::an_interposer_after_the_shim_sees_every_call). */
#include <dlfcn.h>
#include <semaphore.h>
#include <stdio.h>

static unsigned long posts;

int sem_post(sem_t *s)
{
	static int (*next)(sem_t *);
	if (!next)
		next = (int (*)(sem_t *))dlsym(RTLD_NEXT, "sem_post");
	__atomic_add_fetch(&posts, 1, __ATOMIC_RELAXED);
	return next(s);
}

__attribute__((destructor)) static void counts(void)
{
	printf("next: post %lu\n", posts);
	fflush(stdout);
}
