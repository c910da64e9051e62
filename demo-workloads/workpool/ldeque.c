/* ldeque.c — the per-worker deque behind a mutex (WP_POLICY_LOCKED), seed
 * 000's scene 02.
 *
 * The owner pushes and pops at the back (newest first, warm in its cache);
 * a thief takes half of the queue from the front (the oldest tasks), so the
 * next famine is far away and steals stay rare. Normally only the owner takes
 * the lock, so it is uncontended: the point of the design is not a faster
 * lock but one nobody else needs. Trylock first, count a failure, then lock.
 */
#include "internal.h"

int wp__ldeque_init(struct wp__ldeque *d, size_t capacity)
{
	wp__mutex_init(&d->lock);
	atomic_init(&d->len, 0);
	int err = wp__ring_init(&d->ring, capacity);
	if (err)
		pthread_mutex_destroy(&d->lock);
	return err;
}

void wp__ldeque_destroy(struct wp__ldeque *d)
{
	wp__ring_free(&d->ring);
	pthread_mutex_destroy(&d->lock);
}

int wp__ldeque_push(struct wp__ldeque *d, const struct wp__src *src,
                    size_t start, size_t stride, size_t count,
                    struct wp__ctr contended)
{
	int err = 0;
	wp__lock_counted(&d->lock, contended);
	if (wp__ring_len(&d->ring) + count > d->ring.mask + 1)
		err = wp__ring_reserve(&d->ring, count);
	if (!err) {
		for (size_t k = 0; k < count; k++)
			d->ring.slots[d->ring.tail++ & d->ring.mask] =
				wp__src_get(src, start + k * stride);
		wp__store_relaxed(&d->len, wp__ring_len(&d->ring));
	}
	wp__unlock(&d->lock);
	return err;
}

bool wp__ldeque_pop_owner(struct wp__ldeque *d, wp_task *out,
                          struct wp__ctr contended)
{
	if (wp__ldeque_peek_len(d) == 0)
		return false;
	wp__lock_counted(&d->lock, contended);
	bool got = wp__ring_pop_back(&d->ring, out);
	wp__store_relaxed(&d->len, wp__ring_len(&d->ring));
	wp__unlock(&d->lock);
	return got;
}

size_t wp__ldeque_steal_half_thief(struct wp__ldeque *d, wp_task **scratch,
                                   size_t *scratch_cap,
                                   struct wp__ctr contended)
{
	if (wp__ldeque_peek_len(d) == 0)
		return 0;
	wp__lock_counted(&d->lock, contended);
	size_t len = wp__ring_len(&d->ring);
	size_t take = (len + 1) / 2;
	if (take > *scratch_cap) {
		size_t cap = *scratch_cap ? *scratch_cap : 64;
		while (cap < take)
			cap *= 2;
		wp_task *s = realloc(*scratch, cap * sizeof *s);
		if (!s) {
			/* Out of memory: steal what fits (possibly nothing). */
			take = *scratch_cap;
		} else {
			*scratch = s;
			*scratch_cap = cap;
		}
	}
	for (size_t i = 0; i < take; i++)
		(*scratch)[i] = d->ring.slots[d->ring.head++ & d->ring.mask];
	wp__store_relaxed(&d->len, wp__ring_len(&d->ring));
	wp__unlock(&d->lock);
	return take;
}
