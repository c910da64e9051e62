/* Two threads deadlock (A then B against B then A), and a watcher, once
 * /proc shows both asleep on the locks' words, sends one of them a
 * SIGTERM whose handler calls exit(3): the profile, written from inside
 * the handler that interrupted that thread's wait, holds both waits (a
 * live wait must not read as one left by a jump). No timing. "main": the
 * main thread is one of the two; "workers": two workers, and the main
 * thread has called pthread_exit (the process's id then names a thread
 * gone: the writer's reads of the waits' frames must not go through it). */
#include "progs.h"

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold;
static pid_t tids[2];
static pthread_t first;

static void on_term(int sig)
{
	(void)sig;
	exit(3);
}

/* Takes one lock, then, both held, the other: never. */
static void *deadlock(void *arg)
{
	int second = arg != NULL;
	tids[second] = (pid_t)syscall(SYS_gettid);
	MUST(pthread_mutex_lock(second ? &b : &a));
	pthread_barrier_wait(&both_hold);
	pthread_mutex_lock(second ? &a : &b);
	printf("unreachable\n");
	return NULL;
}

static void *watcher(void *arg)
{
	(void)arg;
	/* Both asleep in the futex waits of the locks the other holds. */
	while (!tids[0] || !tids[1] || !sleeps_in_futex_on(tids[0], &b.__data.__lock) ||
	       !sleeps_in_futex_on(tids[1], &a.__data.__lock))
		nap();
	MUST(pthread_kill(first, SIGTERM));
	return NULL;
}

int main(int argc, char **argv)
{
	int main_exits = argc > 1 && strcmp(argv[1], "workers") == 0;
	struct sigaction sa = { .sa_handler = on_term };
	sigemptyset(&sa.sa_mask);
	MUST(sigaction(SIGTERM, &sa, NULL));
	MUST(pthread_barrier_init(&both_hold, NULL, 2));
	pthread_t t, w;
	MUST(pthread_create(&t, NULL, deadlock, (void *)1));
	MUST(pthread_create(&w, NULL, watcher, NULL));
	if (!main_exits) {
		first = pthread_self();
		deadlock(NULL);
	}
	MUST(pthread_create(&first, NULL, deadlock, NULL));
	pthread_exit(NULL);
}
