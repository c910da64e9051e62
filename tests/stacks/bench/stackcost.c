/* stackcost.c — what call stacks cost the program (make bench-stacks; a
 * benchmark, not a test). Prints nanoseconds per operation, best of 5.
 *
 *   stackcost firstuse N DEPTH   lock+unlock N fresh mutexes once each, DEPTH
 *                                calls deep: every lock is a first use, so
 *                                under the shim every one captures a stack
 *   stackcost init N DEPTH       the same with pthread_mutex_init first (the
 *                                init captures; the first use takes that stack)
 *   stackcost handoff N          N waits that are certainly contended: the
 *                                holder lets go only once the other thread
 *                                sleeps in pthread_mutex_lock; ns per wait
 *
 * Run it natively and under the shim with CONVOY_STACKS=0 and =1 side by side
 * (tests/stacks/bench/stacks.sh); the difference is the stacks' cost.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static volatile int sink;

__attribute__((noinline)) static void lock_all(pthread_mutex_t *m, long n, int depth, int init)
{
	if (depth > 0) {
		lock_all(m, n, depth - 1, init);
		sink++;
		return;
	}
	for (long i = 0; i < n; i++) {
		if (init)
			pthread_mutex_init(&m[i], NULL);
		pthread_mutex_lock(&m[i]);
		pthread_mutex_unlock(&m[i]);
	}
}

static pthread_mutex_t hand = PTHREAD_MUTEX_INITIALIZER;
static long rounds;
static volatile int turn_done;

static void *taker(void *arg)
{
	(void)arg;
	for (long i = 0; i < rounds; i++) {
		pthread_mutex_lock(&hand);   /* blocks: the main thread holds it */
		pthread_mutex_unlock(&hand);
		__atomic_store_n(&turn_done, 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&turn_done, __ATOMIC_ACQUIRE))
			sched_yield();
	}
	return NULL;
}

static double handoff(long n)
{
	rounds = n;
	pthread_t th;
	pthread_mutex_lock(&hand);
	double t0 = now();
	pthread_create(&th, NULL, taker, NULL);
	for (long i = 0; i < n; i++) {
		while (__atomic_load_n(&hand.__data.__lock, __ATOMIC_ACQUIRE) != 2)
			sched_yield();   /* the taker sleeps on it */
		pthread_mutex_unlock(&hand);
		while (!__atomic_load_n(&turn_done, __ATOMIC_ACQUIRE))
			sched_yield();
		pthread_mutex_lock(&hand);
		__atomic_store_n(&turn_done, 0, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&hand);
	pthread_join(th, NULL);
	return (now() - t0) / (double)n;
}

int main(int argc, char **argv)
{
	if (argc < 3 || (strcmp(argv[1], "firstuse") && strcmp(argv[1], "init") && strcmp(argv[1], "handoff"))) {
		fprintf(stderr, "usage: stackcost firstuse|init N DEPTH | stackcost handoff N\n");
		return 2;
	}
	long n = atol(argv[2]);
	int depth = argc > 3 ? atoi(argv[3]) : 0;
	double best = 1e300;
	for (int round = 0; round < 5; round++) {
		double per;
		if (!strcmp(argv[1], "handoff")) {
			per = handoff(n);
		} else {
			pthread_mutex_t *m = calloc((size_t)n, sizeof(*m));   /* fresh addresses each round */
			if (!m)
				return 1;
			double t0 = now();
			lock_all(m, n, depth, !strcmp(argv[1], "init"));
			per = (now() - t0) / (double)n;
		}
		if (per < best)
			best = per;
	}
	printf("%.1f\n", best);
	return 0;
}
