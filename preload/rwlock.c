/* rwlock.c — pthread_rwlock_*: read and write sides counted apart.
 *
 * The fast paths are mutex.c's: glibc's uncontended step made in the
 * shim where it is exactly glibc's (rd_taken, rd_released,
 * wr_word_taken), else one load of glibc's state word (__readers) and the
 * real call; then the thread's state (a cached record lookup) and a
 * counter bump in a line only this thread writes. No clock read and no
 * shared write unless the peek says the caller is about to block.
 *
 * glibc's __readers word (nptl/pthread_rwlock_common.c): bit 0 WRPHASE (the
 * lock is in a write phase), bit 1 WRLOCKED (a writer owns it, or is the
 * primary writer waiting for readers to leave), bit 2 RWAITING, readers
 * counted from bit 3. So:
 *
 *  - a reader blocks when a writer owns the lock: WRPHASE and WRLOCKED; and,
 *    for PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP, also when a writer is
 *    waiting in a read phase that has readers;
 *  - a writer blocks when another writer has WRLOCKED, or when readers hold
 *    a read phase: that second case is "a writer waiting behind readers",
 *    counted on its own (wr_behind_readers, with its wait time).
 *
 * Write acquisitions note the owner, so the write side counts hand-offs as
 * a mutex does (shim.h: cv__note_owner); read sides have no single owner.
 *
 * Like the mutex peek, a lock taken by another thread between the peek and
 * the real call's own atomic is a wait that is neither counted nor timed.
 * Every return code passes through untouched; EDEADLK (the caller already
 * owns it for writing) is not contention.
 */
#include <errno.h>

#include "shim.h"

#define RW_WRPHASE      1u
#define RW_WRLOCKED     2u
#define RW_RWAITING     4u
#define RW_READER_SHIFT 3
#define RW_READER       (1u << RW_READER_SHIFT)

static inline unsigned rw_word(const pthread_rwlock_t *rw)
{
	return CV_LOAD(&rw->__data.__readers);
}

/* Both without a branch, for the fast paths' one test; __flags shares the
 * line of __readers. */
static inline bool rd_would_block(const pthread_rwlock_t *rw, unsigned r)
{
	unsigned phase = r & (RW_WRPHASE | RW_WRLOCKED);
	/* A waiting writer blocks new readers only when writers are preferred. */
	return (phase == (RW_WRPHASE | RW_WRLOCKED)) |
	       ((phase == RW_WRLOCKED) &
		(CV_LOAD(&rw->__data.__flags) == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP));
}

static inline bool wr_would_block(unsigned r)
{
	return ((r & RW_WRLOCKED) != 0) | (((r & RW_WRPHASE) == 0) & ((r >> RW_READER_SHIFT) != 0));
}

static inline bool owned_by(const struct cv_thread *t, const pthread_rwlock_t *rw)
{
	return CV_LOAD(&rw->__data.__cur_writer) == t->tid;
}

/* The record, with the lock's preference noted in its object on a miss. */
static CV_COLD struct cv_rec *rw_rec_slow(struct cv_thread *t, pthread_rwlock_t *rw)
{
	struct cv_rec *r = cv__lookup_slow(t, rw, CV_OBJ_RWLOCK);
	uint32_t kind = (uint32_t)CV_LOAD(&rw->__data.__flags) & CV_RWLOCK_KIND_MASK;
	if (CV_LOAD(&r->obj->flags) != kind)
		CV_STORE(&r->obj->flags, kind);
	return r;
}

static inline struct cv_rec *rw_rec(struct cv_thread *t, pthread_rwlock_t *rw)
{
	struct cv_rec *r;
	struct cv_obj *o;
	if (CV_LIKELY(!cv__ways_miss(t->rwlock_cache, rw, &r, &o)))
		return r;
	return rw_rec_slow(t, rw);
}

/* A reader's acquisition is counted in rd_acquisitions only: in memory
 * acquisitions counts the writers', and the profile's acquisitions both
 * (output.c adds them). One counter, in one of the record's lines, where
 * a reader bumped two in two. */
static inline void rd_acquired(struct cv_rec *r)
{
	CV_BUMP(&r->rd_acquisitions, 1);
}

/* The flags of a push (CV_LOCK_*), with CV_HELD_FAST_UNLOCK while the
 * shim takes rwlocks itself (take_rwlock), so that the unlock tests
 * nothing else of the thread or the switch (pthread_rwlock_unlock). */
