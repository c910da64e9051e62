/* A thread with asynchronous cancellation that spends its time in calls the
 * shim does bookkeeping for (mutex init and destroy: the object registry,
 * an init stack), cancelled from main after a short while, 200 times: every
 * join must give PTHREAD_CANCELED. The shim's guard disables cancellation
 * around its bookkeeping; a cancel that lands there must still end the
 * thread as cancelled (glibc 2.36's pthread_setcancelstate, acting on the
 * pending cancel, leaves the thread's result unset: 8 of 200 were joined
 * with NULL under the shim that re-enabled only the state). Prints the
 * count of the others. */
#include "progs.h"

#define ROUNDS 200

static void *spin_in_shim(void *arg)
{
	MUST(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL));
	pthread_mutex_t m[16];
	for (unsigned i = 0;; i++) {
		pthread_mutex_init(&m[i % 16], NULL);
		pthread_mutex_destroy(&m[i % 16]);
	}
	return arg;
}

int main(void)
{
	int other = 0;
	for (int r = 0; r < ROUNDS; r++) {
		pthread_t t;
		MUST(pthread_create(&t, NULL, spin_in_shim, NULL));
		struct timespec d = { 0, 200000 };
		nanosleep(&d, NULL);
		MUST(pthread_cancel(t));
		void *status;
		MUST(pthread_join(t, &status));
		other += status != PTHREAD_CANCELED;
	}
	printf("%d of %d joined without PTHREAD_CANCELED\n", other, ROUNDS);
	return 0;
}
