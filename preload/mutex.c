/* mutex.c — pthread_mutex_*.
 *
 * The fast path. An uncontended lock of a normal mutex in a process with
 * threads costs the caller: the shim's own compare-and-swap of glibc's lock
 * word (glibc's protocol, below: mutex_lock), the TLS load of its state, a
 * cached record lookup (shim.h), and a counter bump and a held-set push in
 * lines only this thread writes; the unlock, glibc's exchange. The clock is
 * read only when the lock was held (contended) and on 1 in
 * CONVOY_HOLD_SAMPLE acquisitions (hold time, TSC).
 *
 * Adaptive, recursive and errorcheck mutexes are taken the same way, out of
 * line (type_taken_here). Other kinds, an errorcheck mutex's relock by its
 * owner, and a process without threads: a peek at the lock word, then the real lock
 * (lock_other). Why not trylock first (the seeds' and
 * mutrace's shape): docs/performance.md has the measurement. The peek never
 * changes what the program sees: the real lock is the function that
 * acquires. Its one blind spot is a lock taken by another thread in the few
 * nanoseconds between the peek and the real lock's own compare-and-swap;
 * that wait is neither counted as contended nor timed. The shim's own
 * compare-and-swap has no such gap.
 *
 * Every return code and errno passes through untouched.
 */
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>

#include "shim.h"

/* The seeds' shape (trylock, then the timed real lock on EBUSY), built only
 * into the benchmark's second library (tests/bench/bench.mk) so that the
 * choice above stays measured. */
#ifndef CV_TRYLOCK_FIRST
#define CV_TRYLOCK_FIRST 0
#endif
static const bool trylock_first = CV_TRYLOCK_FIRST;

/* glibc's lock word is 0 exactly when the mutex is free, for every type
 * (normal: 0/1/2; robust and PI: the owner's tid, plus flag bits). */
static inline bool mutex_held(const pthread_mutex_t *m)
{
	int word = CV_LOAD(&m->__data.__lock);
	/* A priority-protect mutex keeps its ceiling in the word's high bits
	 * (PTHREAD_MUTEX_PRIO_CEILING_MASK) even when free: only the low bits
	 * say whether it is held. Tested only when the word is non-zero, so
	 * other mutexes pay nothing. */
	if (CV_UNLIKELY(word != 0) && (CV_LOAD(&m->__data.__kind) & CV_MUTEX_PP))
		return (word & 0x7ffff) != 0;
	return word != 0;
}

/* Threads are parked on the lock word: glibc's lowlevellock holds 2 (locked,
 * with waiters) for the normal kinds, and robust and PI mutexes set the
 * FUTEX_WAITERS bit (the sign bit) beside the owner's tid. An unlock that
 * sees this will wake a waiter: it stamps the mutex for the wake latency
 * (park.c), which the woken thread counts once it holds the lock. */
static inline bool mutex_has_waiters(const pthread_mutex_t *m)
{
	int v = CV_LOAD(&m->__data.__lock);
	return v == 2 || v < 0;
}

static inline bool acquired_rc(int rc)
{
	return rc == 0 || rc == EOWNERDEAD;   /* EOWNERDEAD: acquired, state to repair */
}

/* glibc's __kind bits of the mutexes whose lock, on a free word, simply
 * acquires and returns 0: the four types, process-shared, and
 * PTHREAD_MUTEX_NO_ELISION_NP (0x200). Any other bit (robust,
 * priority-inheritance, priority-protect, elision, or a kind glibc would
 * reject with EINVAL) takes the slow path. */
#define MUTEX_NO_ELISION 0x200u
#define MUTEX_KINDS_SLOW (~(CV_MUTEX_TYPE_MASK | CV_MUTEX_PSHARED | MUTEX_NO_ELISION))

/* The other types glibc's own fast path handles (nptl/pthread_mutex_lock.c,
 * pthread_mutex_trylock.c, pthread_mutex_unlock.c), which differ from a
 * normal mutex only in what they check and count, are taken and released
 * by the shim too, with the same conditions (take_normal):
 *
 * - adaptive (PTHREAD_MUTEX_ADAPTIVE_NP: MariaDB and MySQL make every
 *   mutex one) differs only when its lock is held: glibc's lock then spins
 *   a while before it waits, so a held one is left to the real lock
 *   (lock_normal's lock_slow); its lock on a free word, trylock and unlock
 *   are the normal mutex's ("goto normal").
 * - recursive (PTHREAD_MUTEX_RECURSIVE: std::recursive_mutex, GLib's
 *   GRecMutex) counts its owner's relocks in __count: its first lock is
 *   the normal one with the count set to 1 first, its owner's relock or
 *   trylock one more (relock_recursive), its owner's unlock one less, and
 *   the last (count 1) the normal one with the count 0.
 * - errorcheck (PTHREAD_MUTEX_ERRORCHECK) refuses its owner's relock
 *   (EDEADLK, left to the real lock) and an unlock by another thread
 *   (EPERM); its trylock is the normal one.
 *
 * An unlock by a thread that does not own the mutex goes to the real
 * unlock, so glibc's checks and errors stay glibc's. All out of the fast
 * paths: their one test of the kind stays as it was (lock_other,
 * trylock_other; the unlocks past the fast one release by type: release).
 * Not in the trylock-first build, which takes nothing itself. Process-private only,
 * as normal ones (not_taken_here): a process-shared mutex's waiters sleep
 * on a shared futex, which wake_waiter's private wake would not reach.
 *
 * MUTEX_NOT_HERE: a mutex the shim leaves to glibc. */
