/* held_in_handlers: one signal handler locks mutex M and returns holding
 * it; the next one unlocks it. The main loop holds one lock at a time
 * (lock b, unlock b, lock a, unlock a), so the only real lock-order edges
 * are between M and the lock a handler interrupted; none joins a and b.
 * A handler that releases M between a fast unlock's load of the held count
 * and its store of one less must not bring the lock that unlock released
 * back into the held set (it did, and gave a false b -> a: a lock-order
 * cycle a and b never had). The timer fires every 10 us of CPU time, so
 * the window is hit in most runs of 20 million rounds (1 s). */
#include "progs.h"

#include <signal.h>
#include <sys/time.h>

static pthread_mutex_t held_a = PTHREAD_MUTEX_INITIALIZER, held_b = PTHREAD_MUTEX_INITIALIZER,
		       held_m = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t handled;

static void handler(int sig)
{
	(void)sig;
	int saved_errno = errno;
	if (handled++ & 1)
		pthread_mutex_unlock(&held_m);
	else
		pthread_mutex_lock(&held_m);
	errno = saved_errno;
}

static void *nothing(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 20000000;
	pthread_t th;   /* glibc's multi-threaded path, where the shim takes mutexes itself */
	MUST(pthread_create(&th, NULL, nothing, NULL));
	MUST(pthread_join(th, NULL));
	struct sigaction sa = { .sa_handler = handler, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	MUST(sigaction(SIGPROF, &sa, NULL));
	struct itimerval every = { { 0, 10 }, { 0, 10 } }, off = { { 0, 0 }, { 0, 0 } };
	MUST(setitimer(ITIMER_PROF, &every, NULL));
	for (long i = 0; i < rounds; i++) {
		MUST(pthread_mutex_lock(&held_b));
		MUST(pthread_mutex_unlock(&held_b));
		MUST(pthread_mutex_lock(&held_a));
		MUST(pthread_mutex_unlock(&held_a));
	}
	MUST(setitimer(ITIMER_PROF, &off, NULL));
	if (handled & 1)
		MUST(pthread_mutex_unlock(&held_m));
	printf("done\n");
	return 0;
}
