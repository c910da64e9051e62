/* spin.c — pthread_spin_*: spinning is waiting on a CPU.
 *
 * glibc's spinlock is an int: on x86 1 when free (pthread_spin_lock is
 * `lock decl` and spins while the value is not positive; unlock stores 1),
 * elsewhere 0 when free (the generic C version). The fast path peeks at it (one
 * load of the line the real lock is about to take anyway), calls the real
 * lock, and bumps a counter in the thread's own record. Only when the peek
 * says "held" is the clock read on both sides of the real lock: that time is
 * reported as spin time, on-CPU waiting (waits, wait_ns, max_wait_ns and the
 * histogram of the record; the analyzer names it spin_ns and never counts it
 * as blocked time). Every acquisition notes its owner, so hand-offs are
 * counted as for mutexes (shim.h: cv__note_owner). Like the mutex peek, a lock taken by another thread
 * between the peek and the real exchange spins uncounted.
 */
#include <errno.h>

#include "shim.h"

static inline bool spin_held(const pthread_spinlock_t *l)
{
#if CV_SPIN_DECREMENTS
	return CV_LOAD(l) <= 0;
#else
	return CV_LOAD(l) != 0;
#endif
}

/* The bookkeeping of every acquisition off the fast paths: the count, the
 * held-set push (flags: CV_LOCK_*; and CV_HELD_FAST_UNLOCK where the
 * shim releases spinlocks itself: pthread_spin_unlock), the owner. */
static void spin_acquired(struct cv_thread *t, struct cv_rec *r, pthread_spinlock_t *l, const void *pc,
			  uint32_t flags)
{
	CV_BUMP(&r->acquisitions, 1);
	if (CV_SPIN_DECREMENTS && CV_LOAD(&cv__real.take_spin))
		flags |= CV_HELD_FAST_UNLOCK;
	cv__held_push(t, r->obj, (const void *)l, pc, flags);
	cv__note_owner(t, r);
}

/* glibc's x86 lock after its decrement failed (sysdeps/x86_64/nptl/
 * pthread_spin_lock.S): pause while the word is not positive, then
 * decrement again. Made here after the shim's own failed decrement
 * (take_spin): glibc's whole lock would decrement once more first, and a
 * waiting thread would leave the word at -2 where glibc leaves -1. */
static void spin_wait_decremented(pthread_spinlock_t *l)
{
#if CV_SPIN_DECREMENTS
	do {
		do
			__builtin_ia32_pause();
		while (CV_LOAD(l) <= 0);
	} while (__atomic_sub_fetch(l, 1, __ATOMIC_ACQUIRE) != 0);
#else
	(void)l;
#endif
}

/* decremented: the caller's decrement of the word failed (take_spin). */
static CV_COLD int spin_contended(struct cv_thread *t, struct cv_rec *r, pthread_spinlock_t *l, const void *pc,
				  bool decremented)
{
	uint64_t t0 = cv__now_ns();
	cv__wait_begin(t, r->obj, NULL, 0, pc, &t0);
	int rc = 0;
	if (decremented)
		spin_wait_decremented(l);
	else
		rc = cv__real.pthread_spin_lock(l);
	cv__wait_end(t);
	uint64_t ns = cv__now_ns() - t0;
	cv__record_wait(r, ns);
	cv__stack_on_wait(t, r, ns);   /* stacks.c: sampled */
	if (rc == 0) {
		CV_BUMP(&cv__rec_more(r)->contended, 1);
		spin_acquired(t, r, l, pc, 0);
	}
	return rc;
}

/* Everything the fast paths below do not: no state yet (or the guard is
 * raised), a first use or a retired object, locks already held (lock
 * order), an owner change, a held lock word. */
static CV_COLD int spin_lock_slow(pthread_spinlock_t *l, const void *pc)
{
	struct cv_thread *t = cv__current();
	if (!t && !(t = cv__thread_slow()))
		return cv__real.pthread_spin_lock(l);
	struct cv_rec *r = cv__spin_rec(t, (const void *)l);
	cv__lock_attempt(t, r->obj, pc, 0);
	if (spin_held(l))
		return spin_contended(t, r, l, pc, false);
	int rc = cv__real.pthread_spin_lock(l);
	if (rc == 0) {
		spin_acquired(t, r, l, pc, 0);
	}
	return rc;
}

/* take_spin's lock found the word held: its decrement made it more
 * negative, as glibc's own failed attempt does, and glibc's wait follows
 * (spin_wait_decremented). */
