/* A mutex fast path races a signal handler that locks another mutex
 * mapping to the same entry of the shim's 64-entry per-thread mutex cache
 * (preload/shim.h, CV_MUTEX_WAYS).
 * Main: lock A; lock B; unlock B; unlock A  (only A->B order).
 * Handler: lock H; unlock H  (runs while main holds A, B or nothing).
 * Real order edges: A->B, A->H, B->H. No cycle is possible. */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

static pthread_mutex_t pool[1024];
static pthread_mutex_t *A, *B, *H;
static volatile long handled;

static unsigned way(const void *p) { return (unsigned)(((uintptr_t)p * 0x9E3779B97F4A7C15ull) >> 58); }

static void handler(int sig)
{
	(void)sig;
	pthread_mutex_lock(H);
	pthread_mutex_unlock(H);
	handled++;
}

static void *nothing(void *a) { return a; }

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000000;
	for (int i = 0; i < 1024; i++)
		pthread_mutex_init(&pool[i], NULL);
	A = &pool[0];
	for (int i = 1; i < 1024 && !H; i++)
		if (way(&pool[i]) == way(A))
			H = &pool[i];
	for (int i = 1; i < 1024 && !B; i++)
		if (way(&pool[i]) != way(A) && &pool[i] != H)
			B = &pool[i];
	pthread_t t;   /* a process with a thread: the shim takes normal mutexes itself */
	pthread_create(&t, NULL, nothing, NULL);
	pthread_join(t, NULL);
	struct sigaction sa = { .sa_handler = handler, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	struct itimerval it = { { 0, 10 }, { 0, 10 } };
	setitimer(ITIMER_PROF, &it, NULL);
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(A);
		pthread_mutex_lock(B);
		pthread_mutex_unlock(B);
		pthread_mutex_unlock(A);
	}
	struct itimerval off = { 0 };
	setitimer(ITIMER_PROF, &off, NULL);
	printf("done\n");
	fprintf(stderr, "handled %ld A=pool[%ld] B=pool[%ld] H=pool[%ld]\n", handled, (long)(A - pool), (long)(B - pool), (long)(H - pool));
	return 0;
}