static inline uint32_t rw_push_flags(uint32_t flags)
{
	if (CV_LOAD(&cv__real.take_rwlock))
		flags |= CV_HELD_FAST_UNLOCK;
	return flags;
}

/* One real locking function, called as (rw, clock, abstime). */
typedef int (*rw_fn)(pthread_rwlock_t *, clockid_t, const struct timespec *);

static int real_rdlock(pthread_rwlock_t *rw, clockid_t c, const struct timespec *ts)
{
	return cv__real.pthread_rwlock_rdlock(rw);
}
static int real_timedrdlock(pthread_rwlock_t *rw, clockid_t c, const struct timespec *ts)
{
	return cv__real.pthread_rwlock_timedrdlock(rw, ts);
}
static int real_clockrdlock(pthread_rwlock_t *rw, clockid_t c, const struct timespec *ts)
{
	return cv__real.pthread_rwlock_clockrdlock(rw, c, ts);
}
static int real_wrlock(pthread_rwlock_t *rw, clockid_t c, const struct timespec *ts)
{
	return cv__real.pthread_rwlock_wrlock(rw);
}
static int real_timedwrlock(pthread_rwlock_t *rw, clockid_t c, const struct timespec *ts)
{
	return cv__real.pthread_rwlock_timedwrlock(rw, ts);
}
static int real_clockwrlock(pthread_rwlock_t *rw, clockid_t c, const struct timespec *ts)
{
	return cv__real.pthread_rwlock_clockwrlock(rw, c, ts);
}

static CV_COLD int rd_blocking(struct cv_thread *t, struct cv_rec *r, pthread_rwlock_t *rw, clockid_t clock,
			       const struct timespec *ts, rw_fn real, const void *pc)
{
	uint64_t t0 = cv__now_ns();
	cv__wait_begin(t, r->obj, NULL, CV_LOCK_READ | (ts ? CV_WAIT_TIMED : 0), pc, &t0);
	int rc = real(rw, clock, ts);
	cv__wait_end(t);
	uint64_t ns = cv__now_ns() - t0;
	cv__record_wait(r, ns);
	cv__stack_on_wait(t, r, ns);   /* stacks.c: sampled */
	struct cv_rec_more *m = cv__rec_more(r);
	CV_BUMP(&m->rd_waits, 1);
	CV_BUMP(&m->rd_wait_ns, ns);
	cv__store_max(&m->rd_max_wait_ns, ns);
	if (rc == 0) {
		CV_BUMP(&m->contended, 1);
		CV_BUMP(&m->rd_contended, 1);
		rd_acquired(r);
		cv__held_push(t, r->obj, rw, pc, rw_push_flags(CV_LOCK_READ));
	} else if (rc == ETIMEDOUT) {
		CV_BUMP(&m->timeouts, 1);
	}
	return rc;
}

static CV_COLD int wr_blocking(struct cv_thread *t, struct cv_rec *r, pthread_rwlock_t *rw, unsigned word,
			       clockid_t clock, const struct timespec *ts, rw_fn real, const void *pc)
{
	if (owned_by(t, rw))   /* EDEADLK, at once */
		return real(rw, clock, ts);
	bool behind_readers = !(word & (RW_WRPHASE | RW_WRLOCKED)) && (word >> RW_READER_SHIFT);
	uint64_t t0 = cv__now_ns();
	cv__wait_begin(t, r->obj, NULL, ts ? CV_WAIT_TIMED : 0, pc, &t0);
	int rc = real(rw, clock, ts);
	cv__wait_end(t);
	uint64_t ns = cv__now_ns() - t0;
	cv__record_wait(r, ns);
	cv__stack_on_wait(t, r, ns);   /* stacks.c: sampled */
	struct cv_rec_more *m = cv__rec_more(r);
	cv__store_max(&m->wr_max_wait_ns, ns);
	if (behind_readers) {
		CV_BUMP(&m->wr_behind_readers, 1);
		CV_BUMP(&m->wr_behind_readers_ns, ns);
	}
	if (rc == 0) {
		CV_BUMP(&m->contended, 1);
		CV_BUMP(&r->acquisitions, 1);
		cv__held_push(t, r->obj, rw, pc, rw_push_flags(0));
		cv__note_owner(t, r);
	} else if (rc == ETIMEDOUT) {
		CV_BUMP(&m->timeouts, 1);
	}
	return rc;
}