#define MUTEX_NOT_HERE (~0u)
static inline unsigned type_taken_here(const pthread_mutex_t *m)
{
	unsigned kind = (unsigned)CV_LOAD(&m->__data.__kind) & ~MUTEX_NO_ELISION;
	if (trylock_first || kind > CV_MUTEX_TYPE_MASK || !CV_LOAD(&cv__real.take_normal))
		return MUTEX_NOT_HERE;
	return kind;
}

/* Whether the calling thread owns m, as glibc's relock and its unlock of
 * a recursive or errorcheck mutex ask: its tid is the owner's. A relock
 * by the owner (a count, EDEADLK, or a self-deadlock the program asked
 * for) is not contention either (lock_contended). False for a thread with
 * no tid in TLS (cv__tid: every tracked thread has it), for which the
 * real function decides: asked for here (cv__thread_tid), the system
 * call made release's path keep five registers, and the recursive pair
 * cost 1.2 ns more (10.81 against 9.62, 11 rounds). */
static inline bool owned_here(const pthread_mutex_t *m)
{
	pid_t tid = cv__tid;
	return tid != 0 && CV_LOAD(&m->__data.__owner) == tid;
}

/* Whether a type taken here (type_taken_here) is released by the normal
 * unlock, which the shim makes itself (unlock_normal), with no check of
 * the owner or a count. */
static inline bool type_unlocked_as_normal(unsigned type)
{
	return type == PTHREAD_MUTEX_NORMAL || type == PTHREAD_MUTEX_ADAPTIVE_NP;
}

/* Whether the shim releases m with the normal unlock (a type whose unlock
 * is the normal one, taken here): its fast unlock may (acquired). */
static inline bool unlocked_as_normal(const pthread_mutex_t *m)
{
	return type_unlocked_as_normal(type_taken_here(m));
}

void cv__record_wait(struct cv_rec *r, uint64_t ns)
{
	struct cv_rec_more *m = cv__rec_more(r);   /* out of memory: counted, not placed */
	CV_BUMP(&m->waits, 1);
	CV_BUMP(&m->wait_ns, ns);
	cv__store_max(&m->max_wait_ns, ns);
	CV_BUMP(&m->hist[cv__wait_bucket(ns)], 1);
	if (CV_UNLIKELY(cv__trace_on))
		cv__trace_wait(r->obj, ns);
}

/* The owner changed (shim.h: cv__note_owner): the lock's own line moved too. */
CV_COLD void cv__owner_changed(struct cv_thread *t, struct cv_rec *r)
{
	if (CV_LOAD(&r->obj->last_owner))
		CV_BUMP(&r->handoffs, 1);
	CV_STORE(&r->obj->last_owner, t);
}

static CV_COLD void hold_begin(struct cv_thread *t, struct cv_rec *r, const void *m)
{
	/* A sample still open (nested locks) is dropped: the newest wins, so a
	 * lock held for the whole run cannot stop sampling. */
	t->hold_addr = m;
	t->hold_rec = r;
	t->hold_start = cv__ticks();
}

static CV_COLD void hold_end(struct cv_thread *t)
{
	struct cv_rec *r = t->hold_rec;
	uint64_t held = cv__ticks() - t->hold_start;
	t->hold_addr = NULL;
	CV_BUMP(&r->hold_samples, 1);
	CV_BUMP(&r->hold_ticks, held);
	cv__store_max(&r->max_hold_ticks, held);
	if (CV_UNLIKELY(cv__trace_on))
		cv__trace_hold(t, r->obj, t->hold_start + held, held);
}

/* pc: the return address of the program's call; flags: CV_LOCK_*. The
 * push lets the unlock release the mutex on its one test
 * (CV_HELD_FAST_UNLOCK) where the shim releases such a mutex itself, but
 * for the acquisition whose hold is timed: its unlock ends the sample
 * (unlock_slow). */
static inline void acquired(struct cv_thread *t, struct cv_rec *r, const pthread_mutex_t *m, const void *pc,
			    uint32_t flags)
{
	uint64_t n = r->acquisitions;
	bool timed = (n & t->hold_mask) == 0;
	if (!timed && unlocked_as_normal(m))
		flags |= CV_HELD_FAST_UNLOCK;
	cv__held_push(t, r->obj, m, pc, flags);
	CV_STORE(&r->acquisitions, n + 1);
	cv__note_owner(t, r);
	if (CV_UNLIKELY(timed))
		hold_begin(t, r, m);
}

/* A contended acquisition's wait is counted once the program has left
 * its critical section, not as the lock is taken: inside it stay only the
 * clock read that ends the wait, the load of the wake stamp, the sampled
 * stack (which must be this call's) and these stores in the thread's own
 * line. Counted there, the histogram, the wake latency and the counts
 * lengthened every contended hold, and with it the contention being
 * measured: on global_queue --weight 0 at two workers convoy's contended
 * count is a tenth or more lower with this (0.890 and 0.821 of the count
 * before, paired by round over 50 interleaved rounds, workpool and the
 * port; 1.148 and 0.983 of the native count; docs/performance.md, "Where
 * issue 11's goals stand", sixth session).
 *
 * Counted after the release at the lock's next unlock (released) when
 * that is slow, as it is when the waiter slept: glibc leaves the word
 * "locked, maybe waiters" then; else (glibc's own first try won, or an
 * adaptive mutex spun its way in) before the thread's next contended
 * lock blocks, at the thread's end, or before its record is folded away;
 * the profile's writer adds a wait still pending (cv__wait_pending_into:
 * a condvar wait let the lock go inside glibc, say). Counted inside the
 * guard, where a signal handler's locks on this thread are not tracked:
 * once (where a handler's contended lock comes between the stores below,
 * which stay unguarded inside the section, one wait can be lost or
 * counted on the handler's record). Trace mode counts at once: its
 * events are stamped when counted. */
