/* Creates pthread keys until pthread_key_create fails, in a process with a
 * contended lock and a thread (so the shim has done everything it does to a
 * thread: created, captured a stack, ended), and prints how many it got. */
#include <limits.h>

#include "progs.h"

static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;

static void *work(void *arg)
{
	for (int i = 0; i < 2000; i++) {
		MUST(pthread_mutex_lock(&shared));
		MUST(pthread_mutex_unlock(&shared));
	}
	return NULL;
}

int main(void)
{
	pthread_t th;
	MUST(pthread_create(&th, NULL, work, NULL));
	work(NULL);
	MUST(pthread_join(th, NULL));
	static pthread_key_t keys[PTHREAD_KEYS_MAX + 1];
	int n = 0, rc = 0;
	while (n <= PTHREAD_KEYS_MAX && (rc = pthread_key_create(&keys[n], NULL)) == 0)
		n++;
	printf("keys created: %d (then %s)\n", n, rc_name(rc));
	/* A thread started now still works, and its end is still seen. */
	MUST(pthread_create(&th, NULL, work, NULL));
	MUST(pthread_join(th, NULL));
	return 0;
}
