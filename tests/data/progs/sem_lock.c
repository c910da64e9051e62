/* sem_lock — a binary semaphore used as a lock: each thread does its work
 * between sem_wait and sem_post, so threads run one at a time, and each
 * post wakes a thread that will post in turn. The finding must be
 * lock-contention on the semaphore, not park-wake. (A control: io_helper's
 * condvars are signalled by a producer, not by their waiters.) */
#include <semaphore.h>

#include "data_progs.h"

#define UNITS 2000
#define UNIT_NS 50000

static sem_t turn;
static int workers;

static void *worker(void *arg)
{
	(void)arg;
	dp_name("semthread");
	for (int i = 0; i < UNITS / workers; i++) {
		sem_wait(&turn);
		dp_spin(UNIT_NS);
		sem_post(&turn);
		sched_yield();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	workers = dp_workers(argc, argv);
	sem_init(&turn, 0, 1);
	CONVOY_NAME(&turn, "turn_sem");
	pthread_t t[64];
	dp_start(t, workers, worker, t, 0);
	dp_join(t, workers);
	sem_destroy(&turn);
	return 0;
}
