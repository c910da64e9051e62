/* hammer.c — many contended waits on one lock from two call sites, for the
 * sampling checks: hammer N makes at least N certain contended waits at
 * each site (more happen by chance). */
#include "stacks_progs.h"

static pthread_mutex_t hot = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static int rounds;

__attribute__((noinline)) static void site_a(void)
{
	pthread_mutex_lock(&hot);
	counter++;
	pthread_mutex_unlock(&hot);
}

__attribute__((noinline)) static void site_b(void)
{
	pthread_mutex_lock(&hot);
	counter += 2;
	pthread_mutex_unlock(&hot);
}

static void *worker(void *arg)
{
	void (*site)(void) = arg;
	site();
	return NULL;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atoi(argv[1]) : 10;
	for (int i = 0; i < rounds; i++) {
		for (int k = 0; k < 2; k++) {
			pthread_t th;
			pthread_mutex_lock(&hot);
			MUST(pthread_create(&th, NULL, worker, k ? (void *)site_b : (void *)site_a));
			wait_for_waiter(&hot);
			pthread_mutex_unlock(&hot);
			MUST(pthread_join(th, NULL));
		}
	}
	printf("hammer: %ld\n", counter);
	return 0;
}
