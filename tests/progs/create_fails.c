/* pthread_create failing after the clone (an affinity of no CPU that is
 * there: glibc's thread exits before its start routine, and the create
 * returns EINVAL), 100 times, then five threads that each take a lock
 * once. The shim hands a failed create's state to the next (thread.c,
 * child_created). Prints what it did. */
#include "progs.h"

pthread_mutex_t made_lock = PTHREAD_MUTEX_INITIALIZER;

static void *never(void *arg)
{
	printf("a failed create's routine ran\n");
	return arg;
}

static void *made(void *arg)
{
	MUST(pthread_mutex_lock(&made_lock));
	MUST(pthread_mutex_unlock(&made_lock));
	return arg;
}

int main(void)
{
	pthread_attr_t nowhere;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(CPU_SETSIZE - 1, &set);
	MUST(pthread_attr_init(&nowhere));
	MUST(pthread_attr_setaffinity_np(&nowhere, sizeof(set), &set));
	int failed = 0;
	for (int i = 0; i < 100; i++) {
		pthread_t th;
		int rc = pthread_create(&th, &nowhere, never, NULL);
		failed += rc == EINVAL;
		if (rc == 0)
			MUST(pthread_join(th, NULL));
	}
	for (int i = 0; i < 5; i++) {
		pthread_t th;
		MUST(pthread_create(&th, NULL, made, NULL));
		MUST(pthread_join(th, NULL));
	}
	printf("failed creates: %d of 100\n", failed);
	return 0;
}
