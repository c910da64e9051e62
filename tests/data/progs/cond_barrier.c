/* cond_barrier — uneven work between rounds of a barrier made of a mutex
 * and a condvar (as code older than pthread_barrier_t, or C++ with
 * notify_all, makes one): the last thread to arrive broadcasts, and the
 * others, which waited for it, run on together. Half the workers do most
 * of each round's work, the other half a twentieth of it. A load imbalance at the barrier, not threads taking turns
 * through a monitor: the waiters are released together, not one at a
 * time. */
#include "data_progs.h"

#define ROUNDS 40
#define ROUND_NS 2000000   /* a heavy worker's work per round */

static pthread_mutex_t bar_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bar_cond = PTHREAD_COND_INITIALIZER;
static int workers, arrived, generation;

static void barrier_wait(void)
{
	pthread_mutex_lock(&bar_lock);
	int gen = generation;
	if (++arrived == workers) {
		arrived = 0;
		generation++;
		pthread_cond_broadcast(&bar_cond);
	} else {
		while (gen == generation)
			pthread_cond_wait(&bar_cond, &bar_lock);
	}
	pthread_mutex_unlock(&bar_lock);
}

static void *worker(void *arg)
{
	long id = (long)((pthread_t *)arg - (pthread_t *)0);
	dp_name("round");
	for (int r = 0; r < ROUNDS; r++) {
		dp_spin(id < workers / 2 ? ROUND_NS : ROUND_NS / 20);
		barrier_wait();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	workers = dp_workers(argc, argv);
	pthread_t t[64];
	CONVOY_NAME(&bar_lock, "bar_lock");
	CONVOY_NAME(&bar_cond, "bar_cond");
	for (long i = 0; i < workers; i++)
		pthread_create(&t[i], NULL, worker, (pthread_t *)0 + i);
	dp_join(t, workers);
	return 0;
}
