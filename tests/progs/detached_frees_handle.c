/* Detached workers whose job struct holds their pthread_t, written by
 * pthread_create, and which unmap the job as their first act: the memory
 * *th pointed into is gone by the time pthread_create returns, often. */
#include <sys/mman.h>

#include "progs.h"

#define JOBS 2000

struct job {
	pthread_t th;
	sem_t *done;
};

static void *worker(void *arg)
{
	struct job *j = arg;
	sem_t *done = j->done;
	munmap(j, sizeof(*j));
	sem_post(done);
	return NULL;
}

int main(void)
{
	static sem_t done;
	MUST(sem_init(&done, 0, 0));
	pthread_attr_t attr;
	MUST(pthread_attr_init(&attr));
	MUST(pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED));
	for (int i = 0; i < JOBS; i++) {
		struct job *j = mmap(NULL, sizeof(*j), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (j == MAP_FAILED)
			return 99;
		j->done = &done;
		MUST(pthread_create(&j->th, &attr, worker, j));
	}
	for (int i = 0; i < JOBS; i++)
		while (sem_wait(&done) != 0)
			;
	printf("jobs %d done\n", JOBS);
	return 0;
}
