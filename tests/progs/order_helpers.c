/* order_helpers: two lock-order cycles whose held sides were taken in two
 * shapes, one thread at a time (each joined before the next starts, so
 * nothing contends and nothing hangs):
 *   nested:  outer() takes lock_a, then calls inner(), which takes lock_b;
 *            later lock_b then lock_a: the held side's stack of a -> b is
 *            outer's call, then outer's callers (inner is not in it);
 *   helper:  take() locks lock_c and returns holding it, then its caller
 *            takes lock_d; later lock_d then lock_c: take has returned when
 *            d is wanted, so c's stack is marked partial.
 * The functions stay out of line so each has its own frame. */
#include "progs.h"

#define NOINLINE __attribute__((noinline))

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER, lock_b = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_c = PTHREAD_MUTEX_INITIALIZER, lock_d = PTHREAD_MUTEX_INITIALIZER;

static NOINLINE void inner(void)
{
	MUST(pthread_mutex_lock(&lock_b));
	MUST(pthread_mutex_unlock(&lock_b));
}

static NOINLINE void outer(void)
{
	MUST(pthread_mutex_lock(&lock_a));
	inner();
	MUST(pthread_mutex_unlock(&lock_a));
}

static NOINLINE void take(pthread_mutex_t *m)
{
	MUST(pthread_mutex_lock(m));
}

static void *nested(void *arg)
{
	outer();
	return NULL;
}

static void *nested_reversed(void *arg)
{
	MUST(pthread_mutex_lock(&lock_b));
	MUST(pthread_mutex_lock(&lock_a));
	MUST(pthread_mutex_unlock(&lock_a));
	MUST(pthread_mutex_unlock(&lock_b));
	return NULL;
}

static void *helper(void *arg)
{
	take(&lock_c);
	MUST(pthread_mutex_lock(&lock_d));
	MUST(pthread_mutex_unlock(&lock_d));
	MUST(pthread_mutex_unlock(&lock_c));
	return NULL;
}

static void *helper_reversed(void *arg)
{
	MUST(pthread_mutex_lock(&lock_d));
	MUST(pthread_mutex_lock(&lock_c));
	MUST(pthread_mutex_unlock(&lock_c));
	MUST(pthread_mutex_unlock(&lock_d));
	return NULL;
}

int main(void)
{
	void *(*steps[])(void *) = { nested, nested_reversed, helper, helper_reversed };
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		pthread_t t;
		MUST(pthread_create(&t, NULL, steps[i], NULL));
		MUST(pthread_join(t, NULL));
	}
	return 0;
}
