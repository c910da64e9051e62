/* deadlock.c — lock-order cycles and deadlocks (deadlock.h).
 *
 * Lock order. The profile's edges form a directed graph over locks. Every
 * elementary cycle, of any length, is found once (a depth-first search from
 * each lock that visits only locks with a higher id, so the cycle's lowest
 * lock starts it), up to MAX_CYCLES cycles and MAX_STEPS edges followed; a
 * search that hits a bound says so (deadlock__search_stopped). A cycle through a lock
 * that both neighbouring edges hold and want for reading (an rwlock's read
 * side twice) cannot block there, and is not reported; the shim already
 * leaves out what cannot block at all (trylocks, re-acquisitions).
 *
 * Deadlock. Each blocked thread waits for a lock; the lock's owners are
 * the threads that hold it (their held sets), minus a condvar waiter that
 * released it for its wait. A thread blocked on a semaphore or futex word
 * waits for the threads that posted it during the run, when all of them are
 * blocked too (waits_for_posters). A cycle in thread -> owner through at
 * least one lock is a deadlock: no thread in it can move. A reader waiting
 * for a lock held only for reading is not blocked by that reader.
 *
 * A hang snapshot (--on-hang auto or continue) beside the profile (model.hang) is
 * read the same way for deadlocks and starved pools; what the profile itself
 * shows is not repeated.
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "convoy.h"
#include "callstacks.h"
#include "deadlock.h"
#include "findings.h"
#include "model.h"
#include "profile.h"
#include "symbols.h"
#include "textfit.h"
#include "util.h"

#define MAX_WAIT_CHAIN 64      /* a deadlock's threads: the walk is nearly linear (one owner per lock) */
#define MAX_CYCLES    16
#define MAX_STEPS     200000   /* bounds the search on a dense graph */

/* ---- one edge of a finding ------------------------------------------------- */

static const char *lock_name(const struct model *m, uint32_t object)
{
	return object < m->p->nobjects ? m->rows[object].name : "";
}

/* The innermost frame of pc in the program's own code, else the innermost. */
static void site_of(const struct model *m, uint64_t pc, char *buf, size_t size)
{
	const struct sym_frame *f;
	size_t n = pc ? syms__frames(m->syms, pc, SYMS_ANY_GEN, 1, &f) : 0;
	size_t pick = 0;
	while (pick < n && (f[pick].runtime || f[pick].shim))
		pick++;
	if (!n)
		snprintf(buf, size, "(unknown)");
	else
		syms__frame_label(&f[pick < n ? pick : 0], buf, size);
}

/* A stack's frames in the program (runtime ones left out) into frames;
 * their count. */
static size_t stack_frames(const struct model *m, uint32_t stack, char frames[][192], size_t max)
{
	const struct sym_frame **f;
	size_t n = callstacks__frames(m->syms, stack, &f), k = 0;
	for (size_t i = 0; i < n && k < max; i++)
		if (!f[i]->runtime)
			syms__frame_label(f[i], frames[k++], sizeof(frames[0]));
	free(f);
	return k;
}

static void fill_edge(const struct model *m, struct finding_edge *e, uint32_t from, uint32_t to, uint32_t thread,
		      uint64_t from_pc, uint32_t from_stack, uint32_t to_stack, uint64_t to_pc)
{
	snprintf(e->from, sizeof(e->from), "%.127s", lock_name(m, from));
	snprintf(e->to, sizeof(e->to), "%.127s", lock_name(m, to));
	char label[48];
	const struct cv_thread_rec *t = &m->p->threads[thread];
	snprintf(e->thread, sizeof(e->thread), "%s (tid %d)", findings__thread_label(m, t, label, sizeof(label)), t->tid);
	site_of(m, from_pc, e->from_site, sizeof(e->from_site));
	e->nframes = stack_frames(m, to_stack, e->to_frames, FINDING_MAX_FRAMES);
	if (!e->nframes)   /* no stack captured: the call site alone */
		site_of(m, to_pc, e->to_frames[e->nframes++], sizeof(e->to_frames[0]));
	e->nfrom_frames = stack_frames(m, from_stack, e->from_frames, FINDING_MAX_FRAMES);
	e->from_partial = from_stack && from_stack <= m->p->nstacks &&
			  (m->p->stacks[from_stack - 1].s.flags & CV_STACK_PARTIAL);
}

/* The recorded edge from -> to, if any. */
static const struct cv_lock_edge *find_edge(const struct profile *p, uint32_t from, uint32_t to)
{
	for (size_t i = 0; i < p->nedges; i++)
		if (p->edges[i].from == from && p->edges[i].to == to)
			return &p->edges[i];
	return NULL;
}

/* ---- lock-order cycles ----------------------------------------------------- */

enum search_end { SEARCH_COMPLETE, SEARCH_MAX_CYCLES, SEARCH_MAX_STEPS };

struct cycle_search {
	const struct profile *p;
	size_t *first, *next;        /* per object: its first outgoing edge; per edge: the next */
	size_t *path, *iter;         /* per depth: the edge taken, the next edge to try */
	size_t steps;
	size_t *cycles[MAX_CYCLES], lens[MAX_CYCLES], ncycles;   /* edge indexes */
	char *on_path;               /* per object */
	enum search_end end;
};

static int blocks_at_every_lock(const struct cycle_search *cs, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		const struct cv_lock_edge *in = &cs->p->edges[cs->path[i]], *out = &cs->p->edges[cs->path[(i + 1) % len]];
		if ((in->to_flags & CV_LOCK_READ) && (out->from_flags & CV_LOCK_READ))
			return 0;   /* wanted and held for reading: readers do not wait for each other */
	}
	return 1;
}

/* The elementary cycles whose lowest lock is start, of any length: a
 * depth-first walk (iterative: a path may be as long as there are locks)
 * through locks above start, each at most once per path. */
