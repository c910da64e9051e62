/* Ways out of pthread_cond_wait other than its return, and what the thread
 * does after (argv[1]):
 *   exit     a signal handler siglongjmps out of the wait (glibc's own
 *            cleanup re-acquires the mutex on the way); the thread then
 *            pushes a cleanup of its own and calls pthread_exit
 *   cancel   the same jump, then the thread is cancelled in pause()
 *   cleanup  the thread is cancelled in the wait, and its cleanup handler
 *            calls pthread_exit (glibc then runs the handler again: the
 *            program stops it after a few rounds with _exit(3))
 * A shim that registered its own cancellation jump buffer around the wait
 * left it registered after the jump (and during the program's handlers):
 * the later pthread_exit or cancellation jumped into a dead frame, SIGSEGV
 * (trust::leaving_a_condvar_wait_by_a_jump_or_a_cancellation). The signal
 * is sent once the worker is known to be about to wait; one sent a moment
 * before the wait jumps out just the same, so the outcome never depends on
 * timing, only how much of the bug a run exercises. The cancel waits for
 * the thread to have pushed its cleanup (a cancel 50 ms after the signal,
 * as before, came in its printf on a loaded machine: less was printed). */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t m;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static sigjmp_buf env;
static volatile sig_atomic_t waiting, pausing, rounds;
static const char *mode;

static void on_usr1(int sig)
{
	(void)sig;
	siglongjmp(env, 1);
}

static void said(void *arg)
{
	printf("program cleanup: %s\n", (const char *)arg);
	fflush(stdout);
}

static void exit_again(void *arg)
{
	(void)arg;
	if (rounds++ > 3) {
		printf("the cleanup handler ran %d times\n", (int)rounds);
		fflush(stdout);
		_exit(3);
	}
	pthread_mutex_unlock(&m);
	pthread_exit((void *)5);
}

static void *jumper(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	if (sigsetjmp(env, 1) == 0) {
		waiting = 1;
		for (;;)
			pthread_cond_wait(&c, &m);
	}
	printf("jumped out; unlock: %s\n", strerror(pthread_mutex_unlock(&m)));
	fflush(stdout);
	pthread_cleanup_push(said, "outer");
	if (!strcmp(mode, "cancel")) {
		pausing = 1;
		for (;;)
			pause();
	}
	pthread_exit((void *)42);
	pthread_cleanup_pop(0);
	return NULL;
}

static void *cancelled(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	pthread_cleanup_push(exit_again, NULL);
	waiting = 1;
	for (;;)
		pthread_cond_wait(&c, &m);
	pthread_cleanup_pop(0);
	return NULL;
}

int main(int argc, char **argv)
{
	mode = argc > 1 ? argv[1] : "exit";
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&m, &a);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	pthread_t th;
	pthread_create(&th, NULL, strcmp(mode, "cleanup") ? jumper : cancelled, NULL);
	while (!waiting)
		usleep(1000);
	usleep(50000);
	if (strcmp(mode, "cleanup")) {
		pthread_kill(th, SIGUSR1);
		if (!strcmp(mode, "cancel")) {
			while (!pausing)   /* its cleanup pushed: a cancel before, in its printf, printed less */
				usleep(1000);
			pthread_cancel(th);
		}
	} else {
		pthread_cancel(th);
	}
	void *ret;
	pthread_join(th, &ret);
	printf("joined: %s\n", ret == PTHREAD_CANCELED ? "cancelled" : ret == (void *)42 ? "42" : ret == (void *)5 ? "5" : "?");
	return 0;
}
