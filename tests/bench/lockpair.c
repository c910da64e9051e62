/* lockpair.c — the shim's overhead benchmark (make bench; not a test).
 *
 *   lockpair uncontended N   ns per lock+unlock pair, one thread, one mutex
 *   lockpair contended N     ns per pair, two threads sharing one mutex
 *
 * Prints one number: nanoseconds per pair (best of 5 rounds, to drop the
 * rounds a noisy neighbour stole). Run it with and without LD_PRELOAD side
 * by side; tests/bench/overhead.sh does that.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile long shared;
static long iterations;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *loop(void *arg)
{
	for (long i = 0; i < iterations; i++) {
		pthread_mutex_lock(&lock);
		shared++;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "uncontended") && strcmp(argv[1], "contended"))) {
		fprintf(stderr, "usage: lockpair uncontended|contended ITERATIONS\n");
		return 2;
	}
	iterations = atol(argv[2]);
	int threads = strcmp(argv[1], "contended") == 0 ? 2 : 1;
	double best = 1e300;
	for (int round = 0; round < 5; round++) {
		pthread_t th[2];
		double t0 = now();
		for (int i = 0; i < threads; i++)
			pthread_create(&th[i], NULL, loop, NULL);
		for (int i = 0; i < threads; i++)
			pthread_join(th[i], NULL);
		double per = (now() - t0) / ((double)iterations * threads);
		if (per < best)
			best = per;
	}
	printf("%.2f\n", best);
	return 0;
}
