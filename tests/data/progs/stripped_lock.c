/* stripped_lock — N workers taking turns on one static mutex, nothing
 * named: recorded with its binary kept fully stripped (SAMPLED_STRIP=1 in
 * regenerate), its lock and code are named module+offset, and the output
 * must say that no symbol covered them. */
#include "data_progs.h"

#define ROUNDS 2000
#define HOLD_NS 20000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&lock);
		dp_spin(HOLD_NS);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int workers = dp_workers(argc, argv);
	pthread_t w[64];
	dp_start(w, workers, worker, w, 0);
	dp_join(w, workers);
	return 0;
}
