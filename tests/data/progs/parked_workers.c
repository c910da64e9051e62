/* parked_workers — N workers that do almost nothing: each parks on a
 * semaphore until the main thread, after a fixed 300 ms (a timer, a
 * request), posts it, then works 1 ms, 3 ms, 5 ms ... (2i + 1 ms for
 * worker i): uneven, but a few milliseconds. Adding workers adds only
 * parked time, which evener work could not have filled: it is no load
 * imbalance. */
#include <semaphore.h>

#include "data_progs.h"

static sem_t go;

static void *worker(void *arg)
{
	dp_name("worker");
	while (sem_wait(&go) != 0)
		;
	dp_spin(1000000 * (uint64_t)(2 * *(int *)arg + 1));
	return NULL;
}

int main(int argc, char **argv)
{
	int workers = dp_workers(argc, argv);
	pthread_t w[64];
	int number[64];
	sem_init(&go, 0, 0);
	CONVOY_NAME(&go, "go_sem");
	for (int i = 0; i < workers; i++)
		number[i] = i;
	dp_start(w, workers, worker, number, sizeof(number[0]));
	dp_sleep_ns(300000000L);
	for (int i = 0; i < workers; i++)
		sem_post(&go);
	dp_join(w, workers);
	return 0;
}
