/* deque.c — the Chase-Lev work-stealing deque in C11 atomics.
 *
 * Algorithm: D. Chase and Y. Lev, "Dynamic Circular Work-Stealing Deque",
 * SPAA 2005; memory orders exactly as in N. M. Lê, A. Pop, A. Cohen and
 * F. Zappa Nardelli, "Correct and Efficient Work-Stealing for Weak Memory
 * Models", PPoPP 2013, Figure 1 (cited below as [LPCZ]). Their proof covers
 * push/take/steal with these orders; the resize and reclamation scheme here
 * is the one their paper leaves to the implementation (explained below), and
 * two extensions — the owner taking several elements per fence, a thief
 * claiming several per CAS — are argued below from the same two facts their
 * proof rests on.
 *
 * The contract is in the names: only the owning worker calls *_owner, any
 * thread may call *_thief.
 *
 * The argument, in short.
 *
 *   top and bottom are free-running indices; the deque holds [top, bottom).
 *   The owner alone writes bottom; top only grows, by CAS, from thieves and
 *   from the owner when it races them for the last element. All index
 *   comparisons are made on the signed difference, so the indices may wrap
 *   around SIZE_MAX (the tests start them just below it).
 *
 *   push:  write the slot at bottom, then publish bottom + 1. The release
 *          fence before the relaxed store of bottom [LPCZ push] orders the
 *          slot write (and the task's payload, written by the caller before
 *          push) before the new bottom; a thief that reads that bottom with
 *          acquire [LPCZ steal] therefore reads the slot's new contents.
 *
 *   take (pop_owner): decrement bottom first, then read top. This is a
 *          store-load (Dekker) pattern against steal, which reads top and
 *          then bottom: the seq_cst fences on both sides [LPCZ take, steal]
 *          forbid the outcome where the owner reads an old top AND the thief
 *          reads the old bottom, so at most one of them believes it can take
 *          the same element without a CAS. When exactly one element remains
 *          (top == new bottom) both may want it, and both must win a CAS on
 *          top (seq_cst success, relaxed failure [LPCZ]); the loser returns
 *          empty and the owner restores bottom.
 *
 *   steal: read top (acquire), fence (seq_cst), read bottom (acquire), read
 *          the buffer pointer (acquire: [LPCZ] use consume, which compilers
 *          implement as acquire), read the slot (relaxed), then CAS top from
 *          the value it read. If the CAS succeeds, top was still t, so the
 *          owner had not taken index t and could not have overwritten slot
 *          t mod capacity (that would need bottom - t >= capacity, and the
 *          owner resizes instead), so the value read is the element. If the
 *          CAS fails the value is discarded — it may even be torn between
 *          the slot's two words, which is why each word is a relaxed atomic
 *          (no data race in the C11 sense) and why no other check is needed.
 *
 *   The two facts. Let the owner store bottom = nb, fence (F_o), read
 *   top = t; let a thief read top = x, fence (F_t), read bottom = B. The
 *   seq_cst fences are totally ordered (C11 7.17.4; [LPCZ] §3):
 *     (A) if F_t precedes F_o, the owner's t is x or a later value: t >= x;
 *     (B) if F_o precedes F_t, the thief's B is nb or a later value of
 *         bottom (one the owner wrote after nb).
 *   [LPCZ]'s take is the case "claim x, take nb = b - 1": by (A) x <= t,
 *   by (B) x < B <= nb, so when t < nb the two never meet.
 *
 * Batch takes (the owner). The fence is most of a take's cost (a locked
 * instruction on x86), and a pre-filled deque of a million tasks pays it a
 * million times. So a take lowers bottom by m >= 1 at once, nb = b - m, and
 * with one fence owns [nb, b): by (A) and (B) no single-element claim
 * reaches nb when t < nb, exactly as for m = 1. If t >= nb, fewer remain:
 * the owner takes [t + 1, b) and raises bottom to t + 1 (published like a
 * push: the element t stays visible), or races for the last one with
 * [LPCZ]'s CAS, or finds the deque empty. With m = 1 these cases are
 * [LPCZ take] exactly. The elements taken but not yet run are the owner's
 * **private zone**, [bottom, hi): popped newest first with no atomic
 * operation at all. m is at most own.take_max (wp_config.take_batch, default
 * 32) and at most an eighth of the deque, so a short deque (nested
 * fork-join) behaves as before, m = 1; and a thief that finds nothing
 * visible sets `wanted`, on which the owner publishes its private zone at
 * its next pop (wp__deque_share_owner). A push publishes the private zone
 * too (it writes at hi and stores bottom = hi + 1): every element below a
 * published bottom is one the owner has not run. Like the LIFO slot, the
 * private zone is not stealable while the owner runs a task: a task that
 * blocks on one of them other than through a future can wait forever
 * (take_batch = 1 turns the zone off).
 *
 * Batch steals (thieves). A thief that claims one element per CAS pays a
 * cache-line transfer of top (and of bottom) per element, and makes the
 * owner pay them too: moving half of a large deque that way ran both sides
 * several times slower than either alone. A CAS from x to x + k claims
 * [x, x + k) at once, but [LPCZ] cannot allow that in general: the owner
 * takes index nb without a CAS when it saw t < nb, and a claim [x, x + k)
 * with x <= t may still reach nb. Two rules make it safe:
 *
 *   1. k <= K = WP__CL_BATCH_MAX, and the owner takes without a CAS only
 *      when nb - t >= K ("far from top"): by (A) x <= t, so x + k <= nb;
 *      by (B) x + k <= B <= nb (a claim never passes the bottom it read).
 *
 *   2. Near top, the owner also needs to know that no claim is in flight.
 *      A batch thief increments `claiming` (seq_cst RMW) before it reads
 *      top, and decrements it (release) after its CAS. After its fence the
 *      owner acquires `claiming`, and on 0 reads top again and decides as
 *      above. For each batch thief: either the owner's read of `claiming`
 *      precedes its increment — then F_o precedes the increment, hence
 *      F_t, and by (B) the claim ends at or below nb — or it follows the
 *      decrement, so the claim's CAS happens-before the owner's second
 *      read of top, and t is already past the claim. (A value read between
 *      increment and decrement is not 0.) On a non-zero count the owner
 *      spins briefly; if a claimer is slow (preempted), it publishes bottom
 *      back and takes its oldest element with a thief's CAS instead.
 *
 *   A thief copies the k slots before its CAS, as [LPCZ steal] reads its
 *   one slot before, and straight into its own deque above its bottom
 *   (invisible to others until it publishes them); success means top was x,
 *   so, as for one slot, every value copied was the element at its index.
 *
 * Growth and reclamation. When push finds the buffer full it allocates one
 * twice as large (a reservation may jump further), copies [top, hi) into it,
 * and publishes it with a
 * release store (the push's own release fence would already order it before
 * the next bottom; the release store also covers thieves that read the
 * pointer without a newer bottom). A thief that loaded the old pointer may
 * still be reading from it, with no way for the owner to know when it has
 * finished. Rather than epochs or hazard pointers, old buffers are retired
 * to an owner-private list and freed only when the deque is destroyed (at
 * pool destruction, after every worker was joined, so no thief can hold a
 * pointer). This costs at most the sum of the smaller buffers — less than
 * the current one, since sizes double — and needs no work on the hot path.
 * The old buffer stays valid and its contents for indices below the bottom
 * at resize time are unchanged, so a thief reading it with a top it can
 * still win a CAS for reads the right element.
 *
 * Costs: push is two relaxed stores, a release fence (free on x86) and a
 * relaxed store; a batch push pays the release once. A take is a store, one
 * seq_cst fence (a locked instruction on x86) and a load, now once per m
 * tasks; the pops in between touch only the owner's private line. A steal
 * moves up to K tasks for one CAS and three writes to top's line. Thieves
 * and owner touch separate cache lines except for top's: top, bottom and
 * the owner's private fields live 64 bytes apart.
 */
