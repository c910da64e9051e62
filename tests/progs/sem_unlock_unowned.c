/* Unlocking an error-checking (or recursive) mutex the caller does not own:
 * EPERM, whether it is free or another thread holds it. */
#include "progs.h"

static pthread_mutex_t checked, recursive;
static sem_t held, done;

static void *holder(void *arg)
{
	pthread_mutex_lock(&checked);
	pthread_mutex_lock(&recursive);
	sem_post(&held);
	sem_wait_all(&done);
	pthread_mutex_unlock(&recursive);
	pthread_mutex_unlock(&checked);
	return arg;
}

int main(void)
{
	pthread_mutexattr_t a;
	MUST(pthread_mutexattr_init(&a));
	MUST(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK));
	MUST(pthread_mutex_init(&checked, &a));
	MUST(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE));
	MUST(pthread_mutex_init(&recursive, &a));
	SHOW("unlock free errorcheck", pthread_mutex_unlock(&checked));
	SHOW("unlock free recursive", pthread_mutex_unlock(&recursive));
	sem_init(&held, 0, 0);
	sem_init(&done, 0, 0);
	pthread_t t;
	MUST(pthread_create(&t, NULL, holder, NULL));
	sem_wait_all(&held);
	SHOW("unlock errorcheck held by other", pthread_mutex_unlock(&checked));
	SHOW("unlock recursive held by other", pthread_mutex_unlock(&recursive));
	sem_post(&done);
	MUST(pthread_join(t, NULL));
	SHOW("lock", pthread_mutex_lock(&checked));
	SHOW("unlock own", pthread_mutex_unlock(&checked));
	return 0;
}
