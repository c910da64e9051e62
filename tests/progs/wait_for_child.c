/* wait_for_child: a thread waits, with no deadline, on a process-shared
 * semaphore that a child process would post; the child waits in read() on a
 * pipe nobody writes. The parent's every thread is in a futex wait, yet the
 * program is not hung: another process of it could still post. It runs
 * until a time limit stops it. */
#include <sys/mman.h>
#include <sys/wait.h>

#include "progs.h"

static sem_t *ready;

static void *consumer(void *arg)
{
	while (sem_wait(ready) != 0)
		MUST(errno == EINTR ? 0 : errno);
	return NULL;
}

int main(void)
{
	ready = mmap(NULL, sizeof(*ready), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	MUST(ready == MAP_FAILED ? errno : 0);
	MUST(sem_init(ready, 1, 0));
	int fds[2];
	MUST(pipe(fds) ? errno : 0);
	pid_t child = fork();
	MUST(child < 0 ? errno : 0);
	if (child == 0) {   /* its result would come in through the pipe; it never does */
		char c;
		if (read(fds[0], &c, 1) == 1)
			sem_post(ready);
		_exit(0);
	}
	pthread_t t;
	MUST(pthread_create(&t, NULL, consumer, NULL));
	MUST(pthread_join(t, NULL));
	return 0;
}
