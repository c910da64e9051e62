/* hold_once — each of N workers takes hold_lock once and holds it 50 ms
 * (sleeping: the holder's own work off-CPU), so the others queue behind
 * it. Each thread's first acquisition of a lock is always a sampled hold,
 * so every one of the N holds is measured: fewer than 5, yet known, and the
 * finding must be long-hold, not "too few samples" (helper-131). */
#include "data_progs.h"

static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
	(void)arg;
	dp_name("holder");
	pthread_mutex_lock(&hold_lock);
	dp_sleep_ns(50000000);
	pthread_mutex_unlock(&hold_lock);
	return NULL;
}

int main(int argc, char **argv)
{
	int workers = dp_workers(argc, argv);
	CONVOY_NAME(&hold_lock, "hold_lock");
	pthread_t t[64];
	dp_start(t, workers, worker, t, 0);
	dp_join(t, workers);
	return 0;
}