static void search(struct cycle_search *cs, uint32_t start)
{
	const struct cv_lock_edge *edges = cs->p->edges;
	size_t depth = 0;
	cs->iter[0] = cs->first[start];
	for (;;) {
		size_t e = cs->iter[depth];
		if (e == SIZE_MAX) {   /* every edge from here tried: back up */
			if (depth == 0)
				return;
			depth--;
			cs->on_path[edges[cs->path[depth]].to] = 0;
			cs->iter[depth] = cs->next[cs->path[depth]];
			continue;
		}
		if (cs->ncycles == MAX_CYCLES || ++cs->steps > MAX_STEPS) {
			cs->end = cs->ncycles == MAX_CYCLES ? SEARCH_MAX_CYCLES : SEARCH_MAX_STEPS;
			return;
		}
		uint32_t to = edges[e].to;
		cs->path[depth] = e;
		cs->iter[depth] = cs->next[e];
		if (to == start) {
			if (blocks_at_every_lock(cs, depth + 1)) {
				cs->cycles[cs->ncycles] = xcalloc(depth + 1, sizeof(size_t));
				memcpy(cs->cycles[cs->ncycles], cs->path, (depth + 1) * sizeof(size_t));
				cs->lens[cs->ncycles++] = depth + 1;
			}
			continue;
		}
		if (to < start || cs->on_path[to])
			continue;
		cs->on_path[to] = 1;
		cs->iter[depth] = e;   /* restored to next[e] when the walk backs up to here */
		cs->iter[++depth] = cs->first[to];
	}
}

/* Every elementary cycle once (from its lowest lock), up to MAX_CYCLES
 * cycles and MAX_STEPS edges followed; cs->end says whether a bound was hit.
 * The caller frees with free_cycles. */
static void find_cycles(struct cycle_search *cs, const struct profile *p)
{
	memset(cs, 0, sizeof(*cs));
	cs->p = p;
	size_t n = p->nobjects ? p->nobjects : 1;
	cs->first = xcalloc(n, sizeof(size_t));
	cs->next = xcalloc(p->nedges ? p->nedges : 1, sizeof(size_t));
	cs->path = xcalloc(n + 1, sizeof(size_t));
	cs->iter = xcalloc(n + 1, sizeof(size_t));
	cs->on_path = xcalloc(n, 1);
	for (size_t i = 0; i < p->nobjects; i++)
		cs->first[i] = SIZE_MAX;
	for (size_t i = p->nedges; i-- > 0;) {
		cs->next[i] = cs->first[p->edges[i].from];
		cs->first[p->edges[i].from] = i;
	}
	for (uint32_t s = 0; s < p->nobjects && cs->end == SEARCH_COMPLETE; s++) {
		if (cs->first[s] == SIZE_MAX)
			continue;
		cs->on_path[s] = 1;
		search(cs, s);
		cs->on_path[s] = 0;
	}
	free(cs->first);
	free(cs->next);
	free(cs->path);
	free(cs->iter);
	free(cs->on_path);
}

static void free_cycles(struct cycle_search *cs)
{
	for (size_t i = 0; i < cs->ncycles; i++)
		free(cs->cycles[i]);
}

/* Why the search for lock-order cycles of the profile stopped early, in a
 * sentence; NULL when it looked at every cycle. */
static const char *search_stopped(const struct cycle_search *cs, char *buf, size_t size)
{
	if (cs->end == SEARCH_MAX_CYCLES)
		snprintf(buf, size, "the lock-order cycle search stopped at %d cycles: more may exist", MAX_CYCLES);
	else if (cs->end == SEARCH_MAX_STEPS)
		snprintf(buf, size, "the lock-order cycle search stopped after following %d edges (%zu cycles found): "
			 "more may exist", MAX_STEPS, cs->ncycles);
	else
		return NULL;
	return buf;
}

const char *deadlock__search_stopped(const struct model *m, char *buf, size_t size)
{
	if (!m->p->has_lock_order)
		return NULL;
	struct cycle_search cs;
	find_cycles(&cs, m->p);
	const char *why = search_stopped(&cs, buf, size);
	free_cycles(&cs);
	return why;
}

/* Whether the finding's locks are exactly these (as names, in any order). */
static int same_locks(const struct finding *x, const char *const *names, size_t n)
{
	size_t total = x->nedges;   /* a long cycle keeps its first edges; evidence.threads counts them all */
	for (size_t i = 0; i < x->nevidence; i++)
		if (!strcmp(x->evidence[i].key, "threads"))
			total = (size_t)x->evidence[i].value;
	if (total != n)
		return 0;
	for (size_t i = 0; i < x->nedges; i++) {
		size_t k = 0;
		while (k < n && strcmp(x->edges[i].from, names[k]))
			k++;
		if (k == n)
			return 0;
	}
	return 1;
}

/* what, then the cycle's objects; a cycle of more objects than the
 * finding keeps edges for (total) says how many there are. */
static void cycle_summary(const struct finding *x, size_t total, const char *what, char *buf, size_t size)
{
	size_t len = (size_t)snprintf(buf, size, "%s", what);
	for (size_t i = 0; i < x->nedges && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? " -> " : "", x->edges[i].from);
	if (total > x->nedges && len < size)
		len += (size_t)snprintf(buf + len, size - len, " -> ... (%zu in all)", total);
	if (x->nedges && len < size)
		snprintf(buf + len, size - len, " -> %s.", x->edges[0].from);
}

static void report_cycles(struct findings *out, const struct model *m, size_t deadlocks_from, size_t deadlocks_to)
{
	const struct profile *p = m->p;
	struct cycle_search *cs = xcalloc(1, sizeof(*cs));
	find_cycles(cs, p);
	for (size_t c = 0; c < cs->ncycles; c++) {
		size_t len = cs->lens[c];
		const char **names = xcalloc(len, sizeof(*names));
		for (size_t i = 0; i < len; i++)
			names[i] = lock_name(m, p->edges[cs->cycles[c][i]].from);
		int hung_on_it = 0;
		for (size_t d = deadlocks_from; d < deadlocks_to; d++)
			hung_on_it |= same_locks(&out->v[d], names, len);
		if (hung_on_it) {
			free(names);
			continue;   /* the deadlock finding shows this cycle, as it happened */
		}
		struct finding *x = findings__add(out, FINDING_LOCK_ORDER_CYCLE, 0);
		x->correctness = 1;
		int one_thread = 1, merged = 0;
		for (size_t i = 0; i < len; i++) {
			const struct cv_lock_edge *e = &p->edges[cs->cycles[c][i]];
			one_thread &= e->thread == p->edges[cs->cycles[c][0]].thread;
			merged |= p->threads[e->thread].tid == -1;   /* the "merged threads" row: many threads */
			if (x->nedges < FINDING_MAX_EDGES)
				fill_edge(m, &x->edges[x->nedges++], e->from, e->to, e->thread, e->from_pc, e->from_stack,
					  e->to_stack, e->to_pc);
			if (x->nobjects < FINDING_MAX_OBJECTS)
				snprintf(x->objects[x->nobjects++], sizeof(x->objects[0]), "%s", names[i]);
		}
		char what[160];
		snprintf(what, sizeof(what), "%zu locks are taken in orders that form a cycle%s: ", len,
			 merged ? " (an order first seen on a thread merged into \"merged threads\"; any two threads "
				  "that take them so can deadlock)" :
			 one_thread ? " (each order first seen on one thread; any two threads that take them so can "
				      "deadlock)" : ", by different threads: they can deadlock");
		cycle_summary(x, len, what, x->summary, sizeof(x->summary));
		snprintf(x->fix, sizeof(x->fix),
			 "Take these locks in one global order everywhere (for example always %s before %s), or "
			 "guard the whole group with one lock; where the order cannot change, take the inner lock "
			 "with a trylock and back off (release everything and retry) when it fails.",
			 x->edges[0].from, x->edges[0].to);
		x->evidence[x->nevidence].key = "locks";
		x->evidence[x->nevidence++].value = (double)len;
		free(names);
	}
	free_cycles(cs);
	free(cs);
}

