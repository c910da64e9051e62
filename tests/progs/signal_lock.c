/* A 20 kHz timer signal whose handler locks a mutex and signals a condvar,
 * while two threads make the shim do its slow bookkeeping over and over
 * (first use of fresh mutexes, init/destroy, contended locks). Runs a fixed
 * amount of work; prints how much, never how many signals arrived. */

#include "progs.h"

#define ROUNDS 4000
#define LOCKS  16

static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t handler_cond = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t handled;

static void on_alarm(int sig)
{
	int saved = errno;
	pthread_mutex_lock(&handler_lock);
	handled++;
	pthread_cond_signal(&handler_cond);
	pthread_mutex_unlock(&handler_lock);
	errno = saved;
}

static void *work(void *arg)
{
	long sum = 0;
	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_t *m = malloc(LOCKS * sizeof(*m));
		for (int k = 0; k < LOCKS; k++) {
			MUST(pthread_mutex_init(&m[k], NULL));
			MUST(pthread_mutex_lock(&m[k]));
			MUST(pthread_mutex_unlock(&m[k]));
		}
		MUST(pthread_mutex_lock(&shared));
		sum++;
		MUST(pthread_mutex_unlock(&shared));
		for (int k = 0; k < LOCKS; k++)
			MUST(pthread_mutex_destroy(&m[k]));
		free(m);
	}
	return (void *)sum;
}

int main(void)
{
	alarm_every(on_alarm, 50);   /* 20 kHz */
	pthread_t th;
	MUST(pthread_create(&th, NULL, work, NULL));
	void *mine = work(NULL), *theirs;
	MUST(pthread_join(th, &theirs));
	alarm_stop();
	printf("rounds %ld\n", (long)mine + (long)theirs);
	return 0;
}
