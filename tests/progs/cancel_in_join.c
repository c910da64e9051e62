/* cancel_in_join: thread a joins thread b, which waits on a semaphore
 * nobody posts; main cancels a (pthread_join is a cancellation point),
 * reaps it and exits with b still waiting. The profile's only wait in
 * progress is b's: a is gone, not left joining. Main exits only once b
 * sleeps in its wait (read from /proc: no timing). */
#include <sched.h>

#include "progs.h"

static sem_t never, joining;
static pthread_t b;
static pid_t b_tid;

static void *waits(void *arg)
{
	__atomic_store_n(&b_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	while (sem_wait(&never) != 0)
		MUST(errno == EINTR ? 0 : errno);
	return NULL;
}

static void *joins(void *arg)
{
	sem_post(&joining);
	pthread_join(b, NULL);
	return NULL;
}

int main(void)
{
	MUST(sem_init(&never, 0, 0));
	MUST(sem_init(&joining, 0, 0));
	pthread_t a;
	MUST(pthread_create(&b, NULL, waits, NULL));
	MUST(pthread_create(&a, NULL, joins, NULL));
	while (sem_wait(&joining) != 0)
		MUST(errno == EINTR ? 0 : errno);
	MUST(pthread_cancel(a));
	MUST(pthread_join(a, NULL));
	while (!__atomic_load_n(&b_tid, __ATOMIC_ACQUIRE) || !sleeps_in_futex(b_tid))
		sched_yield();
	printf("cancelled\n");
	exit(0);
}
