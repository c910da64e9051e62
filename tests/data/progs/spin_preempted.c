/* spin_preempted — workers take one pthread spinlock 8,000,000 times in all
 * (the lock beside the histogram it guards), recorded beside a CPU hog (BESIDE in
 * regenerate): a worker preempted most of its life, whose CPU time is almost
 * all spinning, is still a busy worker, not a thread asleep beside the work
 * (issue 13 roles); the finding is lock-contention on histogram.lock. */
#include "data_progs.h"

#define TOTAL 8000000L

static struct {
	pthread_spinlock_t lock;
	long buckets[16];
} histogram;
static long per_worker;

static void *worker(void *arg)
{
	unsigned x = (unsigned)(uintptr_t)arg + 1;
	for (long i = 0; i < per_worker; i++) {
		x = x * 1103515245u + 12345u;
		pthread_spin_lock(&histogram.lock);
		histogram.buckets[(x >> 16) & 15]++;
		pthread_spin_unlock(&histogram.lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = dp_workers(argc, argv);
	pthread_t t[64];
	if (n > 64)
		n = 64;
	per_worker = TOTAL / n;
	pthread_spin_init(&histogram.lock, PTHREAD_PROCESS_PRIVATE);
	CONVOY_NAME((void *)&histogram.lock, "histogram.lock");
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i))
			return 1;
	long sum = 0;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 16; i++)
		sum += histogram.buckets[i];
	printf("sum %ld\n", sum);
	return sum == per_worker * n ? 0 : 1;
}
