/* site.c — one contended wait at a known line, built PIE, non-PIE, stripped
 * (with -rdynamic, so .dynsym keeps the names), stripped with its debug info
 * beside it, and stripped bare. */
#include "stacks_progs.h"

pthread_mutex_t site_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) void site_wait(void)
{
	pthread_mutex_lock(&site_lock);   /* SITE_LINE */
	pthread_mutex_unlock(&site_lock);
}

static void *worker(void *arg)
{
	(void)arg;
	site_wait();
	return NULL;
}

int main(void)
{
	pthread_t th;
	pthread_mutex_lock(&site_lock);
	MUST(pthread_create(&th, NULL, worker, NULL));
	wait_for_waiter(&site_lock);
	pthread_mutex_unlock(&site_lock);
	MUST(pthread_join(th, NULL));
	puts("site: done");
	return 0;
}
