/* Error-checking mutex: relock by the owner is EDEADLK (also through
 * timedlock and trylock's EBUSY), unlock twice is EPERM. */
#include "progs.h"

int main(void)
{
	pthread_mutex_t m;
	pthread_mutexattr_t a;
	MUST(pthread_mutexattr_init(&a));
	MUST(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK));
	SHOW("init", pthread_mutex_init(&m, &a));
	SHOW("lock", pthread_mutex_lock(&m));
	SHOW("relock", pthread_mutex_lock(&m));
	struct timespec ts = deadline_ms(CLOCK_REALTIME, 10);
	SHOW("timedlock by owner", pthread_mutex_timedlock(&m, &ts));
	SHOW("trylock by owner", pthread_mutex_trylock(&m));
	SHOW("unlock", pthread_mutex_unlock(&m));
	SHOW("unlock again", pthread_mutex_unlock(&m));
	SHOW("lock after", pthread_mutex_lock(&m));
	SHOW("destroy while locked", pthread_mutex_destroy(&m));
	SHOW("unlock", pthread_mutex_unlock(&m));
	SHOW("destroy", pthread_mutex_destroy(&m));
	return 0;
}
