/* order_benign: lock patterns that look like opposite orders but cannot
 * deadlock, each on its own pair of locks, one thread after another:
 *
 *   recursive  rec then plain_r; then, holding plain_r, rec again (the
 *              thread already owns it: a recursive re-acquisition);
 *   readers    rw for reading then plain_w; another thread plain_w then rw
 *              for reading (readers do not wait for readers);
 *   trylock    try_a then try_b; another thread try_b, then a trylock of
 *              try_a that backs off (releases try_b) when it fails. */
#include <sched.h>

#include "progs.h"

static pthread_mutex_t rec, plain_r = PTHREAD_MUTEX_INITIALIZER, plain_w = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t try_a = PTHREAD_MUTEX_INITIALIZER, try_b = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;

static void *recursive(void *arg)
{
	MUST(pthread_mutex_lock(&rec));
	MUST(pthread_mutex_lock(&plain_r));
	MUST(pthread_mutex_lock(&rec));
	MUST(pthread_mutex_unlock(&rec));
	MUST(pthread_mutex_unlock(&plain_r));
	MUST(pthread_mutex_unlock(&rec));
	return NULL;
}

static void *reader_first(void *arg)
{
	MUST(pthread_rwlock_rdlock(&rw));
	MUST(pthread_mutex_lock(&plain_w));
	MUST(pthread_mutex_unlock(&plain_w));
	MUST(pthread_rwlock_unlock(&rw));
	return NULL;
}

static void *mutex_first(void *arg)
{
	MUST(pthread_mutex_lock(&plain_w));
	MUST(pthread_rwlock_rdlock(&rw));
	MUST(pthread_rwlock_unlock(&rw));
	MUST(pthread_mutex_unlock(&plain_w));
	return NULL;
}

static void *in_order(void *arg)
{
	MUST(pthread_mutex_lock(&try_a));
	MUST(pthread_mutex_lock(&try_b));
	MUST(pthread_mutex_unlock(&try_b));
	MUST(pthread_mutex_unlock(&try_a));
	return NULL;
}

static void *backs_off(void *arg)
{
	for (;;) {
		MUST(pthread_mutex_lock(&try_b));
		if (pthread_mutex_trylock(&try_a) == 0) {
			MUST(pthread_mutex_unlock(&try_a));
			MUST(pthread_mutex_unlock(&try_b));
			return NULL;
		}
		MUST(pthread_mutex_unlock(&try_b));
		sched_yield();
	}
}

static void one_after_another(void *(*fn)(void *))
{
	pthread_t t;
	MUST(pthread_create(&t, NULL, fn, NULL));
	MUST(pthread_join(t, NULL));
}

int main(void)
{
	pthread_mutexattr_t a;
	MUST(pthread_mutexattr_init(&a));
	MUST(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE));
	MUST(pthread_mutex_init(&rec, &a));
	one_after_another(recursive);
	one_after_another(reader_first);
	one_after_another(mutex_first);
	one_after_another(in_order);
	one_after_another(backs_off);
	printf("order_benign: done\n");
	return 0;
}
