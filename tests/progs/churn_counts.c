/* Objects churned on several threads at once, for their counts:
 *   generations  each of THREADS threads inits, locks twice, unlocks and
 *                destroys a mutex on its own stack GENERATIONS times (one
 *                address per thread, re-initialised over and over)
 *   distinct     each of THREADS threads does the same, once, for each of
 *                DISTINCT mutexes of its own array (distinct addresses, more
 *                in all than the shim keeps destroyed objects apart)
 * argv[2] "handler": a signal handler is installed first (never sent), so
 * that the shim's critical sections block signals. Prints what it did, and
 * the line of the init call (the objects' init stack). */
#include <signal.h>

#include "progs.h"

#define THREADS     4
#define GENERATIONS 500
#define DISTINCT    1500

static int distinct;

static int init_line;

static void cycle(pthread_mutex_t *m)
{
	init_line = __LINE__; MUST(pthread_mutex_init(m, NULL));   /* one line: the init stack's */
	for (int k = 0; k < 2; k++) {
		MUST(pthread_mutex_lock(m));
		MUST(pthread_mutex_unlock(m));
	}
	MUST(pthread_mutex_destroy(m));
}

static void *work(void *arg)
{
	if (distinct) {
		pthread_mutex_t *m = malloc(DISTINCT * sizeof(*m));
		if (!m)
			exit(99);
		for (int i = 0; i < DISTINCT; i++)
			cycle(&m[i]);
		free(m);
	} else {
		pthread_mutex_t m;
		for (int i = 0; i < GENERATIONS; i++)
			cycle(&m);
	}
	return NULL;
}

static void on_signal(int sig)
{
}

int main(int argc, char **argv)
{
	if (argc < 2 || (strcmp(argv[1], "generations") && strcmp(argv[1], "distinct")))
		return 2;
	distinct = !strcmp(argv[1], "distinct");
	if (argc > 2 && !strcmp(argv[2], "handler")) {
		struct sigaction sa = { .sa_handler = on_signal };
		sigemptyset(&sa.sa_mask);
		MUST(sigaction(SIGURG, &sa, NULL));
	}
	pthread_t th[THREADS];
	for (int i = 0; i < THREADS; i++)
		MUST(pthread_create(&th[i], NULL, work, NULL));
	for (int i = 0; i < THREADS; i++)
		MUST(pthread_join(th[i], NULL));
	printf("%s: %d threads, %d cycles each\n", argv[1], THREADS, distinct ? DISTINCT : GENERATIONS);
	printf("init line %d\n", init_line);
	return 0;
}
