/* order_ring K [--dense]: K locks (at most 64) taken in pairs, never
 * hanging. A ring: thread i takes lock i then lock i+1 (mod K), the threads
 * one after another, a lock-order cycle of K locks. --dense: one thread
 * takes every ordered pair (i then j, i != j), a graph with more cycles than
 * the analyzer looks for. */
#include "progs.h"

#define MAX_LOCKS 64
static pthread_mutex_t locks[MAX_LOCKS];
static int k;

static void pair(int a, int b)
{
	MUST(pthread_mutex_lock(&locks[a]));
	MUST(pthread_mutex_lock(&locks[b]));
	MUST(pthread_mutex_unlock(&locks[b]));
	MUST(pthread_mutex_unlock(&locks[a]));
}

static void *ring_edge(void *arg)
{
	int i = (int)(long)arg;
	pair(i, (i + 1) % k);
	return NULL;
}

static void *every_pair(void *arg)
{
	for (int i = 0; i < k; i++)
		for (int j = 0; j < k; j++)
			if (i != j)
				pair(i, j);
	return NULL;
}

int main(int argc, char **argv)
{
	k = argc > 1 ? atoi(argv[1]) : 12;
	int dense = argc > 2 && !strcmp(argv[2], "--dense");
	if (k < 2 || k > MAX_LOCKS)
		return 2;
	for (int i = 0; i < k; i++)
		MUST(pthread_mutex_init(&locks[i], NULL));
	for (long i = 0; i < (dense ? 1 : k); i++) {   /* one after another: nothing can hang */
		pthread_t t;
		MUST(pthread_create(&t, NULL, dense ? every_pair : ring_edge, (void *)i));
		MUST(pthread_join(t, NULL));
	}
	printf("done\n");
	return 0;
}
