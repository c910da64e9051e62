/* sem_deadlock: a deadlock through a semaphore. The waiter takes the
 * mutex, then waits on the semaphore; the only thread that posts it (it did
 * once already) waits for the mutex first. A barrier makes the order certain:
 * the waiter holds the mutex before the poster reaches for it, and the one
 * post made before was consumed. Main joins the poster: every thread blocks
 * for good, with no deadline. */
#include "progs.h"

static pthread_mutex_t table = PTHREAD_MUTEX_INITIALIZER;
static sem_t ready;
static pthread_barrier_t both;

static void *poster(void *arg)
{
	MUST(pthread_mutex_lock(&table));
	MUST(pthread_mutex_unlock(&table));
	MUST(sem_post(&ready));
	pthread_barrier_wait(&both);
	MUST(pthread_mutex_lock(&table));   /* held by the waiter for good */
	MUST(sem_post(&ready));
	MUST(pthread_mutex_unlock(&table));
	return NULL;
}

static void *waiter(void *arg)
{
	MUST(sem_wait(&ready));
	MUST(pthread_mutex_lock(&table));
	pthread_barrier_wait(&both);
	MUST(sem_wait(&ready));   /* the next post needs the mutex this thread holds */
	MUST(pthread_mutex_unlock(&table));
	return NULL;
}

int main(void)
{
	MUST(sem_init(&ready, 0, 0));
	MUST(pthread_barrier_init(&both, NULL, 2));
	pthread_t p, w;
	MUST(pthread_create(&w, NULL, waiter, NULL));
	MUST(pthread_create(&p, NULL, poster, NULL));
	MUST(pthread_join(p, NULL));
	MUST(pthread_join(w, NULL));
	return 0;
}
