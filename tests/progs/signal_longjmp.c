/* A 10 kHz timer signal whose handler siglongjmps back into the loop, which
 * only initialises and destroys mutexes: the jump may leave from inside the
 * shim's init or destroy bookkeeping (glibc's own init and destroy take no
 * lock, so natively this always finishes). The handler jumps only while
 * the jump buffer is whole: a signal inside sigsetjmp itself (likelier on
 * a busy machine) would jump through a half-saved one and crash, natively
 * too. Then it locks a mutex of its own 1,000 times, which the shim must
 * count: a jump out of the shim leaves the thread tracked. Prints
 * "finished". */
#include <setjmp.h>
#include <signal.h>
#include <sys/time.h>

#include "progs.h"

#define ITERATIONS 500000

static sigjmp_buf back;
static volatile sig_atomic_t armed;   /* back is whole */

static void on_alarm(int sig)
{
	if (armed) {
		armed = 0;
		siglongjmp(back, 1);
	}
}

int main(void)
{
	static pthread_mutex_t ms[64];
	struct sigaction sa = { .sa_handler = on_alarm };
	sigemptyset(&sa.sa_mask);
	MUST(sigaction(SIGALRM, &sa, NULL));
	struct itimerval it = { .it_interval = { 0, 100 }, .it_value = { 0, 100 } };
	MUST(setitimer(ITIMER_REAL, &it, NULL));
	volatile long done = 0;
	for (volatile int i = 0; i < ITERATIONS; i++) {
		armed = 0;   /* sigsetjmp rewrites back */
		if (sigsetjmp(back, 1))
			continue;
		armed = 1;
		pthread_mutex_init(&ms[i % 64], NULL);
		pthread_mutex_destroy(&ms[i % 64]);
		done++;
	}
	armed = 0;
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	MUST(setitimer(ITIMER_REAL, &off, NULL));
	static pthread_mutex_t after = PTHREAD_MUTEX_INITIALIZER;
	for (int i = 0; i < 1000; i++) {
		MUST(pthread_mutex_lock(&after));
		MUST(pthread_mutex_unlock(&after));
	}
	printf("finished\n");
	return 0;
}
