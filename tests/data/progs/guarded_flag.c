/* guarded_flag — a 1-byte test-and-set lock (queue.flag) in the same 8-byte
 * word as a 4-byte count it guards (queue.len), and more guarded data on the
 * same line (queue.slots), 12,000,000 acquisitions split over the workers.
 * The samples spin on the flag: it must be named queue.flag, not the count
 * in its word; the line is the lock's (spinning), the count and slots
 * written under it by both threads only said as sharing its line, not
 * true-sharing; and in a sweep the lock comes first, not load-imbalance
 * (the worker that spun most is not the busiest). Issue 12. */
#include "data_progs.h"

#define TOTAL 12000000L

struct queue {
	int len;
	char flag;
	long slots[4];
};

_Alignas(64) struct queue queue;
static long per_worker;

static void take(char *lock)
{
	while (__atomic_test_and_set(lock, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(lock, __ATOMIC_RELAXED))
			__builtin_ia32_pause();
}

static void *worker(void *arg)
{
	dp_name("queuer");
	(void)arg;
	for (long i = 0; i < per_worker; i++) {
		take(&queue.flag);
		queue.slots[queue.len & 3] = i;
		queue.len++;
		__atomic_clear(&queue.flag, __ATOMIC_RELEASE);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = dp_workers(argc, argv);
	pthread_t t[64];
	per_worker = TOTAL / n;
	dp_start(t, n, worker, t, 0);
	dp_join(t, n);
	printf("len %d\n", queue.len);
	return 0;
}
