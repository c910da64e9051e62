/* Recursive mutex: lock 3 times, another thread's trylock is EBUSY until the
 * third unlock, then it succeeds; a fourth unlock is EPERM. */
#include "progs.h"

static pthread_mutex_t rec;

static void *try_other(void *label)
{
	int rc = pthread_mutex_trylock(&rec);
	printf("%s: %d %s\n", (const char *)label, rc, rc_name(rc));
	if (rc == 0)
		SHOW("other unlock", pthread_mutex_unlock(&rec));
	return NULL;
}

static void other(const char *label)
{
	pthread_t t;
	MUST(pthread_create(&t, NULL, try_other, (void *)label));
	MUST(pthread_join(t, NULL));
}

int main(void)
{
	pthread_mutexattr_t a;
	MUST(pthread_mutexattr_init(&a));
	MUST(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE));
	SHOW("init", pthread_mutex_init(&rec, &a));
	SHOW("lock 1", pthread_mutex_lock(&rec));
	SHOW("lock 2", pthread_mutex_lock(&rec));
	SHOW("trylock 3", pthread_mutex_trylock(&rec));
	struct timespec ts = deadline_ms(CLOCK_REALTIME, 10);
	SHOW("timedlock 4", pthread_mutex_timedlock(&rec, &ts));
	other("other trylock while held 4 deep");
	SHOW("unlock 1", pthread_mutex_unlock(&rec));
	SHOW("unlock 2", pthread_mutex_unlock(&rec));
	SHOW("unlock 3", pthread_mutex_unlock(&rec));
	other("other trylock while held 1 deep");
	SHOW("unlock 4", pthread_mutex_unlock(&rec));
	other("other trylock when free");
	SHOW("unlock 5", pthread_mutex_unlock(&rec));
	SHOW("destroy", pthread_mutex_destroy(&rec));
	return 0;
}
