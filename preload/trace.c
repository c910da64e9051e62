/* trace.c — trace mode: when each wait, sampled hold and wake happened.
 *
 * Off by default; CONVOY_TRACE=1 (or `convoy run --trace`) turns it on, and
 * CONVOY_TRACE_EVENTS sets each thread's ring size (default 4096 events of
 * 32 bytes). Events come only from the slow paths that already read the
 * clock — a wait that blocked (cv__record_wait), a sampled hold's end, a wake
 * that found a waiter and the woken waiter (park.c) — never from the
 * uncontended fast path; with trace mode off each of those pays one
 * predictable branch on a global that never changes.
 *
 * Each thread owns a ring, mapped (mmap, a plain system call) when its state
 * is made, written only by that thread and by signal handlers running on
 * it. A writer reserves its slot with one atomic add on the ring's head, so a
 * handler that interrupts a write takes the next slot; the slot's type is
 * cleared first and stored last (release), so the profile writer, which reads
 * rings of threads that may still be running, skips a half-written slot. The
 * ring keeps the newest events: older ones are overwritten and counted as
 * dropped. No lock, no allocation, nothing but clock_gettime and stores:
 * async-signal-safe.
 *
 * Hold samples are timed in TSC ticks (mutex.c); they are stored as ticks and
 * converted with the profile's calibration when written. Only one hold sample
 * in CV_TRACE_HOLD_EVERY is traced (below).
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "shim.h"

#define CV_TRACE_DEFAULT_EVENTS 4096u
#define CV_TRACE_MAX_EVENTS     (1u << 22)
/* Hold samples come every 64th acquisition of every mutex: a busy lock would
 * fill the ring with them and push the waits out. One in 16 is traced. */
#define CV_TRACE_HOLD_EVERY     16u

struct cv_trace_slot {
	uint64_t ts, dur, arg;         /* hold: ts and dur in ticks */
	uint32_t type;                 /* 0 while being written */
	uint32_t obj;                  /* 1 + the object's id, 0: none (an id: shim.h, cv_obj.cond_mutex) */
};

struct cv_trace_ring {
	uint64_t head;                 /* events ever reserved */
	uint32_t capacity;             /* a power of two */
	uint32_t holds;                /* hold samples seen (1 in CV_TRACE_HOLD_EVERY is traced) */
	struct cv_trace_slot slot[];
};

bool cv__trace_on;
static uint32_t capacity = CV_TRACE_DEFAULT_EVENTS;

void cv__trace_init(void)
{
	const char *s = getenv("CONVOY_TRACE");
	cv__trace_on = s && *s && s[0] != '0';
	if (!cv__trace_on)
		return;
	if ((s = getenv("CONVOY_TRACE_EVENTS")) && *s) {
		char *end;
		unsigned long n = strtoul(s, &end, 10);
		if (*end || n < 16 || n > CV_TRACE_MAX_EVENTS) {
			cv__warn("CONVOY_TRACE_EVENTS=%s is not a count from 16 to %u; using %u", s,
				 CV_TRACE_MAX_EVENTS, CV_TRACE_DEFAULT_EVENTS);
			n = CV_TRACE_DEFAULT_EVENTS;
		}
		capacity = 1;
		while (capacity < n)
			capacity <<= 1;
	}
}

/* t's ring: a new one, or, for a state recycled from a thread merged past
 * the shim's thread cap (thread.c), its old ring emptied (that thread's
 * events go with its record). */
void cv__trace_thread(struct cv_thread *t)
{
	if (!cv__trace_on)
		return;
	if (t->trace) {
		__atomic_store_n(&t->trace->head, 0, __ATOMIC_RELAXED);
		t->trace->holds = 0;
		return;
	}
	size_t len = sizeof(struct cv_trace_ring) + (size_t)capacity * sizeof(struct cv_trace_slot);
	void *m = cv__mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		cv__warn("out of memory for a thread's trace ring; that thread is not traced");
		return;
	}
	struct cv_trace_ring *ring = m;
	ring->capacity = capacity;
	__atomic_store_n(&t->trace, ring, __ATOMIC_RELEASE);
}