/* ---- deadlocks: the wait-for graph ----------------------------------------- */

struct waiter {
	const struct profile_thread_state *st;
	uint32_t object;             /* the lock, or the semaphore or futex word, it waits for */
	uint32_t joins;              /* or the thread (index) it joins, without a deadline; else UINT32_MAX */
	int for_post;                /* a semaphore or futex word: its owners are the threads that post it */
	int for_holder;              /* a semaphore used as a lock: its owners are the threads holding it */
	int for_signal;              /* a condvar: its owners are the signallers blocked on a lock it holds */
};

static int is_lock(const struct profile *p, uint32_t object)
{
	uint32_t k = p->objects[object].o.kind;
	return k == CV_OBJ_MUTEX || k == CV_OBJ_RWLOCK || k == CV_OBJ_SPIN;
}

/* Whether thread ever posted (sem_post) or woke (FUTEX_WAKE) object. */
static int posts(const struct model *m, uint32_t object, uint32_t thread)
{
	for (size_t i = m->stats_start[object]; i < m->stats_start[object + 1]; i++) {
		const struct cv_stats *s = &m->p->stats[m->stats_of[i]];
		if (s->thread == thread && s->signals)
			return 1;
	}
	return 0;
}

/* "the end of NAME (tid N)": what a thread that joins it waits for. */
static void thread_end(const struct model *m, uint32_t thread, char *buf, size_t size)
{
	char label[48];
	const struct cv_thread_rec *t = &m->p->threads[thread];
	snprintf(buf, size, "the end of %s (tid %d)", findings__thread_label(m, t, label, sizeof(label)), t->tid);
}

/* A semaphore used as a lock: no thread posted it more often than it took
 * it (sem_wait, sem_trywait), so each post gives back what its poster took,
 * and a thread that took it more often than it posted holds it, as a
 * mutex's owner does. (A producer posts what it never took: not one.) */
static int sem_as_lock(const struct model *m, uint32_t object)
{
	if (m->p->objects[object].o.kind != CV_OBJ_SEM)
		return 0;
	for (size_t i = m->stats_start[object]; i < m->stats_start[object + 1]; i++) {
		const struct cv_stats *s = &m->p->stats[m->stats_of[i]];
		if (s->signals > s->acquisitions)
			return 0;
	}
	return 1;
}

/* Whether thread holds the semaphore-as-lock object: took it more often than it gave it back. */
static int holds_sem(const struct model *m, uint32_t object, uint32_t thread)
{
	for (size_t i = m->stats_start[object]; i < m->stats_start[object + 1]; i++) {
		const struct cv_stats *s = &m->p->stats[m->stats_of[i]];
		if (s->thread == thread)
			return s->acquisitions > s->signals;
	}
	return 0;
}

/* A semaphore used as a lock by exactly one holder (a live thread): its
 * waiter waits for that thread. With several holders any one post would
 * do, so a cycle through one of them proves nothing. */
static int held_as_lock(const struct model *m, uint32_t object)
{
	if (!sem_as_lock(m, object))
		return 0;
	size_t holders = 0;
	for (size_t i = m->stats_start[object]; i < m->stats_start[object + 1]; i++) {
		const struct cv_stats *s = &m->p->stats[m->stats_of[i]];
		holders += s->acquisitions > s->signals && !(m->p->threads[s->thread].flags & CV_THREAD_EXITED);
	}
	return holders == 1;
}

/* A thread's blocked state in the profile, if it was blocked on an object
 * when written. */
static const struct profile_thread_state *blocked_state(const struct profile *p, uint32_t thread)
{
	for (size_t i = 0; i < p->nthread_states; i++)
		if (p->thread_states[i].s.thread == thread && p->thread_states[i].s.waiting)
			return &p->thread_states[i];
	return NULL;
}

/* Whether thread was blocked without a deadline when the profile was
 * written: on an object, or in a join. */
static int blocked_forever(const struct profile *p, uint32_t thread)
{
	for (size_t i = 0; i < p->nthread_states; i++) {
		const struct cv_thread_state *s = &p->thread_states[i].s;
		if (s->thread == thread && ((s->waiting && !(s->waiting_flags & CV_WAIT_TIMED)) ||
					    (s->joining_tid && !(s->joining_flags & CV_WAIT_TIMED))))
			return 1;
	}
	return 0;
}

/* The live thread st joins without a deadline (by its tid), or UINT32_MAX. */
static uint32_t joined_thread(const struct profile *p, const struct profile_thread_state *st)
{
	if (!st->s.joining_tid || (st->s.joining_flags & CV_WAIT_TIMED))
		return UINT32_MAX;
	for (uint32_t t = 0; t < p->nthreads; t++)
		if (p->threads[t].tid == st->s.joining_tid && !(p->threads[t].flags & CV_THREAD_EXITED))
			return t;
	return UINT32_MAX;
}

/* A wait without a deadline on a semaphore or futex word can only end by a
 * post from another thread. The threads that posted it during the run stand
 * for those that can: when there are some and every live one is blocked
 * without a deadline too, the waiter waits for them. (A thread that never
 * posted it is not seen as a poster: such a hang goes unexplained, rather
 * than a thread be blamed for a post it may never make.) */
