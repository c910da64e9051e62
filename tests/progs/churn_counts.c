/* Objects churned on several threads at once, for their counts:
 *   generations  each of THREADS threads inits, locks twice, unlocks and
 *                destroys a mutex on its own stack GENERATIONS times (one
 *                address per thread, re-initialised over and over)
 *   distinct     each of THREADS threads does the same, once, for each of
 *                DISTINCT mutexes of its own array (distinct addresses, more
 *                in all than the shim keeps destroyed objects apart)
 *   past_cap     each thread does EARLY cycles of a mutex on its stack,
 *                then (once all have) PAST_CAP of distinct mutexes, which
 *                pass the shim's cap of destroyed objects kept apart, then
 *                (once all have) LATE cycles of that mutex and of another
 *                on its stack, new then, in turn
 *   crowded      each thread does CROWDED_LIVES cycles of mutexes picked at
 *                random from CROWDED_POOL of its own: more addresses in all
 *                than the shim remembers generations for past the cap
 * argv[2] "handler": a signal handler is installed first (never sent), so
 * that the shim's critical sections block signals. Prints what it did, and
 * the line of the init call (the objects' init stack). */
#include <signal.h>

#include "progs.h"

#define THREADS     4
#define GENERATIONS 500
#define DISTINCT    1500
#define EARLY       10
#define PAST_CAP    1100   /* THREADS * (EARLY + PAST_CAP) > 4,096 */
#define LATE        200
#define CROWDED_POOL  1000
#define CROWDED_LIVES 100000

static enum { GENERATIONS_MODE, DISTINCT_MODE, PAST_CAP_MODE, CROWDED_MODE, MODES } mode;
static const char *const mode_names[MODES] = { "generations", "distinct", "past_cap", "crowded" };
static pthread_barrier_t phase;

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

static void distinct_cycles(int n)
{
	pthread_mutex_t *m = malloc((size_t)n * sizeof(*m));
	if (!m)
		exit(99);
	for (int i = 0; i < n; i++)
		cycle(&m[i]);
	free(m);
}

static void crowded_cycles(void)
{
	pthread_mutex_t *m = malloc(CROWDED_POOL * sizeof(*m));
	if (!m)
		exit(99);
	uint64_t x = (uintptr_t)m | 1;   /* xorshift64, a sequence of the thread's own */
	for (int i = 0; i < CROWDED_LIVES; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		cycle(&m[x % CROWDED_POOL]);
	}
	free(m);
}

static void *work(void *arg)
{
	pthread_mutex_t m, late;
	if (mode == CROWDED_MODE) {
		crowded_cycles();
	} else if (mode == DISTINCT_MODE) {
		distinct_cycles(DISTINCT);
	} else if (mode == GENERATIONS_MODE) {
		for (int i = 0; i < GENERATIONS; i++)
			cycle(&m);
	} else {
		for (int i = 0; i < EARLY; i++)
			cycle(&m);
		pthread_barrier_wait(&phase);
		distinct_cycles(PAST_CAP);
		pthread_barrier_wait(&phase);
		for (int i = 0; i < LATE; i++) {
			cycle(&m);
			cycle(&late);
		}
	}
	return NULL;
}

static void on_signal(int sig)
{
}

int main(int argc, char **argv)
{
	for (mode = 0; argc > 1 && mode < MODES && strcmp(argv[1], mode_names[mode]); mode++)
		continue;
	if (argc < 2 || mode == MODES)
		return 2;
	MUST(pthread_barrier_init(&phase, NULL, THREADS));
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
	static const int cycles[MODES] = { GENERATIONS, DISTINCT, EARLY + PAST_CAP + 2 * LATE, CROWDED_LIVES };
	printf("%s: %d threads, %d cycles each\n", argv[1], THREADS, cycles[mode]);
	printf("init line %d\n", init_line);
	return 0;
}
