/* cond.c — pthread_cond_* (the GLIBC_2.3.2 implementations, see real.c).
 *
 * Waits are slow by nature, so each one is timed. Signals and broadcasts are
 * counted, and so are those sent when no thread was waiting for one (seed
 * 002's wasted signals): each condvar object keeps, in one word, how many
 * threads are inside a wait and how many of those a signal has already
 * claimed. A signal finds an unclaimed waiter or is "unwaited"; a broadcast
 * claims them all. Exact when the program signals with the mutex held; a
 * signal racing a waiter's entry without the mutex can go either way, as it
 * can for the program itself.
 */
#include <errno.h>

#include "shim.h"

#define WAITING(s)  ((uint32_t)((s) >> 32))
#define CLAIMED(s)  ((uint32_t)(s))
#define STATE(w, c) (((uint64_t)(w) << 32) | (uint32_t)(c))

enum cond_event { COND_ENTER, COND_LEAVE, COND_SIGNAL, COND_BROADCAST };

/* Applies one event to o's state; returns how many waiters a signal or
 * broadcast claimed (0: it found no unclaimed waiter). */
static uint32_t cond_event(struct cv_obj *o, enum cond_event ev)
{
	uint64_t old = __atomic_load_n(&o->cond_state, __ATOMIC_RELAXED), new;
	uint32_t claimed;
	do {
		uint32_t w = WAITING(old), c = CLAIMED(old);
		claimed = 0;
		switch (ev) {
		case COND_ENTER:     w++; break;
		case COND_LEAVE:     if (w) w--; if (c) c--; break;   /* a woken waiter used its claim */
		case COND_SIGNAL:    if (w > c) { c++; claimed = 1; } break;
		case COND_BROADCAST: claimed = w > c ? w - c : 0; c = w; break;
		}
		if (c > w)
			c = w;
		new = STATE(w, c);
		if (new == old)
			break;   /* nothing to claim: the line stays shared */
	} while (!__atomic_compare_exchange_n(&o->cond_state, &old, new, true,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return claimed;
}

/* A futile wake-up: this thread returned from a wait on c (woken) and now
 * waits on c again without having released the mutex (no acquisition of it
 * since) or signalled anything: it woke, found nothing to do, and went back
 * to sleep — a broadcast's herd, or a spurious or stolen wake-up. A thread
 * that consumed work while keeping the mutex and waits again without
 * signalling anyone is counted too (the shim cannot see the predicate). */
static void check_futile(struct cv_thread *t, struct cv_rec *r, const pthread_cond_t *c,
			 const pthread_mutex_t *m)
{
	struct cv_rec *mr = t->cw_mutex_rec;
	if (t->cw_cond == c && mr && mr->obj->addr == m &&
	    CV_LOAD(&mr->acquisitions) == t->cw_mutex_acq) {
		CV_BUMP(&cv__rec_more(r)->futile_wakes, 1);
		if (t->cw_broadcast)
			CV_BUMP(&cv__rec_more(r)->futile_after_broadcast, 1);
	}
	t->cw_cond = NULL;
}

/* A wait ended by pthread_cancel: it still left, and it still waited. */
struct cond_cancel { struct cv_thread *t; struct cv_obj *o; struct cv_rec *r; uint64_t t0; };

static void cond_leave_cancelled(void *arg)
{
	struct cond_cancel *x = arg;
	cv__wait_end(x->t);
	cond_event(x->o, COND_LEAVE);
	cv__record_wait(x->r, cv__now_ns() - x->t0);
}

typedef int (*cond_wait_fn)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *);

static int real_wait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock, const struct timespec *ts)
{
	return cv__real.pthread_cond_wait(c, m);
}

static int real_timedwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock, const struct timespec *ts)
{
	return cv__real.pthread_cond_timedwait(c, m, ts);
}

static int real_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock, const struct timespec *ts)
{
	return cv__real.pthread_cond_clockwait(c, m, clock, ts);
}

/* glibc's first cleanup list: shim.h, before struct cv_pin. */

/* The real wait, with cond_leave_cancelled registered for a cancellation
 * (or a jump out of the wait: it ended either way). */
