/* The main thread blocks in pthread_mutex_lock on a mutex another thread
 * holds, and a SIGUSR1 handler takes it out with siglongjmp (the lock is
 * never acquired); then the holder lets the mutex go and both end
 * normally. The holder signals only once the main thread sleeps in a
 * futex wait on the mutex's word (/proc), so the jump leaves a wait,
 * whatever the machine's speed. */
#include "progs.h"
#include <setjmp.h>

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static sem_t taken;
static sigjmp_buf out;
static volatile sig_atomic_t armed, jumped;
static pid_t main_tid;

static void on_usr1(int sig)
{
	(void)sig;
	if (armed) {
		armed = 0;
		siglongjmp(out, 1);
	}
}

static void *holder(void *arg)
{
	pthread_t main_thread = *(pthread_t *)arg;
	MUST(pthread_mutex_lock(&held));
	MUST(sem_post(&taken));
	while (!jumped) {
		if (armed && sleeps_in_futex_on(main_tid, &held.__data.__lock))
			MUST(pthread_kill(main_thread, SIGUSR1));
		nap();
	}
	MUST(pthread_mutex_unlock(&held));
	return NULL;
}

int main(void)
{
	main_tid = (pid_t)syscall(SYS_gettid);
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigemptyset(&sa.sa_mask);
	MUST(sigaction(SIGUSR1, &sa, NULL));
	MUST(sem_init(&taken, 0, 0));
	pthread_t self = pthread_self(), t;
	MUST(pthread_create(&t, NULL, holder, &self));
	while (sem_wait(&taken) != 0)
		;
	if (sigsetjmp(out, 1) == 0) {
		armed = 1;
		pthread_mutex_lock(&held);   /* left by the jump, never acquired */
		printf("acquired: unexpected\n");
	}
	jumped = 1;
	MUST(pthread_join(t, NULL));
	printf("jumped out of the wait\n");
	return 0;
}
