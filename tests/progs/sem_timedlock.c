/* timedlock on a mutex another thread holds: ETIMEDOUT; with an invalid
 * deadline: EINVAL; once it is free: OK. Also for an errorcheck mutex. */
#include "progs.h"

static pthread_mutex_t normal = PTHREAD_MUTEX_INITIALIZER, checked;
static sem_t held, done;

static void *holder(void *arg)
{
	pthread_mutex_lock(&normal);
	pthread_mutex_lock(&checked);
	sem_post(&held);
	sem_wait_all(&done);
	pthread_mutex_unlock(&checked);
	pthread_mutex_unlock(&normal);
	return arg;
}

int main(void)
{
	pthread_mutexattr_t a;
	MUST(pthread_mutexattr_init(&a));
	MUST(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK));
	MUST(pthread_mutex_init(&checked, &a));
	sem_init(&held, 0, 0);
	sem_init(&done, 0, 0);
	pthread_t t;
	MUST(pthread_create(&t, NULL, holder, NULL));
	sem_wait_all(&held);
	struct timespec ts = deadline_ms(CLOCK_REALTIME, 20);
	SHOW("timedlock held (normal)", pthread_mutex_timedlock(&normal, &ts));
	ts = deadline_ms(CLOCK_REALTIME, 20);
	SHOW("timedlock held (errorcheck)", pthread_mutex_timedlock(&checked, &ts));
	struct timespec past = { 0, 0 };
	SHOW("timedlock held, deadline passed", pthread_mutex_timedlock(&normal, &past));
	struct timespec bad = { 0, -1 };
	SHOW("timedlock held, invalid deadline", pthread_mutex_timedlock(&normal, &bad));
	sem_post(&done);
	MUST(pthread_join(t, NULL));
	ts = deadline_ms(CLOCK_REALTIME, 1000);
	SHOW("timedlock free", pthread_mutex_timedlock(&normal, &ts));
	SHOW("unlock", pthread_mutex_unlock(&normal));
	return 0;
}