static void put(struct cv_thread *t, uint32_t type, struct cv_obj *o, uint64_t ts, uint64_t dur, uint64_t arg)
{
	struct cv_trace_ring *ring = t ? t->trace : NULL;
	if (!ring)
		return;
	uint64_t i = __atomic_fetch_add(&ring->head, 1, __ATOMIC_RELAXED);
	struct cv_trace_slot *s = &ring->slot[i & (ring->capacity - 1)];
	CV_STORE(&s->type, 0);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);   /* the clear before the fields, for a handler here */
	CV_STORE(&s->ts, ts);
	CV_STORE(&s->dur, dur);
	CV_STORE(&s->arg, arg);
	CV_STORE(&s->obj, o ? o->id + 1 : 0);
	__atomic_store_n(&s->type, type, __ATOMIC_RELEASE);   /* the fields before the type */
}

void cv__trace_wait(struct cv_obj *o, uint64_t ns)
{
	put(cv__current(), CV_TRACE_WAIT, o, cv__now_ns(), ns, 0);
}

void cv__trace_hold(struct cv_thread *t, struct cv_obj *o, uint64_t end_ticks, uint64_t ticks)
{
	struct cv_trace_ring *ring = t->trace;
	if (ring && ring->holds++ % CV_TRACE_HOLD_EVERY == 0)
		put(t, CV_TRACE_HOLD, o, end_ticks, ticks, 0);
}

void cv__trace_wake(struct cv_obj *o, uint64_t stamp)
{
	put(cv__current(), CV_TRACE_WAKE, o, stamp, 0, 0);
}

void cv__trace_woken(struct cv_obj *o, uint64_t stamp, uint64_t now)
{
	put(cv__current(), CV_TRACE_WOKEN, o, now, 0, stamp);
}

/* The ring of t as one CV_REC_TRACE record, oldest event first. */
void cv__trace_write(void *w, struct cv_thread *t, double ns_per_tick)
{
	struct cv_trace_ring *ring = __atomic_load_n(&t->trace, __ATOMIC_ACQUIRE);
	if (!ring)
		return;
	uint64_t head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
	uint64_t first = head > ring->capacity ? head - ring->capacity : 0;
	/* One buffer for every thread's events: the profile is written once, by one thread. */
	static struct cv_trace_event *ev;
	if (!ev) {
		void *m = cv__mmap(NULL, (size_t)capacity * sizeof(*ev), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED) {
			cv__warn("out of memory writing the trace; it is left out");
			return;
		}
		ev = m;
	}
	size_t kept = 0;
	for (uint64_t i = first; i < head; i++) {
		const struct cv_trace_slot *s = &ring->slot[i & (ring->capacity - 1)];
		uint32_t type = __atomic_load_n(&s->type, __ATOMIC_ACQUIRE);
		if (!type)
			continue;   /* being written */
		uint32_t obj = CV_LOAD(&s->obj), at = obj ? cv__dumped(obj - 1) : UINT32_MAX;
		struct cv_trace_event *e = &ev[kept++];
		*e = (struct cv_trace_event){
			.ts_ns = CV_LOAD(&s->ts), .dur_ns = CV_LOAD(&s->dur), .arg = CV_LOAD(&s->arg),
			.object = at != UINT32_MAX ? at : CV_TRACE_NO_OBJECT, .type = type,
		};
		if (type == CV_TRACE_HOLD) {   /* ticks to CLOCK_MONOTONIC */
			e->ts_ns = cv__process.start_ns +
				   (uint64_t)((double)(e->ts_ns - cv__process.start_ticks) * ns_per_tick);
			e->dur_ns = (uint64_t)((double)e->dur_ns * ns_per_tick);
		}
	}
	struct cv_trace_rec rec = {
		.thread = t->dump_index,
		.nevents = (uint32_t)kept,
		.event_size = sizeof(struct cv_trace_event),
		.capacity = ring->capacity,
		.dropped = first,
		.hold_every = CV_TRACE_HOLD_EVERY,
	};
	cv__put_record(w, CV_REC_TRACE, &rec, sizeof(rec), ev, kept * sizeof(*ev), NULL, 0);
}