static int wait_cancellable(struct cond_cancel *cancel, cond_wait_fn real, pthread_cond_t *c, pthread_mutex_t *m,
			    clockid_t clock, const struct timespec *ts)
{
	struct _pthread_cleanup_buffer buf;
	_pthread_cleanup_push(&buf, cond_leave_cancelled, cancel);
	int rc = real(c, m, clock, ts);
	_pthread_cleanup_pop(&buf, 0);
	return rc;
}

static int cond_wait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
		     const struct timespec *ts, cond_wait_fn real, const void *pc)
{
	struct cv_thread *t = cv__current();
	if (CV_UNLIKELY(!t) && !(t = cv__thread_slow()))
		return real(c, m, clock, ts);
	struct cv_rec *r = cv__cond_rec(t, c);
	struct cv_obj *o = r->obj;   /* r holds it: it lives while r does */
	struct cv_pin pin;
	cv__pin_hold(&pin, t, r);
	if (t->hold_addr == m)
		t->hold_addr = NULL;   /* the wait releases the mutex: drop that hold sample */
	if (t->cw_cond)
		check_futile(t, r, c, m);
	cond_event(o, COND_ENTER);
	uint64_t t0 = cv__now_ns();
	struct cond_cancel cancel = { t, o, r, t0 };   /* a cancelled wait still leaves */
	cv__wait_begin(t, o, cv__mutex_rec(t, m)->obj, ts ? CV_WAIT_TIMED : 0, pc, &t0);
	int rc = wait_cancellable(&cancel, real, c, m, clock, ts);
	cv__wait_end(t);
	uint64_t now = cv__now_ns(), waited = now - t0;
	cond_event(o, COND_LEAVE);
	cv__record_wait(r, waited);
	if (rc == 0)
		cv__woken(r, t0, now);   /* wake latency from the signal (park.c) */
	cv__stack_on_wait(t, r, waited);   /* stacks.c: sampled */
	if (rc == ETIMEDOUT)
		CV_BUMP(&cv__rec_more(r)->timeouts, 1);
	/* The wait re-acquired m: the mutex's next owner change is counted from
	 * this thread, not from whoever held it while we slept. */
	if (rc == 0 || rc == ETIMEDOUT) {
		struct cv_rec *mr = cv__mutex_rec(t, m);
		if (CV_LOAD(&mr->obj->last_owner) != t)
			CV_STORE(&mr->obj->last_owner, t);
		/* The (condvar, mutex) pair: the monitor. Written only when it changes. */
		uint32_t was = CV_LOAD(&o->cond_mutex), now = mr->obj->id + 1;
		if (was != now) {
			if (was)
				__atomic_fetch_or(&o->flags, CV_COND_MUTEXES_VARY, __ATOMIC_RELAXED);
			CV_STORE(&o->cond_mutex, now);
		}
		if (rc == 0) {   /* remembered for check_futile */
			t->cw_cond = c;
			t->cw_mutex_rec = mr;
			t->cw_mutex_acq = CV_LOAD(&mr->acquisitions);
			t->cw_broadcast = CV_LOAD(&o->wake_kind) == CV_WAKE_BROADCAST;
		}
	}
	cv__pin_drop(&pin);
	return rc;
}

CV_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	return cond_wait(c, m, CLOCK_REALTIME, NULL, real_wait, __builtin_return_address(0));
}

CV_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime)
{
	return cond_wait(c, m, CLOCK_REALTIME, abstime, real_timedwait, __builtin_return_address(0));
}

CV_EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
				     const struct timespec *abstime)
{
	return cond_wait(c, m, clock, abstime, real_clockwait, __builtin_return_address(0));
}

/* A signal or broadcast that finds every waiter already claimed (or none)
 * changes nothing in the condvar's state: it is counted "unwaited" in the
 * thread's own record, and the object's line is only read. Exact under the
 * rule above (the program holds the mutex that waiters enter under). The
 * fast paths below test that, a tracked thread and a cached live record in
 * one branch, then make glibc's own first test (glibc_no_waiter) and call
 * the real function only if glibc has a waiter (docs/performance.md has
 * the cost). */
static inline bool cond_has_unclaimed(const struct cv_obj *o)
{
	uint64_t st = CV_LOAD(&o->cond_state);
	return WAITING(st) > CLAIMED(st);
}

