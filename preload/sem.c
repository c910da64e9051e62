/* sem.c — POSIX semaphores: sem_wait, trywait, timedwait, clockwait, post.
 *
 * glibc's sem_t (nptl/semaphoreP.h, 64-bit atomics): one 64-bit word whose
 * low half is the value and high half the number of threads registered as
 * waiting (nwaiters). A wait blocks only when the value is 0; a post wakes
 * (FUTEX_WAKE) only when nwaiters is not 0.
 *
 *  - sem_wait and friends peek at the value: non-zero is the fast path (the
 *    token taken as glibc takes it, token_taken, or the real call; one
 *    counter in the thread's record, no clock); zero means the
 *    caller is about to block: the wait is timed, and when it ends with the
 *    semaphore taken, the wake latency from the post (park.c) is counted.
 *  - sem_trywait never reads the clock or writes a shared line.
 *  - sem_post counts posts, and "posts with no waiter": nwaiters was not
 *    larger than the value, so no thread needed this post to wake (it only
 *    raised the count); with no waiter registered at all, the post is
 *    made as glibc makes it (posted_here), else the real post. A post that a
 *    waiter needs stamps the object for the wake latency: one clock read
 *    and one store, on a path that makes a FUTEX_WAKE system call anyway.
 *
 * Races: a post or wait between the peek and the real call's own atomic can
 * make one call land on the other side of either line; the program's result
 * is never affected. errno is the real function's, always.
 */
#include <errno.h>
#include <limits.h>

#include "shim.h"

static inline uint64_t sem_word(const sem_t *s)
{
	return __atomic_load_n((const uint64_t *)(const void *)s, __ATOMIC_RELAXED);
}

static inline uint32_t sem_value(uint64_t w) { return (uint32_t)w; }
static inline uint32_t sem_nwaiters(uint64_t w) { return (uint32_t)(w >> 32); }

typedef int (*sem_fn)(sem_t *, clockid_t, const struct timespec *);

static int real_wait(sem_t *s, clockid_t c, const struct timespec *ts)
{
	return cv__real.sem_wait(s);
}
static int real_timedwait(sem_t *s, clockid_t c, const struct timespec *ts)
{
	return cv__real.sem_timedwait(s, ts);
}
static int real_clockwait(sem_t *s, clockid_t c, const struct timespec *ts)
{
	return cv__real.sem_clockwait(s, c, ts);
}

static void failed(struct cv_rec *r, int err)
{
	if (err == ETIMEDOUT)
		CV_BUMP(&cv__rec_more(r)->timeouts, 1);
	else if (err == EINTR)
		CV_BUMP(&cv__rec_more(r)->interrupts, 1);
}

/* The wait is also the thread's blocked state (lockorder.c): a hang's
 * profile shows who waits for a post. */
static CV_COLD int wait_blocking(struct cv_thread *t, struct cv_rec *r, sem_t *s, clockid_t clock,
				 const struct timespec *ts, sem_fn real, const void *pc)
{
	uint64_t t0 = cv__now_ns();
	cv__wait_begin(t, r->obj, NULL, ts ? CV_WAIT_TIMED : 0, pc, &t0);
	int rc = real(s, clock, ts);
	int err = errno;
	cv__wait_end(t);
	uint64_t now = cv__now_ns();
	cv__record_wait(r, now - t0);
	cv__stack_on_wait(t, r, now - t0);   /* stacks.c: sampled */
	if (rc == 0) {
		CV_BUMP(&r->acquisitions, 1);
		CV_BUMP(&cv__rec_more(r)->contended, 1);
		cv__woken(r, t0, now);
	} else {
		failed(r, err);
	}
	errno = err;
	return rc;
}

static inline __attribute__((always_inline)) int
sem_wait_common(sem_t *s, clockid_t clock, const struct timespec *ts, sem_fn real)
{
	struct cv_thread *t = cv__current();
	if (CV_UNLIKELY(!t) && !(t = cv__thread_slow()))
		return real(s, clock, ts);
	struct cv_rec *r = cv__sem_rec(t, s);
	if (CV_UNLIKELY(sem_value(sem_word(s)) == 0))
		return wait_blocking(t, r, s, clock, ts, real, __builtin_return_address(0));
	int rc = real(s, clock, ts);
	if (CV_LIKELY(rc == 0))
		CV_BUMP(&r->acquisitions, 1);
	else
		failed(r, errno);
	return rc;
}

/* A token sem.c took itself (take_sem), counted in r; try: sem_trywait's,
 * which also counts the try. */
static inline int taken_count(struct cv_rec *r, bool try)
{
	if (try)
		CV_BUMP(&r->trylocks, 1);
	CV_BUMP(&r->acquisitions, 1);
	return 0;
}

