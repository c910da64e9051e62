/* lockorder.c — which locks each thread holds, the order threads take them
 * in, and what a thread is blocked on (docs/profile-format.md, "Lock order").
 *
 * Held set. Each thread keeps the mutexes, rwlocks and spinlocks it holds in a small
 * array in its own state (shim.h: cv__held_push, cv__held_pop): a push is
 * a count and five stores, a pop one compare and a store when locks are
 * released in reverse order; anything else comes here. Past CV_HELD_MAX
 * locks are counted, not kept, and give no edges.
 *
 * Edges. Before a call that may block on lock B, a thread that holds locks
 * A1..An looks up each edge Ai -> B in one lock-free open-addressing table
 * keyed by the two objects' ids (an object is one generation of one
 * address, so a lock destroyed and re-initialised is a new lock). A known
 * edge costs a hash and a probe; the first sighting claims its slot with a
 * compare-and-swap and captures the call stack, inside the reentrancy guard;
 * nothing here takes a lock. So that they invent no cycle: a lock the thread
 * already holds (a recursive mutex, a second read lock) adds no edge at all;
 * a trylock cannot block, so it adds no edge into the lock it takes (edges
 * out of it, once held, are real); an rwlock held or wanted for reading is
 * marked, and the analyzer does not close a cycle through a lock that both
 * sides hold and want for reading.
 *
 * Waits. The contended paths say which object a thread is blocked on
 * (cv__wait_begin); with the held sets this is the wait-for graph a hung
 * program's profile carries (written on --timeout's signal or at exit).
 *
 * Not seen: a mutex unlocked by a thread other than the one that locked it
 * (undefined for pthread mutexes, but done) stays in the locker's held set
 * and may give it edges it does not have. A signal handler that changes
 * the held set between a push's or a pop's read of the held count and its
 * store of the new count (cv__held_fill, the fast unlocks,
 * cv__held_release_slow: from the wrapper's first load to some 70
 * instructions on) has the interrupted store undo its change: a lock the
 * handler took and kept is left out of the set (its edges missed while it
 * is held, and its release found in no slot), a lock it released comes
 * back (false edges until it is next released: tests/hostile/stale_held.c).
 * Closing that window takes an update of the count that is atomic against
 * the thread's own handlers on every push and pop (an unlocked cmpxchg),
 * not measured. Only programs outside POSIX meet it: pthread_mutex_lock
 * is not async-signal-safe. A memo a lookup stores names what it read
 * (cv__order_checked), but a slot pushed in that window keeps the prefix
 * hash of the set before the handler, and the memos met through it may
 * hide the edges of the handler's lock.
 */
#include <string.h>

#include "shim.h"

#define EDGE_BITS   12
#define EDGE_SLOTS  (1u << EDGE_BITS)
#define EDGE_PROBES 32

/* The two objects are named by their ids (in the key) and the thread by its
 * index, not by pointers: an edge outlives them, and the memory of an
 * object merged past the objects cap goes back to the allocator and may
 * hold another object by the time the profile is written (objects.c), as a
 * thread's state merged past the threads cap serves a later thread
 * (thread.c). */
struct cv_edge {
	uint64_t          key;        /* (from id + 1) << 32 | (to id + 1); 0: free */
	int               ready;      /* the fields below are written */
	uint32_t          from_flags, to_flags, to_stack, from_stack;
	uint32_t          thread;     /* cv_thread.index */
	const void       *from_pc, *to_pc;
};

static struct cv_edge *edges;        /* EDGE_SLOTS, made on the first nested acquisition */
static uint32_t edges_dropped;
static uint64_t held_overflows;