static void wait_count(struct cv_rec *r, uint64_t t0, uint64_t now, uint64_t sent)
{
	cv__record_wait(r, now - t0);
	CV_BUMP(&cv__rec_more(r)->contended, 1);
	cv__woken_at(r, sent, t0, now);   /* from the unlock that handed it over (park.c) */
}

static CV_COLD void wait_pending(struct cv_thread *t, struct cv_rec *r, const pthread_mutex_t *m, uint64_t t0,
				 uint64_t now)
{
	uint64_t sent = __atomic_load_n(&r->obj->wake_ns, __ATOMIC_ACQUIRE);
	if (CV_UNLIKELY(cv__trace_on)) {
		wait_count(r, t0, now, sent);
		return;
	}
	t->pending = (struct cv_pending_wait){ r, m, t0, now, sent };
	__atomic_signal_fence(__ATOMIC_SEQ_CST);   /* whole before it is pending */
	CV_STORE(&t->wait_pending, 1);
}

/* Inside the guard: no signal handler's lock on this thread may fold the
 * record away while it is counted into (helper-85: a handler that grew the
 * thread's table retired it, past the lock's destroy, and the count wrote
 * into the freed block), count into it between these loads and stores,
 * or count the wait again. The test again inside: a handler's lock that
 * came before the guard may have counted it. */
void cv__wait_count_pending(struct cv_thread *t)
{
	if (!CV_LOAD(&t->wait_pending))
		return;
	struct cv_thread *saved = cv__guard_enter();
	if (t->wait_pending) {
		t->wait_pending = 0;
		wait_count(t->pending.rec, t->pending.t0, t->pending.now, t->pending.sent);
	}
	cv__guard_leave(saved);
}

/* Racy, as the rest of a running thread's counts are to the writer: a
 * wait counted, or another made pending, while the writer reads may be
 * missing from a live snapshot or read half. */
void cv__wait_pending_into(const struct cv_thread *t, const struct cv_rec *r, struct cv_stats *s)
{
	const struct cv_pending_wait *p = &t->pending;
	if (!CV_LOAD(&t->wait_pending) || CV_LOAD(&p->rec) != r)
		return;
	uint64_t t0 = CV_LOAD(&p->t0), now = CV_LOAD(&p->now), sent = CV_LOAD(&p->sent), ns = now - t0;
	s->waits++;
	s->wait_ns += ns;
	if (ns > s->max_wait_ns)
		s->max_wait_ns = ns;
	s->wait_hist[cv__wait_bucket(ns)]++;
	s->contended++;
	if (sent >= t0 && sent <= now) {
		s->wakeups++;
		s->wake_latency_ns += now - sent;
		if (now - sent > s->max_wake_latency_ns)
			s->max_wake_latency_ns = now - sent;
	}
}

/* After a slow unlock's release of m: its acquisition's wait, if that is
 * the one pending. */
static inline void released(struct cv_thread *t, const pthread_mutex_t *m)
{
	if (CV_UNLIKELY(CV_LOAD(&t->wait_pending) != 0) && t->pending.addr == m)
		cv__wait_count_pending(t);
}

static CV_COLD int lock_contended(struct cv_thread *t, struct cv_rec *r, pthread_mutex_t *m, const void *pc)
{
	if (owned_here(m)) {
		int rc = cv__real.pthread_mutex_lock(m);
		if (acquired_rc(rc))
			acquired(t, r, m, pc, 0);
		return rc;
	}
	cv__wait_count_pending(t);   /* about to block: out of the section it was taken for, if not of others */
	uint64_t t0 = cv__now_ns();
	cv__wait_begin(t, r->obj, NULL, 0, pc, &t0);
	int rc = cv__real.pthread_mutex_lock(m);
	cv__wait_end(t);
	uint64_t now = cv__now_ns();
	if (acquired_rc(rc)) {
		/* A lock that failed (EINVAL, EAGAIN, ...) returned at once: no wait. */
		cv__stack_on_wait(t, r, now - t0);   /* stacks.c: sampled; only here, never on the fast path */
		wait_pending(t, r, m, t0, now);
		acquired(t, r, m, pc, 0);
	}
	return rc;
}

static CV_COLD int lock_untracked(pthread_mutex_t *m)
{
	if (cv__thread_slow())
		return pthread_mutex_lock(m);
	return cv__real.pthread_mutex_lock(m);
}

/* The lock was held (held: the shim's own compare-and-swap failed), or the
 * lock word said "held", or the mutex is of a kind the fast path leaves
 * alone (below), or this is the trylock-first build. */
static CV_COLD int lock_slow(struct cv_thread *t, pthread_mutex_t *m, const void *pc, bool held)
{
	if (t->inert)
		return lock_untracked(m);
	struct cv_rec *r = cv__mutex_rec(t, m);
	cv__lock_attempt(t, r->obj, pc, 0);
	if (held)
		return lock_contended(t, r, m, pc);
	int rc;
	if (trylock_first) {
		rc = cv__real.pthread_mutex_trylock(m);
		if (rc == EBUSY)
			return lock_contended(t, r, m, pc);
	} else {
		if (CV_UNLIKELY(mutex_held(m)))
			return lock_contended(t, r, m, pc);
		rc = cv__real.pthread_mutex_lock(m);
	}
	if (CV_LIKELY(acquired_rc(rc)))
		acquired(t, r, m, pc, 0);
	return rc;
}

/* An uncontended acquisition (rc 0) that needs more than the fast path's
 * bookkeeping: a thread whose state is not installed yet (cv__thread_slow
 * installs or makes it, in an initialised shim: mutex_lock saw to that;
 * inside the guard it records nothing), a first use
 * or a retired object, locks held whose order edges to this one were not
 * looked up yet, an owner change, a hold-time sample. */