/* The thread's cached record, else the full lookup (nothing for an
 * untracked thread). */
static CV_COLD int taken_slow(sem_t *s, bool try)
{
	struct cv_thread *t = cv__current();
	if (!t && !(t = cv__thread_slow()))
		return 0;
	return taken_count(cv__sem_rec(t, s), try);
}

/* taken's miss of the fixed entry: its partner and the entries aside
 * (shim.h, cv__sem_rec) in the state taken read, else taken_slow; also
 * when that state is no longer the thread's (a fork child made by a signal
 * handler since: the slow path counts in the child's own). */
static CV_NOINLINE int taken_partner(struct cv_thread *t, sem_t *s, bool try)
{
	struct cv_rec *r;
	struct cv_obj *o;
	if (CV_UNLIKELY(cv__sem_partner_miss(t, s, &r, &o) | (t != cv__self)))
		return taken_slow(s, try);
	return taken_count(r, try);
}

static inline __attribute__((always_inline)) int taken(sem_t *s, bool try)
{
	struct cv_thread *t = cv__self;
	struct cv_rec *r;
	struct cv_obj *o;
	if (CV_UNLIKELY(cv__way_miss(&t->sem_cache[0], s, &r, &o)))
		return taken_partner(t, s, try);
	return taken_count(r, try);
}

/* glibc's token: a compare-and-swap of one less from a value that is not
 * 0 (sem_waitcommon.c, __new_sem_wait_fast), when take_sem (real.c). Once
 * for sem_wait, whose failure goes on to the real wait, which tries again;
 * until it is taken or the value is 0 for sem_trywait, which must not
 * fail spuriously. */
