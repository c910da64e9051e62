/* test_deque.c — the three queues on their own, single-threaded: order,
 * growth, wrap-around, the last-element race, steal-half. The concurrent
 * cases are in stress.c. */
#include <criterion/criterion.h>

#include "internal.h"

static void marker(void *arg) { (void)arg; }
static wp_task T(uintptr_t i) { return (wp_task){ marker, (void *)i }; }
static uintptr_t id_of(wp_task t) { return (uintptr_t)t.arg; }

Test(deque, owner_lifo_thief_fifo, .timeout = 10)
{
	struct wp__deque d;
	cr_assert_eq(wp__deque_init(&d, 16, 0), 0);
	for (uintptr_t i = 0; i < 10; i++)
		cr_assert_eq(wp__deque_push_owner(&d, T(i)), 0);
	wp_task t;
	size_t seen = 0;
	cr_assert_eq(wp__deque_steal_thief(&d, &t, &seen), WP__CL_GOT);
	cr_assert_eq(id_of(t), 0, "thief takes the oldest");
	cr_assert_eq(seen, 10);
	cr_assert_eq(wp__deque_pop_owner(&d, &t), WP__CL_GOT);
	cr_assert_eq(id_of(t), 9, "owner takes the newest");
	cr_assert_eq(t.fn, marker);
	cr_assert_eq(wp__deque_peek_len(&d), 8);
	cr_assert(wp__deque_valid(&d));
	for (uintptr_t want = 8; want >= 1; want--) {
		cr_assert_eq(wp__deque_pop_owner(&d, &t), WP__CL_GOT);
		cr_assert_eq(id_of(t), want);
	}
	cr_assert_eq(wp__deque_pop_owner(&d, &t), WP__CL_EMPTY);
	cr_assert_eq(wp__deque_steal_thief(&d, &t, &seen), WP__CL_EMPTY);
	cr_assert_eq(seen, 0);
	cr_assert(wp__deque_valid(&d));
	wp__deque_destroy(&d);
}

Test(deque, growth_keeps_order_and_retires, .timeout = 10)
{
	struct wp__deque d;
	cr_assert_eq(wp__deque_init(&d, 16, 0), 0);
	wp_task t;
	/* Move top first so the copy starts mid-buffer. */
	for (uintptr_t i = 0; i < 5; i++)
		wp__deque_push_owner(&d, T(1000 + i));
	for (int i = 0; i < 5; i++)
		cr_assert_eq(wp__deque_steal_thief(&d, &t, NULL), WP__CL_GOT);
	for (uintptr_t i = 0; i < 1000; i++) {
		cr_assert_eq(wp__deque_push_owner(&d, T(i)), 0);
		cr_assert(wp__deque_valid(&d), "invalid after push %lu", (unsigned long)i);
	}
	cr_assert_eq(wp__deque_capacity(&d), 1024);
	cr_assert_eq(wp__deque_retired_count(&d), 6, "16,32,...,512 retired");
	for (uintptr_t i = 0; i < 500; i++) {
		cr_assert_eq(wp__deque_steal_thief(&d, &t, NULL), WP__CL_GOT);
		cr_assert_eq(id_of(t), i);
	}
	for (uintptr_t i = 999; i >= 500; i--) {
		cr_assert_eq(wp__deque_pop_owner(&d, &t), WP__CL_GOT);
		cr_assert_eq(id_of(t), i);
	}
	cr_assert_eq(wp__deque_pop_owner(&d, &t), WP__CL_EMPTY);
	cr_assert(wp__deque_valid(&d));
	wp__deque_destroy(&d);
}