static int waits_for_posters(const struct model *m, const struct profile_thread_state *st, uint32_t object)
{
	const struct profile *p = m->p;
	uint32_t k = p->objects[object].o.kind;
	if (k != CV_OBJ_SEM && k != CV_OBJ_FUTEX)
		return 0;
	int posters = 0;
	for (uint32_t t = 0; t < p->nthreads; t++) {
		if (t == st->s.thread || (p->threads[t].flags & CV_THREAD_EXITED) || !posts(m, object, t))
			continue;
		if (!blocked_forever(p, t))
			return 0;   /* a poster that can still run */
		posters++;
	}
	return posters > 0;
}

/* Whether thread could signal condvar object: it signalled or broadcast it
 * during the run, or, when no thread ever did, it is any live thread. */
static int may_signal(const struct model *m, uint32_t object, uint32_t thread)
{
	int someone = 0;
	for (size_t i = m->stats_start[object]; i < m->stats_start[object + 1]; i++) {
		const struct cv_stats *s = &m->p->stats[m->stats_of[i]];
		if (s->signals + s->broadcasts) {
			someone = 1;
			if (s->thread == thread)
				return 1;
		}
	}
	return !someone && !(m->p->threads[thread].flags & CV_THREAD_EXITED);
}

/* A condvar wait without a deadline ends only by a signal from another
 * thread of the process (pthread_cond_signal is not async-signal-safe: no
 * handler may send it). When every thread that could signal it (may_signal)
 * is blocked without a deadline, the waiter waits for them; those blocked
 * on a lock the waiter holds (it kept a lock other than the condvar's mutex
 * across the wait) are the ones it waits for in a cycle. */
static int waits_for_signallers(const struct model *m, const struct profile_thread_state *st, uint32_t object)
{
	const struct profile *p = m->p;
	if (p->objects[object].o.kind != CV_OBJ_COND)
		return 0;
	int candidates = 0;
	for (uint32_t t = 0; t < p->nthreads; t++) {
		if (t == st->s.thread || !may_signal(m, object, t))
			continue;
		if (!blocked_forever(p, t))
			return 0;   /* a signaller that can still run */
		candidates++;
	}
	return candidates > 0;
}

/* The held entry of st for object, if st really holds it now. */
static const struct cv_held_lock *held_by(const struct profile_thread_state *st, uint32_t object)
{
	if (st->s.waiting_mutex == object + 1)
		return NULL;   /* a condvar wait released it */
	for (uint32_t i = 0; i < st->s.nheld; i++)
		if (st->held[i].object == object)
			return &st->held[i];
	return NULL;
}

/* A thread that ended while it held object (cancelled or exited with it
 * locked), when no thread still running holds it: an ended thread's held
 * set no longer changes, so another thread may have unlocked the object
 * since (glibc lets it, for a normal mutex) and taken it again. */
static const struct cv_thread_rec *ended_holder(const struct profile *p, uint32_t object)
{
	const struct cv_thread_rec *ended = NULL;
	for (size_t i = 0; i < p->nthread_states; i++) {
		const struct profile_thread_state *o = &p->thread_states[i];
		if (!held_by(o, object))
			continue;
		if (!(p->threads[o->s.thread].flags & CV_THREAD_EXITED))
			return NULL;
		ended = ended ? ended : &p->threads[o->s.thread];
	}
	return ended;
}

/* The thread state of an owner of w's lock that w really waits for (or of
 * a poster of its semaphore or futex word), after after (index into states;
 * SIZE_MAX for the first). */
static size_t next_owner(const struct model *m, const struct waiter *w, size_t after)
{
	const struct profile *p = m->p;
	for (size_t i = after == SIZE_MAX ? 0 : after + 1; i < p->nthread_states; i++) {
		const struct profile_thread_state *o = &p->thread_states[i];
		if (o == w->st)
			continue;
		if (w->joins != UINT32_MAX) {   /* the joined thread, when it is blocked too */
			if (o->s.thread == w->joins)
				return i;
			continue;
		}
		if (w->for_signal) {   /* a signaller blocked on a lock the waiter holds */
			if (o->s.waiting && held_by(w->st, o->s.waiting - 1) && may_signal(m, w->object, o->s.thread))
				return i;
			continue;
		}
		if (w->for_post || w->for_holder) {
			if (!(p->threads[o->s.thread].flags & CV_THREAD_EXITED) &&
			    (w->for_holder ? holds_sem(m, w->object, o->s.thread) : posts(m, w->object, o->s.thread)))
				return i;
			continue;
		}
		const struct cv_held_lock *h = held_by(o, w->object);
		if (h && !((w->st->s.waiting_flags & CV_LOCK_READ) && (h->flags & CV_LOCK_READ)))
			return i;
	}
	return SIZE_MAX;
}