static inline __attribute__((always_inline)) int
rd_lock(pthread_rwlock_t *rw, clockid_t clock, const struct timespec *ts, rw_fn real, const void *pc)
{
	struct cv_thread *t = cv__current();
	if (CV_UNLIKELY(!t) && !(t = cv__thread_slow()))
		return real(rw, clock, ts);
	struct cv_rec *r = rw_rec(t, rw);
	cv__lock_attempt(t, r->obj, pc, CV_LOCK_READ);
	if (CV_UNLIKELY(rd_would_block(rw, rw_word(rw))) && !owned_by(t, rw))
		return rd_blocking(t, r, rw, clock, ts, real, pc);
	int rc = real(rw, clock, ts);
	if (CV_LIKELY(rc == 0)) {
		rd_acquired(r);
		cv__held_push(t, r->obj, rw, pc, rw_push_flags(CV_LOCK_READ));
	} else if (rc == ETIMEDOUT)
		CV_BUMP(&cv__rec_more(r)->timeouts, 1);
	return rc;
}

static inline __attribute__((always_inline)) int
wr_lock(pthread_rwlock_t *rw, clockid_t clock, const struct timespec *ts, rw_fn real, const void *pc)
{
	struct cv_thread *t = cv__current();
	if (CV_UNLIKELY(!t) && !(t = cv__thread_slow()))
		return real(rw, clock, ts);
	struct cv_rec *r = rw_rec(t, rw);
	cv__lock_attempt(t, r->obj, pc, 0);
	unsigned word = rw_word(rw);
	if (CV_UNLIKELY(wr_would_block(word)))
		return wr_blocking(t, r, rw, word, clock, ts, real, pc);
	int rc = real(rw, clock, ts);
	if (CV_LIKELY(rc == 0)) {
		CV_BUMP(&r->acquisitions, 1);
		cv__held_push(t, r->obj, rw, pc, rw_push_flags(0));
		cv__note_owner(t, r);
	} else if (rc == ETIMEDOUT)
		CV_BUMP(&cv__rec_more(r)->timeouts, 1);
	return rc;
}

/* The plain rdlock and wrlock when the peek says they may block, or before
 * the shim is initialised (it is, before the lock: mutex.c's mutex_lock
 * says why). */
static CV_COLD int rdlock_slow(pthread_rwlock_t *rw, const void *pc)
{
	return rd_lock(rw, CLOCK_REALTIME, NULL, real_rdlock, pc);
}

static CV_COLD int wrlock_slow(pthread_rwlock_t *rw, const void *pc)
{
	return wr_lock(rw, CLOCK_REALTIME, NULL, real_wrlock, pc);
}

/* An acquisition (rc 0) or failure of the plain rdlock or wrlock that the
 * fast paths below leave here: no state installed yet, a first use or a
 * retired object, locks held (the order edges are looked up now: the lock
 * did not block), a full held set, an owner change, an error. */
static CV_COLD int rw_locked_slow(pthread_rwlock_t *rw, int rc, uint32_t flags, const void *pc)
{
	struct cv_thread *t = cv__current();
	if (rc != 0 || (!t && !(t = cv__thread_slow())))
		return rc;
	struct cv_rec *r = rw_rec(t, rw);
	cv__lock_attempt_remembered(t, r->obj, pc, flags);
	if (flags & CV_LOCK_READ) {
		rd_acquired(r);
	} else {
		CV_BUMP(&r->acquisitions, 1);
		cv__note_owner(t, r);
	}
	cv__held_push(t, r->obj, rw, pc, rw_push_flags(flags));
	return 0;
}

/* The bookkeeping of an rdlock or wrlock that did not wait, t's record r
 * of the lock and its object o in hand: with locks held, the lock-order
 * memo's test (shim.h, cv__order_unchecked); then the count and the push.
 * The held count is read here: a signal handler may have changed it since
 * the caller's test (one that returned holding a lock, or having released
 * one), and with none held there are no edges to look up. */