static inline bool token_taken(sem_t *s, bool definitive)
{
	uint64_t d = sem_word(s);
	if (!CV_LOAD(&cv__real.take_sem))
		return false;
	do {
		if (sem_value(d) == 0)
			return false;
		if (__atomic_compare_exchange_n((uint64_t *)(void *)s, &d, d - 1, true, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return true;
	} while (definitive);
	return false;
}

static CV_NOINLINE int wait_other(sem_t *s)
{
	return sem_wait_common(s, CLOCK_REALTIME, NULL, real_wait);
}

/* sem_wait after its cancellation point: one try for a token, made here;
 * the real wait when there is none. */
static inline __attribute__((always_inline)) int wait_for_token(sem_t *s)
{
	if (CV_UNLIKELY(!token_taken(s, false)))
		return wait_other(s);
	return taken(s, false);
}

static CV_NOINLINE int cancellation_point_then_wait(sem_t *s)
{
	pthread_testcancel();
	return wait_for_token(s);
}

/* Whether the calling thread may have a cancellation to act on: glibc's
 * cancelhandling word, read where the probe found it (real.c,
 * cv__real.cancel_word), has CANCELED_BITMASK (bit 3) set, as it has from
 * any request, however sent, until the thread ends; glibc's
 * pthread_testcancel then decides. Always, where the word was not found. */
static inline bool cancel_may_be_pending(void)
{
#if defined(__x86_64__) && defined(__LP64__)
	uint32_t offset = CV_LOAD(&cv__real.cancel_word);
	return (offset == 0) | ((CV_LOAD((const int *)(const void *)(cv__thread_self() + offset)) & 8) != 0);
#else
	return true;
#endif
}

/* glibc's sem_wait (nptl/sem_wait.c): its cancellation point first, then
 * the token. The cancellation point is glibc's pthread_testcancel, called
 * only when the thread's cancellation word says a request came
 * (cancel_may_be_pending), out of line so that the fast path needs no
 * frame: the call and its frame cost the pair 1.1 ns (semwait 7.42
 * against 6.34 without them, 11 rounds; native 5.77). */
CV_EXPORT int sem_wait(sem_t *s)
{
	if (CV_UNLIKELY(cancel_may_be_pending()))
		return cancellation_point_then_wait(s);
	return wait_for_token(s);
}

CV_EXPORT int sem_timedwait(sem_t *s, const struct timespec *abstime)
{
	return sem_wait_common(s, CLOCK_REALTIME, abstime, real_timedwait);
}

CV_EXPORT int sem_clockwait(sem_t *s, clockid_t clock, const struct timespec *abstime)
{
	return sem_wait_common(s, clock, abstime, real_clockwait);
}

static CV_NOINLINE int trywait_other(sem_t *s)
{
	struct cv_thread *t = cv__current();
	if (CV_UNLIKELY(!t) && !(t = cv__thread_slow()))
		return cv__real.sem_trywait(s);
	struct cv_rec *r = cv__sem_rec(t, s);
	CV_BUMP(&r->trylocks, 1);
	int rc = cv__real.sem_trywait(s);
	if (rc == 0)
		CV_BUMP(&r->acquisitions, 1);
	else if (errno == EAGAIN)
		CV_BUMP(&cv__rec_more(r)->trylock_failures, 1);
	return rc;
}

/* glibc's sem_trywait (nptl/sem_wait.c) made here when it would take a
 * token; with none, the real one sets errno. */
CV_EXPORT int sem_trywait(sem_t *s)
{
	if (CV_UNLIKELY(!token_taken(s, true)))
		return trywait_other(s);
	return taken(s, true);
}

/* sem_post is async-signal-safe: a handler may run it on a thread that was
 * interrupted inside the shim's own bookkeeping, which hides cv__self (the
 * reentrancy guard, shim.h), so then it stays untracked. */
static CV_COLD int post_slow(sem_t *s)
{
	struct cv_thread *t = cv__current();
	if (CV_UNLIKELY(!t) && !(t = cv__thread_slow()))
		return cv__real.sem_post(s);
	struct cv_rec *r = cv__sem_rec(t, s);
	uint64_t w = sem_word(s);
	if (sem_nwaiters(w) > sem_value(w)) {
		CV_BUMP(&cv__rec_more(r)->signals, 1);
		cv__wake_sent(r->obj, CV_WAKE_SIGNAL);
	} else {
		CV_BUMP(&r->signals_unwaited, 1);
	}
	return cv__real.sem_post(s);
}

/* glibc's post (nptl/sem_post.c, __new_sem_post), made here on the word w
 * the caller read when take_sem: one more in the value by a
 * compare-and-swap with release order, as glibc's, from a word with no
 * thread registered as waiting (nwaiters 0: glibc then wakes nobody) and a
 * value short of SEM_VALUE_MAX (glibc's EOVERFLOW). False, and nothing
 * written, for any other word or a failed exchange: the real post
 * decides, loading the word again as glibc's own loop does. */
static inline bool posted_here(sem_t *s, uint64_t w)
{
	uintptr_t not_here = sem_nwaiters(w) | (sem_value(w) == SEM_VALUE_MAX) | !CV_LOAD(&cv__real.take_sem);
	return !not_here && __atomic_compare_exchange_n((uint64_t *)(void *)s, &w, w + 1, false,
							 __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

/* A post that no waiter needs (w: the word its test read), counted in r:
 * made here (posted_here), else glibc's. */
static inline int post_unwaited(struct cv_rec *r, sem_t *s, uint64_t w)
{
	CV_BUMP(&r->signals_unwaited, 1);
	if (posted_here(s, w))
		return 0;
	return cv__real.sem_post(s);
}

/* sem_post's test failed: the fixed entry's partner or the entries aside,
 * and no waiter that needs this post (taken_partner's tests), then
 * sem_post's own post, else post_slow. */
static CV_NOINLINE int post_partner(struct cv_thread *t, sem_t *s)
{
	struct cv_rec *r;
	struct cv_obj *o;
	uint64_t w = sem_word(s);
	if (CV_UNLIKELY(cv__sem_partner_miss(t, s, &r, &o) | (t != cv__self) | (sem_nwaiters(w) > sem_value(w))))
		return post_slow(s);
	return post_unwaited(r, s, w);
}

/* A tracked thread's cached live record, and no waiter that needs this
 * post, in one test: the count, then the post made here (posted_here), or
 * a tail call. */
CV_EXPORT int sem_post(sem_t *s)
{
	struct cv_thread *t = cv__self;
	struct cv_rec *r;
	struct cv_obj *o;
	uint64_t w = sem_word(s);
	uintptr_t slow = cv__way_miss(&t->sem_cache[0], s, &r, &o) | (sem_nwaiters(w) > sem_value(w));
	if (CV_UNLIKELY(slow))
		return post_partner(t, s);
	return post_unwaited(r, s, w);
}

CV_EXPORT int sem_init(sem_t *s, int pshared, unsigned value)
{
	if (!cv__current())
		cv__thread_slow();
	int rc = cv__real.sem_init(s, pshared, value);
	if (rc == 0 && cv__process.ready && !cv__process.disabled) {
		int err = errno;
		cv__object_init(s, CV_OBJ_SEM);   /* a new object, even where one was before */
		errno = err;
	}
	return rc;
}

CV_EXPORT int sem_destroy(sem_t *s)
{
	if (!cv__current())
		cv__thread_slow();
	int rc = cv__real.sem_destroy(s);
	if (rc == 0 && cv__process.ready && !cv__process.disabled) {
		int err = errno;
		cv__forget_object(s, CV_OBJ_SEM);
		errno = err;
	}
	return rc;
}
