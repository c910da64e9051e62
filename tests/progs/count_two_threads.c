/* Two threads each lock and unlock one global mutex 500,000 times: the
 * profile must show exactly 1,000,000 acquisitions of counter_lock, 500,000
 * per thread, named by the global's symbol. */
#include "progs.h"

#define ITERATIONS 500000

pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
long counter;

static void *count_worker(void *arg)
{
	for (int i = 0; i < ITERATIONS; i++) {
		pthread_mutex_lock(&counter_lock);
		counter++;
		pthread_mutex_unlock(&counter_lock);
	}
	return arg;
}

int main(void)
{
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		MUST(pthread_create(&t[i], NULL, count_worker, NULL));
	for (int i = 0; i < 2; i++)
		MUST(pthread_join(t[i], NULL));
	printf("counter %ld\n", counter);
	return counter == 2L * ITERATIONS ? 0 : 1;
}