static CV_COLD int locked_slow(pthread_mutex_t *m, const void *pc)
{
	struct cv_thread *t = cv__current();
	if (t || (t = cv__thread_slow())) {
		struct cv_rec *r = cv__mutex_rec(t, m);
		cv__lock_attempt_remembered(t, r->obj, pc, 0);
		acquired(t, r, m, pc, 0);
	}
	return 0;
}

/* A trylock that failed, or whose success needs more than the fast
 * path's bookkeeping (locked_slow's reasons, less the order edges: a
 * trylock never waits, so it adds none into the lock it takes). */
static CV_COLD int trylocked_slow(pthread_mutex_t *m, int rc, const void *pc)
{
	struct cv_thread *t = cv__current();
	if (!t && !(t = cv__thread_slow()))
		return rc;
	struct cv_rec *r = cv__mutex_rec(t, m);
	CV_BUMP(&r->trylocks, 1);
	if (acquired_rc(rc))
		acquired(t, r, m, pc, CV_LOCK_TRY);
	else if (rc == EBUSY)
		CV_BUMP(&cv__rec_more(r)->trylock_failures, 1);
	return rc;
}

/* The terms of locked_needs_more's test after the cache's (a record r and
 * object o found in a cache entry), which locked_l2 makes too. */
static inline uintptr_t found_needs_more(const struct cv_thread *t, const struct cv_rec *r, const struct cv_obj *o)
{
	return ((uintptr_t)CV_LOAD(&o->last_owner) ^ (uintptr_t)t) | ((CV_LOAD(&r->acquisitions) & t->hold_mask) == 0);
}

/* The bookkeeping of an uncontended acquisition (rc 0, the lock was free).
 *
 * Each term of `slow` is zero exactly when this acquisition needs nothing
 * but the bookkeeping: the thread's mutex cache entry for this address
 * holds it (shim.h, cv__way: a program that takes a few mutexes in turn
 * finds each in its own entry; an empty entry, and every one of
 * cv__inert's, holds a retired object, so "not initialised, disabled,
 * reentrant" needs no term of its own), its object is live and this thread
 * owned it last (else a hand-off to count), and this is not the
 * 1-in-CONVOY_HOLD_SAMPLE acquisition whose hold is timed; with locks
 * held (locked_holding_lock), also that the held set has room and this lock's
 * order edges from them were already looked up (cv__order_unchecked).
 * Then the record's count and a held-set push, in lines only this thread
 * writes. Everything else goes to locked_slow, which looks the order
 * edges up there: the lock was free, so the thread never waited for it.
 * The loads: the thread's first line, its cache entry's line, the
 * record's first line, the object's two lines (read; the second written
 * only when the owner changes), and with locks held the held set's top
 * slot. They come after the lock's compare-and-swap, where they overlap
 * the unlock's own loads: a chain of loads before it delays it, since a
 * locked instruction waits for every older load (measured interleaved,
 * lockpair uncontended 2000000, 21 rounds, medians: native 13.23 ns, the
 * test before the lock 19.19, after it 18.42). Only the TLS addresses
 * come before it (lock_normal): loads of constants, no deeper than
 * the loads of the mutex's kind and take_normal it waits for anyway. */
static inline uintptr_t locked_needs_more(struct cv_thread *t, const pthread_mutex_t *m, struct cv_rec **r,
					  struct cv_obj **o)
{
	return cv__way_miss(cv__way(t->mutex_cache, m), m, r, o) | found_needs_more(t, *r, *o);
}

/* The bookkeeping of an acquisition with no lock held whose record r
 * (object o) passed locked_needs_more's test or locked_l2's: the counts
 * (flags CV_LOCK_TRY: a trylock's) and the push. */
static inline __attribute__((always_inline)) int counted_first(struct cv_thread *t, struct cv_rec *r,
								struct cv_obj *o, pthread_mutex_t *m,
								const void *pc, uint32_t flags)
{
	if (flags & CV_LOCK_TRY)
		CV_BUMP(&r->trylocks, 1);
	CV_BUMP(&r->acquisitions, 1);
	cv__held_push_first(t, o, m, pc, flags);
	return 0;
}

/* With n locks held (n > 0), out of line: the common case, a thread that
 * holds no other lock (locked), then needs no register saved. The lock
 * and the trylock each have their own (no test of which it is). A
 * trylock looks no order edges up: it never waits, so it adds none into
 * the lock it takes. */
static CV_NOINLINE int locked_holding_lock(struct cv_thread *t, pthread_mutex_t *m, const void *pc, uint32_t n,
					   uint32_t flags)
{
	struct cv_rec *r;
	struct cv_obj *o;
	uint64_t prefix;
	if (CV_UNLIKELY(locked_needs_more(t, m, &r, &o)) || CV_UNLIKELY(cv__order_unchecked(t, n, o, &prefix)))
		return locked_slow(m, pc);
	CV_BUMP(&r->acquisitions, 1);
	cv__held_fill(t, n, o, m, pc, flags, prefix);
	return 0;
}

static CV_NOINLINE int locked_holding_try(struct cv_thread *t, pthread_mutex_t *m, const void *pc, uint32_t n,
					  uint32_t flags)
{
	struct cv_rec *r;
	struct cv_obj *o;
	if (CV_UNLIKELY(locked_needs_more(t, m, &r, &o) | (n >> CV_HELD_BITS)))
		return trylocked_slow(m, 0, pc);
	CV_BUMP(&r->trylocks, 1);
	CV_BUMP(&r->acquisitions, 1);
	cv__held_push_at(t, n, o, m, pc, flags);
	return 0;
}

