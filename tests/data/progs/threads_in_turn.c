/* threads_in_turn — N workers share 600 ms of CPU work, each started only
 * after the one before it ended (a pipeline run one stage at a time): never
 * more than one thread busy at once. Recorded beside a CPU hog, their waits
 * for a CPU are the other process's doing, not oversubscription by the
 * program, however many threads it made in all. */
#include "data_progs.h"

static void *worker(void *arg)
{
	dp_name("in turn");
	dp_spin(*(const uint64_t *)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = dp_workers(argc, argv);
	uint64_t share = 600000000 / (uint64_t)(3 * n);
	for (int i = 0; i < 3 * n; i++) {   /* three stages a worker */
		pthread_t t;
		dp_start(&t, 1, worker, &share, 0);
		dp_join(&t, 1);
	}
	return 0;
}
