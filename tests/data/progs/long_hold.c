/* long_hold — workers that hold one lock for 50 µs of work each time and
 * do 20 µs outside it: the critical section is the problem, not how often
 * it is entered. The finding must be long-hold on long_lock. */
#include "data_progs.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int workers;

static void *worker(void *arg)
{
	(void)arg;
	dp_name("holder");
	for (int i = 0; i < 4000 / workers; i++) {
		pthread_mutex_lock(&lock);
		dp_spin(50000);
		pthread_mutex_unlock(&lock);
		dp_spin(20000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	workers = dp_workers(argc, argv);
	pthread_t t[64];
	CONVOY_NAME(&lock, "long_lock");
	dp_start(t, workers, worker, t, 0);
	dp_join(t, workers);
	return 0;
}
