/* Memory the shim keeps for threads: argv[1] is
 *   short   N threads (argv[2], default 60,000), 8 at a time, each locking a
 *           shared mutex once and exiting
 *   waited  N live threads (default 1,000) that each wait on a condvar
 *           until all are there, then exit together
 * Prints what it did. */
#include <stdbool.h>

#include "progs.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static long arrived, total;

static void *short_one(void *arg)
{
	MUST(pthread_mutex_lock(&lock));
	arrived++;
	MUST(pthread_mutex_unlock(&lock));
	return NULL;
}

static void *waiter(void *arg)
{
	MUST(pthread_mutex_lock(&lock));
	if (++arrived == total)
		MUST(pthread_cond_broadcast(&cond));
	while (arrived < total)
		MUST(pthread_cond_wait(&cond, &lock));
	MUST(pthread_mutex_unlock(&lock));
	return NULL;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "short";
	bool waited = !strcmp(what, "waited");
	long n = argc > 2 ? atol(argv[2]) : waited ? 1000 : 60000;
	pthread_attr_t attr;
	MUST(pthread_attr_init(&attr));
	MUST(pthread_attr_setstacksize(&attr, 64 << 10));
	if (waited) {
		total = n;
		pthread_t *th = calloc((size_t)n, sizeof(*th));
		for (long i = 0; i < n; i++)
			MUST(pthread_create(&th[i], &attr, waiter, NULL));
		for (long i = 0; i < n; i++)
			MUST(pthread_join(th[i], NULL));
	} else if (!strcmp(what, "short")) {
		for (long i = 0; i < n; i += 8) {
			pthread_t th[8];
			for (int k = 0; k < 8; k++)
				MUST(pthread_create(&th[k], &attr, short_one, NULL));
			for (int k = 0; k < 8; k++)
				MUST(pthread_join(th[k], NULL));
		}
	} else {
		return 2;
	}
	printf("%s: %ld threads, %ld arrivals\n", what, n, arrived);
	return 0;
}
