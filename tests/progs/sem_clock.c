/* pthread_mutex_clocklock and pthread_cond_clockwait: OK on a free mutex for
 * both clocks, ETIMEDOUT when another thread holds it or nobody signals,
 * EINVAL for an unsupported clock. */
#include "progs.h"

static pthread_mutex_t clock_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t wait_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t clock_cond = PTHREAD_COND_INITIALIZER;
static sem_t held, done;

static void *holder(void *arg)
{
	pthread_mutex_lock(&clock_lock);
	sem_post(&held);
	sem_wait_all(&done);
	pthread_mutex_unlock(&clock_lock);
	return arg;
}

int main(void)
{
	struct timespec ts = deadline_ms(CLOCK_MONOTONIC, 1000);
	SHOW("clocklock free (monotonic)", pthread_mutex_clocklock(&clock_lock, CLOCK_MONOTONIC, &ts));
	SHOW("unlock", pthread_mutex_unlock(&clock_lock));
	ts = deadline_ms(CLOCK_REALTIME, 1000);
	SHOW("clocklock free (realtime)", pthread_mutex_clocklock(&clock_lock, CLOCK_REALTIME, &ts));
	SHOW("unlock", pthread_mutex_unlock(&clock_lock));

	sem_init(&held, 0, 0);
	sem_init(&done, 0, 0);
	pthread_t t;
	MUST(pthread_create(&t, NULL, holder, NULL));
	sem_wait_all(&held);
	ts = deadline_ms(CLOCK_MONOTONIC, 20);
	SHOW("clocklock held (monotonic)", pthread_mutex_clocklock(&clock_lock, CLOCK_MONOTONIC, &ts));
	ts = deadline_ms(CLOCK_REALTIME, 20);
	SHOW("clocklock held (realtime)", pthread_mutex_clocklock(&clock_lock, CLOCK_REALTIME, &ts));
	ts = deadline_ms(CLOCK_MONOTONIC, 20);
	SHOW("clocklock held (bad clock)", pthread_mutex_clocklock(&clock_lock, CLOCK_PROCESS_CPUTIME_ID, &ts));
	sem_post(&done);
	MUST(pthread_join(t, NULL));

	SHOW("lock", pthread_mutex_lock(&wait_lock));
	ts = deadline_ms(CLOCK_MONOTONIC, 20);
	SHOW("clockwait (monotonic)", pthread_cond_clockwait(&clock_cond, &wait_lock, CLOCK_MONOTONIC, &ts));
	ts = deadline_ms(CLOCK_REALTIME, 20);
	SHOW("clockwait (realtime)", pthread_cond_clockwait(&clock_cond, &wait_lock, CLOCK_REALTIME, &ts));
	ts = deadline_ms(CLOCK_MONOTONIC, 20);
	SHOW("clockwait (bad clock)", pthread_cond_clockwait(&clock_cond, &wait_lock, CLOCK_THREAD_CPUTIME_ID, &ts));
	SHOW("unlock", pthread_mutex_unlock(&wait_lock));
	return 0;
}
