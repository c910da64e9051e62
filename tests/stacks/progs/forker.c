/* forker.c — fork while other threads are busy capturing stacks (two
 * threads hammer a lock), then, in each child, one certain contended wait:
 * the children must not hang on a lock the unwinder held at the fork, and
 * each writes a profile whose stacks resolve. */
#include <sys/wait.h>
#include <unistd.h>

#include "stacks_progs.h"

static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t child_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int stop;

static void *hammer(void *arg)
{
	(void)arg;
	while (!stop) {
		pthread_mutex_lock(&busy);
		for (volatile int i = 0; i < 100; i++)
			;
		pthread_mutex_unlock(&busy);
	}
	return NULL;
}

__attribute__((noinline)) static void child_wait(void)
{
	pthread_mutex_lock(&child_lock);   /* CHILD_WAIT_LINE */
	pthread_mutex_unlock(&child_lock);
}

static void *child_worker(void *arg)
{
	(void)arg;
	child_wait();
	return NULL;
}

int main(int argc, char **argv)
{
	int children = argc > 1 ? atoi(argv[1]) : 5;
	pthread_t h[2];
	for (int i = 0; i < 2; i++)
		MUST(pthread_create(&h[i], NULL, hammer, NULL));
	for (int c = 0; c < children; c++) {
		pid_t pid = fork();
		if (pid < 0)
			exit(99);
		if (pid == 0) {
			pthread_t th;
			pthread_mutex_lock(&child_lock);
			MUST(pthread_create(&th, NULL, child_worker, NULL));
			wait_for_waiter(&child_lock);
			pthread_mutex_unlock(&child_lock);
			MUST(pthread_join(th, NULL));
			exit(0);
		}
		int status;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "child %d failed\n", c);
			exit(1);
		}
	}
	stop = 1;
	for (int i = 0; i < 2; i++)
		MUST(pthread_join(h[i], NULL));
	puts("forker: done");
	return 0;
}
