/* A thread on a PTHREAD_STACK_MIN stack goes argv[1] bytes deep in its own
 * frames and calls pthread_exit there, the process's first: glibc loads its
 * unwinder (libgcc_s) then, on the exiting thread's stack, and overflows it
 * past some depth (which depends on the CPU's register-save area). Prints
 * the value the join got. */
#include <alloca.h>
#include <limits.h>

#include "progs.h"

static volatile int exit_at_bottom = 1;   /* the compiler cannot tell that bottom never returns */

__attribute__((noinline)) static int bottom(size_t bytes)
{
	volatile char *pad = alloca(bytes + 1);
	pad[0] = 1;
	if (exit_at_bottom)
		pthread_exit((void *)7L);
	return pad[0];
}

__attribute__((noinline)) static int descend(size_t bytes)
{
	volatile char frame[1024];
	frame[0] = 1;
	if (bytes >= sizeof(frame))
		return descend(bytes - sizeof(frame)) + frame[0];
	return bottom(bytes) + frame[0];
}

static void *worker(void *arg)
{
	return (void *)(long)descend((size_t)arg);
}

int main(int argc, char **argv)
{
	size_t bytes = argc > 1 ? strtoul(argv[1], NULL, 10) : 7168;
	pthread_attr_t attr;
	MUST(pthread_attr_init(&attr));
	MUST(pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN));
	pthread_t th;
	MUST(pthread_create(&th, &attr, worker, (void *)bytes));
	void *ret;
	MUST(pthread_join(th, &ret));
	printf("pthread_exit %zu bytes deep: value %ld\n", bytes, (long)ret);
	return 0;
}
