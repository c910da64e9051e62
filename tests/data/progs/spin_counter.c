/* spin_counter — 7,000,000 acquisitions of one pthread spinlock split over
 * the workers, a counter increment inside: at 2 threads the time goes to
 * spinning for it and to its cache line moving between the CPUs with each
 * hand-off. Both must be explained as lock-contention on counter_spin
 * (issue 12), not as sharing of a line no lock explains. */
#include "data_progs.h"

#define TOTAL 7000000

static pthread_spinlock_t counter_spin;
static long counter, per_worker;

static void *worker(void *arg)
{
	dp_name("spinner");
	(void)arg;
	for (long i = 0; i < per_worker; i++) {
		pthread_spin_lock(&counter_spin);
		counter++;
		pthread_spin_unlock(&counter_spin);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = dp_workers(argc, argv);
	pthread_t t[64];
	per_worker = TOTAL / n;
	pthread_spin_init(&counter_spin, PTHREAD_PROCESS_PRIVATE);
	CONVOY_NAME((void *)&counter_spin, "counter_spin");   /* pthread_spinlock_t is volatile */
	dp_start(t, n, worker, t, 0);
	dp_join(t, n);
	printf("counter %ld\n", counter);
	return 0;
}