Test(deque, indices_wrap_around, .timeout = 10)
{
	struct wp__deque d;
	cr_assert_eq(wp__deque_init(&d, 16, SIZE_MAX - 20), 0);
	wp_task t;
	uintptr_t next_steal = 0, pushed = 0;
	/* Push 2, steal 1, many times: top and bottom cross SIZE_MAX. */
	for (int round = 0; round < 100; round++) {
		wp__deque_push_owner(&d, T(pushed++));
		wp__deque_push_owner(&d, T(pushed++));
		cr_assert_eq(wp__deque_steal_thief(&d, &t, NULL), WP__CL_GOT);
		cr_assert_eq(id_of(t), next_steal++);
		cr_assert(wp__deque_valid(&d), "round %d", round);
	}
	cr_assert_lt(wp__load_relaxed(&d.top), (size_t)1000, "top wrapped past 0");
	cr_assert_eq(wp__deque_peek_len(&d), 100);
	for (uintptr_t i = pushed; i-- > next_steal;) {
		cr_assert_eq(wp__deque_pop_owner(&d, &t), WP__CL_GOT);
		cr_assert_eq(id_of(t), i);
	}
	cr_assert_eq(wp__deque_pop_owner(&d, &t), WP__CL_EMPTY);
	cr_assert_eq(wp__deque_steal_thief(&d, &t, NULL), WP__CL_EMPTY);
	cr_assert(wp__deque_valid(&d));
	wp__deque_destroy(&d);
}

Test(deque, last_element_goes_to_one_side, .timeout = 10)
{
	struct wp__deque d;
	cr_assert_eq(wp__deque_init(&d, 16, 0), 0);
	wp_task t;
	wp__deque_push_owner(&d, T(7));
	cr_assert_eq(wp__deque_pop_owner(&d, &t), WP__CL_GOT, "owner wins the CAS");
	cr_assert_eq(wp__deque_steal_thief(&d, &t, NULL), WP__CL_EMPTY);
	wp__deque_push_owner(&d, T(8));
	cr_assert_eq(wp__deque_steal_thief(&d, &t, NULL), WP__CL_GOT);
	cr_assert_eq(id_of(t), 8);
	cr_assert_eq(wp__deque_pop_owner(&d, &t), WP__CL_EMPTY);
	cr_assert(wp__deque_valid(&d));
	wp__deque_destroy(&d);
}

Test(deque, valid_rejects_broken_invariants, .timeout = 10)
{
	struct wp__deque d;
	cr_assert_eq(wp__deque_init(&d, 16, 100), 0);
	cr_assert(wp__deque_valid(&d));
	atomic_store(&d.top, 101); /* top past bottom */
	cr_assert_not(wp__deque_valid(&d));
	atomic_store(&d.top, 100);
	atomic_store(&d.bottom, 100 + 17); /* more than capacity */
	cr_assert_not(wp__deque_valid(&d));
	atomic_store(&d.bottom, 100);
	cr_assert(wp__deque_valid(&d));
	wp__deque_destroy(&d);
}

static void push_range(struct wp__deque *d, uintptr_t from, uintptr_t to)
{
	for (uintptr_t i = from; i < to; i++)
		cr_assert_eq(wp__deque_push_owner(d, T(i)), 0);
}

Test(deque, batch_steal_takes_the_oldest_half, .timeout = 10)
{
	struct wp__deque v, me;
	cr_assert_eq(wp__deque_init(&v, 16, 0), 0);
	cr_assert_eq(wp__deque_init(&me, 16, 0), 0);
	push_range(&v, 0, 10);
	wp_task t;
	size_t got = 0;
	cr_assert_eq(wp__deque_steal_batch_thief(&v, &me, 512, &t, &got), WP__CL_GOT);
	cr_assert_eq(got, 5, "half of 10");
	cr_assert_eq(id_of(t), 4, "the thief runs the newest of what it took");
	cr_assert_eq(wp__deque_peek_len(&me), 4, "the rest is visible in its deque");
	cr_assert_eq(wp__deque_peek_len(&v), 5);
	cr_assert(wp__deque_valid(&v));
	cr_assert(wp__deque_valid(&me));
	for (uintptr_t want = 4; want-- > 0;) {
		cr_assert_eq(wp__deque_pop_owner(&me, &t), WP__CL_GOT);
		cr_assert_eq(id_of(t), want, "stolen tasks keep their order");
	}
	cr_assert_eq(wp__deque_pop_owner(&me, &t), WP__CL_EMPTY);
	for (uintptr_t want = 10; want-- > 5;) {
		cr_assert_eq(wp__deque_pop_owner(&v, &t), WP__CL_GOT);
		cr_assert_eq(id_of(t), want);
	}
	/* One left: the thief takes it (half, rounded up). */
	push_range(&v, 20, 21);
	cr_assert_eq(wp__deque_steal_batch_thief(&v, &me, 512, &t, &got), WP__CL_GOT);
	cr_assert_eq(got, 1);
	cr_assert_eq(id_of(t), 20);
	cr_assert_eq(wp__deque_steal_batch_thief(&v, &me, 512, &t, &got), WP__CL_EMPTY);
	cr_assert_eq(got, 0);
	cr_assert_eq(wp__load_relaxed(&v.claiming), 0, "every claim announced was retired");
	wp__deque_destroy(&v);
	wp__deque_destroy(&me);
}

