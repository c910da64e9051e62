/* hang_many [N]: a deadlock among many threads (default 200 besides main).
 * Two threads take lock_a and lock_b in opposite orders, made certain by a
 * barrier; then the other N - 2 start and queue on lock_a behind them. Main
 * joins the first. Every thread ends up blocked for good, with no deadline:
 * the watchdog's hang, and a wait-for graph of N threads whose only cycle
 * is the first two. */
#include "progs.h"

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER, lock_b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both;

static void *one_way(void *arg)
{
	pthread_mutex_t *first = arg ? &lock_a : &lock_b, *second = arg ? &lock_b : &lock_a;
	MUST(pthread_mutex_lock(first));
	pthread_barrier_wait(&both);
	MUST(pthread_mutex_lock(second));
	return NULL;
}

static void *queued(void *arg)
{
	MUST(pthread_mutex_lock(&lock_a));
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200;
	MUST(pthread_barrier_init(&both, NULL, 3));
	pthread_t first, second, t;
	MUST(pthread_create(&first, NULL, one_way, (void *)1));
	MUST(pthread_create(&second, NULL, one_way, NULL));
	pthread_barrier_wait(&both);   /* both locks held: the others queue behind them */
	for (int i = 2; i < n; i++)
		MUST(pthread_create(&t, NULL, queued, NULL));
	MUST(pthread_join(first, NULL));
	return 0;
}
