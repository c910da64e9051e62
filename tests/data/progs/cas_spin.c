/* cas_spin — hand-written spin loops, no pthread lock: by default a user
 * spinlock (user_lock, taken with __atomic_compare_exchange_n in a retry
 * loop) around a short critical section, 2,000,000 acquisitions split over
 * the workers; with --tas a test-and-set spinlock (tas_lock: xchg, and a
 * read-only wait loop with pause while it is taken); with --increment a
 * CAS-increment loop on a shared counter (cas_counter). The samples land in
 * the loops: the decoder must call the locks' words spun on (user_lock,
 * tas_lock), not a plain store of shared data (issue 12), and the counter a
 * word several threads store to (true sharing: a lock-free update, no
 * lock). The data the locks guard lies on a line of its own. */
#include "data_progs.h"

#define TOTAL 2000000L

_Alignas(64) int user_lock;
_Alignas(64) char tas_lock;
_Alignas(64) long cas_counter;
_Alignas(64) long guarded_total;
static long per_worker;
static int increment, tas;

static void take(int *lock)
{
	int expected = 0;
	while (!__atomic_compare_exchange_n(lock, &expected, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		expected = 0;
}

static void take_tas(char *lock)
{
	while (__atomic_test_and_set(lock, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(lock, __ATOMIC_RELAXED))
			__builtin_ia32_pause();
}

static void *worker(void *arg)
{
	dp_name("casser");
	(void)arg;
	for (long i = 0; i < per_worker; i++) {
		if (increment) {
			long old = __atomic_load_n(&cas_counter, __ATOMIC_RELAXED);
			while (!__atomic_compare_exchange_n(&cas_counter, &old, old + 1, 0, __ATOMIC_RELAXED,
							    __ATOMIC_RELAXED))
				;
			continue;
		}
		if (tas) {
			take_tas(&tas_lock);
			guarded_total++;
			__atomic_clear(&tas_lock, __ATOMIC_RELEASE);
			continue;
		}
		take(&user_lock);
		guarded_total++;
		__atomic_store_n(&user_lock, 0, __ATOMIC_RELEASE);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = dp_workers(argc, argv);
	for (int i = 1; i < argc; i++)
		increment |= !strcmp(argv[i], "--increment"), tas |= !strcmp(argv[i], "--tas");
	pthread_t t[64];
	per_worker = TOTAL / n;
	dp_start(t, n, worker, t, 0);
	dp_join(t, n);
	printf("total %ld\n", increment ? cas_counter : guarded_total);
	return 0;
}