/* when: the moment the profile was taken, for the summary. */
static void report_deadlocks(struct findings *out, const struct model *m, const char *when)
{
	const struct profile *p = m->p;
	size_t n = p->nthread_states;
	struct waiter *w = xcalloc(n ? n : 1, sizeof(*w));
	for (size_t i = 0; i < n; i++) {
		w[i].st = &p->thread_states[i];
		uint32_t o = w[i].st->s.waiting;
		int forever = o && !(w[i].st->s.waiting_flags & CV_WAIT_TIMED);
		w[i].for_holder = forever && held_as_lock(m, o - 1);
		w[i].for_post = forever && !w[i].for_holder && waits_for_posters(m, w[i].st, o - 1);
		w[i].for_signal = forever && waits_for_signallers(m, w[i].st, o - 1);
		w[i].object = forever && (is_lock(p, o - 1) || w[i].for_holder || w[i].for_post || w[i].for_signal) ?
				      o - 1 : UINT32_MAX;
		w[i].joins = o ? UINT32_MAX : joined_thread(p, w[i].st);
	}
	/* Follow one owner at a time from each blocked thread (a lock held by
	 * several readers: each is tried); a walk that returns to its start is
	 * a cycle, reported from its lowest thread state only. */
	size_t path[MAX_WAIT_CHAIN], choice[MAX_WAIT_CHAIN];
	for (size_t s = 0; s < n; s++) {
		if (w[s].object == UINT32_MAX && w[s].joins == UINT32_MAX)
			continue;
		size_t depth = 0, steps = 0;
		path[0] = s;
		choice[0] = SIZE_MAX;
		while (steps++ < MAX_STEPS) {
			size_t at = path[depth];
			size_t next = w[at].object == UINT32_MAX && w[at].joins == UINT32_MAX ?
					      SIZE_MAX : next_owner(m, &w[at], choice[depth]);
			if (next == SIZE_MAX) {   /* no more owners here: back up */
				if (depth == 0)
					break;
				depth--;
				continue;
			}
			choice[depth] = next;
			int on_lock = 0;   /* threads waiting only for posts are a starved pool's, or a lost wake-up */
			for (size_t i = 0; i <= depth; i++)
				on_lock |= !w[path[i]].for_post;
			if (next == s && on_lock) {
				struct finding *x = findings__add(out, FINDING_DEADLOCK, 0);
				x->correctness = 1;
				/* Thread path[i] waits for lock o_i held by path[i+1]: edge
				 * o_(i-1) -> o_i is path[i]'s (holds one, wants the next). */
				size_t len = depth + 1;
				int by_post = 0, by_signal = 0, by_join = 0;
				for (size_t i = 0; i < len && x->nedges < FINDING_MAX_EDGES; i++) {
					const struct waiter *me = &w[path[(i + 1) % len]];
					uint32_t held = w[path[i]].object, wants = me->object;
					const struct cv_held_lock *h = held_by(me->st, held);
					const struct cv_lock_edge *e = find_edge(p, held, wants);
					struct finding_edge *fe = &x->edges[x->nedges++];
					fill_edge(m, fe, held, wants, me->st->s.thread, h ? h->pc : 0, e ? e->from_stack : 0,
						  e ? e->to_stack : 0,
						  me->joins != UINT32_MAX ? me->st->s.joining_pc : me->st->s.waiting_pc);
					if (w[path[i]].for_holder)   /* a semaphore keeps no holder's call site */
						snprintf(fe->from_site, sizeof(fe->from_site),
							 "an earlier sem_wait it has not posted back");
					if (w[path[i]].joins != UINT32_MAX) {   /* me is the thread path[i] joins */
						thread_end(m, me->st->s.thread, fe->from, sizeof(fe->from));
						site_of(m, w[path[i]].st->s.joining_pc, fe->from_site, sizeof(fe->from_site));
						fe->nfrom_frames = 0;
						fe->joined = 1;
					}
					if (me->joins != UINT32_MAX)
						thread_end(m, me->joins, fe->to, sizeof(fe->to));
					fe->posts = w[path[i]].for_post;
					fe->signals = w[path[i]].for_signal;
					by_post |= fe->posts;
					by_signal |= fe->signals;
					by_join |= fe->joined;
					if (x->nobjects < FINDING_MAX_OBJECTS)
						memcpy(x->objects[x->nobjects++], fe->from, sizeof(fe->from));   /* NUL-terminated */
				}
				char what[320];
				snprintf(what, sizeof(what), "%zu threads were blocked for good %s, each holding a "
					 "lock%s the next one waits for%s%s: ", len, when,
					 by_post ? " or being a thread that posts the semaphore or futex word" : "",
					 by_signal ? ", or being the only threads left that could signal its condvar" : "",
					 by_join ? ", or being the thread it joins" : "");
				cycle_summary(x, len, what, x->summary, sizeof(x->summary));
				const struct finding_edge *post = NULL, *held = NULL;   /* a post or signal, and the lock held waiting for it */
				for (size_t i = 0; i < x->nedges && !post; i++)
					post = x->edges[i].posts || x->edges[i].signals ? &x->edges[i] : NULL;
				for (size_t i = 0; post && i < x->nedges && !held; i++)
					held = !x->edges[i].posts && !x->edges[i].signals && !strcmp(x->edges[i].to, post->from) ?
						       &x->edges[i] : NULL;
				const struct finding_edge *join = NULL;   /* a joined thread, and the lock it wants */
				for (size_t i = 0; i < x->nedges && !join; i++)
					join = x->edges[i].joined ? &x->edges[i] : NULL;
				if (join)
					snprintf(x->fix, sizeof(x->fix),
						 "Do not join %.60s while holding %.100s, which it needs before it can end: "
						 "release %.100s before pthread_join (at %.100s).",
						 join->thread, join->to, join->to, join->from_site);
				else if (held && post->signals)
					snprintf(x->fix, sizeof(x->fix),
						 "Do not wait on %.100s while holding %.100s, which the thread that would signal it "
						 "needs first: release %.100s before the wait (hold only the condvar's own mutex "
						 "across it), or have the signaller signal without taking it.",
						 post->from, post->to, post->to);
				else if (held)
					snprintf(x->fix, sizeof(x->fix),
						 "Do not wait for %.100s while holding %.100s, which the thread that posts it needs "
						 "first: release %.100s before the wait, or have the poster post without taking it.",
						 post->from, held->from, held->from);
				else
					snprintf(x->fix, sizeof(x->fix),
						 "Take these locks in one global order everywhere (for example always %s "
						 "before %s), or guard the whole group with one lock; where the order cannot "
						 "change, take the inner lock with a trylock and back off when it fails.",
						 x->edges[0].from, x->edges[0].to);
				x->evidence[x->nevidence].key = "threads";
				x->evidence[x->nevidence++].value = (double)len;
				break;
			}
			int seen = next < s;   /* a cycle through a lower state was reported from there */
			for (size_t i = 0; i <= depth && !seen; i++)
				seen = path[i] == next;
			if (seen || depth + 1 == MAX_WAIT_CHAIN)
				continue;   /* try this state's next owner */
			path[++depth] = next;
			choice[depth] = SIZE_MAX;
		}
	}
	free(w);
}

/* ---- pool starvation ------------------------------------------------------- */

/* A wait for work or for a result (condvar, semaphore, futex) with no
 * deadline: not a lock (a cycle of those is a deadlock), not a barrier. */
static int waits_for_work(const struct profile *p, const struct profile_thread_state *st)
{
	if (!st || (st->s.waiting_flags & CV_WAIT_TIMED))
		return 0;
	uint32_t k = p->objects[st->s.waiting - 1].o.kind;
	return k == CV_OBJ_COND || k == CV_OBJ_SEM || k == CV_OBJ_FUTEX;
}

/* The length of name's prefix when it is a pool worker's "PREFIX-N" (the
 * workpool library's annotation), else 0. */