/* locked's test failed with no lock held: the thread's second mutex
 * cache (shim.h, cv_thread.l2), where a thread that takes more mutexes in
 * turn than its first cache holds finds the rest, then locked's own
 * bookkeeping; anything else (no second cache, a miss there too, an owner
 * change, a hold to time, a lock a signal handler returned holding since
 * locked read the count) the slow path. Cold, so that locked's branch to
 * it stays in its .cold part as before (placed with locked, the uncontended
 * pair cost 0.3 ns more); lockpair striped: docs/performance.md. */
static CV_COLD int locked_l2(struct cv_thread *t, pthread_mutex_t *m, const void *pc, uint32_t flags)
{
	struct cv_way *l2 = cv__l2(t, CV_L2_MUTEX);
	struct cv_rec *r;
	struct cv_obj *o;
	if (!l2 || CV_UNLIKELY(cv__l2_miss(l2, m, &r, &o) | CV_LOAD(&t->nheld) |
			       found_needs_more(t, r, o)))
		return flags & CV_LOCK_TRY ? trylocked_slow(m, 0, pc) : locked_slow(m, pc);
	return counted_first(t, r, o, m, pc, flags);
}

/* try: a trylock's acquisition, which also counts the try. fast_unlock:
 * the shim releases m itself as a normal mutex (unlocked_as_normal), so
 * its unlock needs one test (CV_HELD_FAST_UNLOCK). */
static inline __attribute__((always_inline)) int locked(struct cv_thread *t, pthread_mutex_t *m, const void *pc,
							 bool try, bool fast_unlock)
{
	uint32_t flags = (try ? CV_LOCK_TRY : 0) | (fast_unlock ? CV_HELD_FAST_UNLOCK : 0);
	uint32_t n = t->nheld;
	if (CV_UNLIKELY(n != 0))
		return try ? locked_holding_try(t, m, pc, n, flags) : locked_holding_lock(t, m, pc, n, flags);
	struct cv_rec *r;
	struct cv_obj *o;
	if (CV_UNLIKELY(locked_needs_more(t, m, &r, &o)))
		return locked_l2(t, m, pc, flags);
	return counted_first(t, r, o, m, pc, flags);
}

/* Zero when the shim takes m itself (mutex_lock): a normal mutex, and
 * take_normal. */
static inline uintptr_t not_taken_here(const pthread_mutex_t *m)
{
	return ((unsigned)CV_LOAD(&m->__data.__kind) & ~MUTEX_NO_ELISION) | (CV_LOAD(&cv__real.take_normal) ^ 1u);
}

/* glibc's lock and trylock of a normal mutex, made here: the lock word from
 * 0 to 1 (lock_word_taken: false, and nothing written, when it was held),
 * then the owner's tid and one more user (owned_by), plain stores as glibc
 * makes them. The tid is the TLS copy (cv__tid), not the state's, so a
 * thread without one (cv__inert: inside the guard, after the shim saw it
 * end) writes its own too. */
