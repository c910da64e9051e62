/* A table of mutexes and one of rwlocks, one of each a bucket, more than
 * the shim's first caches hold, taken at random by two threads in turns
 * (each pick a mutex, then the rwlock of the same bucket, written one pick
 * in four, read otherwise), so that most acquisitions
 * find their record in the second cache (preload/shim.h, cv_thread.l2); before
 * turn REINIT every mutex is destroyed and initialised again while the
 * worker waits with its caches full: they must notice (each mutex is then
 * two objects, one a generation). Turn n is main's when n is even, the
 * worker's when odd: PICKS mutexes at random, each about 16 times, so that a
 * thread takes again, from its second cache, mutexes the other took last.
 *
 * Prints, for each mutex, its acquisitions in each turn, and for each
 * rwlock its reads/writes in each turn, counted by the program itself, and
 * the mutexes' total. */
#include "progs.h"

#define STRIPES 512
#define PICKS   8192
#define TURNS   30
#define REINIT  20

pthread_mutex_t stripes[STRIPES];
pthread_rwlock_t rw_stripes[STRIPES];
static long taken[TURNS][STRIPES], reads[TURNS][STRIPES], writes[TURNS][STRIPES];
static sem_t turn_of[2];   /* main's, the worker's */

static void turns(int who)
{
	for (int n = who; n < TURNS; n += 2) {
		sem_wait_all(&turn_of[who]);
		if (n == REINIT)
			for (int k = 0; k < STRIPES; k++) {
				MUST(pthread_mutex_destroy(&stripes[k]));
				MUST(pthread_mutex_init(&stripes[k], NULL));
				MUST(pthread_rwlock_destroy(&rw_stripes[k]));
				MUST(pthread_rwlock_init(&rw_stripes[k], NULL));
			}
		uint64_t seed = 2 * (uint64_t)n + 1;
		for (long i = 0; i < PICKS; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			unsigned k = (unsigned)(seed >> 33) % STRIPES;
			MUST(pthread_mutex_lock(&stripes[k]));
			taken[n][k]++;
			MUST(pthread_mutex_unlock(&stripes[k]));
			if (i % 4 == 0) {
				MUST(pthread_rwlock_wrlock(&rw_stripes[k]));
				writes[n][k]++;
			} else {
				MUST(pthread_rwlock_rdlock(&rw_stripes[k]));
				reads[n][k]++;
			}
			MUST(pthread_rwlock_unlock(&rw_stripes[k]));
		}
		sem_post(&turn_of[!who]);
	}
}

static void *worker(void *arg)
{
	turns(1);
	return arg;
}

int main(void)
{
	_Static_assert(REINIT % 2 == 0, "main's turn re-initialises");
	for (int k = 0; k < STRIPES; k++) {
		MUST(pthread_mutex_init(&stripes[k], NULL));
		MUST(pthread_rwlock_init(&rw_stripes[k], NULL));
	}
	sem_init(&turn_of[0], 0, 1);
	sem_init(&turn_of[1], 0, 0);
	pthread_t t;
	MUST(pthread_create(&t, NULL, worker, NULL));
	turns(0);
	MUST(pthread_join(t, NULL));
	long total = 0;
	for (int k = 0; k < STRIPES; k++) {
		printf("stripes[%d]", k);
		for (int n = 0; n < TURNS; n++) {
			printf(" %ld", taken[n][k]);
			total += taken[n][k];
		}
		printf("\n");
	}
	for (int k = 0; k < STRIPES; k++) {
		printf("rw_stripes[%d]", k);
		for (int n = 0; n < TURNS; n++)
			printf(" %ld/%ld", reads[n][k], writes[n][k]);
		printf("\n");
	}
	printf("total %ld\n", total);
	return 0;
}
