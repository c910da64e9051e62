/* pinned_even — N workers with exactly the same work, the process pinned to
 * one CPU: they take turns on it, so each waits for the CPU in its own
 * measure. That is oversubscription, not load imbalance. */
#include "data_progs.h"

static void *worker(void *arg)
{
	dp_name("even");
	(void)arg;
	dp_spin(150000000);   /* 150 ms of CPU; wall time stretches with the turns */
	return NULL;
}

int main(int argc, char **argv)
{
	int n = dp_workers(argc, argv);
	dp_pin(1);
	pthread_t t[64];
	dp_start(t, n, worker, t, 0);
	dp_join(t, n);
	return 0;
}
