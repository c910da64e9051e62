/* order_memo: lock-order edges that the fast mutex path's memo
 * (preload/shim.h, cv__order_unchecked) must not hide. One thread takes
 * nested locks in loops, so that the memo is set and then met again with
 * a different lock below the same slot; a second thread, after it, takes
 * two of those pairs the other way round. Every edge the first thread made
 * is recorded exactly when the report shows two cycles, b-c and d-e: b -> c
 * is taken with b where a was (slot 0 reused), e -> d with e where a was
 * below the same b (slot 1's memo from a, b -> d must not serve e, b -> d).
 * A third cycle, f-h: g -> h is looked up after f was released out of
 * order below g, and must not serve f, g -> h once f is taken again (with
 * the set shifted down, g -> h is remembered on slot 0 and cannot; a
 * design that left g in its slot would remember it on slot 1).
 * The spinlock and rwlock fast paths keep the same memo: i -> s and
 * k -> r are remembered on slot 0, and must not serve j -> s and l -> r
 * (cycles j-s and l-r, the second thread taking s and r first).
 * White-box (preload/shim.h): f, g and h are three of a pool whose entries
 * in the shim's mutex cache differ, so that every acquisition of h after
 * its first is one the memo could let through, whatever the addresses. */
#include "progs.h"

#include <convoy.h>

#include "../../preload/shim.h"

static pthread_mutex_t memo_a = PTHREAD_MUTEX_INITIALIZER, memo_b = PTHREAD_MUTEX_INITIALIZER,
		       memo_c = PTHREAD_MUTEX_INITIALIZER, memo_d = PTHREAD_MUTEX_INITIALIZER,
		       memo_e = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t memo_i = PTHREAD_MUTEX_INITIALIZER, memo_j = PTHREAD_MUTEX_INITIALIZER,
		       memo_k = PTHREAD_MUTEX_INITIALIZER, memo_l = PTHREAD_MUTEX_INITIALIZER;
static pthread_spinlock_t memo_s;
static pthread_rwlock_t memo_r = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t pool[16];
static pthread_mutex_t *memo_f, *memo_g, *memo_h;

static void pick_fgh(void)
{
	static struct cv_way ways[CV_WAYS];
	pthread_mutex_t **pick[] = { &memo_f, &memo_g, &memo_h };
	unsigned used = 0, n = 0;
	for (size_t i = 0; i < sizeof pool / sizeof pool[0] && n < 3; i++) {
		unsigned way = (unsigned)(cv__way(ways, &pool[i]) - ways);
		if (used & 1u << way)
			continue;
		used |= 1u << way;
		MUST(pthread_mutex_init(&pool[i], NULL));
		*pick[n++] = &pool[i];
	}
	if (n < 3) {
		fprintf(stderr, "order_memo: no three mutexes in different cache entries\n");
		exit(1);
	}
	CONVOY_NAME(memo_f, "memo_f");
	CONVOY_NAME(memo_g, "memo_g");
	CONVOY_NAME(memo_h, "memo_h");
}

static void nest(pthread_mutex_t *const *locks, int n)
{
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < n; i++)
			MUST(pthread_mutex_lock(locks[i]));
		for (int i = n; i-- > 0;)
			MUST(pthread_mutex_unlock(locks[i]));
	}
}

/* m, then s or r (read) under it, three times. */
static void nest_spin(pthread_mutex_t *m, pthread_spinlock_t *s)
{
	for (int round = 0; round < 3; round++) {
		MUST(pthread_mutex_lock(m));
		MUST(pthread_spin_lock(s));
		MUST(pthread_spin_unlock(s));
		MUST(pthread_mutex_unlock(m));
	}
}

static void nest_read(pthread_mutex_t *m, pthread_rwlock_t *r)
{
	for (int round = 0; round < 3; round++) {
		MUST(pthread_mutex_lock(m));
		MUST(pthread_rwlock_rdlock(r));
		MUST(pthread_rwlock_unlock(r));
		MUST(pthread_mutex_unlock(m));
	}
}

static void *first(void *arg)
{
	(void)arg;
	nest((pthread_mutex_t *const[]){ &memo_a, &memo_c }, 2);            /* a -> c */
	nest((pthread_mutex_t *const[]){ &memo_b, &memo_c }, 2);            /* b -> c */
	nest((pthread_mutex_t *const[]){ &memo_a, &memo_b, &memo_d }, 3);   /* a -> b, a -> d, b -> d */
	nest((pthread_mutex_t *const[]){ &memo_e, &memo_b, &memo_d }, 3);   /* e -> b, e -> d */
	for (int round = 0; round < 3; round++) {
		MUST(pthread_mutex_lock(memo_f));
		MUST(pthread_mutex_lock(memo_g));   /* f -> g */
		MUST(pthread_mutex_unlock(memo_f));   /* out of order, below g */
		MUST(pthread_mutex_lock(memo_h));   /* g -> h, without f */
		MUST(pthread_mutex_unlock(memo_h));
		MUST(pthread_mutex_unlock(memo_g));
	}
	nest((pthread_mutex_t *const[]){ memo_f, memo_g, memo_h }, 3);   /* f -> h */
	nest_spin(&memo_i, &memo_s);   /* i -> s */
	nest_spin(&memo_j, &memo_s);   /* j -> s */
	nest_read(&memo_k, &memo_r);   /* k -> r */
	nest_read(&memo_l, &memo_r);   /* l -> r */
	return NULL;
}

static void *second(void *arg)
{
	(void)arg;
	nest((pthread_mutex_t *const[]){ &memo_c, &memo_b }, 2);   /* c -> b: a cycle with b -> c */
	nest((pthread_mutex_t *const[]){ &memo_d, &memo_e }, 2);   /* d -> e: a cycle with e -> d */
	nest((pthread_mutex_t *const[]){ memo_h, memo_f }, 2);   /* h -> f: a cycle with f -> h */
	MUST(pthread_spin_lock(&memo_s));
	MUST(pthread_mutex_lock(&memo_j));   /* s -> j: a cycle with j -> s */
	MUST(pthread_mutex_unlock(&memo_j));
	MUST(pthread_spin_unlock(&memo_s));
	MUST(pthread_rwlock_wrlock(&memo_r));
	MUST(pthread_mutex_lock(&memo_l));   /* r -> l: a cycle with l -> r */
	MUST(pthread_mutex_unlock(&memo_l));
	MUST(pthread_rwlock_unlock(&memo_r));
	return NULL;
}

int main(void)
{
	pick_fgh();
	MUST(pthread_spin_init(&memo_s, PTHREAD_PROCESS_PRIVATE));
	pthread_t th;
	MUST(pthread_create(&th, NULL, first, NULL));
	MUST(pthread_join(th, NULL));
	MUST(pthread_create(&th, NULL, second, NULL));
	MUST(pthread_join(th, NULL));
	return 0;
}
