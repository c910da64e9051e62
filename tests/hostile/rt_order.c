/* Real-time signals queued to one thread (pthread_sigqueue, values 1, 2,
 * 3, ...) in bursts of 200 while that thread inits, locks and destroys
 * mutexes and condvars (the shim's critical sections, where its
 * trampoline defers a signal: preload/signals.c). POSIX delivers the
 * copies of one real-time signal in the order they were queued; the
 * handler checks that. argv[1]: bursts (default 100). Prints the count
 * and how many came out of order; exits 1 if any did. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define BURST 200

static int *got;
static atomic_int ngot, stop;

static void on_rt(int sig, siginfo_t *si, void *context)
{
	(void)sig;
	(void)context;
	got[atomic_fetch_add(&ngot, 1)] = si->si_value.sival_int;
}

static void churn_once(void)
{
	pthread_mutex_t m;
	pthread_cond_t c;
	pthread_mutex_init(&m, NULL);
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	pthread_mutex_destroy(&m);
	pthread_cond_init(&c, NULL);
	pthread_cond_signal(&c);
	pthread_cond_destroy(&c);
}

static void *target(void *arg)
{
	while (!atomic_load(&stop))
		churn_once();
	return arg;
}

int main(int argc, char **argv)
{
	int bursts = argc > 1 ? atoi(argv[1]) : 100, sig = SIGRTMIN + 3;
	got = calloc((size_t)bursts * BURST, sizeof(*got));
	if (!got)
		return 99;
	struct sigaction sa = { .sa_sigaction = on_rt, .sa_flags = SA_SIGINFO | SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	pthread_t t;
	pthread_create(&t, NULL, target, NULL);
	pthread_sigmask(SIG_BLOCK, &one, NULL);   /* only the target takes it */
	int sent = 0;
	for (int b = 0; b < bursts; b++) {
		for (int i = 0; i < BURST; i++) {
			union sigval v = { .sival_int = ++sent };
			while (pthread_sigqueue(t, sig, v) != 0)
				sched_yield();
		}
		while (atomic_load(&ngot) < sent)
			sched_yield();
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	int misordered = 0;
	for (int i = 0; i < sent; i++)
		misordered += got[i] != i + 1;
	printf("received %d of %d, %d out of order\n", atomic_load(&ngot), sent, misordered);
	return misordered != 0;
}
