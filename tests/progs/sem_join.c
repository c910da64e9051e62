/* pthread_tryjoin_np on a running thread: EBUSY; pthread_timedjoin_np with a
 * short deadline: ETIMEDOUT; once it finished, join returns its value. */
#include "progs.h"

static sem_t release;

static void *runner(void *arg)
{
	sem_wait_all(&release);
	return (void *)42;
}

int main(void)
{
	sem_init(&release, 0, 0);
	pthread_t t;
	MUST(pthread_create(&t, NULL, runner, NULL));
	void *ret = NULL;
	SHOW("tryjoin running", pthread_tryjoin_np(t, &ret));
	struct timespec ts = deadline_ms(CLOCK_REALTIME, 20);
	SHOW("timedjoin running", pthread_timedjoin_np(t, &ret, &ts));
	sem_post(&release);
	ts = deadline_ms(CLOCK_REALTIME, 10000);
	SHOW("timedjoin finishing", pthread_timedjoin_np(t, &ret, &ts));
	printf("returned %ld\n", (long)ret);

	MUST(pthread_create(&t, NULL, runner, NULL));
	sem_post(&release);
	int rc;
	while ((rc = pthread_tryjoin_np(t, &ret)) == EBUSY)
		sched_yield();
	SHOW("tryjoin finished", rc);
	printf("returned %ld\n", (long)ret);
	return 0;
}
