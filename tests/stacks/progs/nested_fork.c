/* nested_fork.c — one fork() whose prepare step forks again
 * (libforkinside.so): four processes come out of it, the parent, its child,
 * the inner child _Fork made and that one's own child. Each makes one
 * certain contended wait at a known line (each writes a profile with its
 * stack) and waits for its children; the parent says whether all four
 * ended well. */
#include <sys/wait.h>
#include <unistd.h>

#include "stacks_progs.h"

void forkinside_arm(void);
extern int forkinside_inner;

static pthread_mutex_t fork_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static void worker_wait(void)
{
	pthread_mutex_lock(&fork_lock);   /* WORKER_WAIT_LINE */
	pthread_mutex_unlock(&fork_lock);
}

static void *worker(void *arg)
{
	(void)arg;
	worker_wait();
	return NULL;
}

int main(void)
{
	forkinside_arm();
	pid_t pid = fork();
	if (pid < 0)
		exit(99);
	pthread_t th;
	pthread_mutex_lock(&fork_lock);
	MUST(pthread_create(&th, NULL, worker, NULL));
	wait_for_waiter(&fork_lock);
	pthread_mutex_unlock(&fork_lock);
	MUST(pthread_join(th, NULL));
	int status, failed = 0, children = 0;
	while (wait(&status) > 0) {
		children++;
		failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	}
	/* The parent has two children (the outer fork's and _Fork's), the
	 * inner child one, the two youngest none. */
	if (pid == 0)
		exit(children != 0);
	if (forkinside_inner)
		exit(failed || children != 1);
	if (failed || children != 2) {
		fprintf(stderr, "nested_fork: %d children, failed %d\n", children, failed);
		return 1;
	}
	puts("nested_fork: four processes, each done");
	return 0;
}