static inline __attribute__((always_inline)) int rw_locked_held(struct cv_thread *t, pthread_rwlock_t *rw,
								 struct cv_rec *r, struct cv_obj *o, uint32_t flags,
								 const void *pc)
{
	uint32_t n = t->nheld;
	uint64_t prefix = 0;   /* not stored for slot 0 */
	if (n != 0 && CV_UNLIKELY(cv__order_unchecked(t, n, o, &prefix)))
		return rw_locked_slow(rw, 0, flags, pc);
	if (flags & CV_LOCK_READ)
		rd_acquired(r);
	else
		CV_BUMP(&r->acquisitions, 1);
	cv__held_fill(t, n, o, rw, pc, rw_push_flags(flags), prefix);
	return 0;
}

/* rw_locked's test failed with a miss of the lock's own cache entry, an
 * error, or a writer that is not the lock's last owner: the record found
 * in the entry's partner (shim.h, cv__way_partner; beside a retired
 * record there it is rw_locked_slow's, whose fill puts it home) or, when
 * in neither entry and no lock is held, in the thread's second rwlock
 * cache (cv_thread.l2: more rwlocks in turn than the first holds) and
 * nothing else amiss is rw_locked_held's, so that rw_locked stays one
 * test; anything else is rw_locked_slow's. */
static CV_NOINLINE int rw_locked_more(pthread_rwlock_t *rw, int rc, uint32_t flags, const void *pc)
{
	struct cv_thread *t = cv__self;
	struct cv_rec *r;
	struct cv_obj *o;
	struct cv_way *l2;
	uintptr_t other = (unsigned)rc | cv__ways_miss(t->rwlock_cache, rw, &r, &o);
	if (!rc && cv__ways_none(other) && !t->nheld && (l2 = cv__l2(t, CV_L2_RWLOCK)))
		other = cv__l2_miss(l2, rw, &r, &o);
	if (!(other | (flags & CV_LOCK_READ)))
		other = (uintptr_t)CV_LOAD(&o->last_owner) ^ (uintptr_t)t;
	if (other)
		return rw_locked_slow(rw, rc, flags, pc);
	return rw_locked_held(t, rw, r, o, flags, pc);
}

/* rw_locked's test failed only for the locks t holds: its record r came
 * from the lock's own cache entry. rw_locked_held with the thread state
 * and the lookup rw_locked made, which rw_locked_more would make again, in
 * both entries: OpenSSL 3 takes two thirds of its read locks under
 * another (openssl verify: 271,766 of 410,812).
 *
 * t, r and o come from one look at the thread's own state. A fork child
 * made by a signal handler since then has t, the parent's state's copy,
 * which is no longer its own: the slow path counts the acquisition in the
 * child's own state (with only the state read again here, the child's
 * own, or the const cv__inert, got the parent's record and object:
 * docs/performance.md, "Locks under other locks, one lookup"). A fork
 * after the test leaves t, r and o together, the parent's copies, where
 * the acquisition is counted, as rw_locked's own push would count it.
 *
 * One function for readers and one for writers, so that neither keeps
 * flags in a register; t first, the order in which the fast paths' code
 * stayed as it was (rw first cost wrlock 0.2 ns, 21 rounds; spin.c's l
 * first is its own such order). */
static CV_NOINLINE int rd_locked_nested(struct cv_thread *t, pthread_rwlock_t *rw, struct cv_rec *r,
					struct cv_obj *o, const void *pc)
{
	if (CV_UNLIKELY(t != cv__self))
		return rw_locked_slow(rw, 0, CV_LOCK_READ, pc);
	return rw_locked_held(t, rw, r, o, CV_LOCK_READ, pc);
}

static CV_NOINLINE int wr_locked_nested(struct cv_thread *t, pthread_rwlock_t *rw, struct cv_rec *r,
					struct cv_obj *o, const void *pc)
{
	if (CV_UNLIKELY(t != cv__self))
		return rw_locked_slow(rw, 0, 0, pc);
	return rw_locked_held(t, rw, r, o, 0, pc);
}

/* The bookkeeping of a plain rdlock or wrlock that returned rc without
 * waiting: one test of the thread's state (a tracked thread holding no
 * lock, whose cached record is this lock's and live, and for a writer its
 * last owner), then the count and the held-set push in lines only this
 * thread writes; with locks held and nothing else amiss,
 * rd_locked_nested's or wr_locked_nested's; anything else is
 * rw_locked_more's. taken_here: by rd_taken or wr_word_taken (pushed
 * with CV_HELD_FAST_UNLOCK: rw_push_flags without the load). */
