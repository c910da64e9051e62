/* Signals that land while other threads churn objects (the shim's
 * critical sections, where its trampoline defers them to the section's
 * end: preload/signals.c) still reach their handlers once each, with their
 * siginfo. WORKERS threads init, lock, unlock and destroy mutexes until the
 * sender is done; the main thread sends SIGNALS signals to the process, one
 * at a time, and the handler checks what it got, then writes a byte to a
 * pipe that the main thread waits on (blocked: a waiter that spun took the
 * CPU from the worker the signal waited for, and on a busy machine each
 * signal took milliseconds). argv[1]:
 *   queue  a real-time signal with a value (sigqueue), SA_SIGINFO: the
 *          handler adds up the values and checks si_code and si_pid
 *   sysv   SIGUSR1 to a handler installed with sysv_signal (SA_RESETHAND,
 *          SA_NODEFER) that installs itself again: a signal deferred after
 *          the kernel reset the disposition must still find the handler
 * Prints what arrived, the same natively and under the shim whatever the
 * timing; exits 3 if a signal was lost (20 s without its handler). */
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "progs.h"

#define WORKERS 2
#define SIGNALS 2000

static atomic_long handled, value_sum, wrong;
static atomic_int done;
static int handled_pipe[2];

/* The handler's last step: wakes the main thread (errno kept). */
static void tell_handled(void)
{
	int saved = errno;
	atomic_fetch_add(&handled, 1);
	if (write(handled_pipe[1], "", 1) != 1)
		atomic_fetch_add(&wrong, 1);
	errno = saved;
}

static void on_queued(int sig, siginfo_t *si, void *context)
{
	(void)context;
	if (sig != SIGRTMIN + 2 || si->si_code != SI_QUEUE || si->si_pid != getpid())
		atomic_fetch_add(&wrong, 1);
	atomic_fetch_add(&value_sum, si->si_value.sival_int);
	tell_handled();
}

static void on_usr1(int sig)
{
	int saved = errno;
	if (sysv_signal(sig, on_usr1) == SIG_ERR)   /* SA_RESETHAND took it away */
		atomic_fetch_add(&wrong, 1);
	errno = saved;
	tell_handled();
}

static void *work(void *arg)
{
	pthread_mutex_t array[16];
	for (long i = 0; !atomic_load(&done); i++) {
		pthread_mutex_t *m = &array[i % 16];
		MUST(pthread_mutex_init(m, NULL));
		MUST(pthread_mutex_lock(m));
		MUST(pthread_mutex_unlock(m));
		MUST(pthread_mutex_destroy(m));
	}
	return arg;
}

/* Until the handler has run `want` times; exits 3 after 20 s without a
 * handler's byte. */
static void wait_handled(long want)
{
	while (atomic_load(&handled) < want) {
		struct pollfd p = { .fd = handled_pipe[0], .events = POLLIN };
		char byte;
		int rc = poll(&p, 1, 20000);
		if (rc == 0) {
			printf("signal %ld never handled\n", want);
			exit(3);
		}
		if (rc == 1 && read(handled_pipe[0], &byte, 1) != 1)
			exit(6);
	}
}

int main(int argc, char **argv)
{
	bool queue = argc > 1 && !strcmp(argv[1], "queue");
	if (argc < 2 || (!queue && strcmp(argv[1], "sysv")))
		return 2;
	int sig = queue ? SIGRTMIN + 2 : SIGUSR1;
	if (pipe(handled_pipe) != 0)
		return 4;
	if (queue) {
		struct sigaction sa = { .sa_sigaction = on_queued, .sa_flags = SA_SIGINFO | SA_RESTART };
		sigemptyset(&sa.sa_mask);
		MUST(sigaction(sig, &sa, NULL));
	} else if (sysv_signal(sig, on_usr1) == SIG_ERR) {
		return 4;
	}
	/* The workers take the signals: the main thread only sends them. */
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	pthread_t th[WORKERS];
	for (int i = 0; i < WORKERS; i++)
		MUST(pthread_create(&th[i], NULL, work, NULL));
	MUST(pthread_sigmask(SIG_BLOCK, &one, NULL));
	for (int i = 1; i <= SIGNALS; i++) {
		if (queue) {
			union sigval v = { .sival_int = i };
			if (sigqueue(getpid(), sig, v) != 0)
				return 5;
		} else if (kill(getpid(), sig) != 0) {
			return 5;
		}
		wait_handled(i);
	}
	atomic_store(&done, 1);
	for (int i = 0; i < WORKERS; i++)
		MUST(pthread_join(th[i], NULL));
	printf("%s: %ld of %d handled, values %ld, %ld wrong\n", argv[1], atomic_load(&handled), SIGNALS,
	       atomic_load(&value_sum), atomic_load(&wrong));
	return 0;
}
