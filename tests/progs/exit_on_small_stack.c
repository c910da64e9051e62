/* A signal handler on a small alternate stack (argv[1] bytes) ends the
 * process with _exit(6), in the main thread or (argv[2] "worker") in a
 * worker that is locking a mutex. _exit needs no stack of its own, so this
 * always exits 6 natively; the shim writes the profile on the way out, and
 * once wrote it on the handler's stack and overflowed it (SIGSEGV).
 * Each worker locks a mutex of its own: a signal that lands while the
 * shim's own code runs (a contended lock's slow path) gets no profile, by
 * design (lifecycle.c, inside_shim), and two workers on one mutex made
 * that happen now and then on a loaded machine. The signal waits for each
 * worker's 1,000 rounds, not both workers' together: the one signalled
 * was sometimes still in its first lock's slow path (a record made there),
 * 1 run in 300 here. */
#include <signal.h>

#include "progs.h"

static pthread_mutex_t m[2] = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER };
static long rounds[2];
static size_t alt_size;

static void on_usr1(int sig)
{
	(void)sig;
	_exit(6);
}

static void alternate_stack(void)
{
	stack_t ss = { .ss_sp = malloc(alt_size), .ss_size = alt_size };
	if (!ss.ss_sp || sigaltstack(&ss, NULL) != 0)
		abort();
}

static void *worker(void *arg)
{
	pthread_mutex_t *mine = arg;
	long *done = &rounds[mine - m];
	alternate_stack();
	for (;;) {
		MUST(pthread_mutex_lock(mine));
		__atomic_fetch_add(done, 1, __ATOMIC_RELAXED);
		MUST(pthread_mutex_unlock(mine));
	}
	return arg;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	alt_size = strtoul(argv[1], NULL, 0);
	alternate_stack();
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_ONSTACK };
	sigemptyset(&sa.sa_mask);
	MUST(sigaction(SIGUSR1, &sa, NULL));
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		MUST(pthread_create(&t[i], NULL, worker, &m[i]));
	while (__atomic_load_n(&rounds[0], __ATOMIC_RELAXED) < 1000 ||
	       __atomic_load_n(&rounds[1], __ATOMIC_RELAXED) < 1000)
		usleep(1000);
	if (argc > 2 && strcmp(argv[2], "worker") == 0)
		MUST(pthread_kill(t[1], SIGUSR1));
	else
		raise(SIGUSR1);
	for (;;)
		pause();   /* the handler ends the process */
}