#include <string.h>

#include "internal.h"

static inline bool wp__idx_lt(size_t a, size_t b) { return (ptrdiff_t)(a - b) < 0; }
static inline bool wp__idx_le(size_t a, size_t b) { return (ptrdiff_t)(a - b) <= 0; }

/* Spin rounds a near-top take waits for claims in flight before it falls
 * back to a thief's CAS on its own oldest element. */
enum { WP__CL_CLAIM_SPIN = 64 };

static struct wp__cl_buf *wp__cl_buf_new(size_t capacity)
{
	struct wp__cl_buf *b =
		wp__tasks_alloc(sizeof *b + capacity * sizeof(struct wp__cl_slot));   /* ring.h */
	if (!b)
		return NULL;
	b->mask = capacity - 1;
	b->retired_next = NULL;
	/* Slots are initialised lazily by push; atomics need no init to be
	 * read (only read after being written, by the argument above). */
	return b;
}

int wp__deque_init(struct wp__deque *d, size_t capacity, size_t start)
{
	size_t cap = 16;
	while (cap < capacity)
		cap <<= 1;
	struct wp__cl_buf *b = wp__cl_buf_new(cap);
	if (!b)
		return -ENOMEM;
	atomic_init(&d->top, start);
	atomic_init(&d->claiming, 0);
	atomic_init(&d->wanted, false);
	atomic_init(&d->bottom, start);
	atomic_init(&d->buf, b);
	d->retired = NULL;
	d->own.hi = start;
	d->own.top_seen = start;
	d->own.take_max = WP__CL_TAKE_MAX;
	return 0;
}

