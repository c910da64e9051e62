/* A handler takes mutex M and returns holding it; the next signal's
 * handler releases it. The main loop only ever holds one lock at a time:
 * lock B, unlock B, lock A, unlock A. No thread ever holds B while taking
 * A (or A while taking B), so no A/B edge is real. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <sys/time.h>
static pthread_mutex_t A = PTHREAD_MUTEX_INITIALIZER, B = PTHREAD_MUTEX_INITIALIZER, M = PTHREAD_MUTEX_INITIALIZER;
static volatile long handled;
static void handler(int s)
{
	(void)s;
	int e = errno;
	if (handled++ & 1)
		pthread_mutex_unlock(&M);
	else
		pthread_mutex_lock(&M);
	errno = e;
}
static void *nothing(void *a) { return a; }
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 50000000;
	pthread_t t; pthread_create(&t, NULL, nothing, NULL); pthread_join(t, NULL);
	struct sigaction sa = { .sa_handler = handler, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	struct itimerval it = { { 0, 10 }, { 0, 10 } };
	setitimer(ITIMER_PROF, &it, NULL);
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&B);
		pthread_mutex_unlock(&B);
		pthread_mutex_lock(&A);
		pthread_mutex_unlock(&A);
	}
	struct itimerval off = { 0 };
	setitimer(ITIMER_PROF, &off, NULL);
	if (handled & 1)
		pthread_mutex_unlock(&M);
	printf("done\n");
	return 0;
}
