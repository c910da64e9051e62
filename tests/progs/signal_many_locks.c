/* Two threads take 300 mutexes and 300 rwlocks' read locks in turn, more
 * than the shim's per-thread caches hold, so that nearly every acquisition
 * looks its record up in the thread's table (preload/objects.c,
 * cv__lookup_slow, under the quiet guard); meanwhile a 20 kHz timer's
 * handler takes locks of its own, each new to the thread it interrupts at
 * first (a record made, the table grown). Prints the work done, never how
 * many signals arrived. */

#include "progs.h"

#define ROUNDS  3000
#define LOCKS   300
#define HANDLER 1000

pthread_mutex_t many_mutexes[LOCKS];
pthread_rwlock_t many_rwlocks[LOCKS];
static pthread_mutex_t handler_locks[HANDLER];
static volatile sig_atomic_t handled;

static void on_alarm(int sig)
{
	(void)sig;
	int saved = errno;
	pthread_mutex_t *m = &handler_locks[handled % HANDLER];
	pthread_mutex_lock(m);
	handled++;
	pthread_mutex_unlock(m);
	errno = saved;
}

static void *work(void *arg)
{
	long sum = 0;
	for (int i = 0; i < ROUNDS; i++)
		for (int k = 0; k < LOCKS; k++) {
			MUST(pthread_mutex_lock(&many_mutexes[k]));
			sum++;
			MUST(pthread_mutex_unlock(&many_mutexes[k]));
			MUST(pthread_rwlock_rdlock(&many_rwlocks[k]));
			sum++;
			MUST(pthread_rwlock_unlock(&many_rwlocks[k]));
		}
	return (void *)sum;
}

int main(void)
{
	for (int k = 0; k < LOCKS; k++) {
		MUST(pthread_mutex_init(&many_mutexes[k], NULL));
		MUST(pthread_rwlock_init(&many_rwlocks[k], NULL));
	}
	for (int k = 0; k < HANDLER; k++)
		MUST(pthread_mutex_init(&handler_locks[k], NULL));
	alarm_every(on_alarm, 50);   /* 20 kHz */
	pthread_t th;
	MUST(pthread_create(&th, NULL, work, NULL));
	void *mine = work(NULL), *theirs;
	MUST(pthread_join(th, &theirs));
	alarm_stop();
	printf("acquisitions %ld\n", (long)mine + (long)theirs);
	return 0;
}
