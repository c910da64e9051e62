/* jump_before_shim: signal_longjmp's loop of mutex inits and destroys, left
 * by the siglongjmp of a SIGALRM handler that a library installed before
 * the shim started (libjumpalarm.so: not behind the shim's trampoline, so
 * it may jump out of the shim's guard); then the program's own SIGUSR1
 * handler, behind the trampoline, must still run at a raise (helper-142:
 * after a jump out of the guard, the shim deferred every later signal of
 * the thread to a guard's end that never came). Prints whether it ran and
 * whether SIGUSR1 is blocked after. */
#include <setjmp.h>

#include "progs.h"

extern sigjmp_buf jumpalarm_back;
extern volatile sig_atomic_t jumpalarm_armed;

static volatile sig_atomic_t usr1;

static void on_usr1(int sig)
{
	(void)sig;
	usr1++;
}

int main(void)
{
	static pthread_mutex_t ms[64];
	handle_signal(SIGUSR1, on_usr1);
	struct itimerval it = { .it_interval = { 0, 100 }, .it_value = { 0, 100 } };
	MUST(setitimer(ITIMER_REAL, &it, NULL));
	for (volatile int i = 0; i < 200000; i++) {
		jumpalarm_armed = 0;   /* sigsetjmp rewrites the buffer */
		if (sigsetjmp(jumpalarm_back, 1))
			continue;
		jumpalarm_armed = 1;
		pthread_mutex_init(&ms[i % 64], NULL);
		pthread_mutex_destroy(&ms[i % 64]);
	}
	jumpalarm_armed = 0;
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	MUST(setitimer(ITIMER_REAL, &off, NULL));
	MUST(raise(SIGUSR1));
	sigset_t now;
	MUST(pthread_sigmask(SIG_BLOCK, NULL, &now));
	printf("raise(SIGUSR1): its handler ran %d time(s); SIGUSR1 blocked after: %d\n", (int)usr1,
	       sigismember(&now, SIGUSR1));
	return 0;
}
