/* hang_then_go [N] [--in-child]: hangs, and ends on its own once convoy
 * has a snapshot.
 *
 * N workers (default 2) of one pool wait on a condvar for work nobody
 * queues, while the main thread waits on a semaphore for their results:
 * every thread blocked without a deadline, a starved pool. A child process,
 * forked first, looks in CONVOY_DIR for the hang snapshot the shim writes
 * for this process (convoy run --on-hang continue) and then sends SIGUSR1;
 * the program's own handler posts the semaphore and main exits with status
 * 0, the workers still blocked. With --in-child the roles swap: a forked
 * child hangs (the snapshot is a fork child's) and this process watches it,
 * then reaps it and exits with its status. Nothing here depends on timing:
 * without a snapshot the program hangs until a time limit stops it.
 */
#include <dirent.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "progs.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
static int queued;
static sem_t results;

static void *worker(void *arg)
{
	MUST(pthread_mutex_lock(&lock));
	while (!queued)
		MUST(pthread_cond_wait(&work, &lock));
	MUST(pthread_mutex_unlock(&lock));
	return NULL;
}

static void go(int sig)
{
	sem_post(&results);
}

/* Whether dir holds convoy-*-<pid>.hang. */
static int snapshot_written(const char *dir, pid_t pid)
{
	char tail[32];
	snprintf(tail, sizeof(tail), "-%d.hang", (int)pid);
	DIR *d = opendir(dir);
	int found = 0;
	struct dirent *e;
	while (d && !found && (e = readdir(d))) {
		size_t len = strlen(e->d_name), tl = strlen(tail);
		found = len > tl && !strcmp(e->d_name + len - tl, tail);
	}
	if (d)
		closedir(d);
	return found;
}

/* Waits for the snapshot of pid, then tells it to go on. */
static void watch(const char *dir, pid_t pid)
{
	while (!dir || !snapshot_written(dir, pid)) {
		struct timespec poll = { 0, 10 * 1000 * 1000 };
		nanosleep(&poll, NULL);
	}
	kill(pid, SIGUSR1);
}

/* The hang: n workers and main blocked; main goes on at SIGUSR1. */
static void hang(int n)
{
	for (int i = 0; i < n; i++) {
		pthread_t t;
		MUST(pthread_create(&t, NULL, worker, NULL));
	}
	while (sem_wait(&results) != 0)
		MUST(errno == EINTR ? 0 : errno);
	printf("went on after the snapshot\n");
	exit(0);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	int in_child = argc > 2 && !strcmp(argv[2], "--in-child");
	const char *dir = getenv("CONVOY_DIR");
	MUST(sem_init(&results, 0, 0));
	struct sigaction sa = { .sa_handler = go };
	sigemptyset(&sa.sa_mask);
	MUST(sigaction(SIGUSR1, &sa, NULL));
	pid_t parent = getpid(), child = fork();
	MUST(child < 0 ? errno : 0);
	if (in_child) {   /* the child hangs, this process watches and reaps it */
		if (child == 0)
			hang(n);
		watch(dir, child);
		int status;
		MUST(waitpid(child, &status, 0) == child ? 0 : errno);
		return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	}
	if (child == 0) {
		watch(dir, parent);
		syscall(SYS_exit_group, 0);   /* past the shim: this helper leaves no profile of its own */
	}
	hang(n);
}
