/* Memory the shim keeps for objects that come and go: argv[1] is
 *   barrier  N pthread_barrier_init/wait/destroy (count 1), each a new object
 *   mutex    N init/lock/unlock/destroy of a mutex at one address
 *   heap     N mutexes from malloc (addresses come back), locked once and destroyed
 *   fresh    N mutexes at N distinct addresses, locked once and destroyed
 *   growth   N mutexes locked once and kept, then N + 2 fresh ones: with N =
 *            4095 the thread's table of records has to grow exactly when the
 *            first destroyed object past the shim's 4,096 is merged
 *   shared   N mutexes at distinct addresses, each locked once by another
 *            thread, which then ends (joined); main destroys them without
 *            locking them
 *   shared-live  the same, but main locks each once before it destroys it,
 *            and the other thread then makes, locks and destroys OWN
 *            mutexes of its own and is still alive (parked) when the
 *            profile is written
 *   rounds   N rounds: another thread locks 64 fresh mutexes once each,
 *            then main destroys them; that thread never looks at those
 *            addresses again, and goes on to new ones
 *   ended    4,200 fresh mutexes (past the shim's cap of 4,096 destroyed),
 *            then N more locked once by another thread, which ends (joined:
 *            few records, an ended thread's row) before main destroys them
 * with N = argv[2] (default 1,000,000). Prints what it did. */
#include "progs.h"

#define OWN 100
#define PAST_CAP 4200
static pthread_mutex_t *shared;
static long nshared;
static sem_t used, destroyed, never;

/* Locks each shared mutex once; arg "live": then waits for main to destroy
 * them, makes its own, and parks. */
static void *use_each(void *arg)
{
	for (long i = 0; i < nshared; i++) {
		MUST(pthread_mutex_lock(&shared[i]));
		MUST(pthread_mutex_unlock(&shared[i]));
	}
	if (!arg)
		return NULL;
	sem_post(&used);
	while (sem_wait(&destroyed) != 0)
		;
	static pthread_mutex_t own[OWN];
	for (int i = 0; i < OWN; i++) {
		MUST(pthread_mutex_init(&own[i], NULL));
		MUST(pthread_mutex_lock(&own[i]));
		MUST(pthread_mutex_unlock(&own[i]));
		MUST(pthread_mutex_destroy(&own[i]));
	}
	sem_post(&used);
	while (sem_wait(&never) != 0)   /* parked until the process ends */
		;
	return NULL;
}

#define ROUND 64
static sem_t round_used, round_destroyed;

/* rounds: ROUND fresh mutexes of shared locked once each per round. */
static void *use_rounds(void *arg)
{
	for (long r = 0; r < nshared / ROUND; r++) {
		for (long i = r * ROUND; i < (r + 1) * ROUND; i++) {
			MUST(pthread_mutex_lock(&shared[i]));
			MUST(pthread_mutex_unlock(&shared[i]));
		}
		sem_post(&round_used);
		while (sem_wait(&round_destroyed) != 0)
			;
	}
	return arg;
}

/* n mutexes at n distinct addresses, each made, locked once and destroyed. */
static int churn_fresh(long n)
{
	pthread_mutex_t *m = calloc((size_t)n, sizeof(*m));
	if (!m)
		return 99;
	for (long i = 0; i < n; i++) {
		MUST(pthread_mutex_init(&m[i], NULL));
		MUST(pthread_mutex_lock(&m[i]));
		MUST(pthread_mutex_unlock(&m[i]));
		MUST(pthread_mutex_destroy(&m[i]));
	}
	free(m);
	return 0;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "mutex";
	long n = argc > 2 ? atol(argv[2]) : 1000000;
	if (!strcmp(what, "barrier")) {
		pthread_barrier_t b;
		for (long i = 0; i < n; i++) {
			MUST(pthread_barrier_init(&b, NULL, 1));
			int rc = pthread_barrier_wait(&b);
			if (rc != PTHREAD_BARRIER_SERIAL_THREAD)
				MUST(rc);
			MUST(pthread_barrier_destroy(&b));
		}
	} else if (!strcmp(what, "mutex")) {
		pthread_mutex_t m;
		for (long i = 0; i < n; i++) {
			MUST(pthread_mutex_init(&m, NULL));
			MUST(pthread_mutex_lock(&m));
			MUST(pthread_mutex_unlock(&m));
			MUST(pthread_mutex_destroy(&m));
		}
	} else if (!strcmp(what, "heap")) {
		for (long i = 0; i < n; i++) {
			pthread_mutex_t *m = malloc(sizeof(*m) + (size_t)(i % 7) * 64);
			MUST(pthread_mutex_init(m, NULL));
			MUST(pthread_mutex_lock(m));
			MUST(pthread_mutex_unlock(m));
			MUST(pthread_mutex_destroy(m));
			free(m);
		}
	} else if (!strcmp(what, "fresh")) {
		if (churn_fresh(n))
			return 99;
	} else if (!strcmp(what, "growth")) {
		pthread_mutex_t *kept = calloc((size_t)n, sizeof(*kept)), *m = calloc((size_t)n + 2, sizeof(*m));
		if (!kept || !m)
			return 99;
		for (long i = 0; i < n; i++) {
			MUST(pthread_mutex_lock(&kept[i]));
			MUST(pthread_mutex_unlock(&kept[i]));
		}
		for (long i = 0; i < n + 2; i++) {
			MUST(pthread_mutex_init(&m[i], NULL));
			MUST(pthread_mutex_lock(&m[i]));
			MUST(pthread_mutex_unlock(&m[i]));
			MUST(pthread_mutex_destroy(&m[i]));
		}
		free(kept);
		free(m);
	} else if (!strcmp(what, "rounds")) {
		nshared = n * ROUND;
		if (!(shared = calloc((size_t)nshared, sizeof(*shared))))
			return 99;
		MUST(sem_init(&round_used, 0, 0));
		MUST(sem_init(&round_destroyed, 0, 0));
		pthread_t t;
		MUST(pthread_create(&t, NULL, use_rounds, NULL));
		for (long r = 0; r < n; r++) {
			while (sem_wait(&round_used) != 0)
				;
			for (long i = r * ROUND; i < (r + 1) * ROUND; i++)
				MUST(pthread_mutex_destroy(&shared[i]));
			sem_post(&round_destroyed);
		}
		MUST(pthread_join(t, NULL));
	} else if (!strcmp(what, "shared") || !strcmp(what, "shared-live") || !strcmp(what, "ended")) {
		int live = !strcmp(what, "shared-live");
		if (!strcmp(what, "ended") && churn_fresh(PAST_CAP))
			return 99;
		if (!(shared = calloc((size_t)n, sizeof(*shared))))
			return 99;
		nshared = n;
		MUST(sem_init(&used, 0, 0));
		MUST(sem_init(&destroyed, 0, 0));
		MUST(sem_init(&never, 0, 0));
		pthread_t t;
		MUST(pthread_create(&t, NULL, use_each, live ? "live" : NULL));
		if (live)
			while (sem_wait(&used) != 0)
				;
		else
			MUST(pthread_join(t, NULL));
		for (long i = 0; i < n; i++) {
			if (live) {
				MUST(pthread_mutex_lock(&shared[i]));
				MUST(pthread_mutex_unlock(&shared[i]));
			}
			MUST(pthread_mutex_destroy(&shared[i]));
		}
		if (live) {
			sem_post(&destroyed);
			while (sem_wait(&used) != 0)
				;
		}
	} else {
		return 2;
	}
	printf("%s: %ld\n", what, n);
	return 0;
}