static inline bool lock_word_taken(pthread_mutex_t *m)
{
	int free_word = 0;
	return __atomic_compare_exchange_n(&m->__data.__lock, &free_word, 1, false, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

static inline void owned_by(pthread_mutex_t *m, pid_t tid)
{
	CV_STORE(&m->__data.__owner, tid);
	CV_STORE(&m->__data.__nusers, CV_LOAD(&m->__data.__nusers) + 1);
}

/* The lock word taken in a thread whose tid is not in TLS yet, out of
 * line (the kernel is asked): the fast paths then need no register saved
 * across a call. */
static CV_COLD int taken_without_tid(pthread_mutex_t *m, const void *pc, bool try, bool fast_unlock)
{
	owned_by(m, cv__thread_tid());
	return locked(cv__self, m, pc, try, fast_unlock);
}

/* A mutex of type `type` (type_taken_here) taken here as a normal one
 * (mutex_lock, pthread_mutex_trylock; try: the latter, whose failure is
 * EBUSY): glibc's compare-and-swap, then the owner and the bookkeeping. A
 * recursive mutex's first lock sets its count to 1 first, as glibc's.
 *
 * The addresses of this thread's state and tid are made before the
 * compare-and-swap and kept in registers. With initial-exec TLS each is
 * the thread pointer plus an offset from the GOT: constants, whose loads
 * then overlap the mutex's own before the compare-and-swap instead of
 * waiting behind it, and after it the state is one load away instead of
 * two (the bookkeeping's loads between the compare-and-swap and the
 * unlock's exchange are what the pair pays for: docs/performance.md,
 * "Trylock, the hold mask and the thread's addresses"). No value is read
 * early, so a signal handler that changes one in between is seen as
 * before. The empty asm keeps the compiler from folding the addresses
 * back into loads after the lock. */
static inline __attribute__((always_inline)) int lock_normal(pthread_mutex_t *m, const void *pc, bool try,
								 unsigned type)
{
	bool fast_unlock = type_unlocked_as_normal(type);
	struct cv_thread **self = &cv__self;
	pid_t *tid_slot = &cv__tid;
	__asm__ volatile("" : "+r"(self), "+r"(tid_slot));
	if (CV_UNLIKELY(!lock_word_taken(m)))
		return try ? trylocked_slow(m, EBUSY, pc) : lock_slow(cv__self, m, pc, true);
	if (type == PTHREAD_MUTEX_RECURSIVE)
		CV_STORE(&m->__data.__count, 1);
	pid_t tid = *tid_slot;
	if (CV_UNLIKELY(tid == 0))
		return taken_without_tid(m, pc, try, fast_unlock);
	owned_by(m, tid);
	return locked(*self, m, pc, try, fast_unlock);
}

/* A recursive mutex's lock or trylock by its owner, as glibc's: one more
 * in the count (where it would wrap, the real function's EAGAIN), then
 * the bookkeeping of an acquisition; it adds no lock-order edge (the
 * thread holds the lock: cv__lockorder_attempt). */
static inline int relock_recursive(pthread_mutex_t *m, const void *pc, bool try)
{
	unsigned count = CV_LOAD(&m->__data.__count) + 1;
	if (CV_UNLIKELY(count == 0))
		return try ? trylocked_slow(m, cv__real.pthread_mutex_trylock(m), pc) : cv__real.pthread_mutex_lock(m);
	CV_STORE(&m->__data.__count, count);
	return locked(cv__self, m, pc, try, false);
}

/* A mutex of another kind than normal, or any mutex while take_normal is
 * 0 (below), or in the trylock-first build: an adaptive, recursive or
 * errorcheck mutex taken here (type_taken_here), or a recursive one
 * relocked by its owner, else a peek at the mutex, the real lock, the
 * bookkeeping (an errorcheck mutex's owner gets the real lock's EDEADLK).
 *
 * Before the real lock only the mutex itself is read: a free lock word of
 * a kind whose real lock then simply acquires and returns 0 (a thread that
 * takes the lock between the peek and the real lock's compare-and-swap
 * makes it wait, uncounted: the one blind spot of this path). Before the
 * shim is initialised, lock_slow initialises it before the real lock:
 * cv__init takes the loader's lock, which must never be waited for while
 * holding the program's mutex. */
static CV_NOINLINE int lock_other(pthread_mutex_t *m, const void *pc)
{
	unsigned type = type_taken_here(m);
	if (type == PTHREAD_MUTEX_RECURSIVE && owned_here(m))
		return relock_recursive(m, pc, false);
	/* An errorcheck owner's relock, and any of a thread without its tid,
	 * fail the compare-and-swap: lock_contended then leaves them to the
	 * real lock. */
	if (type != MUTEX_NOT_HERE)
		return lock_normal(m, pc, false, type);
	uintptr_t busy = (uintptr_t)trylock_first | (unsigned)CV_LOAD(&m->__data.__lock)
		| ((unsigned)CV_LOAD(&m->__data.__kind) & MUTEX_KINDS_SLOW)
		| (uintptr_t)!CV_LOAD(&cv__process.ready);
	if (CV_UNLIKELY(busy))
		return lock_slow(cv__self, m, pc, false);
	cv__real.pthread_mutex_lock(m);   /* returns 0: the peek said so */
	return locked(cv__self, m, pc, false, false);
}

/* The uncontended lock of a normal mutex (glibc's kind 0: the initializer
 * or a default attribute; or 0x200, PTHREAD_MUTEX_NO_ELISION_NP, which
 * pthread_mutexattr_settype adds to PTHREAD_MUTEX_NORMAL and C11's
 * mtx_plain gets; process-private), which is most of them: the shim takes
 * it itself, the way glibc's pthread_mutex_lock does
 * (nptl/pthread_mutex_lock.c, lowlevellock.h): a
 * compare-and-swap of the lock word from 0 to 1, then the owner's tid and
 * one more user (lock_word_taken, owned_by). glibc's unlock,
 * condvar wait and destroy find the mutex exactly as if glibc had taken
 * it; a failed compare-and-swap means the lock was held, and the real lock
 * waits for it (lock_contended), so there is no blind spot. It saves the
 * call into glibc, its type tests and a second load of the lock word:
 * docs/performance.md has the numbers.
 *
 * What glibc does and this does not: glibc's single-threaded shortcut (a
 * plain store, in a process that never created a thread; the real lock
 * still takes such a process's mutexes before the shim is told of its
 * first thread: take_normal, real.c), its lock elision (asked for only
 * with GLIBC_TUNABLES glibc.elision.enable=1; take_normal is 0 then), and its
 * static probes "mutex_acquired" and "mutex_release" (SDT notes for
 * uprobes; the real lock and unlock still fire theirs on every other
 * path, but for the adaptive, recursive and errorcheck mutexes taken in
 * lock_other). */
static inline __attribute__((always_inline)) int mutex_lock(pthread_mutex_t *m)
{
	const void *pc = __builtin_return_address(0);
	uintptr_t other = not_taken_here(m) | (uintptr_t)trylock_first;
	if (CV_UNLIKELY(other))
		return lock_other(m, pc);
	return lock_normal(m, pc, false, PTHREAD_MUTEX_NORMAL);
}

CV_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
	return mutex_lock(m);
}

/* C11's mtx_lock is glibc's pthread_mutex_lock and thrd_err_map (c11.c):
 * the fast path above, inlined here so that the held set and the stacks
 * name the program's call, then the mapping. */
CV_EXPORT int mtx_lock(mtx_t *m)
{
	int rc = mutex_lock((pthread_mutex_t *)m);
	return CV_LIKELY(rc == 0) ? thrd_success : cv__thrd_err_map(rc);
}

/* The mutex's waiter is about to be woken (unlock_normal): the stamp for
 * its wake latency on o (park.c; NULL: none), then glibc's
 * __lll_lock_wake. */
static CV_COLD void wake_waiter(struct cv_obj *o, pthread_mutex_t *m)
{
	if (o)
		cv__wake_sent(o, CV_WAKE_SIGNAL);
	int saved_errno = errno;
	cv__sys(SYS_futex, (long)&m->__data.__lock, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, 0);
	errno = saved_errno;
}

/* glibc's unlock of a normal mutex (__pthread_mutex_unlock_usercnt, its
 * first branch; lll_unlock), whoever took it: no owner, one user less,
 * the word exchanged for 0; true when a waiter is to be woken (the word
 * was 2). After the release nothing of the mutex is read, as glibc reads
 * nothing: the program may destroy and free it at once (the futex wake
 * names only its address). */
static inline bool release_word(pthread_mutex_t *m)
{
	CV_STORE(&m->__data.__owner, 0);
	CV_STORE(&m->__data.__nusers, CV_LOAD(&m->__data.__nusers) - 1);
	return __atomic_exchange_n(&m->__data.__lock, 0, __ATOMIC_RELEASE) > 1;
}

/* release_word, then the waiter woken with the stamp on o, the mutex's
 * object, read before the release. The stamp comes after the release,
 * outside the program's critical section: made before it, its clock read
 * and its store in the object's line lengthened every contended hold
 * (global_queue --weight 0 at two workers: failed trylocks 1.23x native
 * with it there, 1.15x here, in one interleaved run; docs/performance.md,
 * "The observer effect"). The woken thread still finds it: the wake
 * comes after it. */
static inline void unlock_normal(pthread_mutex_t *m, struct cv_obj *o)
{
	if (CV_UNLIKELY(release_word(m)))
		wake_waiter(o, m);
}

/* Whether an unlock of m by its owner lets it go: not the inner unlock of
 * a recursive mutex (of any kind: glibc's count is the same), whose count
 * is above 1. */
static inline bool unlock_releases(const pthread_mutex_t *m)
{
	return (CV_LOAD(&m->__data.__kind) & CV_MUTEX_TYPE_MASK) != PTHREAD_MUTEX_RECURSIVE ||
	       CV_LOAD(&m->__data.__count) <= 1;
}

/* m's release, by its type, with the stamp on o (NULL: none) for a waiter
 * it wakes: glibc's unlock of a normal or adaptive mutex made here
 * (unlock_normal), and its owner's of a recursive (one less in the count,
 * released at 0) or errorcheck one (held); glibc's checks fail every
 * other unlock of those (EPERM), and every other type goes to the real
 * unlock, whose wake is inside it, so its stamp comes first. */
static inline __attribute__((always_inline)) int release(pthread_mutex_t *m, struct cv_obj *o)
{
	unsigned type = type_taken_here(m);
	if (type == MUTEX_NOT_HERE ||
	    ((type == PTHREAD_MUTEX_RECURSIVE || type == PTHREAD_MUTEX_ERRORCHECK) && !owned_here(m)) ||
	    (type == PTHREAD_MUTEX_ERRORCHECK && !mutex_held(m))) {
		if (o)
			cv__wake_sent(o, CV_WAKE_SIGNAL);
		return cv__real.pthread_mutex_unlock(m);
	}
	if (type == PTHREAD_MUTEX_RECURSIVE) {
		unsigned count = CV_LOAD(&m->__data.__count) - 1;
		CV_STORE(&m->__data.__count, count);
		if (count != 0)
			return 0;   /* still held: a relock's unlock */
	}
	unlock_normal(m, o);
	return 0;
}

/* The held set and the hold's end before the release, so that the next
 * owner's acquisition always comes after this hold ended; the stamp for a
 * waiter the release lets in. */
static CV_COLD int unlock_slow(struct cv_thread *t, pthread_mutex_t *m)
{
	struct cv_obj *o = NULL;
	if (!t->inert) {
		cv__held_pop(t, m);
		if (t->hold_addr == m)
			hold_end(t);
		if (mutex_has_waiters(m) && unlock_releases(m))
			o = cv__mutex_rec(t, m)->obj;
	}
	int rc = release(m, o);
	released(t, m);
	return rc;
}

/* mutex_unlock's mutex not pushed with CV_HELD_FAST_UNLOCK, or not on top
 * of the thread's held set: the tests that flag stands for. The lock on
 * top of a tracked thread's held set (cv__inert's is empty), whose hold
 * is not being timed and on which nobody is parked (lock word 1: locked,
 * no waiters; robust and PI words hold the owner's tid), is popped and
 * released by its type (release); else unlock_slow. */
static CV_NOINLINE int unlock_untagged(struct cv_thread *t, pthread_mutex_t *m, uint32_t n)
{
	uintptr_t slow = cv__held_not_top(t, n, m)
		| ((unsigned)CV_LOAD(&m->__data.__lock) ^ 1)
		| (t->hold_addr == m);
	if (CV_UNLIKELY(slow))
		return unlock_slow(t, m);
	CV_STORE(&t->nheld, n - 1);
	return release(m, NULL);
}

/* The fast unlock found the word 2 after its release: the waiter woken,
 * with the stamp on the mutex's object, then this thread's own wait for
 * m, if it is the one pending, counted (released), as unlock_slow does.
 * Not marked cold: GCC 12 then moved mutex_unlock's whole fast path into
 * the function's cold part. */
static CV_NOINLINE void unlocked_with_waiter(struct cv_thread *t, pthread_mutex_t *m, struct cv_obj *o)
{
	wake_waiter(o, m);
	released(t, m);
}

/* The unlock of a normal or adaptive mutex pushed with CV_HELD_FAST_UNLOCK
 * on top of the thread's held set: one test, the top slot's key
 * (cv__held_not_fast_top). The lock stood for the rest: the mutex's type
 * and the take switch (the shim releases such a mutex itself, whoever
 * took it: unlock_normal), no hold timed. Locks held past the set's end
 * (held_untracked) sit above its top slot, untracked: popping the top
 * slot is what cv__held_release_slow would do with it too. Then glibc's
 * release, made here (release_word); a waiter, whether it came before the
 * test or after, is woken with the stamp on the object read from the
 * slot before the pop (a signal handler may fill the slot again after
 * it). Loads from the thread's first line, the top slot's and the
 * mutex's. Anything else goes to unlock_untagged. */
static inline __attribute__((always_inline)) int mutex_unlock(pthread_mutex_t *m)
{
	struct cv_thread *t = cv__self;
	uint32_t n = t->nheld;
	struct cv_obj *o = CV_LOAD(&t->held[(n - 1) % CV_HELD_MAX].obj);
	if (CV_UNLIKELY(cv__held_not_fast_top(t, n, m)))
		return unlock_untagged(t, m, n);
	CV_STORE(&t->nheld, n - 1);
	if (CV_UNLIKELY(release_word(m)))
		unlocked_with_waiter(t, m, o);
	return 0;
}

CV_EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
	return mutex_unlock(m);
}

