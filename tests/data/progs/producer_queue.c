/* producer_queue — one producer makes every item (the slow stage) and N
 * consumers take them from a bounded queue under one mutex and two
 * condvars. The consumers park on not_empty waiting for the producer, and
 * the producer never waits for them: a serial stage feeding a queue, not a
 * lock the threads take turns through (the mutex is held for nanoseconds). */
#include "data_progs.h"

#define CAP 16
#define ITEMS 4000
static long queue[CAP];
static int head, tail, count, finished;
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER, not_full = PTHREAD_COND_INITIALIZER;

static __attribute__((noinline)) long make_item(long i)
{
	uint64_t x = (uint64_t)i + 1;
	for (int k = 0; k < 40000; k++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return (long)x;
}

static void *producer(void *arg)
{
	dp_name("producer");
	for (long i = 0; i < ITEMS; i++) {
		long v = make_item(i);
		pthread_mutex_lock(&queue_lock);
		while (count == CAP)
			pthread_cond_wait(&not_full, &queue_lock);
		queue[tail] = v;
		tail = (tail + 1) % CAP;
		count++;
		pthread_cond_signal(&not_empty);
		pthread_mutex_unlock(&queue_lock);
	}
	pthread_mutex_lock(&queue_lock);
	finished = 1;
	pthread_cond_broadcast(&not_empty);
	pthread_mutex_unlock(&queue_lock);
	return arg;
}

static void *consumer(void *arg)
{
	dp_name("consumer");
	volatile long sum = 0;
	for (;;) {
		pthread_mutex_lock(&queue_lock);
		while (count == 0 && !finished)
			pthread_cond_wait(&not_empty, &queue_lock);
		if (count == 0) {
			pthread_mutex_unlock(&queue_lock);
			return arg;
		}
		long v = queue[head];
		head = (head + 1) % CAP;
		count--;
		pthread_cond_signal(&not_full);
		pthread_mutex_unlock(&queue_lock);
		for (int k = 0; k < 2000; k++)
			sum += v ^ k;
	}
}

int main(int argc, char **argv)
{
	int n = dp_workers(argc, argv);
	pthread_t p, c[64];
	pthread_create(&p, NULL, producer, NULL);
	dp_start(c, n, consumer, c, 0);
	pthread_join(p, NULL);
	dp_join(c, n);
	return 0;
}
