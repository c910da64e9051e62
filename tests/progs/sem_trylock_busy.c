/* trylock on a mutex held by another thread (and by the caller) is EBUSY. */
#include "progs.h"

pthread_mutex_t busy_lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t held, done;

static void *holder(void *arg)
{
	pthread_mutex_lock(&busy_lock);
	sem_post(&held);
	sem_wait_all(&done);
	pthread_mutex_unlock(&busy_lock);
	return arg;
}

int main(void)
{
	pthread_t t;
	sem_init(&held, 0, 0);
	sem_init(&done, 0, 0);
	MUST(pthread_create(&t, NULL, holder, NULL));
	sem_wait_all(&held);
	SHOW("trylock held by other", pthread_mutex_trylock(&busy_lock));
	SHOW("trylock held by other again", pthread_mutex_trylock(&busy_lock));
	sem_post(&done);
	MUST(pthread_join(t, NULL));
	SHOW("trylock free", pthread_mutex_trylock(&busy_lock));
	SHOW("trylock held by self", pthread_mutex_trylock(&busy_lock));
	SHOW("unlock", pthread_mutex_unlock(&busy_lock));
	return 0;
}
