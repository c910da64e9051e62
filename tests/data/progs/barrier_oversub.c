/* barrier_oversub — N threads, each doing the same work per round, meeting
 * at a pthread barrier, with the process pinned to 2 CPUs: at 4 threads half
 * of them wait for a CPU, and that wait shows inside the barrier waits. The
 * finding must be oversubscription, never "spin before parking". */
#include "data_progs.h"

static pthread_barrier_t barrier;
static int rounds_total = 400;
static int workers;

static void *worker(void *arg)
{
	dp_name("bworker");
	(void)arg;
	/* The same total work whatever the thread count. */
	uint64_t per_round = 4000000u / (uint64_t)workers;
	for (int r = 0; r < rounds_total; r++) {
		dp_spin(per_round / 4);
		pthread_barrier_wait(&barrier);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	workers = dp_workers(argc, argv);
	dp_pin(2);
	pthread_t t[64];
	pthread_barrier_init(&barrier, NULL, (unsigned)workers);
	CONVOY_NAME(&barrier, "round_barrier");
	dp_start(t, workers, worker, t, 0);
	dp_join(t, workers);
	pthread_barrier_destroy(&barrier);
	return 0;
}
