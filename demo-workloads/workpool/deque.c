/* deque.c — the Chase-Lev work-stealing deque in C11 atomics.
 *
 * Algorithm: D. Chase and Y. Lev, "Dynamic Circular Work-Stealing Deque",
 * SPAA 2005; memory orders exactly as in N. M. Lê, A. Pop, A. Cohen and
 * F. Zappa Nardelli, "Correct and Efficient Work-Stealing for Weak Memory
 * Models", PPoPP 2013, Figure 1 (cited below as [LPCZ]). Their proof covers
 * push/take/steal with these orders; the resize and reclamation scheme here
 * is the one their paper leaves to the implementation (explained below).
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
 * Growth and reclamation. When push finds the buffer full it allocates one
 * twice as large, copies [top, bottom) into it, and publishes it with a
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
 * relaxed store; take is a store, one seq_cst fence (mfence on x86) and a
 * load, with a CAS only on the last element. Thieves and owner touch
 * separate cache lines except for that last-element race: top and bottom
 * live 64 bytes apart.
 */
#include <string.h>

#include "internal.h"

static inline bool wp__idx_lt(size_t a, size_t b) { return (ptrdiff_t)(a - b) < 0; }
static inline bool wp__idx_le(size_t a, size_t b) { return (ptrdiff_t)(a - b) <= 0; }

static struct wp__cl_buf *wp__cl_buf_new(size_t capacity)
{
	struct wp__cl_buf *b =
		malloc(sizeof *b + capacity * sizeof(struct wp__cl_slot));
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
	atomic_init(&d->bottom, start);
	atomic_init(&d->buf, b);
	d->retired = NULL;
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
 * the old one), the live slots copied over, the old one retired. */
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

/* Owner only: make room for n more tasks in one step, so a batch of a
 * million pushes does not double (and copy, and fault in) the buffer twenty
 * times over. */
int wp__deque_reserve_owner(struct wp__deque *d, size_t n)
{
	size_t b = wp__load_relaxed(&d->bottom);
	size_t top = wp__load_acquire(&d->top);   /* as in push */
	struct wp__cl_buf *a = wp__load_relaxed(&d->buf);
	size_t need = b - top + n, cap = a->mask + 1;
	if (need <= cap)
		return 0;
	while (cap < need)
		cap *= 2;
	return wp__deque_grow_to(d, a, top, b, cap) ? 0 : -ENOMEM;
}

int wp__deque_push_owner(struct wp__deque *d, wp_task t)
{
	/* [LPCZ push] b: relaxed (only the owner writes bottom). */
	size_t b = wp__load_relaxed(&d->bottom);
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
	WP_ASSERT_EXPENSIVE(wp__deque_valid(d));
	/* [LPCZ push] fence(release); store(bottom, relaxed): orders the slot
	 * (and the payload behind it) before the bottom that exposes it. */
	wp__fence_release_store_relaxed(&d->bottom, b + 1);
	return 0;
}

int wp__deque_pop_owner(struct wp__deque *d, wp_task *out)
{
	/* [LPCZ take] b = bottom - 1, relaxed; buffer relaxed. */
	size_t b = wp__load_relaxed(&d->bottom) - 1;
	struct wp__cl_buf *a = wp__load_relaxed(&d->buf);
	/* [LPCZ take] store(bottom, b, relaxed) ... */
	wp__store_relaxed(&d->bottom, b);
	/* ... fence(seq_cst): orders that store before the load of top below,
	 * against the thief's "load top; fence; load bottom". Without it the
	 * owner and a thief could both take the last element. */
	wp__fence_seq_cst();
	/* [LPCZ take] top: relaxed (the fence supplies the ordering). */
	size_t t = wp__load_relaxed(&d->top);
	if (wp__idx_le(t, b)) {
		/* Not empty. */
		*out = wp__slot_load(&a->slots[b & a->mask]);
		if (t != b)
			return WP__CL_GOT;
		/* The last element: race thieves for it with a CAS on top
		 * [LPCZ take: seq_cst success, relaxed failure]. */
		bool won = wp__cas_seq_cst(&d->top, &t, t + 1);
		/* [LPCZ take] restore bottom = b + 1, relaxed. */
		wp__store_relaxed(&d->bottom, b + 1);
		return won ? WP__CL_GOT : WP__CL_LOST;
	}
	/* Empty: restore bottom [LPCZ take, relaxed]. */
	wp__store_relaxed(&d->bottom, b + 1);
	return WP__CL_EMPTY;
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

size_t wp__deque_peek_len(struct wp__deque *d)
{
	/* A hint only: relaxed loads, bottom first so that a concurrent take
	 * (which lowers bottom briefly) rarely shows a phantom element. */
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
	struct wp__cl_buf *a = wp__load_relaxed(&d->buf);
	if (!a)
		return false;
	size_t cap = a->mask + 1;
	if (cap < 16 || (cap & a->mask) != 0)
		return false;
	if (!wp__idx_le(t, b))
		return false;
	if (b - t > cap)
		return false;
	/* Retired buffers: newest first, each half the size of the one that
	 * replaced it. */
	size_t expect = cap;
	for (struct wp__cl_buf *r = d->retired; r; r = r->retired_next) {
		if (r->mask + 1 != expect / 2)
			return false;
		expect = r->mask + 1;
	}
	return true;
}
