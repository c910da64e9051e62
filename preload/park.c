/* park.c — what parking and waking cost: wake latency.
 *
 * The estimator. A waker that finds (or may have found) a waiter stamps the
 * object with CLOCK_MONOTONIC just before the real signal, post or wake
 * (cv__wake_sent): written before the call, so the woken thread, which can
 * only run after the call has started, always finds it. A waiter that began
 * blocking at t0 and returns woken at `now` (cv__woken) counts
 *
 *     latency = now - stamp,   when stamp >= t0
 *
 * i.e. from the waker's call to the waiter running again in the wrapper:
 * the kernel's wake-up, the scheduler putting the waiter on a CPU (run-queue
 * delay included), and, for condvars, re-acquiring the mutex. A stamp older
 * than t0 means no wake was sent during this wait (a timeout, a spurious
 * wake-up, or a wake the shim cannot see, e.g. glibc-internal ones): no
 * latency is counted.
 *
 * Its error. With several wakes in flight on one object, every waiter
 * measures from the newest stamp, so latencies are biased low (never high:
 * the stamp it read is at least as late as the wake that woke it). A
 * broadcast stamps once, so its later-running waiters see the whole fan-out
 * delay, which is the cost a broadcast really has. The stamp's own cost is
 * one clock read (about 22 ns here) and one store in the object's line, on
 * paths that are making a system call anyway.
 */
#include "shim.h"

void cv__wake_sent(struct cv_obj *o, uint32_t kind)
{
	/* Release: a waiter that reads the stamp (acquire) after returning
	 * from the kernel sees this one or a newer one. */
	if (kind && CV_LOAD(&o->wake_kind) != kind)
		CV_STORE(&o->wake_kind, kind);
	uint64_t stamp = cv__now_ns();
	__atomic_store_n(&o->wake_ns, stamp, __ATOMIC_RELEASE);
	if (CV_UNLIKELY(cv__trace_on))
		cv__trace_wake(o, stamp);   /* the woken waiter's event carries the same stamp */
}

void cv__woken(struct cv_rec *r, uint64_t t0, uint64_t now)
{
	cv__woken_at(r, __atomic_load_n(&r->obj->wake_ns, __ATOMIC_ACQUIRE), t0, now);
}

void cv__woken_at(struct cv_rec *r, uint64_t sent, uint64_t t0, uint64_t now)
{
	if (sent < t0 || sent > now)
		return;
	uint64_t ns = now - sent;
	struct cv_rec_more *m = cv__rec_more(r);
	CV_BUMP(&m->wakeups, 1);
	CV_BUMP(&m->wake_latency_ns, ns);
	cv__store_max(&m->max_wake_latency_ns, ns);
	if (CV_UNLIKELY(cv__trace_on))
		cv__trace_woken(r->obj, sent, now);
}