Test(deque, batch_steal_is_capped, .timeout = 10)
{
	struct wp__deque v, me;
	cr_assert_eq(wp__deque_init(&v, 16, SIZE_MAX - 3000), 0);
	cr_assert_eq(wp__deque_init(&me, 16, SIZE_MAX - 10), 0);
	push_range(&v, 0, 5000);
	wp_task t;
	size_t got = 0;
	cr_assert_eq(wp__deque_steal_batch_thief(&v, &me, 100000, &t, &got), WP__CL_GOT);
	cr_assert_eq(got, WP__CL_BATCH_MAX, "one CAS claims at most WP__CL_BATCH_MAX");
	cr_assert_eq(id_of(t), WP__CL_BATCH_MAX - 1);
	cr_assert_eq(wp__deque_steal_batch_thief(&v, &me, 3, &t, &got), WP__CL_GOT);
	cr_assert_eq(got, 3, "and at most what the caller asked for");
	cr_assert_eq(id_of(t), WP__CL_BATCH_MAX + 2);
	cr_assert_eq(wp__deque_peek_len(&me), WP__CL_BATCH_MAX - 1 + 2);
	cr_assert(wp__deque_valid(&v));
	cr_assert(wp__deque_valid(&me), "indices crossed SIZE_MAX");
	wp__deque_destroy(&v);
	wp__deque_destroy(&me);
}

Test(deque, take_moves_a_batch_into_the_private_zone, .timeout = 10)
{
	struct wp__deque d;
	cr_assert_eq(wp__deque_init(&d, 16, 0), 0);
	push_range(&d, 0, 300);
	wp_task t;
	cr_assert_eq(wp__deque_pop_owner(&d, &t), WP__CL_GOT);
	cr_assert_eq(id_of(t), 299);
	cr_assert_eq(wp__deque_peek_len(&d), 300 - WP__CL_TAKE_MAX,
	             "one take hid WP__CL_TAKE_MAX tasks from thieves");
	cr_assert(wp__deque_valid(&d));
	/* A push publishes the private zone with the new task. */
	push_range(&d, 1000, 1001);
	cr_assert_eq(wp__deque_peek_len(&d), 300);
	cr_assert_eq(wp__deque_pop_owner(&d, &t), WP__CL_GOT);
	cr_assert_eq(id_of(t), 1000);
	for (uintptr_t want = 299; want-- > 0;) {
		cr_assert_eq(wp__deque_pop_owner(&d, &t), WP__CL_GOT);
		cr_assert_eq(id_of(t), want, "LIFO across takes and the private zone");
		cr_assert(wp__deque_valid(&d));
	}
	cr_assert_eq(wp__deque_pop_owner(&d, &t), WP__CL_EMPTY);
	/* Short deques take one at a time: nothing is hidden. */
	push_range(&d, 0, 15);
	cr_assert_eq(wp__deque_pop_owner(&d, &t), WP__CL_GOT);
	cr_assert_eq(wp__deque_peek_len(&d), 14);
	wp__deque_destroy(&d);
}

