/* deep.c — a known deep stack for the golden test (tests/stacks/golden/deep.txt).
 *
 * The worker recurses DEPTH times, then blocks on deep_lock through an
 * always-inlined helper, while main holds it: one contended wait whose stack
 * is take (inlined) <- recurse x (DEPTH + 1) <- worker. Built -O0 so the
 * frames are exactly the source's. Line numbers are part of the golden file:
 * edit this file and regenerate it (tests/stacks/golden/README).
 */
#include "stacks_progs.h"

#define DEPTH 12

static pthread_mutex_t deep_lock = PTHREAD_MUTEX_INITIALIZER;

static inline __attribute__((always_inline)) void take(pthread_mutex_t *m)
{
	pthread_mutex_lock(m);
}

__attribute__((noinline)) static int recurse(int n)
{
	if (n == 0) {
		take(&deep_lock);
		pthread_mutex_unlock(&deep_lock);
		return 0;
	}
	return recurse(n - 1) + 1;
}

static void *worker(void *arg)
{
	(void)arg;
	recurse(DEPTH);
	return NULL;
}

int main(void)
{
	pthread_t th;
	pthread_mutex_lock(&deep_lock);
	MUST(pthread_create(&th, NULL, worker, NULL));
	wait_for_waiter(&deep_lock);
	pthread_mutex_unlock(&deep_lock);
	MUST(pthread_join(th, NULL));
	puts("deep: done");
	return 0;
}
