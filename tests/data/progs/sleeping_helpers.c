/* sleeping_helpers — N compute workers and six service threads that wake
 * every 5 ms to check a flag, asleep nearly all the time. The service
 * threads are helpers, not busy threads: the run is not oversubscribed
 * however few CPUs there are, and their sleep is not the workers' off-CPU
 * time. */
#include "data_progs.h"

#define HELPERS 6
#define WORK_NS 300000000L   /* CPU, split between the workers */

static volatile int done;
static long per_worker;

static void *service(void *arg)
{
	(void)arg;
	dp_name("service");
	while (!done)
		dp_sleep_ns(5000000);
	return NULL;
}

static void *worker(void *arg)
{
	(void)arg;
	dp_name("worker");
	dp_spin((uint64_t)per_worker);
	return NULL;
}

int main(int argc, char **argv)
{
	int workers = dp_workers(argc, argv);
	pthread_t h[HELPERS], w[64];
	per_worker = WORK_NS / workers;
	dp_start(h, HELPERS, service, h, 0);
	dp_start(w, workers, worker, w, 0);
	dp_join(w, workers);
	done = 1;
	dp_join(h, HELPERS);
	return 0;
}
