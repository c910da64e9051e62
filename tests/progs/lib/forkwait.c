/* libforkwait.so: a fork handler registered by this library's constructor,
 * before the shim's, so its prepare runs after the shim's: inside the
 * shim's fork window (tests/progs/fork_handler_signals.c says what each
 * forkwait_mode is for). */
#include <pthread.h>
#include <signal.h>

enum { FORKWAIT_LOCK, FORKWAIT_NESTED, FORKWAIT_JUMP };
int forkwait_mode;
pthread_mutex_t forkwait_lock = PTHREAD_MUTEX_INITIALIZER;
volatile sig_atomic_t forkwait_usr1;   /* the program's SIGUSR1 handler counts here */
int forkwait_raise_ran;                /* what prepare saw: the handler's runs inside raise */
int forkwait_blocked, forkwait_pending;   /* SIGUSR1 in prepare's mask, pending, after the raise */

static void prepare(void)
{
	int mode = forkwait_mode, before = forkwait_usr1;
	forkwait_mode = FORKWAIT_LOCK;   /* a fork inside this one (nested) only takes the lock */
	if (mode == FORKWAIT_NESTED)
		raise(SIGUSR2);   /* the program's handler forks */
	raise(SIGUSR1);       /* FORKWAIT_JUMP: the program's handler jumps out of the fork */
	forkwait_raise_ran = forkwait_usr1 - before;
	sigset_t now, pending, usr1;
	pthread_sigmask(SIG_BLOCK, NULL, &now);
	sigpending(&pending);
	forkwait_blocked = sigismember(&now, SIGUSR1);
	forkwait_pending = sigismember(&pending, SIGUSR1);
	if (mode == FORKWAIT_NESTED) {   /* from now on the program's SIGUSR1 is blocked */
		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	}
	pthread_mutex_lock(&forkwait_lock);
	pthread_mutex_unlock(&forkwait_lock);
}

__attribute__((constructor)) static void forkwait_init(void)
{
	pthread_atfork(prepare, NULL, NULL);
}