Test(deque, take_after_thieves_took_most_keeps_the_rest_visible, .timeout = 10)
{
	struct wp__deque d, me;
	cr_assert_eq(wp__deque_init(&d, 16, 0), 0);
	cr_assert_eq(wp__deque_init(&me, 16, 0), 0);
	push_range(&d, 0, 300);
	wp_task t;
	size_t got;
	/* Halves: 150, 75, 38, 19 -> top = 282, unknown to the owner. */
	for (int i = 0; i < 4; i++)
		cr_assert_eq(wp__deque_steal_batch_thief(&d, &me, WP__CL_BATCH_MAX, &t, &got),
		             WP__CL_GOT);
	cr_assert_eq(wp__load_relaxed(&d.top), 282);
	/* The owner meant to take 32 (it last saw top = 0) and finds top
	 * past its new bottom: it takes those above top, leaves top visible. */
	cr_assert_eq(wp__deque_pop_owner(&d, &t), WP__CL_GOT);
	cr_assert_eq(id_of(t), 299);
	cr_assert_eq(wp__deque_peek_len(&d), 1);
	cr_assert(wp__deque_valid(&d));
	for (uintptr_t want = 299; want-- > 282;) {
		cr_assert_eq(wp__deque_pop_owner(&d, &t), WP__CL_GOT);
		cr_assert_eq(id_of(t), want);
	}
	cr_assert_eq(wp__deque_pop_owner(&d, &t), WP__CL_EMPTY);
	cr_assert(wp__deque_valid(&d));
	wp__deque_destroy(&d);
	wp__deque_destroy(&me);
}

Test(deque, a_thief_that_finds_nothing_asks_the_owner_to_share, .timeout = 10)
{
	struct wp__deque d, me;
	cr_assert_eq(wp__deque_init(&d, 16, 0), 0);
	cr_assert_eq(wp__deque_init(&me, 16, 0), 0);
	push_range(&d, 0, 300);
	wp_task t;
	size_t got;
	cr_assert_eq(wp__deque_pop_owner(&d, &t), WP__CL_GOT);
	size_t hidden = WP__CL_TAKE_MAX - 1;
	while (wp__deque_steal_batch_thief(&d, &me, WP__CL_BATCH_MAX, &t, &got) == WP__CL_GOT)
		;
	cr_assert(wp__deque_wanted(&d), "an empty steal set wanted");
	cr_assert_eq(wp__deque_share_owner(&d), hidden);
	cr_assert_not(wp__deque_wanted(&d), "sharing clears it");
	cr_assert_eq(wp__deque_peek_len(&d), hidden);
	cr_assert_eq(wp__deque_steal_thief(&d, &t, NULL), WP__CL_GOT);
	cr_assert_eq(id_of(t), 300 - WP__CL_TAKE_MAX, "the oldest of the shared ones");
	cr_assert_eq(wp__deque_share_owner(&d), 0, "nothing left to share");
	cr_assert(wp__deque_valid(&d));
	wp__deque_destroy(&d);
	wp__deque_destroy(&me);
}

Test(deque, near_top_take_waits_for_claims_then_takes_the_oldest, .timeout = 10)
{
	struct wp__deque d;
	cr_assert_eq(wp__deque_init(&d, 16, 0), 0);
	push_range(&d, 0, 10);
	wp_task t;
	/* A batch claim announced and never finished (a preempted thief):
	 * near top the owner cannot tell which elements it covers, so after
	 * its spin it takes from the top with a CAS, like a thief. */
	atomic_store(&d.claiming, 1);
	cr_assert_eq(wp__deque_pop_owner(&d, &t), WP__CL_GOT);
	cr_assert_eq(id_of(t), 0, "fallback: the oldest, by CAS");
	cr_assert_eq(wp__deque_peek_len(&d), 9, "bottom published back");
	atomic_store(&d.claiming, 0);
	cr_assert_eq(wp__deque_pop_owner(&d, &t), WP__CL_GOT);
	cr_assert_eq(id_of(t), 9, "no claim in flight: newest again");
	cr_assert(wp__deque_valid(&d));
	/* Far from top a claim in flight does not matter: no claim of at
	 * most WP__CL_BATCH_MAX reaches the owner's end. */
	push_range(&d, 100, 100 + 2 * WP__CL_BATCH_MAX);
	atomic_store(&d.claiming, 1);
	cr_assert_eq(wp__deque_pop_owner(&d, &t), WP__CL_GOT);
	cr_assert_eq(id_of(t), 100 + 2 * WP__CL_BATCH_MAX - 1);
	atomic_store(&d.claiming, 0);
	wp__deque_destroy(&d);
}