void wp__deque_destroy(struct wp__deque *d)
{
	free(wp__load_relaxed(&d->buf));
	for (struct wp__cl_buf *r = d->retired, *next; r; r = next) {
		next = r->retired_next;
		free(r);
	}
	atomic_init(&d->buf, NULL);
	d->retired = NULL;
}

static inline void wp__slot_store(struct wp__cl_slot *s, wp_task t)
{
	/* Relaxed [LPCZ push: store_explicit(&a->buffer[...], x, relaxed)]. */
	wp__store_relaxed(&s->fn, (uintptr_t)t.fn);
	wp__store_relaxed(&s->arg, (uintptr_t)t.arg);
}

static inline wp_task wp__slot_load(struct wp__cl_slot *s)
{
	/* Relaxed [LPCZ take/steal: load_explicit(&a->buffer[...], relaxed)]. */
	return (wp_task){ (wp_fn)wp__load_relaxed(&s->fn),
	                  (void *)wp__load_relaxed(&s->arg) };
}

/* The owner's cold path: a buffer of `capacity` (a power of two, larger than
 * the old one), the live slots [t, b) copied over, the old one retired. */
static __attribute__((noinline, cold)) struct wp__cl_buf *
wp__deque_grow_to(struct wp__deque *d, struct wp__cl_buf *old, size_t t, size_t b, size_t capacity)
{
	struct wp__cl_buf *nb = wp__cl_buf_new(capacity);
	if (!nb)
		return NULL;
	for (size_t i = t; i != b; i++)
		wp__slot_store(&nb->slots[i & nb->mask],
		               wp__slot_load(&old->slots[i & old->mask]));
	/* Release: the copied slots before the pointer, for a thief that
	 * acquires the pointer (see "Growth and reclamation"). */
	wp__store_release(&d->buf, nb);
	old->retired_next = d->retired;
	d->retired = old;
	return nb;
}

static struct wp__cl_buf *
wp__deque_grow(struct wp__deque *d, struct wp__cl_buf *old, size_t t, size_t b)
{
	return wp__deque_grow_to(d, old, t, b, 2 * (old->mask + 1));
}

/* Owner only: make room for n more tasks above hi in one step, so a batch of
 * a million pushes does not double (and copy, and fault in) the buffer twenty
 * times over. */
int wp__deque_reserve_owner(struct wp__deque *d, size_t n)
{
	size_t b = d->own.hi;                     /* the private zone included */
	size_t top = wp__load_acquire(&d->top);   /* as in push */
	struct wp__cl_buf *a = wp__load_relaxed(&d->buf);
	size_t need = b - top + n, cap = a->mask + 1;
	if (need <= cap)
		return 0;
	while (cap < need)
		cap *= 2;
	return wp__deque_grow_to(d, a, top, b, cap) ? 0 : -ENOMEM;
}

/* Owner: makes [bottom, end) visible, the private zone included: [LPCZ push]
 * fence(release); store(bottom, relaxed) — the slots (and the payloads
 * behind them) before the bottom that exposes them. */