/* Zero when t's cache entry for c holds c's live object (*r its record)
 * and nobody waits on it (cv__inert's entries are empty: their object is
 * retired). */
static inline uintptr_t cond_unwaited_slow(struct cv_thread *t, const void *c, struct cv_rec **r)
{
	struct cv_obj *o;
	return cv__way_miss(cv__way(t->cond_cache, c), c, r, &o) | cond_has_unclaimed(o);
}

/* glibc's own first test in pthread_cond_signal and _broadcast: no waiter
 * (the count in __wrefs above its three flag bits), return 0, touch
 * nothing. Made here, it saves the call; only when the call would go to
 * glibc (real.c). */
static inline bool glibc_no_waiter(const pthread_cond_t *c)
{
	return CV_LOAD(&cv__real.cond_in_libc) & ((CV_LOAD(&c->__data.__wrefs) >> 3) == 0);
}

static CV_COLD int signal_slow(pthread_cond_t *c);
static CV_COLD int broadcast_slow(pthread_cond_t *c);

CV_EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
	struct cv_thread *t = cv__self;
	struct cv_rec *r;
	if (CV_UNLIKELY(cond_unwaited_slow(t, c, &r)))
		return signal_slow(c);
	CV_BUMP(&r->signals_unwaited, 1);
	t->cw_cond = NULL;   /* it did something after its wake: not futile */
	if (glibc_no_waiter(c))
		return 0;
	return cv__real.pthread_cond_signal(c);
}

CV_EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
	struct cv_thread *t = cv__self;
	struct cv_rec *r;
	if (CV_UNLIKELY(cond_unwaited_slow(t, c, &r)))
		return broadcast_slow(c);
	CV_BUMP(&r->broadcasts_unwaited, 1);
	t->cw_cond = NULL;
	if (glibc_no_waiter(c))
		return 0;
	return cv__real.pthread_cond_broadcast(c);
}

static CV_COLD int signal_slow(pthread_cond_t *c)
{
	struct cv_thread *t = cv__current();
	if (CV_UNLIKELY(!t) && !(t = cv__thread_slow()))
		return cv__real.pthread_cond_signal(c);
	struct cv_rec *r = cv__cond_rec(t, c);
	t->cw_cond = NULL;   /* it did something after its wake: not futile */
	if (!cond_event(r->obj, COND_SIGNAL)) {
		CV_BUMP(&r->signals_unwaited, 1);
	} else {
		CV_BUMP(&cv__rec_more(r)->signals, 1);
		cv__wake_sent(r->obj, CV_WAKE_SIGNAL);   /* before the real signal (park.c) */
	}
	return cv__real.pthread_cond_signal(c);
}

static CV_COLD int broadcast_slow(pthread_cond_t *c)
{
	struct cv_thread *t = cv__current();
	if (CV_UNLIKELY(!t) && !(t = cv__thread_slow()))
		return cv__real.pthread_cond_broadcast(c);
	struct cv_rec *r = cv__cond_rec(t, c);
	t->cw_cond = NULL;
	uint32_t woken = cond_event(r->obj, COND_BROADCAST);
	if (!woken) {
		CV_BUMP(&r->broadcasts_unwaited, 1);
	} else {
		CV_BUMP(&cv__rec_more(r)->broadcasts, 1);
		CV_BUMP(&cv__rec_more(r)->broadcast_woken, woken);   /* the fan-out */
		cv__wake_sent(r->obj, CV_WAKE_BROADCAST);
	}
	return cv__real.pthread_cond_broadcast(c);
}

CV_EXPORT int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *attr)
{
	if (!cv__current())
		cv__thread_slow();
	int rc = cv__real.pthread_cond_init(c, attr);
	if (rc == 0 && cv__process.ready && !cv__process.disabled)
		cv__object_init(c, CV_OBJ_COND);   /* a new object, even where one was before */
	return rc;
}

CV_EXPORT int pthread_cond_destroy(pthread_cond_t *c)
{
	if (!cv__current())
		cv__thread_slow();
	int rc = cv__real.pthread_cond_destroy(c);
	if (rc == 0 && cv__process.ready && !cv__process.disabled)
		cv__forget_object(c, CV_OBJ_COND);
	return rc;
}