Test(deque, batch_push_publishes_once_and_grows_once, .timeout = 10)
{
	struct wp__deque d;
	cr_assert_eq(wp__deque_init(&d, 16, SIZE_MAX - 100), 0);
	struct wp__src src = { NULL, marker, 0 };
	cr_assert_eq(wp__deque_push_many_owner(&d, &src, 0, 2, 1000), 0);
	cr_assert_eq(wp__deque_peek_len(&d), 1000);
	cr_assert_eq(wp__deque_capacity(&d), 1024);
	cr_assert_eq(wp__deque_retired_count(&d), 1, "one reservation, not six doublings");
	cr_assert(wp__deque_valid(&d));
	wp_task t;
	cr_assert_eq(wp__deque_steal_thief(&d, &t, NULL), WP__CL_GOT);
	cr_assert_eq(id_of(t), 0);
	cr_assert_eq(wp__deque_pop_owner(&d, &t), WP__CL_GOT);
	cr_assert_eq(id_of(t), 2 * 999, "stride kept");
	wp__deque_destroy(&d);
}

static struct wp__ctr ctr(_Atomic uint64_t *c) { return (struct wp__ctr){ c, true }; }

Test(ldeque, owner_back_thief_takes_half_from_front, .timeout = 10)
{
	struct wp__ldeque d;
	_Atomic uint64_t contended = 0;
	cr_assert_eq(wp__ldeque_init(&d, 4), 0);
	wp_task tasks[5] = { T(0), T(1), T(2), T(3), T(4) };
	struct wp__src src = { tasks, NULL, 0 };
	cr_assert_eq(wp__ldeque_push(&d, &src, 0, 1, 5, ctr(&contended)), 0);
	wp_task *scratch = NULL;
	size_t cap = 0;
	size_t k = wp__ldeque_steal_half_thief(&d, &scratch, &cap, ctr(&contended));
	cr_assert_eq(k, 3, "ceil(5 / 2)");
	for (size_t i = 0; i < k; i++)
		cr_assert_eq(id_of(scratch[i]), i, "oldest first");
	wp_task t;
	cr_assert(wp__ldeque_pop_owner(&d, &t, ctr(&contended)));
	cr_assert_eq(id_of(t), 4);
	cr_assert_eq(wp__ldeque_peek_len(&d), 1);
	k = wp__ldeque_steal_half_thief(&d, &scratch, &cap, ctr(&contended));
	cr_assert_eq(k, 1, "a single task is stealable too");
	cr_assert_eq(id_of(scratch[0]), 3);
	cr_assert_not(wp__ldeque_pop_owner(&d, &t, ctr(&contended)));
	cr_assert_eq(wp__ldeque_steal_half_thief(&d, &scratch, &cap, ctr(&contended)), 0);
	cr_assert_eq(atomic_load(&contended), 0, "nobody else held the lock");
	free(scratch);
	wp__ldeque_destroy(&d);
}

Test(fifo, order_batches_and_range, .timeout = 10)
{
	struct wp__fifo f;
	_Atomic uint64_t contended = 0;
	cr_assert_eq(wp__fifo_init(&f, 2), 0);
	struct wp__src range = { NULL, marker, 100 };
	cr_assert_eq(wp__fifo_push(&f, &range, 0, 2, 50, ctr(&contended)), 0,
	             "stride 2: 100, 102, ...");
	cr_assert_eq(wp__fifo_peek_len(&f), 50);
	wp_task out[64];
	cr_assert_eq(wp__fifo_pop_many(&f, out, 10, ctr(&contended)), 10);
	for (int i = 0; i < 10; i++)
		cr_assert_eq(id_of(out[i]), 100 + 2 * (uintptr_t)i);
	wp_task t;
	cr_assert(wp__fifo_pop(&f, &t, ctr(&contended)));
	cr_assert_eq(id_of(t), 120);
	cr_assert_eq(wp__fifo_pop_many(&f, out, 64, ctr(&contended)), 39);
	cr_assert_not(wp__fifo_pop(&f, &t, ctr(&contended)));
	wp__fifo_destroy(&f);
}