static inline __attribute__((always_inline)) int rw_locked(pthread_rwlock_t *rw, int rc, uint32_t flags,
							    const void *pc, bool taken_here)
{
	struct cv_thread *t = cv__self;
	struct cv_rec *r;
	struct cv_obj *o;
	uintptr_t miss = cv__way_miss(cv__way(t->rwlock_cache, rw), rw, &r, &o);
	uint32_t n = t->nheld;
	uintptr_t slow = (unsigned)rc | miss;
	if (!(flags & CV_LOCK_READ))
		slow |= (uintptr_t)CV_LOAD(&o->last_owner) ^ (uintptr_t)t;
	if (CV_UNLIKELY(slow | n))
		return slow		      ? rw_locked_more(rw, rc, flags, pc)
		       : (flags & CV_LOCK_READ) ? rd_locked_nested(t, rw, r, o, pc)
						: wr_locked_nested(t, rw, r, o, pc);
	if (flags & CV_LOCK_READ)
		rd_acquired(r);
	else
		CV_BUMP(&r->acquisitions, 1);
	cv__held_push_first(t, o, rw, pc, taken_here ? flags | CV_HELD_FAST_UNLOCK : rw_push_flags(flags));
	return 0;
}

/* The plain rdlock and wrlock where the shim does not take the lock itself
 * (rd_taken, wr_word_taken): mutex.c's lock_other shape. A peek at the lock
 * before the real call (it would block: the timed slow path), then
 * rw_locked. The peek reads only the rwlock, so the real call's atomic
 * waits for nothing the shim loads (mutex.c says why that matters). */
static CV_NOINLINE int rdlock_other(pthread_rwlock_t *rw, const void *pc)
{
	if (CV_UNLIKELY(rd_would_block(rw, rw_word(rw)) | !CV_LOAD(&cv__process.ready)))
		return rdlock_slow(rw, pc);
	return rw_locked(rw, cv__real.pthread_rwlock_rdlock(rw), CV_LOCK_READ, pc, false);
}

static CV_NOINLINE int wrlock_other(pthread_rwlock_t *rw, const void *pc)
{
	if (CV_UNLIKELY(wr_would_block(rw_word(rw)) | !CV_LOAD(&cv__process.ready)))
		return wrlock_slow(rw, pc);
	return rw_locked(rw, cv__real.pthread_rwlock_wrlock(rw), 0, pc, false);
}

/* glibc's reader fast path (pthread_rwlock_common.c,
 * __pthread_rwlock_rdlock_full64), made here when take_rwlock (real.c): in
 * a read phase that no writer holds or waits for (neither WRPHASE nor
 * WRLOCKED), one more reader, short of glibc's reader overflow (bit 31). A
 * compare-and-swap where glibc adds: the same word when it succeeds. glibc's
 * tests before its add cannot fire on such a word: the caller is not its
 * writer (that writer would hold WRLOCKED), and a writer-preferring lock
 * holds readers back only for a writer with WRLOCKED. False, and nothing
 * written, for any other word: the real rdlock decides. */
static inline bool rd_taken(pthread_rwlock_t *rw)
{
	unsigned r = rw_word(rw);
	uintptr_t not_here = (r & (RW_WRPHASE | RW_WRLOCKED)) | ((r + RW_READER) >> 31) |
			     (CV_LOAD(&cv__real.take_rwlock) ^ 1u);
	return !not_here && __atomic_compare_exchange_n(&rw->__data.__readers, &r, r + RW_READER, false,
							 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/* What glibc's rdlock does and this does not: its static probes
 * (rdlock_entry, rdlock_acquire_read: SDT notes for uprobes). */
CV_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *rw)
{
	if (CV_UNLIKELY(!rd_taken(rw)))
		return rdlock_other(rw, __builtin_return_address(0));
	return rw_locked(rw, 0, CV_LOCK_READ, __builtin_return_address(0), true);
}

CV_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *rw, const struct timespec *abstime)
{
	return rd_lock(rw, CLOCK_REALTIME, abstime, real_timedrdlock, __builtin_return_address(0));
}

CV_EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t *rw, clockid_t clock, const struct timespec *abstime)
{
	return rd_lock(rw, clock, abstime, real_clockrdlock, __builtin_return_address(0));
}

