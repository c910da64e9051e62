/* fork_handler_signals MODE: a fork whose library prepare handler
 * (libforkwait.so) runs inside the shim's fork window, where the program's
 * signal handlers run as without the shim (the shim's guard deferred them
 * once: helper-142, helper-143). Prints what prepare and the program saw.
 *
 *   lock    prepare raises SIGUSR1, whose handler runs before raise
 *           returns, then takes a lock that a thread holds until the
 *           forking thread, asleep on it, has run its SIGUSR2 handler
 *           (deferred, a deadlock but for the holder's 10 s limit)
 *   nested  prepare raises SIGUSR2, whose handler forks again (_Fork),
 *           then SIGUSR1, and blocks SIGUSR1 for good: the nested fork
 *           left the window open, and SIGUSR1 stays blocked after
 *   jump    prepare raises SIGUSR1, whose handler siglongjmps out of the
 *           fork; a second fork, then a raise of SIGUSR1 runs its handler
 *           (the guard left behind by the jump was closed by the second
 *           fork, and every later signal deferred for good) */
#include <setjmp.h>
#include <sys/wait.h>

#include "progs.h"

enum { FORKWAIT_LOCK, FORKWAIT_NESTED, FORKWAIT_JUMP };
extern int forkwait_mode;
extern pthread_mutex_t forkwait_lock;
extern volatile sig_atomic_t forkwait_usr1;
extern int forkwait_raise_ran, forkwait_blocked, forkwait_pending;

static volatile sig_atomic_t usr2, nested, jump_armed;
static sigjmp_buf out_of_fork;
static pthread_t forker;
static pid_t forker_tid;
static sem_t holding;

static void on_usr1(int sig)
{
	(void)sig;
	forkwait_usr1++;
	if (jump_armed) {
		jump_armed = 0;
		siglongjmp(out_of_fork, 1);
	}
}

static void on_usr2(int sig)
{
	(void)sig;
	usr2 = 1;
}

static void on_usr2_fork(int sig)
{
	(void)sig;
	pid_t child = _Fork();
	if (child == 0)
		_exit(0);
	if (child > 0 && waitpid(child, NULL, 0) == child)
		nested = 1;
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

static void fork_once(void)
{
	fflush(stdout);
	pid_t child = fork();
	if (child < 0)
		MUST(errno);
	if (child == 0)
		_exit(0);
	MUST(waitpid(child, NULL, 0) == child ? 0 : errno);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "lock";
	handle_signal(SIGUSR1, on_usr1);
	forker = pthread_self();
	forker_tid = (pid_t)syscall(SYS_gettid);
	sigset_t now;
	if (!strcmp(mode, "lock")) {
		handle_signal(SIGUSR2, on_usr2);
		MUST(sem_init(&holding, 0, 0));
		pthread_t t;
		MUST(pthread_create(&t, NULL, holder, NULL));
		sem_wait_all(&holding);
		fork_once();
		MUST(pthread_join(t, NULL));
		printf("prepare: raise(SIGUSR1) ran its handler %d time(s) before it returned\n", forkwait_raise_ran);
	} else if (!strcmp(mode, "nested")) {
		handle_signal(SIGUSR2, on_usr2_fork);
		forkwait_mode = FORKWAIT_NESTED;
		fork_once();
		MUST(pthread_sigmask(SIG_BLOCK, NULL, &now));
		printf("prepare: a nested fork %d; raise(SIGUSR1) ran its handler %d time(s); SIGUSR1 then "
		       "blocked %d, pending %d; blocked after the fork %d\n", (int)nested, forkwait_raise_ran,
		       forkwait_blocked, forkwait_pending, sigismember(&now, SIGUSR1));
	} else if (!strcmp(mode, "jump")) {
		if (sigsetjmp(out_of_fork, 1) == 0) {
			jump_armed = 1;
			forkwait_mode = FORKWAIT_JUMP;
			fork_once();
			printf("first fork: its handler did not jump\n");
		} else {
			printf("first fork: left by its handler's jump\n");
		}
		jump_armed = 0;
		fork_once();
		int before = forkwait_usr1;
		MUST(raise(SIGUSR1));
		MUST(pthread_sigmask(SIG_BLOCK, NULL, &now));
		printf("after a second fork: raise(SIGUSR1) ran its handler %d time(s); SIGUSR1 blocked %d\n",
		       forkwait_usr1 - before, sigismember(&now, SIGUSR1));
	} else {
		return 2;
	}
	return 0;
}
