/* Forks made with syscall() (SYS_fork, and SYS_clone with SIGCHLD: new
 * processes, which run no atfork handler) while two threads keep making
 * and destroying mutexes, condvars and semaphores, so that a fork often
 * comes while one of them is inside the shim's registry. Each child makes
 * objects of its own and exits with status 7 (SYS_exit_group: no atexit,
 * no profile). Prints how many of the children did; a child that inherited
 * a lock of the shim's held by a thread it does not have waits forever (the
 * test's timeout). Then one more child by SYS_fork takes child_lock 5 times
 * and returns from main: its own profile, under its own pid.
 *
 * The threads churn only around each fork (main lets them go, waits until
 * each has made objects a few times, forks, and stops them) and sleep
 * while main waits for the child: a fork finds them where it always did,
 * in the middle of their loop, and they no longer spin on both CPUs for
 * the whole run (under the shim 2.1 -> 1.1 s of CPU; the test, its native
 * run and reports included, 3.1 -> 1.9 s). */
#include <sched.h>
#include <stdatomic.h>
#include <signal.h>
#include <sys/wait.h>

#include "progs.h"

#define FORKS 300

static atomic_int stop, go;          /* go: churn, main is about to fork */
static atomic_long rounds[2];         /* make_objects() calls of each thread */
static pthread_mutex_t child_lock = PTHREAD_MUTEX_INITIALIZER;

/* A mutex, a condvar and a semaphore made, used once and destroyed. */
static void make_objects(void)
{
	pthread_mutex_t m;
	pthread_cond_t c;
	sem_t s;
	pthread_mutex_init(&m, NULL);
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	pthread_mutex_destroy(&m);
	pthread_cond_init(&c, NULL);
	pthread_cond_signal(&c);
	pthread_cond_destroy(&c);
	sem_init(&s, 0, 1);
	sem_wait(&s);
	sem_destroy(&s);
}

static void *churn(void *arg)
{
	atomic_long *mine = arg;
	while (!atomic_load(&stop)) {
		if (!atomic_load(&go)) {
			nanosleep(&(struct timespec){ 0, 50000 }, NULL);
			continue;
		}
		make_objects();
		atomic_fetch_add(mine, 1);
	}
	return NULL;
}

static void child(void)
{
	make_objects();
	syscall(SYS_exit_group, 7);
}

int main(void)
{
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		MUST(pthread_create(&t[i], NULL, churn, &rounds[i]));
	int sevens = 0;
	for (int i = 0; i < FORKS; i++) {
		long from[2] = { atomic_load(&rounds[0]), atomic_load(&rounds[1]) };
		atomic_store(&go, 1);
		while (atomic_load(&rounds[0]) < from[0] + 4 || atomic_load(&rounds[1]) < from[1] + 4)
			nanosleep(&(struct timespec){ 0, 20000 }, NULL);
		pid_t p = i % 2 ? (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0) : (pid_t)syscall(SYS_fork);
		if (p == 0)
			child();
		atomic_store(&go, 0);
		MUST(p < 0 ? errno : 0);
		int st;
		MUST(waitpid(p, &st, 0) == p ? 0 : errno);
		sevens += WIFEXITED(st) && WEXITSTATUS(st) == 7;
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		MUST(pthread_join(t[i], NULL));
	printf("children that exited with 7: %d of %d\n", sevens, FORKS);
	fflush(stdout);
	pid_t p = (pid_t)syscall(SYS_fork);
	if (p == 0) {
		for (int i = 0; i < 5; i++) {
			pthread_mutex_lock(&child_lock);
			pthread_mutex_unlock(&child_lock);
		}
		return 0;
	}
	MUST(p < 0 ? errno : 0);
	int st;
	MUST(waitpid(p, &st, 0) == p ? 0 : errno);
	printf("last child: %s %d\n", WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	return 0;
}