static CV_COLD int spin_taken_slow(pthread_spinlock_t *l, const void *pc)
{
	struct cv_thread *t = cv__current();
	if (!t && !(t = cv__thread_slow())) {
		spin_wait_decremented(l);
		return 0;
	}
	struct cv_rec *r = cv__spin_rec(t, (const void *)l);
	cv__lock_attempt(t, r->obj, pc, 0);
	return spin_contended(t, r, l, pc, true);
}

/* take_spin's lock acquired it, but the bookkeeping needs more than the
 * fast path's (spin_lock_slow's reasons, the word aside). */
static CV_COLD int spin_locked_slow(pthread_spinlock_t *l, const void *pc)
{
	struct cv_thread *t = cv__current();
	if (t || (t = cv__thread_slow())) {
		struct cv_rec *r = cv__spin_rec(t, (const void *)l);
		cv__lock_attempt_remembered(t, r->obj, pc, 0);
		spin_acquired(t, r, l, pc, 0);
	}
	return 0;
}

/* The bookkeeping of a spinlock taken without waiting by take_spin's lock,
 * t's record r of it and its object o in hand: rwlock.c's
 * rw_locked_held. */
static inline __attribute__((always_inline)) int spin_locked_held(struct cv_thread *t, pthread_spinlock_t *l,
								   struct cv_rec *r, struct cv_obj *o, const void *pc)
{
	uint32_t n = t->nheld;
	uint64_t prefix = 0;   /* not stored for slot 0 */
	if (n != 0 && CV_UNLIKELY(cv__order_unchecked(t, n, o, &prefix)))
		return spin_locked_slow(l, pc);
	CV_BUMP(&r->acquisitions, 1);
	cv__held_fill(t, n, o, (const void *)l, pc, CV_HELD_FAST_UNLOCK, prefix);
	return 0;
}

/* pthread_spin_lock's test after the lock failed with a miss of the lock's
 * own cache entry or another last owner: a record in the entry's partner
 * (shim.h, cv__way_partner; not beside a retired record there, which the
 * slow path's fill replaces) owned last by this thread is
 * spin_locked_held's, so that the fast path stays one test; anything else
 * is spin_locked_slow's. */
static CV_NOINLINE int spin_locked_more(pthread_spinlock_t *l, const void *pc)
{
	struct cv_thread *t = cv__self;
	struct cv_rec *r;
	struct cv_obj *o;
	uintptr_t other = cv__ways_miss(t->spin_cache, (const void *)l, &r, &o);
	if (!other)
		other = (uintptr_t)CV_LOAD(&o->last_owner) ^ (uintptr_t)t;
	if (other)
		return spin_locked_slow(l, pc);
	return spin_locked_held(t, l, r, o, pc);
}

/* pthread_spin_lock's test failed only for the locks t holds:
 * spin_locked_held with what the fast path read (rwlock.c,
 * rd_locked_nested, says why all of it). */
static CV_NOINLINE int spin_locked_nested(pthread_spinlock_t *l, struct cv_thread *t, struct cv_rec *r,
					  struct cv_obj *o, const void *pc)
{
	if (CV_UNLIKELY(t != cv__self))
		return spin_locked_slow(l, pc);
	return spin_locked_held(t, l, r, o, pc);
}

/* Where the shim does not take spinlocks itself (take_spin, real.c): one
 * test before the real lock (a tracked thread holding no lock, its cached
 * record this lock's and live, its last owner this thread, the lock word
 * free), the real lock (glibc's returns 0 whatever happens), then the
 * count and the held-set push in this thread's lines. */
static CV_NOINLINE int spin_lock_other(pthread_spinlock_t *l, const void *pc)
{
	struct cv_thread *t = cv__self;
	struct cv_rec *r;
	struct cv_obj *o;
	uintptr_t miss = cv__way_miss(cv__way(t->spin_cache, (const void *)l), (const void *)l, &r, &o);
	uintptr_t slow = (t->inert | t->nheld) | miss | ((uintptr_t)CV_LOAD(&o->last_owner) ^ (uintptr_t)t)
		| spin_held(l);
	if (CV_UNLIKELY(slow))
		return spin_lock_slow(l, pc);
	int rc = cv__real.pthread_spin_lock(l);
	CV_BUMP(&r->acquisitions, 1);
	cv__held_push_first(t, o, (const void *)l, pc, 0);
	return rc;
}

/* The uncontended lock: glibc's x86 lock made here (take_spin: a locked
 * decrement from 1 to 0 acquires; anything else was held, and glibc's
 * lock waits), then one test (a tracked thread holding no lock, its cached
 * record this lock's and live, its last owner this thread; else
 * spin_locked_nested or spin_locked_more), the count and the held-set push
 * in this thread's lines. The test comes after the locked instruction,
 * which would wait for its loads (mutex.c, locked).
 * The decrement is also the peek: no lock taken between a peek and the
 * real lock spins uncounted. */