static inline void wp__deque_publish(struct wp__deque *d, size_t end)
{
	wp__fence_release_store_relaxed(&d->bottom, end);
	d->own.hi = end;
}

int wp__deque_push_owner(struct wp__deque *d, wp_task t)
{
	/* [LPCZ push] b: relaxed (only the owner writes bottom). We push at
	 * hi, above the private zone, which the publication below exposes. */
	size_t b = d->own.hi;
	/* [LPCZ push] top: acquire — pairs with the thieves' seq_cst CAS, so
	 * the slots they emptied are theirs to have read before we reuse them. */
	size_t top = wp__load_acquire(&d->top);
	/* [LPCZ push] the buffer: relaxed (only the owner writes it). */
	struct wp__cl_buf *a = wp__load_relaxed(&d->buf);
	if (WP_UNLIKELY(b - top > a->mask)) {
		a = wp__deque_grow(d, a, top, b);
		if (!a)
			return -ENOMEM;
	}
	WP_ASSERT(b - top <= a->mask);
	wp__slot_store(&a->slots[b & a->mask], t);
	/* [LPCZ push] fence(release); store(bottom, relaxed). */
	wp__deque_publish(d, b + 1);
	WP_ASSERT_EXPENSIVE(wp__deque_valid(d));
	return 0;
}

int wp__deque_push_many_owner(struct wp__deque *d, const struct wp__src *src,
                              size_t start, size_t stride, size_t count)
{
	if (count == 0)
		return 0;
	/* Room for all of them (reads top with acquire, as push does): the
	 * slots written below hold no live element. */
	if (wp__deque_reserve_owner(d, count))
		return -ENOMEM;
	size_t b = d->own.hi;
	struct wp__cl_buf *a = wp__load_relaxed(&d->buf);
	for (size_t k = 0; k < count; k++)
		wp__slot_store(&a->slots[(b + k) & a->mask],
		               wp__src_get(src, start + k * stride));
	/* [LPCZ push]'s publication once for the batch: the release fence
	 * orders every slot written above before the bottom that exposes
	 * them, exactly as it orders the one slot of a push. */
	wp__deque_publish(d, b + count);
	WP_ASSERT_EXPENSIVE(wp__deque_valid(d));
	return 0;
}

/* A take: the deque is [top, b), b = bottom = hi (no private zone). */
static int wp__deque_take(struct wp__deque *d, size_t b, wp_task *out)
{
	struct wp__cl_buf *a = wp__load_relaxed(&d->buf);
	/* How many to take: an eighth of what we last knew to be there (top
	 * only grows, so this over-estimates), at most own.take_max. */
	ptrdiff_t est = (ptrdiff_t)(b - d->own.top_seen);
	size_t m = est >= 16 ? (size_t)est / 8 : 1;
	if (m > d->own.take_max)
		m = d->own.take_max;
	size_t nb = b - m;
	/* [LPCZ take] store(bottom, b - 1, relaxed), here b - m ... */
	wp__store_relaxed(&d->bottom, nb);
	/* ... fence(seq_cst): orders that store before the load of top below,
	 * against the thief's "load top; fence; load bottom". Without it the
	 * owner and a thief could both take the same element. */
	wp__fence_seq_cst();
	/* [LPCZ take] top: relaxed (the fence supplies the ordering). */
	size_t t = wp__load_relaxed(&d->top);
	if (WP_UNLIKELY((ptrdiff_t)(nb - t) < WP__CL_BATCH_MAX)) {
		/* Near top: a batch claim announced before our fence may reach
		 * nb. Wait for claims in flight (acquire pairs with the thief's
		 * release decrement), then read top again: rule 2 of "Batch
		 * steals". */
		for (unsigned spin = 0; wp__load_acquire(&d->claiming) != 0; spin++) {
			if (spin == WP__CL_CLAIM_SPIN) {
				/* A claimer is slow (preempted?). Publish
				 * bottom back, so the deque is whole again, and
				 * take the oldest element as a thief would: the
				 * CAS decides against every claim. */
				wp__deque_publish(d, b);
				return wp__deque_steal_thief(d, out, NULL);
			}
			wp__cpu_relax();
		}
		t = wp__load_relaxed(&d->top);
		d->own.top_seen = t;
		if (!wp__idx_lt(t, nb)) {
			if (wp__idx_lt(t + 1, b)) {
				/* Fewer than m + 1 left: take those above t,
				 * leave t visible. Raising bottom publishes, as
				 * a push does. */
				nb = t + 1;
				wp__fence_release_store_relaxed(&d->bottom, nb);
			} else if (t + 1 == b) {
				/* One left: [LPCZ take]'s race for the last
				 * element, CAS on top (seq_cst success, relaxed
				 * failure), then restore bottom (relaxed). */
				*out = wp__slot_load(&a->slots[t & a->mask]);
				bool won = wp__cas_seq_cst(&d->top, &t, t + 1);
				wp__store_relaxed(&d->bottom, b);
				return won ? WP__CL_GOT : WP__CL_LOST;
			} else {
				/* Empty: restore bottom [LPCZ take, relaxed]. */
				wp__store_relaxed(&d->bottom, b);
				return WP__CL_EMPTY;
			}
		}
	} else {
		d->own.top_seen = t;
	}
	/* [nb, b) is ours: run b - 1 now, the rest is the private zone. */
	d->own.hi = b - 1;
	*out = wp__slot_load(&a->slots[(b - 1) & a->mask]);
	return WP__CL_GOT;
}

