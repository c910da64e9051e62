/* hold_and_wait join|cond: a thread keeps a lock across a wait that only a
 * thread needing that lock can end; both hang for good, with no timing.
 *
 * join: main takes registry, starts a worker that takes registry (it blocks:
 *       main holds it) and joins it.
 * cond: t1 takes config, meets t2 at a barrier (t1 holds config from then
 *       on), then waits on ready_cv under m; t2, the only thread that would
 *       signal ready_cv, first takes config, and blocks. */
#include "progs.h"

static pthread_mutex_t registry = PTHREAD_MUTEX_INITIALIZER, config = PTHREAD_MUTEX_INITIALIZER,
		       m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cv = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t config_taken;
static int ready;

static void *registers(void *arg)
{
	MUST(pthread_mutex_lock(&registry));
	MUST(pthread_mutex_unlock(&registry));
	return NULL;
}

static void *waits_holding_config(void *arg)
{
	MUST(pthread_mutex_lock(&config));
	pthread_barrier_wait(&config_taken);
	MUST(pthread_mutex_lock(&m));
	while (!ready)
		MUST(pthread_cond_wait(&ready_cv, &m));
	MUST(pthread_mutex_unlock(&m));
	MUST(pthread_mutex_unlock(&config));
	return NULL;
}

static void *signals_after_config(void *arg)
{
	pthread_barrier_wait(&config_taken);
	MUST(pthread_mutex_lock(&config));
	MUST(pthread_mutex_lock(&m));
	ready = 1;
	MUST(pthread_cond_signal(&ready_cv));
	MUST(pthread_mutex_unlock(&m));
	MUST(pthread_mutex_unlock(&config));
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	if (argc > 1 && !strcmp(argv[1], "join")) {
		MUST(pthread_mutex_lock(&registry));
		MUST(pthread_create(&a, NULL, registers, NULL));
		MUST(pthread_join(a, NULL));
		MUST(pthread_mutex_unlock(&registry));
	} else {
		MUST(pthread_barrier_init(&config_taken, NULL, 2));
		MUST(pthread_create(&a, NULL, waits_holding_config, NULL));
		MUST(pthread_create(&b, NULL, signals_after_config, NULL));
		MUST(pthread_join(a, NULL));
		MUST(pthread_join(b, NULL));
	}
	printf("never\n");
	return 0;
}
