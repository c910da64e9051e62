/* rwlock_handover — a writer's unlock with others waiting, for each kind of
 * rwlock (prefer-reader, prefer-writer-nonrecursive, process-shared). The
 * shim takes a write lock from a free write phase itself (preload/rwlock.c,
 * wr_word_taken: glibc's steps for that word) and pops its held set before
 * glibc's unlock; glibc's unlock must then find the lock as its own lock
 * would have left it, and hand it to a registered writer, end the write
 * phase for waiting readers and wake the futex waiters. A missed wake
 * hangs this program.
 *
 * Per kind, made to happen in turn (each waiter is waited for until the
 * kernel says it sleeps, never with a timed sleep):
 *  - main holds the write lock, one writer waits for it, main unlocks;
 *  - main holds it, two readers wait, main unlocks;
 *  - main holds it, a writer and two readers wait, main unlocks;
 * then two writers and two readers take it 5,000 times each, the writers
 * adding to a counter the readers check is even (a writer adds 2 in two
 * steps: a reader that saw it odd ran inside a write).
 *
 * Prints one line a kind, the same with and without the shim. */
#include <pthread.h>
#include <stdatomic.h>

#include "prim_util.h"

#define ROUNDS 5000

static pthread_rwlock_t lock;
static long counter;
static atomic_int odd_seen;

struct waiter {
	pthread_t th;
	_Atomic pid_t tid;
	int write;
	atomic_int got;
};

static void *wait_for_lock(void *arg)
{
	struct waiter *w = arg;
	atomic_store(&w->tid, gettid());
	int rc = w->write ? pthread_rwlock_wrlock(&lock) : pthread_rwlock_rdlock(&lock);
	if (rc)
		prim_die("lock in a waiter");
	atomic_store(&w->got, 1);
	pthread_rwlock_unlock(&lock);
	return NULL;
}

/* Main write-holds the lock while the waiters (w[0..n), write or read)
 * block on it, then unlocks: each must get it. Main's write lock is taken
 * from a free write phase, the one the shim takes itself (a lock new, or
 * left by readers, is in a read phase, where glibc's lock would take it):
 * what a write unlock leaves when nobody waits, glibc's WRPHASE bit alone
 * in __readers. */
static int waiters_get_it(struct waiter *w, int n)
{
	if (pthread_rwlock_wrlock(&lock) || pthread_rwlock_unlock(&lock))
		prim_die("wrlock, unlock");
	if (lock.__data.__readers != 1)
		prim_die("a free write phase");
	if (pthread_rwlock_wrlock(&lock))
		prim_die("wrlock");
	for (int i = 0; i < n; i++) {
		atomic_store(&w[i].tid, 0);
		atomic_store(&w[i].got, 0);
		if (pthread_create(&w[i].th, NULL, wait_for_lock, &w[i]))
			prim_die("pthread_create");
		while (!atomic_load(&w[i].tid))
			sched_yield();
		prim_wait_blocked(atomic_load(&w[i].tid));
	}
	if (pthread_rwlock_unlock(&lock))
		prim_die("unlock");
	int got = 0;
	for (int i = 0; i < n; i++) {
		pthread_join(w[i].th, NULL);
		got += atomic_load(&w[i].got);
	}
	return got;
}

static void *writer(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		if (pthread_rwlock_wrlock(&lock))
			prim_die("wrlock in a writer");
		counter++;
		sched_yield();   /* others come to wait meanwhile */
		counter++;
		pthread_rwlock_unlock(&lock);
	}
	return NULL;
}

static void *reader(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		if (pthread_rwlock_rdlock(&lock))
			prim_die("rdlock in a reader");
		if (counter & 1)
			atomic_store(&odd_seen, 1);
		pthread_rwlock_unlock(&lock);
	}
	return NULL;
}

int main(void)
{
	static const char *const kinds[] = { "prefer-reader", "prefer-writer-nonrecursive", "pshared" };
	for (int k = 0; k < 3; k++) {
		pthread_rwlockattr_t a;
		pthread_rwlockattr_init(&a);
		if (k == 1)
			pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		if (k == 2)
			pthread_rwlockattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
		if (pthread_rwlock_init(&lock, &a))
			prim_die("pthread_rwlock_init");
		pthread_rwlockattr_destroy(&a);

		struct waiter one_writer[1] = { { .write = 1 } };
		struct waiter two_readers[2] = { { .write = 0 }, { .write = 0 } };
		struct waiter mixed[3] = { { .write = 1 }, { .write = 0 }, { .write = 0 } };
		int writer_got = waiters_get_it(one_writer, 1);
		int readers_got = waiters_get_it(two_readers, 2);
		int mixed_got = waiters_get_it(mixed, 3);

		counter = 0;
		atomic_store(&odd_seen, 0);
		pthread_t t[4];
		for (int i = 0; i < 4; i++)
			if (pthread_create(&t[i], NULL, i < 2 ? writer : reader, NULL))
				prim_die("pthread_create");
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		printf("%s: writer got it %d/1, readers %d/2, mixed %d/3; counter %ld of %d, odd seen %d\n", kinds[k],
		       writer_got, readers_got, mixed_got, counter, 4 * ROUNDS, atomic_load(&odd_seen));
		if (pthread_rwlock_destroy(&lock))
			prim_die("pthread_rwlock_destroy");
	}
	return 0;
}
