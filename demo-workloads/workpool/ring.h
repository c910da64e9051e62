/* ring.h — a growable ring of tasks with no synchronisation of its own.
 *
 * The storage under the global queue, the injector, the mailboxes (fifo.c) and
 * the locked deques (ldeque.c); the caller holds the lock that protects it.
 * head and tail are free-running indices (tail - head = length), the capacity
 * is a power of two and doubles when full.
 */
#ifndef WP_RING_H
#define WP_RING_H

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "workpool.h"

/* Task arrays of a few megabytes (a million queued tasks) are filled by first
 * touches: with 4 KiB pages that is a page fault per 256 tasks, which on the
 * development VM cost more than the pushes themselves. Large arrays are
 * 2 MiB-aligned and offered to transparent huge pages (512× fewer faults
 * where the kernel has them, harmless where it does not). free() releases
 * them as usual. */
#define WP__HUGE_PAGE ((size_t)2 << 20)

static inline void *wp__tasks_alloc(size_t bytes)
{
	if (bytes < WP__HUGE_PAGE)
		return malloc(bytes);
	bytes = (bytes + WP__HUGE_PAGE - 1) & ~(WP__HUGE_PAGE - 1);
	void *p = aligned_alloc(WP__HUGE_PAGE, bytes);
	if (p)
		(void)madvise(p, bytes, MADV_HUGEPAGE);
	return p;
}

struct wp__ring {
	wp_task *slots;
	size_t mask;  /* capacity - 1 */
	size_t head;  /* front: FIFO pops, thieves */
	size_t tail;  /* back: pushes, owner pops */
};

static inline size_t wp__ring_len(const struct wp__ring *r)
{
	return r->tail - r->head;
}

static inline int wp__ring_init(struct wp__ring *r, size_t capacity)
{
	size_t cap = 16;
	while (cap < capacity)
		cap <<= 1;
	r->slots = wp__tasks_alloc(cap * sizeof *r->slots);
	if (!r->slots)
		return -ENOMEM;
	r->mask = cap - 1;
	r->head = r->tail = 0;
	return 0;
}

static inline void wp__ring_free(struct wp__ring *r)
{
	free(r->slots);
	r->slots = NULL;
}

/* Makes room for `more` tasks; the cold path of every push. */
static __attribute__((noinline, cold, unused)) int
wp__ring_reserve(struct wp__ring *r, size_t more)
{
	size_t len = wp__ring_len(r), cap = r->mask + 1, ncap = cap;
	while (ncap - len < more)
		ncap <<= 1;
	if (ncap == cap)
		return 0;
	wp_task *slots = wp__tasks_alloc(ncap * sizeof *slots);
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++)
		slots[i] = r->slots[(r->head + i) & r->mask];
	free(r->slots);
	r->slots = slots;
	r->mask = ncap - 1;
	r->head = 0;
	r->tail = len;
	return 0;
}

static inline int wp__ring_push_back(struct wp__ring *r, wp_task t)
{
	if (__builtin_expect(wp__ring_len(r) > r->mask, 0)) {
		int err = wp__ring_reserve(r, 1);
		if (err)
			return err;
	}
	r->slots[r->tail++ & r->mask] = t;
	return 0;
}

static inline bool wp__ring_pop_front(struct wp__ring *r, wp_task *out)
{
	if (r->head == r->tail)
		return false;
	*out = r->slots[r->head++ & r->mask];
	return true;
}

static inline bool wp__ring_pop_back(struct wp__ring *r, wp_task *out)
{
	if (r->head == r->tail)
		return false;
	*out = r->slots[--r->tail & r->mask];
	return true;
}

#endif /* WP_RING_H */