static size_t pool_prefix(const char *name)
{
	const char *dash = strrchr(name, '-');
	if (!dash || dash == name || !dash[1])
		return 0;
	for (const char *c = dash + 1; *c; c++)
		if (*c < '0' || *c > '9')
			return 0;
	return (size_t)(dash - name);
}

/* A live worker thread started at routine. */
static int in_pool(const struct cv_thread_rec *t, uint64_t routine)
{
	return t->start_routine == routine && !(t->flags & (CV_THREAD_EXITED | CV_THREAD_MAIN));
}

/* Whether object was signalled, broadcast or posted during the run by a
 * thread of the pool started at routine (inside), or by one outside it. */
static int woken_by(const struct model *m, uint32_t object, uint64_t routine, int inside)
{
	for (size_t i = m->stats_start[object]; i < m->stats_start[object + 1]; i++) {
		const struct cv_stats *s = &m->p->stats[m->stats_of[i]];
		const struct cv_thread_rec *t = &m->p->threads[s->thread];
		if (s->signals + s->broadcasts && (t->start_routine == routine && !(t->flags & CV_THREAD_MAIN)) == inside)
			return 1;
	}
	return 0;
}

/* Whether the blocked worker t of the pool started at routine waits inside
 * a task, for something only a worker could provide, rather than in the
 * worker loop for work. The loop's get-work wait is on an object work comes
 * through from outside (a thread outside the pool signalled or posted it:
 * the submitter) or one idle workers share (another worker is blocked on
 * it). A task's wait is on an object of its own (a child's completion) that
 * nothing outside the pool ever woke. */
static int waits_inside_task(const struct model *m, uint32_t t, uint64_t routine)
{
	const struct profile *p = m->p;
	const struct profile_thread_state *st = blocked_state(p, t);
	if (!waits_for_work(p, st))
		return 0;
	uint32_t object = st->s.waiting - 1;
	if (woken_by(m, object, routine, 0))
		return 0;
	for (uint32_t o = 0; o < p->nthreads; o++) {
		const struct profile_thread_state *other = o == t ? NULL : blocked_state(p, o);
		if (other && other->s.waiting == st->s.waiting && in_pool(&p->threads[o], routine))
			return 0;
	}
	return 1;
}

/* Whether the lone thread t started at routine queues work for itself: it
 * signalled or posted an object that a thread outside also did (the queue
 * both submit to). */
static int queues_work(const struct model *m, uint32_t t, uint64_t routine)
{
	for (size_t i = 0; i < m->p->nstats; i++) {
		const struct cv_stats *s = &m->p->stats[i];
		if (s->thread == t && s->signals + s->broadcasts && woken_by(m, s->object, routine, 0))
			return 1;
	}
	return 0;
}

/* The tasks queued when the profile was written, as the scheduler counted
 * them (CONVOY_QUEUED, include/convoy.h: summed over every thread, exited
 * ones too); false when the program never counted. */
static int queued_tasks(const struct profile *p, int64_t *queued)
{
	int counted = 0;
	*queued = 0;
	for (size_t i = 0; i < p->ncounters; i++)
		if (p->counters[i].c.kind == CV_COUNTER_USER && !strcmp(p->counters[i].name, CONVOY_QUEUED_COUNTER)) {
			*queued += p->counters[i].c.value;
			counted = 1;
		}
	return counted;
}

/* One pool per start routine among the live threads; it starved when the
 * profile was written by --timeout, the watchdog or its snapshot, every
 * worker was blocked without a deadline in a wait for work or a result, and
 * work was pending: tasks queued, when the scheduler counts them
 * (queued_tasks); otherwise a thread outside the pool blocked too (waiting
 * on the pool). */
static void report_starvation(struct findings *out, const struct model *m, const char *when)
{
	const struct profile *p = m->p;
	if (p->process.exit_reason != CV_EXIT_DUMP_SIGNAL && p->process.exit_reason != CV_EXIT_DUMP_SIGNAL_SENT &&
	    p->process.exit_reason != CV_EXIT_HANG_SNAPSHOT)
		return;   /* written at an exit: parked workers are idle, not starved */
	int64_t queued;
	int counted = queued_tasks(p, &queued);
	char *done = xcalloc(p->nthreads ? p->nthreads : 1, 1);
	for (uint32_t first = 0; first < p->nthreads; first++) {
		const struct cv_thread_rec *lead = &p->threads[first];
		if (done[first] || !lead->start_routine || !in_pool(lead, lead->start_routine))
			continue;
		uint32_t workers = 0, starved = 0, annotated = 0, in_task = 0;
		for (uint32_t t = first; t < p->nthreads; t++) {
			const struct cv_thread_rec *w = &p->threads[t];
			if (!in_pool(w, lead->start_routine))
				continue;
			done[t] = 1;
			workers++;
			starved += waits_for_work(p, blocked_state(p, t));
			in_task += waits_inside_task(m, t, lead->start_routine);
			annotated += pool_prefix(w->name) > 0;
		}
		int waited_on = 0;   /* a live thread outside the pool (main included) blocked too */
		for (uint32_t t = 0; t < p->nthreads && !waited_on; t++)
			waited_on = !in_pool(&p->threads[t], lead->start_routine) &&
				    !(p->threads[t].flags & CV_THREAD_EXITED) && blocked_state(p, t);
		/* Without the scheduler's count, some worker must wait inside a task:
		 * workers all waiting for work are an idle pool, whoever waits on it. */
		if (starved != workers || !(counted ? queued > 0 : waited_on && in_task))
			continue;
		if (workers < 2 && !annotated && !(in_task && queues_work(m, first, lead->start_routine)))
			continue;   /* one lone thread is a pool when the library names it one, or it queues work */
		struct finding *x = findings__add(out, FINDING_POOL_STARVATION, 0);
		x->correctness = 1;
		char routine[128], pool[192];
		findings__thread_label(m, lead, routine, sizeof(routine));
		size_t prefix = pool_prefix(lead->name);
		if (prefix && annotated == workers && !strcmp(routine, lead->name))   /* no symbol: the names alone */
			snprintf(pool, sizeof(pool), "%.*s-*", (int)prefix, lead->name);
		else if (prefix && annotated == workers)
			snprintf(pool, sizeof(pool), "%.*s-* (%s)", (int)prefix, lead->name, routine);
		else
			snprintf(pool, sizeof(pool), "%s", routine);
		snprintf(x->objects[x->nobjects++], sizeof(x->objects[0]), "%s", pool);
		char pending[160];
		if (counted)
			snprintf(pending, sizeof(pending), ", while %lld task%s queued (the scheduler's count, "
				 CONVOY_QUEUED_COUNTER ") and no worker was free to run %s", (long long)queued,
				 queued == 1 ? " was" : "s were", queued == 1 ? "it" : "them");
		else
			snprintf(pending, sizeof(pending), " while another thread waited too");
		size_t len = (size_t)snprintf(x->summary, sizeof(x->summary),
					      "Pool %s starved: all %u worker%s blocked %s, each in a wait with no "
					      "deadline%s:", pool, workers, workers == 1 ? " was" : "s were", when, pending);
		for (uint32_t t = first, shown = 0; t < p->nthreads && len < sizeof(x->summary); t++) {
			const struct cv_thread_rec *w = &p->threads[t];
			if (!in_pool(w, lead->start_routine))
				continue;
			if (shown++ == 4) {
				snprintf(x->summary + len, sizeof(x->summary) - len, " ...");
				break;
			}
			const struct profile_thread_state *st = blocked_state(p, t);
			uint32_t object = st->s.waiting - 1;
			char site[192];
			site_of(m, st->s.waiting_pc, site, sizeof(site));
			len += (size_t)snprintf(x->summary + len, sizeof(x->summary) - len, " %s (tid %d) waits on %s %s at %s;",
						w->name[0] ? w->name : routine, w->tid, kind_name(p->objects[object].o.kind),
						lock_name(m, object), site);
			int listed = 0;   /* workers waiting on one object, or on objects made at one site */
			for (size_t k = 1; k < x->nobjects; k++)
				listed |= !strcmp(x->objects[k], lock_name(m, object));
			if (!listed && x->nobjects < FINDING_MAX_OBJECTS)
				snprintf(x->objects[x->nobjects++], sizeof(x->objects[0]), "%s", lock_name(m, object));
		}
		len = strlen(x->summary);
		if (x->summary[len - 1] == ';')
			x->summary[len - 1] = '.';
		snprintf(x->fix, sizeof(x->fix),
			 "A task waits for work only this pool's workers can run: help while waiting (run queued "
			 "tasks), or use a separate pool / raise the worker count.");
		x->evidence[x->nevidence].key = "workers";
		x->evidence[x->nevidence++].value = (double)workers;
		if (counted) {
			x->evidence[x->nevidence].key = "queued_tasks";
			x->evidence[x->nevidence++].value = (double)queued;
			x->evidence[x->nevidence].key = "free_workers";
			x->evidence[x->nevidence++].value = 0;
		}
	}
	free(done);
}

