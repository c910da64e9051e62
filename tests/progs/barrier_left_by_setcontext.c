/* barrier_left_by_setcontext.c — a thread leaves a barrier wait nobody
 * else arrives at by a SIGALRM handler's setcontext (as a coroutine
 * library switches), uses its stack, and ends with pthread_exit. glibc's
 * barrier wait registers no cleanup; when the shim's did (its pin's,
 * 2026-12-07), the thread's cleanup list kept a buffer in the dead frame
 * and pthread_exit called into it: SIGSEGV (helper-141). Prints that the
 * thread was joined. */
#include <sys/time.h>
#include <ucontext.h>

#include "progs.h"

static ucontext_t back;
static volatile sig_atomic_t in_wait;

static void on_alrm(int sig)
{
	(void)sig;
	if (in_wait) {
		in_wait = 0;
		setcontext(&back);
	}
}

/* Stack written over where the wait's frames were. */
static void clobber(int n)
{
	volatile char big[8192];
	memset((char *)big, 0x5a, sizeof(big));
	if (n)
		clobber(n - 1);
}

static void *leaver(void *arg)
{
	mask_signal(SIG_UNBLOCK, SIGALRM);
	static pthread_barrier_t lonely;   /* a count of 2, one thread */
	MUST(pthread_barrier_init(&lonely, NULL, 2));
	static const struct itimerval once = { { 0, 0 }, { 0, 3000 } };
	volatile int left = 0;
	getcontext(&back);
	if (!left) {
		left = 1;
		in_wait = 1;
		if (setitimer(ITIMER_REAL, &once, NULL) == 0)
			pthread_barrier_wait(&lonely);
	}
	clobber(4);
	pthread_exit(arg);
}

int main(void)
{
	handle_signal(SIGALRM, on_alrm);
	mask_signal(SIG_BLOCK, SIGALRM);   /* the leaver's alone */
	pthread_t t;
	MUST(pthread_create(&t, NULL, leaver, NULL));
	MUST(pthread_join(t, NULL));
	printf("joined\n");
	return 0;
}