CV_EXPORT int mtx_unlock(mtx_t *m)
{
	int rc = mutex_unlock((pthread_mutex_t *)m);
	return CV_LIKELY(rc == 0) ? thrd_success : cv__thrd_err_map(rc);
}

/* A mutex the fast path's test does not take itself (not_taken_here): an
 * adaptive or errorcheck one tried as a normal one (glibc's trylock shares
 * their case), a recursive one so too, or relocked by its owner
 * (type_taken_here), else the real trylock, then the same bookkeeping. */
static CV_NOINLINE int trylock_other(pthread_mutex_t *m, const void *pc)
{
	unsigned type = type_taken_here(m);
	if (type == PTHREAD_MUTEX_RECURSIVE && owned_here(m))
		return relock_recursive(m, pc, true);
	/* Not a recursive one in a thread without its tid: it may be the
	 * owner's, whose trylock succeeds (the real trylock tells). */
	if (type != MUTEX_NOT_HERE && !(type == PTHREAD_MUTEX_RECURSIVE && cv__tid == 0))
		return lock_normal(m, pc, true, type);
	if (CV_UNLIKELY(!CV_LOAD(&cv__process.ready)))
		cv__thread_slow();   /* initialised before the lock: lock_other says why */
	int rc = cv__real.pthread_mutex_trylock(m);
	if (CV_UNLIKELY(rc != 0))
		return trylocked_slow(m, rc, pc);
	return locked(cv__self, m, pc, true, false);
}

