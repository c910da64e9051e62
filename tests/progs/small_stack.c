/* A thread on a PTHREAD_STACK_MIN stack recurses argv[1] KiB deep (default
 * 6), then takes a lock the main thread holds, so the lock is contended
 * that deep: whatever the shim does there must fit in what is left. */
#include <limits.h>

#include "progs.h"

static pthread_mutex_t deep_lock = PTHREAD_MUTEX_INITIALIZER;
static int depth_kib = 6;

__attribute__((noinline)) static int descend(int kib)
{
	volatile char frame[1024];
	frame[0] = (char)kib;
	if (kib > 1)
		return descend(kib - 1) + frame[0];
	for (int i = 0; i < 10; i++) {   /* the first and a few more: every wait is captured */
		MUST(pthread_mutex_lock(&deep_lock));
		MUST(pthread_mutex_unlock(&deep_lock));
	}
	return frame[0];
}

static void *worker(void *arg)
{
	return (void *)(long)descend(depth_kib);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		depth_kib = atoi(argv[1]);
	pthread_attr_t attr;
	MUST(pthread_attr_init(&attr));
	MUST(pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN));
	MUST(pthread_mutex_lock(&deep_lock));
	pthread_t th;
	MUST(pthread_create(&th, &attr, worker, NULL));
	/* Contended for sure: wait until the worker is parked on the lock word. */
	while (__atomic_load_n(&deep_lock.__data.__lock, __ATOMIC_RELAXED) != 2)
		usleep(100);
	MUST(pthread_mutex_unlock(&deep_lock));
	void *ret;
	MUST(pthread_join(th, &ret));
	printf("%d KiB deep: %ld\n", depth_kib, (long)ret);
	return 0;
}