/* glibc's writer on a free write phase (WRPHASE without WRLOCKED: what a
 * write unlock leaves when no reader waits, so a lock taken by writers in
 * turn), made here when take_rwlock: WRLOCKED set (a compare-and-swap
 * where glibc ors: the same word when it succeeds), __writers_futex 1,
 * then the writer's tid in __cur_writer, glibc's steps for that word in
 * its order (__pthread_rwlock_wrlock_full64). The caller cannot be the
 * lock's writer (it would hold WRLOCKED): no EDEADLK to give. False, and
 * nothing written, for any other word: the real wrlock decides. */
static inline bool wr_word_taken(pthread_rwlock_t *rw)
{
	unsigned r = rw_word(rw);
	uintptr_t not_here = ((r & (RW_WRPHASE | RW_WRLOCKED)) ^ RW_WRPHASE) | (CV_LOAD(&cv__real.take_rwlock) ^ 1u);
	if (not_here || !__atomic_compare_exchange_n(&rw->__data.__readers, &r, r | RW_WRLOCKED, false,
						     __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return false;
	CV_STORE(&rw->__data.__writers_futex, 1);
	return true;
}

/* wr_word_taken's last store where the thread's tid is not in TLS yet,
 * out of line (the kernel is asked): mutex.c's taken_without_tid. */
static CV_COLD int wr_taken_without_tid(pthread_rwlock_t *rw, const void *pc)
{
	CV_STORE(&rw->__data.__cur_writer, cv__thread_tid());
	return rw_locked(rw, 0, 0, pc, true);
}

/* What glibc's wrlock does and this does not: its static probes. */
CV_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *rw)
{
	if (CV_UNLIKELY(!wr_word_taken(rw)))
		return wrlock_other(rw, __builtin_return_address(0));
	pid_t tid = cv__tid;
	if (CV_UNLIKELY(tid == 0))
		return wr_taken_without_tid(rw, __builtin_return_address(0));
	CV_STORE(&rw->__data.__cur_writer, tid);
	return rw_locked(rw, 0, 0, __builtin_return_address(0), true);
}

CV_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *rw, const struct timespec *abstime)
{
	return wr_lock(rw, CLOCK_REALTIME, abstime, real_timedwrlock, __builtin_return_address(0));
}

CV_EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t *rw, clockid_t clock, const struct timespec *abstime)
{
	return wr_lock(rw, clock, abstime, real_clockwrlock, __builtin_return_address(0));
}

/* try: the program's own calls, counted; never a wait. */
CV_EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *rw)
{
	struct cv_thread *t = cv__current();
	if (CV_UNLIKELY(!t) && !(t = cv__thread_slow()))
		return cv__real.pthread_rwlock_tryrdlock(rw);
	struct cv_rec *r = rw_rec(t, rw);
	CV_BUMP(&r->trylocks, 1);
	int rc = cv__real.pthread_rwlock_tryrdlock(rw);
	if (rc == 0) {
		rd_acquired(r);
		cv__held_push(t, r->obj, rw, __builtin_return_address(0), rw_push_flags(CV_LOCK_READ | CV_LOCK_TRY));
	} else if (rc == EBUSY)
		CV_BUMP(&cv__rec_more(r)->trylock_failures, 1);
	return rc;
}

CV_EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *rw)
{
	struct cv_thread *t = cv__current();
	if (CV_UNLIKELY(!t) && !(t = cv__thread_slow()))
		return cv__real.pthread_rwlock_trywrlock(rw);
	struct cv_rec *r = rw_rec(t, rw);
	CV_BUMP(&r->trylocks, 1);
	int rc = cv__real.pthread_rwlock_trywrlock(rw);
	if (rc == 0) {
		CV_BUMP(&r->acquisitions, 1);
		cv__held_push(t, r->obj, rw, __builtin_return_address(0), rw_push_flags(CV_LOCK_TRY));
		cv__note_owner(t, r);
	} else if (rc == EBUSY)
		CV_BUMP(&cv__rec_more(r)->trylock_failures, 1);
	return rc;
}

static CV_COLD int rw_unlock_slow(struct cv_thread *t, pthread_rwlock_t *rw)
{
	if (!t->inert)
		cv__held_pop(t, rw);
	return cv__real.pthread_rwlock_unlock(rw);
}

