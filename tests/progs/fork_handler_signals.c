/* fork_handler_signals: a fork whose library prepare handler
 * (libforkwait.so) runs inside the shim's fork window, where the program's
 * signal handlers run as without the shim: the handler of a raise(SIGUSR1)
 * there runs before raise returns, and a thread that holds the lock that
 * prepare waits for, itself waiting for the forking thread's SIGUSR2
 * handler, sees it run (helper-142: the shim deferred both to the end of
 * its guard, and the second never came: a deadlock, but for the holder's
 * 10 s limit). Prints what the holder and prepare saw. */
#include <sys/wait.h>

#include "progs.h"

extern pthread_mutex_t forkwait_lock;
extern volatile sig_atomic_t forkwait_usr1;
extern int forkwait_raise_ran;

static volatile sig_atomic_t usr2;
static pthread_t forker;
static pid_t forker_tid;
static sem_t holding;

static void on_usr1(int sig)
{
	(void)sig;
	forkwait_usr1++;
}

static void on_usr2(int sig)
{
	(void)sig;
	usr2 = 1;
}

/* Holds the lock prepare takes until the forker, asleep on it, has run its
 * SIGUSR2 handler: 10 s at most. */
static void *holder(void *arg)
{
	(void)arg;
	MUST(pthread_mutex_lock(&forkwait_lock));
	MUST(sem_post(&holding));
	while (!sleeps_in_futex_on(forker_tid, &forkwait_lock.__data.__lock))
		nap();
	MUST(pthread_kill(forker, SIGUSR2));
	for (int i = 0; i < 100000 && !usr2; i++)
		nap();
	printf("holder: the forking thread's handler %s\n", usr2 ? "ran" : "did not run in 10 s");
	MUST(pthread_mutex_unlock(&forkwait_lock));
	return NULL;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigemptyset(&sa.sa_mask);
	MUST(sigaction(SIGUSR1, &sa, NULL));
	sa.sa_handler = on_usr2;
	MUST(sigaction(SIGUSR2, &sa, NULL));
	forker = pthread_self();
	forker_tid = (pid_t)syscall(SYS_gettid);
	MUST(sem_init(&holding, 0, 0));
	pthread_t t;
	MUST(pthread_create(&t, NULL, holder, NULL));
	sem_wait_all(&holding);
	fflush(stdout);
	pid_t child = fork();
	if (child < 0)
		MUST(errno);
	if (child == 0)
		_exit(0);
	int status;
	MUST(waitpid(child, &status, 0) == child ? 0 : errno);
	MUST(pthread_join(t, NULL));
	printf("prepare: raise(SIGUSR1) ran its handler %d time(s) before it returned\n", forkwait_raise_ran);
	return 0;
}