CV_EXPORT int pthread_spin_lock(pthread_spinlock_t *l)
{
	const void *pc = __builtin_return_address(0);
	if (CV_UNLIKELY(!CV_SPIN_DECREMENTS || !CV_LOAD(&cv__real.take_spin)))
		return spin_lock_other(l, pc);
	if (CV_UNLIKELY(__atomic_sub_fetch(l, 1, __ATOMIC_ACQUIRE) != 0))
		return spin_taken_slow(l, pc);
	struct cv_thread *t = cv__self;
	struct cv_rec *r;
	struct cv_obj *o;
	uintptr_t miss = cv__way_miss(cv__way(t->spin_cache, (const void *)l), (const void *)l, &r, &o);
	uintptr_t slow = miss | ((uintptr_t)CV_LOAD(&o->last_owner) ^ (uintptr_t)t);
	if (CV_UNLIKELY(slow | t->nheld))
		return slow ? spin_locked_more(l, pc) : spin_locked_nested(l, t, r, o, pc);
	CV_BUMP(&r->acquisitions, 1);
	cv__held_push_first(t, o, (const void *)l, pc, CV_HELD_FAST_UNLOCK);
	return 0;
}

CV_EXPORT int pthread_spin_trylock(pthread_spinlock_t *l)
{
	struct cv_thread *t = cv__current();
	if (CV_UNLIKELY(!t) && !(t = cv__thread_slow()))
		return cv__real.pthread_spin_trylock(l);
	struct cv_rec *r = cv__spin_rec(t, (const void *)l);
	CV_BUMP(&r->trylocks, 1);
	int rc = cv__real.pthread_spin_trylock(l);
	if (rc == 0) {
		spin_acquired(t, r, l, __builtin_return_address(0), CV_LOCK_TRY);
	} else if (rc == EBUSY)
		CV_BUMP(&cv__rec_more(r)->trylock_failures, 1);
	return rc;
}

static CV_COLD int spin_unlock_slow(struct cv_thread *t, pthread_spinlock_t *l)
{
	if (!t->inert)
		cv__held_pop(t, (const void *)l);
	return cv__real.pthread_spin_unlock(l);
}

/* pthread_spin_unlock's lock not pushed with CV_HELD_FAST_UNLOCK, or not
 * on top of the thread's held set: the lock on top of a tracked thread's
 * held set (cv__inert's is empty) popped, then the real unlock. */
static CV_NOINLINE int spin_unlock_untagged(struct cv_thread *t, pthread_spinlock_t *l, uint32_t n)
{
	if (CV_UNLIKELY(cv__held_not_top(t, n, (const void *)l)))
		return spin_unlock_slow(t, l);
	CV_STORE(&t->nheld, n - 1);
	return cv__real.pthread_spin_unlock(l);
}

/* The unlock of a spinlock taken while the shim takes them itself
 * (take_spin; CV_HELD_FAST_UNLOCK), on top of the thread's held set: one
 * test, the top slot's key (mutex.c's mutex_unlock says what it stands
 * for), the pop, and glibc's x86 unlock, made here (a store of 1: glibc's
 * unlock whoever took the lock, whatever the switch says now). */
CV_EXPORT int pthread_spin_unlock(pthread_spinlock_t *l)
{
	struct cv_thread *t = cv__self;
	uint32_t n = t->nheld;
	if (CV_UNLIKELY(cv__held_not_fast_top(t, n, (const void *)l)))
		return spin_unlock_untagged(t, l, n);
	CV_STORE(&t->nheld, n - 1);
	__atomic_store_n(l, 1, __ATOMIC_RELEASE);   /* glibc's x86 unlock */
	return 0;
}

CV_EXPORT int pthread_spin_init(pthread_spinlock_t *l, int pshared)
{
	if (!cv__current())
		cv__thread_slow();
	int rc = cv__real.pthread_spin_init(l, pshared);
	if (rc == 0 && cv__process.ready && !cv__process.disabled)
		cv__object_init((const void *)l, CV_OBJ_SPIN);   /* a new object, even where one was before */
	return rc;
}

CV_EXPORT int pthread_spin_destroy(pthread_spinlock_t *l)
{
	if (!cv__current())
		cv__thread_slow();
	int rc = cv__real.pthread_spin_destroy(l);
	if (rc == 0 && cv__process.ready && !cv__process.disabled)
		cv__forget_object((const void *)l, CV_OBJ_SPIN);
	return rc;
}