/* glibc's reader unlock (pthread_rwlock_unlock.c, then
 * __pthread_rwlock_rdunlock in pthread_rwlock_common.c), made here for a
 * word in a read phase with a reader and no writer holding or waiting:
 * neither WRPHASE, WRLOCKED nor RWAITING (in a read phase glibc sets
 * RWAITING only beside WRLOCKED; tested apart all the same). On such a
 * word glibc writes one reader less, by a compare-and-swap with release
 * order, as here, and wakes nobody. The word also says the caller is not
 * glibc's writer, whom glibc tells by __cur_writer == its tid and sends
 * to its writer unlock: a writer stores its tid only once it holds
 * WRLOCKED, and clears it before letting WRLOCKED go. False, and nothing
 * written, for any other word (a last reader that starts a write phase
 * or wakes readers, and any word with WRLOCKED or RWAITING) or a failed
 * exchange: the real unlock decides, loading the word again as glibc's
 * own loop does. */
static inline bool rd_released(pthread_rwlock_t *rw)
{
	unsigned r = rw_word(rw);
	uintptr_t not_here = (r & (RW_WRPHASE | RW_WRLOCKED | RW_RWAITING)) | ((r >> RW_READER_SHIFT) == 0);
	return !not_here && __atomic_compare_exchange_n(&rw->__data.__readers, &r, r - RW_READER, false,
							 __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

/* pthread_rwlock_unlock's lock not pushed with CV_HELD_FAST_UNLOCK (taken
 * while the shim did not take rwlocks itself), or not on top: the top of
 * a tracked thread's held set (cv__inert's is empty) popped; then, where
 * the slot says it was taken for reading and take_rwlock, the reader's
 * release made here (rd_released), else a tail call. */
static CV_NOINLINE int rw_unlock_untagged(struct cv_thread *t, pthread_rwlock_t *rw, uint32_t n)
{
	if (CV_UNLIKELY(cv__held_not_top(t, n, rw)))
		return rw_unlock_slow(t, rw);
	uint32_t flags = cv__held_flags(&t->held[(n - 1) % CV_HELD_MAX]);
	CV_STORE(&t->nheld, n - 1);
	if ((flags & CV_LOCK_READ) && CV_LOAD(&cv__real.take_rwlock) && rd_released(rw))
		return 0;
	return cv__real.pthread_rwlock_unlock(rw);
}

/* Hold times of rwlocks are not sampled: only the held set changes. A
 * lock taken while the shim takes rwlocks itself (take_rwlock), on top of
 * the thread's held set: one test, the top slot's key
 * (cv__held_not_fast_top; mutex.c's mutex_unlock says what it stands
 * for), the pop; then, where the slot says it was taken for reading (a
 * filter that spares writers the word's load, not a proof: the word
 * decides; without it a write pair cost 0.35 ns more, and the flags' own
 * load costs a read pair 0.2, 9 rounds), the reader's release made here
 * (rd_released: glibc's, on a word it tests, whatever the switch says
 * now), else a tail call. What glibc's unlock does and this does not for
 * a reader: its static probe (rwlock_unlock) and its comparison of
 * __cur_writer with its tid, which the word stands in for (they differ
 * only for a lock whose memory was copied or corrupted: a stale writer on
 * a read phase). */
CV_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *rw)
{
	struct cv_thread *t = cv__self;
	uint32_t n = t->nheld;
	if (CV_UNLIKELY(cv__held_not_fast_top(t, n, rw)))
		return rw_unlock_untagged(t, rw, n);
	uint32_t flags = cv__held_flags(&t->held[(n - 1) % CV_HELD_MAX]);
	CV_STORE(&t->nheld, n - 1);
	if ((flags & CV_LOCK_READ) && rd_released(rw))
		return 0;
	return cv__real.pthread_rwlock_unlock(rw);
}

CV_EXPORT int pthread_rwlock_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr)
{
	if (!cv__current())
		cv__thread_slow();
	int rc = cv__real.pthread_rwlock_init(rw, attr);
	if (rc == 0 && cv__process.ready && !cv__process.disabled)
		cv__object_init(rw, CV_OBJ_RWLOCK);   /* a new object, even where one was before */
	return rc;
}

CV_EXPORT int pthread_rwlock_destroy(pthread_rwlock_t *rw)
{
	if (!cv__current())
		cv__thread_slow();
	int rc = cv__real.pthread_rwlock_destroy(rw);
	if (rc == 0 && cv__process.ready && !cv__process.disabled)
		cv__forget_object(rw, CV_OBJ_RWLOCK);
	return rc;
}