/* mutex_lock's shape without the peek (a trylock never waits): a normal
 * mutex the shim would take itself is tried as glibc's trylock tries it
 * (its first case: one compare-and-swap, EBUSY if it fails), any other
 * with the real trylock; then one test, the two counts and the push. */
CV_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
	const void *pc = __builtin_return_address(0);
	if (CV_UNLIKELY(not_taken_here(m) | (uintptr_t)trylock_first))
		return trylock_other(m, pc);
	return lock_normal(m, pc, true, PTHREAD_MUTEX_NORMAL);
}

/* timedlock and clocklock: the same shape, with a deadline. */
typedef int (*timed_lock_fn)(pthread_mutex_t *, clockid_t, const struct timespec *);

static int real_timedlock(pthread_mutex_t *m, clockid_t clock, const struct timespec *ts)
{
	(void)clock;
	return cv__real.pthread_mutex_timedlock(m, ts);
}

static int timed_lock(pthread_mutex_t *m, clockid_t clock, const struct timespec *ts,
		      timed_lock_fn real, const void *pc)
{
	struct cv_thread *t = cv__current();
	if (CV_UNLIKELY(!t) && !(t = cv__thread_slow()))
		return real(m, clock, ts);
	struct cv_rec *r = cv__mutex_rec(t, m);
	cv__lock_attempt(t, r->obj, pc, 0);
	if (!mutex_held(m) || owned_here(m)) {
		int rc = real(m, clock, ts);
		if (acquired_rc(rc))
			acquired(t, r, m, pc, 0);
		else if (rc == ETIMEDOUT)
			CV_BUMP(&cv__rec_more(r)->timeouts, 1);
		return rc;
	}
	cv__wait_count_pending(t);
	uint64_t t0 = cv__now_ns();
	cv__wait_begin(t, r->obj, NULL, CV_WAIT_TIMED, pc, &t0);
	int rc = real(m, clock, ts);
	cv__wait_end(t);
	uint64_t now = cv__now_ns(), waited = now - t0;
	cv__stack_on_wait(t, r, waited);
	if (acquired_rc(rc)) {
		wait_pending(t, r, m, t0, now);   /* counted once the program has left the section (above) */
		acquired(t, r, m, pc, 0);
	} else {
		cv__record_wait(r, waited);
		if (rc == ETIMEDOUT)
			CV_BUMP(&cv__rec_more(r)->timeouts, 1);
	}
	return rc;
}

CV_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
	return timed_lock(m, CLOCK_REALTIME, abstime, real_timedlock, __builtin_return_address(0));
}

static int real_clocklock(pthread_mutex_t *m, clockid_t clock, const struct timespec *ts)
{
	return cv__real.pthread_mutex_clocklock(m, clock, ts);
}

CV_EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime)
{
	return timed_lock(m, clock, abstime, real_clocklock, __builtin_return_address(0));
}

CV_EXPORT int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr)
{
	if (!cv__current())
		cv__thread_slow();
	int rc = cv__real.pthread_mutex_init(m, attr);
	if (rc == 0 && cv__process.ready && !cv__process.disabled)
		cv__object_init(m, CV_OBJ_MUTEX);   /* a new object, even where one was before */
	return rc;
}

CV_EXPORT int pthread_mutex_destroy(pthread_mutex_t *m)
{
	if (!cv__current())
		cv__thread_slow();
	int rc = cv__real.pthread_mutex_destroy(m);
	if (rc == 0 && cv__process.ready && !cv__process.disabled)
		cv__forget_object(m, CV_OBJ_MUTEX);
	return rc;
}