int wp__deque_pop_owner(struct wp__deque *d, wp_task *out)
{
	size_t hi = d->own.hi;
	/* Only the owner writes bottom: relaxed. */
	size_t lo = wp__load_relaxed(&d->bottom);
	if (WP_LIKELY(lo != hi)) {
		/* The private zone: no thief reaches above bottom. */
		struct wp__cl_buf *a = wp__load_relaxed(&d->buf);
		d->own.hi = --hi;
		*out = wp__slot_load(&a->slots[hi & a->mask]);
		return WP__CL_GOT;
	}
	return wp__deque_take(d, hi, out);
}

size_t wp__deque_share_owner(struct wp__deque *d)
{
	if (wp__load_relaxed(&d->wanted))
		wp__store_relaxed(&d->wanted, false);
	size_t lo = wp__load_relaxed(&d->bottom), hi = d->own.hi;
	if (lo == hi)
		return 0;
	wp__deque_publish(d, hi);
	return hi - lo;
}

int wp__deque_steal_thief(struct wp__deque *d, wp_task *out, size_t *seen)
{
	/* [LPCZ steal] top: acquire. */
	size_t t = wp__load_acquire(&d->top);
	/* [LPCZ steal] fence(seq_cst): orders the load of top before the load
	 * of bottom, the thief's half of the Dekker pattern with take. */
	wp__fence_seq_cst();
	/* [LPCZ steal] bottom: acquire — pairs with push's release fence, so
	 * the slot at t (and its payload) is visible. */
	size_t b = wp__load_acquire(&d->bottom);
	if (seen)
		*seen = wp__idx_lt(t, b) ? b - t : 0;
	if (!wp__idx_lt(t, b))
		return WP__CL_EMPTY;
	/* [LPCZ steal] the buffer: consume, implemented as acquire — pairs
	 * with the release store in grow. */
	struct wp__cl_buf *a = wp__load_acquire(&d->buf);
	wp_task x = wp__slot_load(&a->slots[t & a->mask]);
	/* [LPCZ steal] CAS top t -> t + 1: seq_cst success, relaxed failure.
	 * Success means x was element t (see the argument above). */
	if (!wp__cas_seq_cst(&d->top, &t, t + 1))
		return WP__CL_LOST;
	*out = x;
	return WP__CL_GOT;
}

