/* Two threads post fresh semaphores (each post the first use of a new
 * object, the shim's guarded slow path) while the main thread sends them
 * 10,000 signals whose handler siglongjmps out of the post (sem_post is
 * async-signal-safe, so the jump is allowed). Then each thread reports
 * the cancellation state and type it was left with, re-enables
 * cancellation, and waits on a semaphore nobody posts until it is
 * cancelled. The shim's guard once disabled cancellation and never undid
 * it when a jump left the guard: the state came out "disable".
 * Prints each thread's state and type, then how many threads ended
 * cancelled. */
#include <setjmp.h>
#include <semaphore.h>
#include <signal.h>

#include "progs.h"

#define SIGNALS 10000   /* a guard that disabled cancellation: 1,000 caught it 3 runs in 3 */
#define SEMS 4096

static __thread sigjmp_buf back;
static __thread volatile sig_atomic_t armed;   /* back is whole */
static sem_t ready, never;
static volatile int stop;
static int state_left[2], type_left[2];

static void on_signal(int sig)
{
	(void)sig;
	if (armed) {
		armed = 0;
		siglongjmp(back, 1);
	}
}

static void *poster(void *arg)
{
	int me = (int)(intptr_t)arg;
	sem_t *sems = calloc(SEMS, sizeof(*sems));
	if (!sems)
		abort();
	for (volatile long i = 0; !stop; i++) {
		sem_t *s = &sems[i % SEMS];
		MUST(sem_init(s, 0, 0));
		armed = 0;   /* sigsetjmp rewrites back */
		if (sigsetjmp(back, 1) == 0) {
			armed = 1;
			sem_post(s);
		}
		armed = 0;
		MUST(sem_destroy(s));
	}
	MUST(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &state_left[me]));
	MUST(pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &type_left[me]));
	sem_post(&ready);
	sem_wait(&never);   /* a cancellation point: only pthread_cancel ends it */
	return NULL;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	MUST(sigaction(SIGUSR1, &sa, NULL));
	MUST(sem_init(&ready, 0, 0));
	MUST(sem_init(&never, 0, 0));
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		MUST(pthread_create(&t[i], NULL, poster, (void *)(intptr_t)i));
	for (int i = 0; i < SIGNALS; i++) {
		MUST(pthread_kill(t[i & 1], SIGUSR1));
		if (i % 64 == 0)
			usleep(100);   /* pacing only: lets the signals spread over the loop */
	}
	stop = 1;
	for (int i = 0; i < 2; i++)
		while (sem_wait(&ready) != 0)
			;
	int cancelled = 0;
	for (int i = 0; i < 2; i++) {
		void *result;
		MUST(pthread_cancel(t[i]));
		MUST(pthread_join(t[i], &result));
		cancelled += result == PTHREAD_CANCELED;
		printf("thread %d: cancel state %s, type %s\n", i,
		       state_left[i] == PTHREAD_CANCEL_ENABLE ? "enable" : "disable",
		       type_left[i] == PTHREAD_CANCEL_DEFERRED ? "deferred" : "asynchronous");
	}
	printf("cancelled: %d of 2\n", cancelled);
	return 0;
}
