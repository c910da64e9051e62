/* exit(7) from a non-main thread while the main thread is blocked in join
 * and two other threads keep locking, creating and destroying mutexes and
 * starting threads. exit_lock is locked exactly 1,000 times before exit. */
#include "progs.h"

pthread_mutex_t exit_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t busy_lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t spinning;

static void *short_lived(void *arg)
{
	pthread_mutex_lock(&busy_lock);
	pthread_mutex_unlock(&busy_lock);
	return arg;
}

static void *spinner(void *arg)
{
	sem_post(&spinning);
	for (unsigned long i = 0;; i++) {
		pthread_mutex_lock(&busy_lock);
		pthread_mutex_unlock(&busy_lock);
		/* a new object (address reused: a new generation each time) */
		pthread_mutex_t *m = malloc(sizeof(*m));
		pthread_mutex_init(m, NULL);
		pthread_mutex_lock(m);
		pthread_mutex_unlock(m);
		pthread_mutex_destroy(m);
		free(m);
		if (i % 64 == 0) {
			pthread_t t;
			if (pthread_create(&t, NULL, short_lived, NULL) == 0)
				pthread_detach(t);
		}
	}
	return arg;
}

static void *exiter(void *arg)
{
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&exit_lock);
		pthread_mutex_unlock(&exit_lock);
	}
	printf("exiting from a thread\n");
	exit(7);
}

int main(void)
{
	pthread_t s[2], t;
	sem_init(&spinning, 0, 0);
	for (int i = 0; i < 2; i++)
		MUST(pthread_create(&s[i], NULL, spinner, NULL));
	sem_wait_all(&spinning);
	sem_wait_all(&spinning);
	usleep(20000);
	MUST(pthread_create(&t, NULL, exiter, NULL));
	pthread_join(t, NULL);
	printf("not reached\n");
	return 1;
}
