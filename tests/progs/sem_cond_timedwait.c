/* pthread_cond_timedwait with nobody signalling: ETIMEDOUT, and the mutex is
 * held again afterwards (an errorcheck unlock succeeds). A deadline already
 * past also times out; an invalid one is EINVAL. */
#include "progs.h"

int main(void)
{
	pthread_mutex_t m;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	pthread_mutexattr_t a;
	MUST(pthread_mutexattr_init(&a));
	MUST(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK));
	MUST(pthread_mutex_init(&m, &a));
	SHOW("lock", pthread_mutex_lock(&m));
	struct timespec ts = deadline_ms(CLOCK_REALTIME, 20);
	SHOW("timedwait", pthread_cond_timedwait(&c, &m, &ts));
	SHOW("relock after timedwait (held)", pthread_mutex_lock(&m));
	struct timespec past = { 0, 0 };
	SHOW("timedwait, deadline passed", pthread_cond_timedwait(&c, &m, &past));
	struct timespec bad = { 0, 2000000000L };
	SHOW("timedwait, invalid deadline", pthread_cond_timedwait(&c, &m, &bad));
	SHOW("unlock", pthread_mutex_unlock(&m));
	SHOW("unlock again", pthread_mutex_unlock(&m));
	SHOW("cond destroy", pthread_cond_destroy(&c));
	return 0;
}
