/* Signal handlers that lock while other threads churn objects. WORKERS
 * threads each do ROUNDS rounds of: init, lock, unlock and destroy a mutex
 * on the stack and one from an array of distinct addresses, first with
 * SIGALRM deliverable, then again while holding `shared` (SIGALRM blocked
 * meanwhile, so that no handler on this thread waits for itself). A 20 kHz
 * timer's handler, on whichever thread it lands, locks `shared`. The shim
 * does its bookkeeping of those inits, first uses and destroys in its own
 * critical sections: a handler that ran inside one and blocked on `shared`,
 * held by a thread that waits for that very section, would hang a program
 * that never hangs natively.
 *
 * argv[1]: "early" installs the handler before the workers start; "late"
 * once they have done half their rounds (read from their progress counter,
 * not from a clock), while their critical sections are in flight. Fixed
 * work; prints what was done, never how many signals arrived. */
#include <signal.h>
#include <stdatomic.h>
#include <sys/time.h>

#include "progs.h"

#define WORKERS 3
#define ROUNDS  6000
#define ARRAY   64

static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;
static atomic_long progress;
static long shared_rounds;

static void on_alarm(int sig)
{
	int saved = errno;
	pthread_mutex_lock(&shared);
	pthread_mutex_unlock(&shared);
	errno = saved;
}

static void churn(pthread_mutex_t *m)
{
	MUST(pthread_mutex_init(m, NULL));
	MUST(pthread_mutex_lock(m));
	MUST(pthread_mutex_unlock(m));
	MUST(pthread_mutex_destroy(m));
}

static void *work(void *arg)
{
	pthread_mutex_t *array = malloc(ARRAY * sizeof(*array));
	if (!array)
		exit(99);
	sigset_t alarm, old;
	sigemptyset(&alarm);
	sigaddset(&alarm, SIGALRM);
	for (long i = 0; i < ROUNDS; i++) {
		pthread_mutex_t on_stack;
		churn(&on_stack);
		churn(&array[i % ARRAY]);
		MUST(pthread_sigmask(SIG_BLOCK, &alarm, &old));
		MUST(pthread_mutex_lock(&shared));
		churn(&on_stack);
		churn(&array[(i + ARRAY / 2) % ARRAY]);
		shared_rounds++;
		MUST(pthread_mutex_unlock(&shared));
		MUST(pthread_sigmask(SIG_SETMASK, &old, NULL));
		atomic_fetch_add(&progress, 1);
	}
	free(array);
	return NULL;
}

int main(int argc, char **argv)
{
	int late = argc > 1 && !strcmp(argv[1], "late");
	if (argc < 2 || (!late && strcmp(argv[1], "early")))
		return 2;
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	struct itimerval it = { .it_interval = { 0, 50 }, .it_value = { 0, 50 } };   /* 20 kHz */
	if (!late) {
		MUST(sigaction(SIGALRM, &sa, NULL));
		MUST(setitimer(ITIMER_REAL, &it, NULL));
	}
	pthread_t th[WORKERS];
	for (int i = 0; i < WORKERS; i++)
		MUST(pthread_create(&th[i], NULL, work, NULL));
	if (late) {
		while (atomic_load(&progress) < WORKERS * ROUNDS / 2)
			nap();
		MUST(sigaction(SIGALRM, &sa, NULL));
		MUST(setitimer(ITIMER_REAL, &it, NULL));
	}
	for (int i = 0; i < WORKERS; i++)
		MUST(pthread_join(th[i], NULL));
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	MUST(setitimer(ITIMER_REAL, &off, NULL));
	printf("handler installed %s; rounds %ld, under the shared lock %ld\n", argv[1],
	       atomic_load(&progress), shared_rounds);
	return 0;
}
