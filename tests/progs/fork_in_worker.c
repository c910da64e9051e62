/* A thread the program made forks; in the child it makes a thread of its
 * own, "in-child", and returns. in-child joins it (its end seen), makes
 * and joins one more ("after"), and ends the child with exit(3). The
 * child's profile must hold the child's threads, not the parent's worker
 * and its locks (helper-107: the worker's end in the child retired the
 * parent's state into the child's profile, where it hid in-child, and
 * into the child's pool, where the next thread took it and was lost).
 * Prints what it did. */
#include <sys/wait.h>

#include "progs.h"

pthread_mutex_t worker_lock = PTHREAD_MUTEX_INITIALIZER;

static void *after(void *arg)
{
	MUST(pthread_setname_np(pthread_self(), "after"));
	return arg;
}

static void *in_child(void *arg)
{
	MUST(pthread_setname_np(pthread_self(), "in-child"));
	MUST(pthread_join(*(pthread_t *)arg, NULL));
	pthread_t th;
	MUST(pthread_create(&th, NULL, after, NULL));
	MUST(pthread_join(th, NULL));
	exit(3);
}

static void *worker(void *arg)
{
	MUST(pthread_setname_np(pthread_self(), "worker"));
	for (int i = 0; i < 1000; i++) {
		MUST(pthread_mutex_lock(&worker_lock));
		MUST(pthread_mutex_unlock(&worker_lock));
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		exit(99);
	if (pid == 0) {
		static pthread_t self, th;
		self = pthread_self();
		MUST(pthread_create(&th, NULL, in_child, &self));
		return NULL;
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		exit(99);
	printf("child exit %d\n", WEXITSTATUS(status));
	return arg;
}

int main(void)
{
	pthread_t th;
	MUST(pthread_create(&th, NULL, worker, NULL));
	MUST(pthread_join(th, NULL));
	return 0;
}
