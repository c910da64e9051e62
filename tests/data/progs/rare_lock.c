/* rare_lock — a lock entered about a thousand times a second whose sampled
 * holds are short (1 in 64 acquisitions, the shim's default) while every
 * 64th acquisition, never the sampled one, holds it for 5 ms. Threads wait
 * for it, but not because it is entered often: the finding must be
 * lock-contention, not acquisition-frequency. */
#include "data_progs.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
	dp_name("rare");
	(void)arg;
	for (int i = 0; i < 256; i++) {
		pthread_mutex_lock(&lock);
		if (i % 64 == 32)
			dp_sleep_ns(5000000);
		pthread_mutex_unlock(&lock);
		dp_sleep_ns(1000000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = dp_workers(argc, argv);
	pthread_t t[64];
	CONVOY_NAME(&lock, "rare_lock");
	dp_start(t, n, worker, t, 0);
	dp_join(t, n);
	return 0;
}
