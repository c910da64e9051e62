/* barrier.c — pthread_barrier_*: per round, the imbalance and the wake cost.
 *
 * pthread_barrier_t is opaque, so the shim keeps its own round state in the
 * object: the count from pthread_barrier_init and an arrival counter. Each
 * pthread_barrier_wait reads the clock on arrival (barrier waits are slow by
 * nature) and takes a ticket; ticket n is position n % count of round
 * n / count.
 *
 *  - The first arrival of a round stamps the round's first-arrival time.
 *  - The last arrival computes the imbalance, last - first arrival: how long
 *    the earliest thread of the round had to wait for the slowest one. It
 *    then stamps the object (park.c) just before entering the real wait that
 *    releases the others.
 *  - Every other arrival, once the real wait returns, counts its wake latency
 *    from that stamp.
 *
 * Every arrival's bookkeeping happens before its real wait, and no thread is
 * released before all `count` of them entered the real wait, so the round's
 * tickets are all taken before anybody leaves: the shim's rounds are glibc's
 * rounds when rounds do not overlap (the usual case: the same `count`
 * threads meet again and again). With more threads than `count` sharing one
 * barrier, rounds can interleave and the shim's grouping is by ticket order.
 */
#include "shim.h"

/* The last arrival of a round needs its first-arrival stamp; the first
 * arrival stores it just after taking its ticket, so it is there at once
 * unless that thread was preempted in between. Waits a little for it, on
 * this CPU only: the round is released by this thread, so yielding the CPU
 * to wait longer would hold every thread of the round up for a time slice
 * on a busy machine. A round left unmeasured still counts in `rounds`, the
 * averages' denominator: the first arrival must have been preempted in a
 * window of two instructions, so such rounds are few. */
static bool first_arrival(struct cv_obj *o, uint64_t round, uint64_t *first_ns)
{
	for (int i = 0; i < 256; i++) {
		if (__atomic_load_n(&o->barrier_first_round, __ATOMIC_ACQUIRE) == round + 1) {
			*first_ns = CV_LOAD(&o->barrier_first_ns);
			return true;
		}
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
	return false;   /* that round's imbalance is not measured */
}

static void last_arrival(struct cv_rec *r, struct cv_obj *o, uint64_t round, uint64_t t0)
{
	uint64_t first;
	struct cv_rec_more *m = cv__rec_more(r);
	CV_BUMP(&m->rounds, 1);
	if (first_arrival(o, round, &first) && t0 >= first) {
		uint64_t ns = t0 - first;
		CV_BUMP(&m->imbalance_ns, ns);
		cv__store_max(&m->max_imbalance_ns, ns);
	}
	cv__wake_sent(o, 0);
}

CV_EXPORT int pthread_barrier_wait(pthread_barrier_t *b)
{
	struct cv_thread *t = cv__current();
	if (CV_UNLIKELY(!t) && !(t = cv__thread_slow()))
		return cv__real.pthread_barrier_wait(b);
	struct cv_rec *r = cv__lookup_slow(t, b, CV_OBJ_BARRIER);
	struct cv_obj *o = r->obj;   /* r holds it: it lives while r does */
	cv__barrier_pin(t, r);
	uint64_t t0 = cv__now_ns();
	uint32_t count = CV_LOAD(&o->barrier_count);
	bool last = false;
	if (count) {
		/* The count goes to the profile as cv_object.flags; stored here,
		 * once the object has its kind (creating it resets the flags). */
		if (CV_UNLIKELY(CV_LOAD(&o->flags) != count))
			CV_STORE(&o->flags, count);
		uint64_t n = __atomic_fetch_add(&o->barrier_arrivals, 1, __ATOMIC_ACQ_REL);
		uint64_t round = n / count, pos = n % count;
		if (pos == 0) {
			CV_STORE(&o->barrier_first_ns, t0);
			__atomic_store_n(&o->barrier_first_round, round + 1, __ATOMIC_RELEASE);
		}
		if (pos == count - 1) {
			last = true;
			last_arrival(r, o, round, t0);
		}
	}
	int rc = cv__real.pthread_barrier_wait(b);
	uint64_t now = cv__now_ns();
	cv__record_wait(r, now - t0);
	cv__stack_on_wait(cv__current(), r, now - t0);   /* stacks.c: sampled */
	if (count && !last && (rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD))
		cv__woken(r, t0, now);
	cv__barrier_pin(t, NULL);
	return rc;
}

CV_EXPORT int pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *attr, unsigned count)
{
	if (!cv__current())
		cv__thread_slow();
	int rc = cv__real.pthread_barrier_init(b, attr, count);
	if (rc == 0 && cv__process.ready && !cv__process.disabled) {
		/* A new generation, whose count is known before anyone arrives:
		 * a new object, even where one was before, but for an address
		 * past CV_GENERATIONS_KEPT, whose last kept object stays (of any
		 * kind: a barrier's object is had as a barrier's, which retires
		 * another kind's), and starts its rounds again. */
		cv__object_init(b, CV_OBJ_BARRIER);
		struct cv_obj *o = cv__object_of(b, CV_OBJ_BARRIER);
		if (o) {
			CV_STORE(&o->barrier_count, count);
			CV_STORE(&o->barrier_arrivals, 0);
			CV_STORE(&o->barrier_first_round, 0);
		}
	}
	return rc;
}

CV_EXPORT int pthread_barrier_destroy(pthread_barrier_t *b)
{
	if (!cv__current())
		cv__thread_slow();
	int rc = cv__real.pthread_barrier_destroy(b);
	if (rc == 0 && cv__process.ready && !cv__process.disabled)
		cv__forget_object(b, CV_OBJ_BARRIER);
	return rc;
}
