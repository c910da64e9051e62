/* hand_over_hand: one thread walks a chain of 40 mutexes hand over hand
 * (lock the next, then unlock the one before: every unlock is out of
 * order), twice; a second thread then takes every neighbouring pair the
 * other way round. Every edge of the walk is real, so the report has
 * hoh_i -> hoh_i+1 and back for every i: the held set must not grow with
 * the walk (a release that left a hole did, past its 16 slots, and lost
 * edges). */
#include "progs.h"

#include <convoy.h>

#define CHAIN 40   /* tests/shim/fastpath.c says the same */

static pthread_mutex_t chain[CHAIN];

static void *walk(void *arg)
{
	(void)arg;
	for (int round = 0; round < 2; round++) {
		MUST(pthread_mutex_lock(&chain[0]));
		for (int i = 0; i + 1 < CHAIN; i++) {
			MUST(pthread_mutex_lock(&chain[i + 1]));
			MUST(pthread_mutex_unlock(&chain[i]));
		}
		MUST(pthread_mutex_unlock(&chain[CHAIN - 1]));
	}
	return NULL;
}

static void *inverse(void *arg)
{
	(void)arg;
	for (int i = 0; i + 1 < CHAIN; i++) {
		MUST(pthread_mutex_lock(&chain[i + 1]));
		MUST(pthread_mutex_lock(&chain[i]));
		MUST(pthread_mutex_unlock(&chain[i]));
		MUST(pthread_mutex_unlock(&chain[i + 1]));
	}
	return NULL;
}

int main(void)
{
	static char names[CHAIN][16];
	for (int i = 0; i < CHAIN; i++) {
		MUST(pthread_mutex_init(&chain[i], NULL));
		snprintf(names[i], sizeof names[i], "hoh_%d", i);
		CONVOY_NAME(&chain[i], names[i]);
	}
	pthread_t th;
	MUST(pthread_create(&th, NULL, walk, NULL));
	MUST(pthread_join(th, NULL));
	MUST(pthread_create(&th, NULL, inverse, NULL));
	MUST(pthread_join(th, NULL));
	return 0;
}
