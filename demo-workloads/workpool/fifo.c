/* fifo.c — the mutex-protected FIFO: WP_POLICY_GLOBAL's one queue, the
 * injector of the stealing policies, and the per-worker mailboxes.
 *
 * Every acquisition tries the lock first and counts a contended acquisition
 * only when trylock fails, then blocks in the real lock — seed 000's "lock
 * waits" column, measured where it happens. `len` mirrors the ring length so
 * a worker can skip an empty queue without touching its lock's cache line in
 * write mode.
 */
#include "internal.h"

int wp__fifo_init(struct wp__fifo *f, size_t capacity)
{
	wp__mutex_init(&f->lock);
	atomic_init(&f->len, 0);
	int err = wp__ring_init(&f->ring, capacity);
	if (err)
		pthread_mutex_destroy(&f->lock);
	return err;
}

void wp__fifo_destroy(struct wp__fifo *f)
{
	wp__ring_free(&f->ring);
	pthread_mutex_destroy(&f->lock);
}

int wp__fifo_push(struct wp__fifo *f, const struct wp__src *src, size_t start,
                  size_t stride, size_t count, struct wp__ctr contended)
{
	int err = 0;
	wp__lock_counted(&f->lock, contended);
	if (wp__ring_len(&f->ring) + count > f->ring.mask + 1)
		err = wp__ring_reserve(&f->ring, count);
	if (!err) {
		for (size_t k = 0; k < count; k++)
			f->ring.slots[f->ring.tail++ & f->ring.mask] =
				wp__src_get(src, start + k * stride);
		wp__store_relaxed(&f->len, wp__ring_len(&f->ring));
	}
	wp__unlock(&f->lock);
	return err;
}

bool wp__fifo_pop(struct wp__fifo *f, wp_task *out, struct wp__ctr contended)
{
	if (wp__fifo_peek_len(f) == 0)
		return false;
	wp__lock_counted(&f->lock, contended);
	bool got = wp__ring_pop_front(&f->ring, out);
	wp__store_relaxed(&f->len, wp__ring_len(&f->ring));
	wp__unlock(&f->lock);
	return got;
}

size_t wp__fifo_pop_many(struct wp__fifo *f, wp_task *out, size_t max,
                         struct wp__ctr contended)
{
	if (wp__fifo_peek_len(f) == 0 || max == 0)
		return 0;
	size_t n = 0;
	wp__lock_counted(&f->lock, contended);
	while (n < max && wp__ring_pop_front(&f->ring, &out[n]))
		n++;
	wp__store_relaxed(&f->len, wp__ring_len(&f->ring));
	wp__unlock(&f->lock);
	return n;
}
