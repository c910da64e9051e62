/* hang_then_go [N] [--in-child]: hangs, and ends on its own once convoy
 * has a snapshot; hang_then_go --watch DIR [K]: the watcher that tells it.
 *
 * N workers (default 2, at most 64) of one pool each run a task that waits
 * on a condvar of its own for a child task no worker is free to run, while
 * the main thread waits on a semaphore for their results: every thread
 * blocked without a deadline, a starved pool, and no deadlock (no thread
 * waits for a lock another holds). SIGUSR1's handler posts the
 * semaphore and main exits with status 0, the workers still blocked. With
 * --in-child a forked child hangs so (the snapshot is a fork child's) and
 * this process waits for it in waitpid, then exits with its status.
 *
 * The watcher runs beside convoy, outside the command's process tree (a
 * process of the tree that polls would keep the tree from ever looking hung,
 * watchdog.c): it looks in DIR and below for hang snapshots
 * (convoy-COMM-PID.hang) and sends SIGUSR1 to each PID once, until it has
 * seen K (default 1). Nothing here depends on timing: without a snapshot
 * the program hangs until a time limit stops it.
 */
#include <ftw.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "progs.h"

#define MAX_WORKERS 64
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t child_done[MAX_WORKERS];   /* each task's child's completion */
static int done[MAX_WORKERS];
static sem_t results;

/* A task that waits for its child, which would run on a free worker. */
static void run_task(int i)
{
	MUST(pthread_mutex_lock(&lock));
	while (!done[i])
		MUST(pthread_cond_wait(&child_done[i], &lock));
	MUST(pthread_mutex_unlock(&lock));
}

static void *worker(void *arg)
{
	run_task((int)(long)arg);
	return NULL;
}

static void go(int sig)
{
	sem_post(&results);
}

/* The hang: n workers and main blocked; main goes on at SIGUSR1. */
static void hang(int n)
{
	for (long i = 0; i < n; i++) {
		pthread_t t;
		MUST(pthread_cond_init(&child_done[i], NULL));
		MUST(pthread_create(&t, NULL, worker, (void *)i));
	}
	while (sem_wait(&results) != 0)
		MUST(errno == EINTR ? 0 : errno);
	printf("went on after the snapshot\n");
	exit(0);
}

#define MAX_SEEN 64
static pid_t seen[MAX_SEEN];
static int nseen;

/* A snapshot not seen before: its process is told to go on. */
static int visit(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	const char *name = path + ftw->base, *dash = strrchr(name, '-'), *dot = strrchr(name, '.');
	if (type != FTW_F || strncmp(name, "convoy-", 7) || !dash || !dot || strcmp(dot, ".hang"))
		return 0;
	pid_t pid = (pid_t)atoi(dash + 1);
	for (int i = 0; i < nseen; i++)
		if (seen[i] == pid)
			return 0;
	if (nseen < MAX_SEEN)
		seen[nseen++] = pid;
	kill(pid, SIGUSR1);
	return 0;
}

static int watch(const char *dir, int k)
{
	while (nseen < k) {
		nftw(dir, visit, 16, FTW_PHYS);
		struct timespec poll = { 0, 10 * 1000 * 1000 };
		nanosleep(&poll, NULL);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "--watch"))
		return watch(argv[2], argc > 3 ? atoi(argv[3]) : 1);
	int n = argc > 1 ? atoi(argv[1]) : 2;
	if (n < 1 || n > MAX_WORKERS)
		return 2;
	int in_child = argc > 2 && !strcmp(argv[2], "--in-child");
	MUST(sem_init(&results, 0, 0));
	struct sigaction sa = { .sa_handler = go };
	sigemptyset(&sa.sa_mask);
	MUST(sigaction(SIGUSR1, &sa, NULL));
	if (!in_child)
		hang(n);
	pid_t child = fork();
	MUST(child < 0 ? errno : 0);
	if (child == 0)
		hang(n);
	int status;
	while (waitpid(child, &status, 0) != child)
		MUST(errno == EINTR ? 0 : errno);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
