/* A heap mutex destroyed and freed, then a new one malloc'd at the same
 * address: two lock objects at one address, generation 0 with 100
 * acquisitions and generation 1 with 250. */
#include "progs.h"

static pthread_mutex_t *round_trip(int n, void **where)
{
	pthread_mutex_t *m = malloc(sizeof(*m));
	MUST(pthread_mutex_init(m, NULL));
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(m);
		pthread_mutex_unlock(m);
	}
	MUST(pthread_mutex_destroy(m));
	*where = m;
	free(m);
	return m;
}

int main(void)
{
	void *a, *b;
	round_trip(100, &a);
	round_trip(250, &b);
	printf("same address: %s\n", a == b ? "yes" : "no");
	return 0;
}