static struct cv_edge *edge_table(void)
{
	struct cv_edge *tab = __atomic_load_n(&edges, __ATOMIC_ACQUIRE);
	if (CV_LIKELY(tab != NULL))
		return tab;
	struct cv_edge *mine = cv__alloc(EDGE_SLOTS * sizeof(*mine));
	if (!mine)
		return NULL;
	if (!__atomic_compare_exchange_n(&edges, &tab, mine, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		cv__free(mine, EDGE_SLOTS * sizeof(*mine));   /* another thread made it first */
		return tab;
	}
	return mine;
}

/* The edge table's pages already written first (shim.h,
 * cv__touch_for_write), one bit each: the probe for an edge already known,
 * made by every nested acquisition the memo does not serve (shim.h,
 * cv__order_unchecked: timed and contended ones, a first under a held
 * set), then reads a shared line without writing it. */
#define EDGE_PAGES ((EDGE_SLOTS * sizeof(struct cv_edge)) / 4096 + 2)
static uint64_t edge_pages_written[(EDGE_PAGES + 63) / 64];

/* A slot's key and ready flag are on one page (the table is a mapping of
 * its own, page-aligned): a slot on a written page is read whole. */
_Static_assert(sizeof(struct cv_edge) % 16 == 0 && offsetof(struct cv_edge, ready) + sizeof(int) <= 16,
	       "cv_edge: key and ready within 16 bytes of a slot that starts at a multiple of 16");

static size_t edge_page(const struct cv_edge *tab, const struct cv_edge *e)
{
	return ((uintptr_t)&e->key - ((uintptr_t)tab & ~(uintptr_t)4095)) / 4096;
}

/* Whether e's key is on a page written already. A slot on any other page
 * was never claimed (edge_claim touches it first), and is not read when
 * the profile is written: a read would map the page, a fault each (about
 * 9 us here) for a table of 48 pages that holds a few edges. */
static bool edge_page_written(const struct cv_edge *tab, const struct cv_edge *e)
{
	size_t page = edge_page(tab, e);
	return __atomic_load_n(&edge_pages_written[page / 64], __ATOMIC_ACQUIRE) & (1ull << (page % 64));
}

static void edge_touch(const struct cv_edge *tab, struct cv_edge *e)
{
	if (edge_page_written(tab, e))
		return;
	cv__touch_for_write(&e->key);
	size_t page = edge_page(tab, e);
	__atomic_fetch_or(&edge_pages_written[page / 64], 1ull << (page % 64), __ATOMIC_RELEASE);
}

static uint32_t edge_hash(uint64_t key)
{
	key *= 0x9E3779B97F4A7C15ull;
	return (uint32_t)(key >> (64 - EDGE_BITS));
}

/* The slot for key: NULL when it is known already (or cannot be kept);
 * otherwise a slot this call claimed, to be filled. */
static struct cv_edge *edge_claim(struct cv_edge *tab, uint64_t key)
{
	uint32_t at = edge_hash(key);
	for (uint32_t i = 0; i < EDGE_PROBES; i++) {
		struct cv_edge *e = &tab[(at + i) & (EDGE_SLOTS - 1)];
		edge_touch(tab, e);
		uint64_t k = __atomic_load_n(&e->key, __ATOMIC_ACQUIRE);
		if (k == key)
			return NULL;
		if (k == 0) {
			if (__atomic_compare_exchange_n(&e->key, &k, key, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				return e;
			if (k == key)
				return NULL;   /* another thread saw the same edge first */
		}
	}
	__atomic_fetch_add(&edges_dropped, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* One more slot of a held set's hash as a pass reads it (cv__held_hash):
 * the hash of slots 0..i from that of 0..i-1 (h) and slot i's object. 0
 * from a slot with no object (being filled or moved) or one not known,
 * and from then on. */
static uint64_t held_step(uint64_t h, uint32_t i, const struct cv_obj *held)
{
	if (!held || held->kind == CV_OBJ_UNKNOWN || (i != 0 && h == 0))
		return 0;
	return i == 0 ? CV_LOAD(&held->held_seed) : cv__held_mix(h, held);
}

/* Whether o is in t's held set; *hash, the set's as read. */
static bool holds(const struct cv_thread *t, const struct cv_obj *o, uint64_t *hash)
{
	bool found = false;
	uint64_t h = 0;
	for (uint32_t i = 0; i < t->nheld && i < CV_HELD_MAX; i++) {
		const struct cv_obj *held = CV_LOAD(&t->held[i].obj);
		found |= held == o;
		h = held_step(h, i, held);
	}
	*hash = h;
	return found;
}

uint64_t cv__lockorder_attempt(struct cv_thread *t, struct cv_obj *o, const void *pc, uint32_t flags)
{
	uint64_t looked;
	if ((flags & CV_LOCK_TRY) || o->kind == CV_OBJ_UNKNOWN)
		return 0;   /* cannot block on it: no order */
	if (holds(t, o, &looked))
		return looked;   /* already its owner: no order from a set with it */
	struct cv_edge *tab = edge_table();
	/* Not a state of this process's: a fork in a signal handler returned,
	 * in the child, to this call of the parent's thread (its ids and index
	 * are the parent's). Asked after the table was had: one had before the
	 * fork is the parent's, which the child never writes out. */
	if (!tab || CV_LOAD(&t->tid) != cv__thread_tid())
		return 0;
	struct cv_edge *claimed[CV_HELD_MAX];
	uint8_t from[CV_HELD_MAX];   /* the held slot of each claimed edge */
	uint32_t n = 0;
	looked = 0;
	for (uint32_t i = 0; i < t->nheld && i < CV_HELD_MAX; i++) {
		const struct cv_held *h = &t->held[i];
		struct cv_obj *held = CV_LOAD(&h->obj);
		looked = held_step(looked, i, held);
		if (!held || held->kind == CV_OBJ_UNKNOWN)
			continue;   /* a slot being filled by the code this handler interrupted, or no object */
		uint64_t key = (uint64_t)(held->id + 1) << 32 | (o->id + 1);
		struct cv_edge *e = edge_claim(tab, key);
		if (!e)
			continue;
		/* The key names the held lock as it was read, whatever a signal
		 * handler that releases a lock it kept does to the slots above it
		 * (cv__held_release_slow) meanwhile. (Its acquisition stack is
		 * still found from slot i by the capture below: after such a
		 * shift, another held lock's.) Nobody reads the edge before it is
		 * ready. */
		e->from_flags = cv__held_flags(h);
		e->from_pc = h->pc;
		claimed[n] = e;
		from[n++] = (uint8_t)i;
	}
	if (!n)
		return looked;
	/* One capture serves every new edge of this attempt: the stack now, and
	 * each held lock's from it (stacks.c, intern_held). */
	uint32_t from_stacks[CV_HELD_MAX];
	struct cv_thread *saved = cv__guard_enter();
	uint32_t stack = cv__stack_capture_held(t, t->held, from, n, from_stacks);
	cv__guard_leave(saved);
	for (uint32_t k = 0; k < n; k++) {
		struct cv_edge *e = claimed[k];
		e->thread = t->index;
		e->to_flags = flags;
		e->to_stack = stack;
		e->from_stack = from_stacks[k];
		e->to_pc = pc;
		__atomic_store_n(&e->ready, 1, __ATOMIC_RELEASE);
	}
	return looked;
}

/* The child of a fork: the edges are the parent's (its objects' ids, which
 * the child gives out again from 0, its threads and stacks). The child's
 * own go in a table of their own. The parent's stays mapped: a fork in a
 * signal handler returns, in the child, to the code it interrupted, which
 * may be filling an edge of it. */
void cv__lockorder_after_fork(void)
{
	edges = NULL;
	memset(edge_pages_written, 0, sizeof(edge_pages_written));
	edges_dropped = 0;
	held_overflows = 0;
}

void cv__held_overflow(struct cv_thread *t)
{
	t->held_untracked++;
	__atomic_fetch_add(&held_overflows, 1, __ATOMIC_RELAXED);
}

/* An unlock out of order, or of a lock past the array, or of one this
 * thread never took (unlocking another's mutex is the program's business).
 *
 * The slots above the lock's move down one, and each gets the hash of the
 * set it is now the top of: a hash must name exactly the objects below
 * it, for the fast paths' memo is keyed by it (shim.h,
 * cv__order_unchecked). Moved with the hashes of the larger set, the
 * slots would give a smaller set's memo to the larger set when it came
 * back, its edges from the lock released never looked up (helper-64: A,
 * B, C, A released, E, D; then A, B, C, B released, E, D: A -> D lost).
 * Their objects are cleared first and set again last, so that a signal
 * handler meanwhile takes them for slots being filled: no edges from
 * them, no memo over them. Each slot's memo stays where it is: it names
 * the set it was made for by that set's hash. */
static void held_remove(struct cv_thread *t, uint32_t i)
{
	uint32_t n = t->nheld;
	struct cv_obj *moved[CV_HELD_MAX];   /* moved[k]: slot k's object once moved */
	for (uint32_t k = i; k < n; k++) {
		if (k + 1 < n)
			moved[k] = CV_LOAD(&t->held[k + 1].obj);
		CV_STORE(&t->held[k].obj, NULL);
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	uint64_t below = i != 0 ? cv__held_hash(t, i - 1) : 0;
	for (uint32_t k = i; k + 1 < n; k++) {
		struct cv_held *h = &t->held[k];
		const struct cv_held *from = &t->held[k + 1];
		h->key = from->key;
		h->pc = from->pc;
		h->sp_flags = from->sp_flags;
		/* Not known above a slot that was being filled (its object NULL). */
		below = moved[k] ? cv__held_hash_over(below, k, moved[k]) : 0;
		h->prefix = below;
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	for (uint32_t k = i; k + 1 < n; k++)
		CV_STORE(&t->held[k].obj, moved[k]);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	CV_STORE(&t->nheld, n - 1);
}

void cv__held_release_slow(struct cv_thread *t, const void *addr)
{
	for (uint32_t i = t->nheld; i-- > 0;)
		if (cv__held_is(&t->held[i], addr)) {
			held_remove(t, i);
			return;
		}
	if (t->held_untracked)
		t->held_untracked--;
}

/* A lock destroyed or initialised again while this thread holds it
 * (glibc's rwlock and spinlock destroys succeed, and every init; POSIX
 * leaves it undefined) is held no more: its slot would keep the object,
 * which a merge past the objects cap frees at once (objects.c) and the
 * next object made reuses, and edges from that one would follow. A read
 * lock may be in two slots. A slot whose object is NULL is being filled
 * by the code a signal handler (this call's caller) interrupted: its addr
 * is still the previous lock's (helper-67). */
void cv__held_forget(struct cv_thread *t, const void *addr)
{
	for (uint32_t i = t->nheld < CV_HELD_MAX ? t->nheld : CV_HELD_MAX; i-- > 0;)
		if (cv__held_is(&t->held[i], addr) && CV_LOAD(&t->held[i].obj))
			held_remove(t, i);   /* the slots above move down; i - 1 is next, as before */
}

/* ---- the profile ---------------------------------------------------------- */

/* An object's index in the profile being written; UINT32_MAX when it has
 * none (no object, or its records were folded away). */
static uint32_t dumped(const struct cv_obj *o)
{
	return o ? cv__dumped(o->id) : UINT32_MAX;
}

/* An edge's two objects and its thread in the profile being written (false
 * when an object is not in it: merged past the objects cap and gone). */
static bool edge_dumped(const struct cv_edge *tab, const struct cv_edge *e, uint32_t *from, uint32_t *to,
			uint32_t *thread)
{
	if (!edge_page_written(tab, e) || !__atomic_load_n(&e->ready, __ATOMIC_ACQUIRE))
		return false;
	uint64_t key = CV_LOAD(&e->key);
	*from = cv__dumped((uint32_t)(key >> 32) - 1);
	*to = cv__dumped((uint32_t)key - 1);
	*thread = cv__thread_dumped(e->thread);
	return *from != UINT32_MAX && *to != UINT32_MAX && *thread != UINT32_MAX;
}

void cv__lockorder_write(void *w)
{
	struct cv_edge *tab = __atomic_load_n(&edges, __ATOMIC_ACQUIRE);
	struct cv_lock_order lo = {
		.edges_dropped = __atomic_load_n(&edges_dropped, __ATOMIC_RELAXED),
		.held_overflows = __atomic_load_n(&held_overflows, __ATOMIC_RELAXED),
	};
	uint32_t from, to, thread;
	for (uint32_t i = 0; tab && i < EDGE_SLOTS; i++)
		lo.edges += edge_dumped(tab, &tab[i], &from, &to, &thread);
	if (!lo.edges && !lo.edges_dropped && !lo.held_overflows)
		return;
	cv__put_record(w, CV_REC_LOCK_ORDER, &lo, sizeof(lo), NULL, 0, NULL, 0);
	for (uint32_t i = 0; tab && i < EDGE_SLOTS; i++) {
		const struct cv_edge *e = &tab[i];
		if (!edge_dumped(tab, e, &from, &to, &thread))
			continue;
		struct cv_lock_edge rec = {
			.from = from,
			.to = to,
			.thread = thread,
			.from_flags = e->from_flags,
			.to_flags = e->to_flags,
			.to_stack = e->to_stack,
			.from_stack = e->from_stack,
			.from_pc = (uintptr_t)e->from_pc,
			.to_pc = (uintptr_t)e->to_pc,
		};
		cv__put_record(w, CV_REC_LOCK_EDGE, &rec, sizeof(rec), NULL, 0, NULL, 0);
	}
}

/* The tid of the live thread whose handle is th, or 0 (not started yet, or
 * not made through the shim). The thread list is push-only: read without a
 * lock, as at any write. */
static pid_t joined_tid(pthread_t th)
{
	for (const struct cv_thread *t = cv__threads(); t; t = t->all_next)
		if (CV_LOAD(&t->live) && pthread_equal(t->self, th))
			return CV_LOAD(&t->tid);
	return 0;
}

/* Whether t's wait, begun at since, is live: its frame still holds its
 * start time. A siglongjmp out of a signal handler that interrupted the
 * wait leaves it without its end (waiting_obj stays set) and the thread
 * goes on, its stack reused below where it jumped to; read as live, such
 * a wait was in progress until the write (3.75 s of a 4 s run,
 * helper-111). A live one, a deadlocked thread whose handler calls exit()
 * included, keeps its frame. Read safely (cv__read_own_memory): the
 * stack may be another thread's, its memory gone (EFAULT: the frame is
 * too). Any other failure says nothing, and the wait is written, as
 * before; so is a dead frame whose memory still holds the value. */
static bool wait_frame_live(const struct cv_thread *t, uint64_t since)
{
	const uint64_t *at = CV_LOAD(&t->waiting_since_at);
	if (!at)
		return true;
	uint64_t held = 0;
	struct iovec local = { &held, sizeof(held) }, remote = { (void *)at, sizeof(held) };
	if (cv__read_own_memory(&local, 1, &remote, 1) == (ssize_t)sizeof(held))
		return held == since;
	return errno != EFAULT;
}

void cv__lockorder_write_thread(void *w, const struct cv_thread *t)
{
	uint32_t n = CV_LOAD(&t->nheld);
	if (n > CV_HELD_MAX)
		n = CV_HELD_MAX;
	const struct cv_obj *waiting = __atomic_load_n(&t->waiting_obj, __ATOMIC_ACQUIRE);
	uint64_t since = CV_LOAD(&t->waiting_since_ns);
	if (waiting && !wait_frame_live(t, since))
		waiting = NULL;
	pid_t joining = __atomic_load_n(&t->joining, __ATOMIC_ACQUIRE) ? joined_tid(t->joining_handle) : 0;
	if (!n && !waiting && !joining)
		return;
	struct cv_held_lock held[CV_HELD_MAX];
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t id = dumped(CV_LOAD(&t->held[i].obj));
		if (id != UINT32_MAX)
			held[k++] = (struct cv_held_lock){ .object = id, .flags = cv__held_flags(&t->held[i]),
							   .pc = (uintptr_t)t->held[i].pc };
	}
	struct cv_thread_state st = {
		.thread = t->dump_index,
		.nheld = k,
		.held_untracked = t->held_untracked,
		.waiting = waiting && dumped(waiting) != UINT32_MAX ? dumped(waiting) + 1 : 0,
		.waiting_mutex = waiting && dumped(t->waiting_mutex) != UINT32_MAX ? dumped(t->waiting_mutex) + 1 : 0,
		.waiting_flags = waiting ? t->waiting_flags : 0,
		.waiting_since_ns = waiting ? since : 0,
		.waiting_pc = waiting ? (uintptr_t)t->waiting_pc : 0,
		.joining_tid = joining,
		.joining_flags = joining ? t->joining_flags : 0,
		.joining_since_ns = joining ? t->joining_since_ns : 0,
		.joining_pc = joining ? (uintptr_t)t->joining_pc : 0,
	};
	cv__put_record(w, CV_REC_THREAD_STATE, &st, sizeof(st), held, k * sizeof(held[0]), NULL, 0);
}
