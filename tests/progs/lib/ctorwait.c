/* libctorwait.so: a constructor, run under dlopen's lock, that starts a
 * thread and waits for it; that thread first starts one on a small stack
 * (64 KiB) and joins it. Natively nothing here takes the loader's lock
 * again; a shim that did (a dlopen of its own in pthread_create, tried and
 * taken out on 2026-12-03) hangs it. */
#include <pthread.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int ready;

static void *helper(void *arg)
{
	return arg;
}

static void *worker(void *arg)
{
	pthread_attr_t attr;
	pthread_t h;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	if (pthread_create(&h, &attr, helper, NULL) == 0)
		pthread_join(h, NULL);
	pthread_attr_destroy(&attr);
	pthread_mutex_lock(&m);
	ready = 1;
	pthread_cond_signal(&c);
	pthread_mutex_unlock(&m);
	return arg;
}

__attribute__((constructor)) static void ctorwait_init(void)
{
	pthread_t w;
	if (pthread_create(&w, NULL, worker, NULL) != 0)
		return;
	pthread_mutex_lock(&m);
	while (!ready)
		pthread_cond_wait(&c, &m);
	pthread_mutex_unlock(&m);
	pthread_join(w, NULL);
}
