/* A signal handler on a small alternate stack (argv[1] bytes) ends the
 * process with _exit(6), in the main thread or (argv[2] "worker") in a
 * worker that is locking a mutex. _exit needs no stack of its own, so this
 * always exits 6 natively; the shim writes the profile on the way out, and
 * once wrote it on the handler's stack and overflowed it (SIGSEGV). */
#include <signal.h>

#include "progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile long rounds;
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
	alternate_stack();
	for (;;) {
		MUST(pthread_mutex_lock(&m));
		rounds++;
		MUST(pthread_mutex_unlock(&m));
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
		MUST(pthread_create(&t[i], NULL, worker, NULL));
	while (rounds < 1000)
		usleep(1000);
	if (argc > 2 && strcmp(argv[2], "worker") == 0)
		MUST(pthread_kill(t[1], SIGUSR1));
	else
		raise(SIGUSR1);
	for (;;)
		pause();   /* the handler ends the process */
}
