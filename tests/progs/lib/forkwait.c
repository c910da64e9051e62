/* libforkwait.so: a fork handler registered by this library's constructor,
 * before the shim's, so its prepare runs after the shim's: inside the
 * shim's fork window (tests/progs/fork_handler_signals.c). It raises
 * SIGUSR1 and notes how many times the program's handler ran before raise
 * returned, then takes forkwait_lock, which another thread may hold. */
#include <pthread.h>
#include <signal.h>

pthread_mutex_t forkwait_lock = PTHREAD_MUTEX_INITIALIZER;
volatile sig_atomic_t forkwait_usr1;   /* the program's SIGUSR1 handler counts here */
int forkwait_raise_ran;                /* what prepare saw */

static void prepare(void)
{
	int before = forkwait_usr1;
	raise(SIGUSR1);
	forkwait_raise_ran = forkwait_usr1 - before;
	pthread_mutex_lock(&forkwait_lock);
	pthread_mutex_unlock(&forkwait_lock);
}

__attribute__((constructor)) static void forkwait_init(void)
{
	pthread_atfork(prepare, NULL, NULL);
}
