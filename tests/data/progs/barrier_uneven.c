/* barrier_uneven — threads meeting at a pthread barrier each round, thread
 * 0 doing three times the others' share of the round's work: the others
 * wait at the barrier for it. The finding must name the barrier and the
 * uneven arrivals. */
#include "data_progs.h"

static pthread_barrier_t barrier;
static int workers;

struct arg { int id; };

static void *worker(void *p)
{
	dp_name("stepper");
	const struct arg *a = p;
	uint64_t share = 2000000u / (uint64_t)(workers + 2);   /* thread 0: three shares */
	for (int r = 0; r < 100; r++) {
		dp_spin(a->id == 0 ? 3 * share : share);
		pthread_barrier_wait(&barrier);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	workers = dp_workers(argc, argv);
	pthread_t t[64];
	struct arg args[64];
	for (int i = 0; i < workers; i++)
		args[i].id = i;
	pthread_barrier_init(&barrier, NULL, (unsigned)workers);
	CONVOY_NAME(&barrier, "step_barrier");
	dp_start(t, workers, worker, args, sizeof(args[0]));
	dp_join(t, workers);
	pthread_barrier_destroy(&barrier);
	return 0;
}
