/* order_memo: lock-order edges that the fast paths' memo (preload/shim.h,
 * cv__order_unchecked) must not hide. One thread takes
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
 * Sets that lost a lock out of order (cv__held_release_slow) must not
 * meet a memo made for another set (helper-64): A, B, C, A released, E,
 * D, then A, B, C, B released, E, D must record the edge A -> D (D a
 * spinlock or a read lock under mutexes, or a mutex under write locks);
 * and a read lock R taken again over X (no edges: held) and its first
 * hold released out of order below X, then taken under X, must record
 * X -> R. (Edges, not cycles: the reverse orders would make a cycle of
 * every path from A to D, more than the report lists.)
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
static pthread_mutex_t pool[16];

/* One lock of any kind, for the out-of-order sequences. */
enum kind { MUTEX, SPIN, READ, WRITE };
struct lock {
	enum kind kind;
	pthread_mutex_t m;
	pthread_spinlock_t s;
	pthread_rwlock_t rw;
};

static void take(struct lock *l)
{
	switch (l->kind) {
	case MUTEX: MUST(pthread_mutex_lock(&l->m)); break;
	case SPIN: MUST(pthread_spin_lock(&l->s)); break;
	case READ: MUST(pthread_rwlock_rdlock(&l->rw)); break;
	case WRITE: MUST(pthread_rwlock_wrlock(&l->rw)); break;
	}
}

static void give(struct lock *l)
{
	switch (l->kind) {
	case MUTEX: MUST(pthread_mutex_unlock(&l->m)); break;
	case SPIN: MUST(pthread_spin_unlock(&l->s)); break;
	default: MUST(pthread_rwlock_unlock(&l->rw)); break;
	}
}

static void make(struct lock *l, enum kind kind, const char *name)
{
	l->kind = kind;
	MUST(pthread_mutex_init(&l->m, NULL));
	MUST(pthread_spin_init(&l->s, PTHREAD_PROCESS_PRIVATE));
	MUST(pthread_rwlock_init(&l->rw, NULL));
	CONVOY_NAME(kind == MUTEX ? (void *)&l->m : kind == SPIN ? (void *)&l->s : (void *)&l->rw, name);
}

/* The out-of-order sets, one group of five each: A, B, C, E of one kind
 * and D of another. */
static struct lock ooo[3][5];
enum { OA, OB, OC, OE, OD };
static const char *const ooo_names[3][5] = { { "ooo_a1", "ooo_b1", "ooo_c1", "ooo_e1", "ooo_d1" },
					      { "ooo_a2", "ooo_b2", "ooo_c2", "ooo_e2", "ooo_d2" },
					      { "ooo_a3", "ooo_b3", "ooo_c3", "ooo_e3", "ooo_d3" } };

static void make_ooo(void)
{
	static const enum kind kinds[3][2] = { { MUTEX, SPIN }, { MUTEX, READ }, { WRITE, MUTEX } };
	for (int g = 0; g < 3; g++)
		for (int i = 0; i < 5; i++)
			make(&ooo[g][i], i == OD ? kinds[g][1] : kinds[g][0], ooo_names[g][i]);
}

/* A, B, C, `out` released out of order, E, D. */
static void ooo_round(struct lock *l, int out)
{
	take(&l[OA]);
	take(&l[OB]);
	take(&l[OC]);
	give(&l[out]);
	take(&l[OE]);
	take(&l[OD]);
	give(&l[OD]);
	give(&l[OE]);
	give(&l[OC]);
	give(&l[out == OA ? OB : OA]);
}

/* The read lock taken again, its first hold released below X. */
static struct lock rec_a, rec_x, rec_r;

/* Under i and j, and under k and l. */
static struct lock memo_s, memo_r;
static pthread_mutex_t *memo_f, *memo_g, *memo_h;

static void pick_fgh(void)
{
	static struct cv_way ways[CV_MUTEX_WAYS];
	_Static_assert(CV_MUTEX_WAYS <= 64, "used: a bit an entry");
	pthread_mutex_t **pick[] = { &memo_f, &memo_g, &memo_h };
	uint64_t used = 0;
	unsigned n = 0;
	for (size_t i = 0; i < sizeof pool / sizeof pool[0] && n < 3; i++) {
		unsigned way = (unsigned)(cv__way(ways, &pool[i]) - ways);
		if (used & 1ull << way)
			continue;
		used |= 1ull << way;
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

/* m, then l under it, three times. */
static void nest_under(pthread_mutex_t *m, struct lock *l)
{
	for (int round = 0; round < 3; round++) {
		MUST(pthread_mutex_lock(m));
		take(l);
		give(l);
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
	nest_under(&memo_i, &memo_s);   /* i -> s */
	nest_under(&memo_j, &memo_s);   /* j -> s */
	nest_under(&memo_k, &memo_r);   /* k -> r (read) */
	nest_under(&memo_l, &memo_r);   /* l -> r */
	for (int g = 0; g < 3; g++) {
		for (int round = 0; round < 3; round++)
			ooo_round(ooo[g], OA);   /* b -> d, c -> d, e -> d */
		ooo_round(ooo[g], OB);           /* a -> d must be recorded */
	}
	take(&rec_a);
	take(&rec_r);   /* a -> r */
	take(&rec_x);   /* a -> x, r -> x */
	take(&rec_r);   /* r again: no edge (held) */
	give(&rec_r);
	give(&rec_r);   /* its first hold, below x */
	take(&rec_r);   /* x -> r must be recorded */
	give(&rec_r);
	give(&rec_x);
	give(&rec_a);
	return NULL;
}

static void *second(void *arg)
{
	(void)arg;
	nest((pthread_mutex_t *const[]){ &memo_c, &memo_b }, 2);   /* c -> b: a cycle with b -> c */
	nest((pthread_mutex_t *const[]){ &memo_d, &memo_e }, 2);   /* d -> e: a cycle with e -> d */
	nest((pthread_mutex_t *const[]){ memo_h, memo_f }, 2);   /* h -> f: a cycle with f -> h */
	take(&memo_s);
	MUST(pthread_mutex_lock(&memo_j));   /* s -> j: a cycle with j -> s */
	MUST(pthread_mutex_unlock(&memo_j));
	give(&memo_s);
	memo_r.kind = WRITE;
	take(&memo_r);
	MUST(pthread_mutex_lock(&memo_l));   /* r -> l: a cycle with l -> r */
	MUST(pthread_mutex_unlock(&memo_l));
	give(&memo_r);
	return NULL;
}

int main(void)
{
	pick_fgh();
	make(&memo_s, SPIN, "memo_s");
	make(&memo_r, READ, "memo_r");
	make_ooo();
	make(&rec_a, MUTEX, "rec_a");
	make(&rec_x, MUTEX, "rec_x");
	make(&rec_r, READ, "rec_r");
	pthread_t th;
	MUST(pthread_create(&th, NULL, first, NULL));
	MUST(pthread_join(th, NULL));
	MUST(pthread_create(&th, NULL, second, NULL));
	MUST(pthread_join(th, NULL));
	return 0;
}