/* Whether out->v[from..to-1] holds a finding of x's kind about x's objects. */
static int reported(const struct findings *out, size_t from, size_t to, const struct finding *x)
{
	for (size_t i = from; i < to; i++) {
		const struct finding *y = &out->v[i];
		if (y->kind != x->kind || y->nobjects != x->nobjects)
			continue;
		size_t k = 0;
		while (k < x->nobjects && !strcmp(x->objects[k], y->objects[k]))
			k++;
		if (k == x->nobjects)
			return 1;
	}
	return 0;
}

/* The hang snapshot's deadlocks (kind FINDING_DEADLOCK) or starved pools,
 * after those of the profile itself: the program went on after the
 * snapshot, and may have ended with them gone (a pool is never starved in a
 * profile written at an exit). What the profile shows too is said once. */
static void report_at_hang(struct findings *out, const struct model *m, size_t first, enum finding_kind kind)
{
	static const char when[] = "at the hang, in the snapshot convoy's watchdog had the shim write "
				   "(the program went on after it)";
	size_t from = out->n;
	if (kind == FINDING_DEADLOCK)
		report_deadlocks(out, m->hang, when);
	else
		report_starvation(out, m->hang, when);
	size_t keep = from;
	for (size_t i = from; i < out->n; i++)
		if (!reported(out, first, from, &out->v[i]))
			out->v[keep++] = out->v[i];
	out->n = keep;
}

void deadlock__diagnose(struct findings *out, const struct model *m, int threads, double wall_ns)
{
	size_t first = out->n;
	report_deadlocks(out, m, "when the profile was written");
	if (m->hang)
		report_at_hang(out, m, first, FINDING_DEADLOCK);
	size_t deadlocks = out->n;
	report_starvation(out, m, "when the profile was written");
	if (m->hang)
		report_at_hang(out, m, deadlocks, FINDING_POOL_STARVATION);
	report_cycles(out, m, first, deadlocks);
	for (size_t i = first; i < out->n; i++) {
		out->v[i].severity = SEVERITY_HIGH;
		out->v[i].threads = threads;
		out->v[i].wall_ns = wall_ns;
		out->v[i].predicted_wall_ns = wall_ns;
	}
}

/* ---- the launcher's verdict on a hang ------------------------------------- */

int deadlock__at_hang(const struct model *m, char *what, size_t size)
{
	static const char when[] = "at the hang";
	struct findings f = { 0 };
	report_deadlocks(&f, m, when);
	int deadlocked = f.n > 0;
	if (!deadlocked)
		report_starvation(&f, m, when);
	if (f.n) {
		snprintf(what, size, "%s", f.v[0].summary);
		findings__free(&f);
		return deadlocked;
	}
	/* No cycle and no starved pool: what each thread waits on. */
	const struct profile *p = m->p;
	size_t len = (size_t)snprintf(what, size, "no cycle of waits that only the program could break:");
	size_t shown = 0;
	for (size_t i = 0; i < p->nthread_states && len < size; i++) {
		const struct profile_thread_state *st = &p->thread_states[i];
		if (!st->s.waiting && !st->s.joining_tid)
			continue;
		if (shown++ == 4) {
			len += (size_t)snprintf(what + len, size - len, " ...");
			break;
		}
		char label[64], site[192], on[320];
		const struct cv_thread_rec *t = &p->threads[st->s.thread];
		site_of(m, st->s.waiting ? st->s.waiting_pc : st->s.joining_pc, site, sizeof(site));
		char ended[160] = "";
		if (st->s.waiting) {
			snprintf(on, sizeof(on), "waits on %s %s", kind_name(p->objects[st->s.waiting - 1].o.kind),
				 lock_name(m, st->s.waiting - 1));
			const struct cv_thread_rec *dead = ended_holder(p, st->s.waiting - 1);
			if (dead)
				snprintf(ended, sizeof(ended), ", held by %s (tid %d), which ended holding it",
					 findings__thread_label(m, dead, label, sizeof(label)), dead->tid);
		} else
			snprintf(on, sizeof(on), "joins tid %d", st->s.joining_tid);
		len += (size_t)snprintf(what + len, size - len, " %s (tid %d) %s at %s%s;",
					findings__thread_label(m, t, label, sizeof(label)), t->tid, on, site, ended);
	}
	len = strlen(what);
	if (len && what[len - 1] == ';')
		what[len - 1] = '.';
	return 0;
}