int wp__deque_steal_batch_thief(struct wp__deque *d, struct wp__deque *into,
                                size_t max, wp_task *out, size_t *got)
{
	*got = 0;
	if (max > WP__CL_BATCH_MAX)
		max = WP__CL_BATCH_MAX;
	if (max == 0)
		max = 1;
	/* Room above our own hi first, outside the claim window. */
	if (WP_UNLIKELY(wp__deque_reserve_owner(into, max))) {
		int r = wp__deque_steal_thief(d, out, NULL);
		*got = r == WP__CL_GOT;
		return r;
	}
	/* Announce the claim before reading top (rule 2 of "Batch steals"). */
	wp__fetch_add_seq_cst(&d->claiming, 1);
	/* From here to the CAS: [LPCZ steal] — top acquire, fence seq_cst,
	 * bottom acquire, the buffer acquire (consume), slots relaxed. */
	size_t t = wp__load_acquire(&d->top);
	wp__fence_seq_cst();
	size_t b = wp__load_acquire(&d->bottom);
	int r = WP__CL_EMPTY;
	if (wp__idx_lt(t, b)) {
		size_t n = b - t, k = n - n / 2;   /* half, rounded up */
		if (k > max)
			k = max;
		struct wp__cl_buf *a = wp__load_acquire(&d->buf);
		/* Our own deque, as its owner: the slots above hi are ours and
		 * invisible to thieves until we publish them. */
		struct wp__cl_buf *ia = wp__load_relaxed(&into->buf);
		size_t ib = into->own.hi;
		/* Read before the CAS, as [LPCZ steal] reads its one slot: once
		 * top moves past them the victim's owner may reuse the slots. */
		for (size_t i = 0; i < k; i++)
			wp__slot_store(&ia->slots[(ib + i) & ia->mask],
			               wp__slot_load(&a->slots[(t + i) & a->mask]));
		/* [LPCZ steal]'s CAS, t -> t + k: seq_cst success, relaxed
		 * failure. Success means top was t, so every value copied was
		 * the element at its index (the one-slot argument, per slot). */
		if (wp__cas_seq_cst(&d->top, &t, t + k)) {
			*out = wp__slot_load(&ia->slots[(ib + k - 1) & ia->mask]);
			if (k > 1)
				wp__deque_publish(into, ib + k - 1);
			*got = k;
			r = WP__CL_GOT;
		} else {
			r = WP__CL_LOST;
		}
	}
	/* Release: our CAS before an owner that acquires claiming == 0. */
	wp__fetch_sub_acq_rel(&d->claiming, 1);
	/* Nothing visible: the owner may hold a private zone; ask it to
	 * share (read first, so idle thieves do not keep writing the line). */
	if (r == WP__CL_EMPTY && !wp__load_relaxed(&d->wanted))
		wp__store_relaxed(&d->wanted, true);
	return r;
}

size_t wp__deque_peek_len(struct wp__deque *d)
{
	/* A hint only: relaxed loads, bottom first so that a concurrent take
	 * (which lowers bottom briefly) rarely shows a phantom element. The
	 * owner's private zone is not counted: nobody else can take it. */
	size_t b = wp__load_relaxed(&d->bottom);
	size_t t = wp__load_relaxed(&d->top);
	return wp__idx_lt(t, b) ? b - t : 0;
}

size_t wp__deque_capacity(struct wp__deque *d)
{
	return wp__load_relaxed(&d->buf)->mask + 1;
}

size_t wp__deque_retired_count(struct wp__deque *d)
{
	size_t n = 0;
	for (struct wp__cl_buf *r = d->retired; r; r = r->retired_next)
		n++;
	return n;
}

bool wp__deque_valid(struct wp__deque *d)
{
	size_t t = wp__load_acquire(&d->top);
	size_t b = wp__load_relaxed(&d->bottom);
	size_t hi = d->own.hi;
	struct wp__cl_buf *a = wp__load_relaxed(&d->buf);
	if (!a)
		return false;
	size_t cap = a->mask + 1;
	if (cap < 16 || (cap & a->mask) != 0)
		return false;
	/* top <= bottom <= hi, and all of it fits. */
	if (!wp__idx_le(t, b) || !wp__idx_le(b, hi))
		return false;
	if (hi - t > cap)
		return false;
	if (wp__load_relaxed(&d->claiming) > 1u << 20)
		return false; /* a decrement without its increment */
	/* Retired buffers: newest first, powers of two, each smaller than the
	 * one that replaced it (half, or less after a reservation). */
	size_t above = cap;
	for (struct wp__cl_buf *r = d->retired; r; r = r->retired_next) {
		size_t rc = r->mask + 1;
		if (rc < 16 || (rc & r->mask) != 0 || rc >= above)
			return false;
		above = rc;
	}
	return true;
}
