/* order_memo: lock-order edges that the fast mutex path's memo
 * (preload/shim.h, cv__order_unchecked) must not hide. One thread takes
 * nested locks in loops, so that the memo is set and then met again with
 * a different lock below the same slot; a second thread, after it, takes
 * two of those pairs the other way round. Every edge the first thread made
 * is recorded exactly when the report shows two cycles, b-c and d-e: b -> c
 * is taken with b where a was (slot 0 reused), e -> d with e where a was
 * below the same b (slot 1's memo from a, b -> d must not serve e, b -> d). */
#include "progs.h"

static pthread_mutex_t memo_a = PTHREAD_MUTEX_INITIALIZER, memo_b = PTHREAD_MUTEX_INITIALIZER,
		       memo_c = PTHREAD_MUTEX_INITIALIZER, memo_d = PTHREAD_MUTEX_INITIALIZER,
		       memo_e = PTHREAD_MUTEX_INITIALIZER;

static void nest(pthread_mutex_t *const *locks, int n)
{
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < n; i++)
			MUST(pthread_mutex_lock(locks[i]));
		for (int i = n; i-- > 0;)
			MUST(pthread_mutex_unlock(locks[i]));
	}
}

static void *first(void *arg)
{
	(void)arg;
	nest((pthread_mutex_t *const[]){ &memo_a, &memo_c }, 2);            /* a -> c */
	nest((pthread_mutex_t *const[]){ &memo_b, &memo_c }, 2);            /* b -> c */
	nest((pthread_mutex_t *const[]){ &memo_a, &memo_b, &memo_d }, 3);   /* a -> b, a -> d, b -> d */
	nest((pthread_mutex_t *const[]){ &memo_e, &memo_b, &memo_d }, 3);   /* e -> b, e -> d */
	return NULL;
}

static void *second(void *arg)
{
	(void)arg;
	nest((pthread_mutex_t *const[]){ &memo_c, &memo_b }, 2);   /* c -> b: a cycle with b -> c */
	nest((pthread_mutex_t *const[]){ &memo_d, &memo_e }, 2);   /* d -> e: a cycle with e -> d */
	return NULL;
}

int main(void)
{
	pthread_t th;
	MUST(pthread_create(&th, NULL, first, NULL));
	MUST(pthread_join(th, NULL));
	MUST(pthread_create(&th, NULL, second, NULL));
	MUST(pthread_join(th, NULL));
	return 0;
}