/* ---- rendering ------------------------------------------------------------- */

json_object *deadlock__graph_json(const struct model *m, const struct findings *f)
{
	const struct profile *p = m->p;
	if (!p->has_lock_order)
		return NULL;
	json_object *o = json_object_new_object(), *edges = json_object_new_array(),
		    *cycles = json_object_new_array();
	for (size_t i = 0; i < p->nedges; i++) {
		const struct cv_lock_edge *e = &p->edges[i];
		json_object *j = json_object_new_object();
		json_object_object_add(j, "from", json_object_new_string(lock_name(m, e->from)));
		json_object_object_add(j, "to", json_object_new_string(lock_name(m, e->to)));
		if (e->thread < p->nthreads)
			json_object_object_add(j, "thread", json_object_new_int(p->threads[e->thread].tid));
		struct finding_edge fe = { 0 };   /* both stacks, as a finding shows them */
		fill_edge(m, &fe, e->from, e->to, e->thread, e->from_pc, e->from_stack, e->to_stack, e->to_pc);
		json_object *held = json_object_new_array(), *wants = json_object_new_array();
		for (size_t k = 0; k < fe.nfrom_frames; k++)
			json_object_array_add(held, json_object_new_string(fe.from_frames[k]));
		if (!fe.nfrom_frames)   /* a profile without held stacks: the call site */
			json_object_array_add(held, json_object_new_string(fe.from_site));
		for (size_t k = 0; k < fe.nframes; k++)
			json_object_array_add(wants, json_object_new_string(fe.to_frames[k]));
		json_object_object_add(j, "from_stack", held);
		json_object_object_add(j, "from_stack_partial", json_object_new_boolean(fe.from_partial));
		json_object_object_add(j, "to_stack", wants);
		json_object_array_add(edges, j);
	}
	for (size_t i = 0; i < f->n; i++) {
		if (f->v[i].kind != FINDING_LOCK_ORDER_CYCLE)
			continue;
		json_object *c = json_object_new_array();
		for (size_t k = 0; k < f->v[i].nobjects; k++)
			json_object_array_add(c, json_object_new_string(f->v[i].objects[k]));
		json_object_array_add(cycles, c);
	}
	json_object_object_add(o, "edges", edges);
	json_object_object_add(o, "cycles", cycles);
	json_object_object_add(o, "edges_dropped", json_object_new_uint64(p->lock_order.edges_dropped));
	char why[160];
	const char *stopped = deadlock__search_stopped(m, why, sizeof(why));
	json_object_object_add(o, "cycle_search_stopped", stopped ? json_object_new_string(stopped) : NULL);
	return o;
}

json_object *deadlock__edges_json(const struct finding *x)
{
	json_object *arr = json_object_new_array();
	for (size_t i = 0; i < x->nedges; i++) {
		const struct finding_edge *e = &x->edges[i];
		json_object *o = json_object_new_object(), *frames = json_object_new_array();
		json_object_object_add(o, "holds", json_object_new_string(e->from));
		json_object_object_add(o, "relation", json_object_new_string(e->posts ? "posts" : e->signals ? "signals" :
										   e->joined ? "is joined" : "holds"));
		json_object_object_add(o, "wants", json_object_new_string(e->to));
		json_object_object_add(o, "thread", json_object_new_string(e->thread));
		json_object_object_add(o, "holds_acquired_at", json_object_new_string(e->from_site));
		if (e->nfrom_frames) {
			json_object *held = json_object_new_array();
			for (size_t k = 0; k < e->nfrom_frames; k++)
				json_object_array_add(held, json_object_new_string(e->from_frames[k]));
			json_object_object_add(o, "holds_stack", held);
			json_object_object_add(o, "holds_stack_partial", json_object_new_boolean(e->from_partial));
		}
		for (size_t k = 0; k < e->nframes; k++)
			json_object_array_add(frames, json_object_new_string(e->to_frames[k]));
		json_object_object_add(o, "wants_stack", frames);
		json_object_array_add(arr, o);
	}
	return arr;
}

void deadlock__edges_text(const struct finding *x, FILE *out)
{
	int width = textfit__width(out);
	for (size_t i = 0; i < x->nedges; i++) {
		const struct finding_edge *e = &x->edges[i];
		char line[512];
		if (e->posts)
			snprintf(line, sizeof(line), "%s posts %s (the waiter's only way out) and wants %s, at:", e->thread,
				 e->from, e->to);
		else if (e->signals)
			snprintf(line, sizeof(line), "%s is the only thread left that could signal %s, and wants %s, at:",
				 e->thread, e->from, e->to);
		else if (e->joined)
			snprintf(line, sizeof(line), "%s must end for the pthread_join at %s to return, and wants %s, at:",
				 e->thread, e->from_site, e->to);
		else if (!e->nfrom_frames)   /* a profile without held stacks */
			snprintf(line, sizeof(line), "%s holds %s (taken at %s) and wants %s, at:", e->thread, e->from,
				 e->from_site, e->to);
		else
			snprintf(line, sizeof(line), "%s holds %s, taken at:", e->thread, e->from);
		textfit__wrap(out, width, 9, "     - ", line);
		if (e->nfrom_frames && !e->posts && !e->signals && !e->joined) {
			for (size_t k = 0; k < e->nfrom_frames; k++)
				textfit__wrap(out, width, 11, "         ", e->from_frames[k]);
			if (e->from_partial)
				textfit__wrap(out, width, 11, "         ",
					      "(the function that took it had returned: the frames after the first are "
					      "its caller's as they were when the next lock was wanted)");
			snprintf(line, sizeof(line), "and wants %s, at:", e->to);
			textfit__wrap(out, width, 9, "       ", line);
		}
		for (size_t k = 0; k < e->nframes; k++)
			textfit__wrap(out, width, 11, "         ", e->to_frames[k]);
	}
}
