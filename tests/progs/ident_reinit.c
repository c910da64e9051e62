/* Destroy and re-initialise the same global mutex: two lock objects.
 *
 * gen_lock generation 0: main 300 + worker 100 = 400 acquisitions;
 *          generation 1: main 700 + worker 200 = 900. The worker keeps
 *          running across the re-init, so its cached record must notice.
 * twice_lock (initialised twice, no destroy): generation 0 10, generation 1 20. */
#include "progs.h"

pthread_mutex_t gen_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t twice_lock;
static sem_t phase1_done, reinit_done;

static void lock_n(pthread_mutex_t *m, int n)
{
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(m);
		pthread_mutex_unlock(m);
	}
}

static void *gen_worker(void *arg)
{
	lock_n(&gen_lock, 100);
	sem_post(&phase1_done);
	sem_wait_all(&reinit_done);
	lock_n(&gen_lock, 200);
	return arg;
}

int main(void)
{
	sem_init(&phase1_done, 0, 0);
	sem_init(&reinit_done, 0, 0);
	pthread_t t;
	MUST(pthread_create(&t, NULL, gen_worker, NULL));
	lock_n(&gen_lock, 300);
	sem_wait_all(&phase1_done);
	SHOW("destroy", pthread_mutex_destroy(&gen_lock));
	SHOW("init", pthread_mutex_init(&gen_lock, NULL));
	sem_post(&reinit_done);
	lock_n(&gen_lock, 700);
	MUST(pthread_join(t, NULL));

	SHOW("init twice_lock", pthread_mutex_init(&twice_lock, NULL));
	lock_n(&twice_lock, 10);
	SHOW("init twice_lock again", pthread_mutex_init(&twice_lock, NULL));
	lock_n(&twice_lock, 20);
	return 0;
}
