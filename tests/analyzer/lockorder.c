/* lockorder.c — lock-order cycles and deadlocks, found by `convoy run` from
 * the shim's held sets, edges and blocked waits. Every program here is
 * deterministic: a deadlock is built with a barrier, a latent cycle with
 * phases that never overlap; nothing depends on timing. */
#include <string.h>

#include "testutil.h"

static json_object *run_json(const char *const argv[])
{
	struct tu_proc p;
	struct tu_opts o = { .timeout_s = 60 };
	tu_run(&p, &o, argv);
	json_object *root = json_tokener_parse(p.out);
	cr_assert(root, "no JSON report (exit %d):\n%s\n%s", p.code, p.out, p.err);
	return root;
}

static size_t count_kind(json_object *root, const char *kind)
{
	json_object *f = tu_array(root, "findings");
	size_t n = 0;
	for (size_t i = 0; i < json_object_array_length(f); i++)
		n += !strcmp(tu_str(json_object_array_get_idx(f, i), "kind"), kind);
	return n;
}

static json_object *first_finding(json_object *root)
{
	json_object *f = tu_array(root, "findings");
	cr_assert(json_object_array_length(f) > 0, "no findings: %s", json_object_to_json_string(root));
	return json_object_array_get_idx(f, 0);
}

Test(lockorder, the_deadlock_demo_in_opposite_order_is_a_deadlock_with_its_cycle, .timeout = 60)
{
	json_object *root = run_json((const char *[]){ tu_convoy(), "run", "--json", "-o", tu_tmpdir(), "--",
						       BUILD_DIR "/demos/deadlock", "--workers", "2", "--timeout-ms",
						       "300", NULL });
	json_object *x = first_finding(root);
	cr_assert_str_eq(tu_str(x, "kind"), "deadlock");
	json_object *cycle = tu_array(x, "cycle");
	cr_assert_eq(json_object_array_length(cycle), 2);
	const char *a = tu_str(json_object_array_get_idx(cycle, 0), "holds");
	const char *b = tu_str(json_object_array_get_idx(cycle, 1), "holds");
	cr_assert((!strcmp(a, "L1") && !strcmp(b, "L2")) || (!strcmp(a, "L2") && !strcmp(b, "L1")), "%s, %s", a, b);
	cr_assert(json_object_array_length(tu_array(json_object_array_get_idx(cycle, 0), "wants_stack")) > 0);
}

Test(lockorder, the_deadlock_demo_fixed_has_no_cycle, .timeout = 60)
{
	json_object *root = run_json((const char *[]){ tu_convoy(), "run", "--json", "-o", tu_tmpdir(), "--",
						       BUILD_DIR "/demos/deadlock", "--workers", "3", "--fixed", NULL });
	cr_assert_eq(count_kind(root, "deadlock"), 0);
	cr_assert_eq(count_kind(root, "lock-order-cycle"), 0);
}

Test(lockorder, opposite_orders_in_phases_are_a_lock_order_cycle_ranked_first, .timeout = 60)
{
	json_object *root = run_json((const char *[]){ tu_convoy(), "run", "--json", "-o", tu_tmpdir(), "--",
						       tu_prog("order_phases"), "4", NULL });
	json_object *x = first_finding(root);
	cr_assert_str_eq(tu_str(x, "kind"), "lock-order-cycle");
	cr_assert(tu_bool(x, "correctness"));
	cr_assert_eq(json_object_array_length(tu_array(x, "cycle")), 2);
	cr_assert_eq(count_kind(root, "deadlock"), 0, "the run completed: no deadlock");
}

Test(lockorder, three_locks_in_a_ring_are_a_3_cycle, .timeout = 60)
{
	json_object *root = run_json((const char *[]){ tu_convoy(), "run", "--json", "-o", tu_tmpdir(), "--",
						       tu_prog("lock_ring"), "3", "--phased", NULL });
	json_object *x = first_finding(root);
	cr_assert_str_eq(tu_str(x, "kind"), "lock-order-cycle");
	cr_assert_eq(json_object_array_length(tu_array(x, "cycle")), 3);
}

Test(lockorder, a_ring_that_hangs_is_a_deadlock_of_three_threads, .timeout = 60)
{
	json_object *root = run_json((const char *[]){ tu_convoy(), "run", "--json", "--timeout", "1", "-o",
						       tu_tmpdir(), "--", tu_prog("lock_ring"), "3", NULL });
	json_object *x = first_finding(root);
	cr_assert_str_eq(tu_str(x, "kind"), "deadlock");
	cr_assert_eq(json_object_array_length(tu_array(x, "cycle")), 3);
	cr_assert(tu_bool(tu_get(root, "process"), "timed_out"));
}

Test(lockorder, a_ring_in_one_order_has_no_cycle, .timeout = 60)
{
	json_object *root = run_json((const char *[]){ tu_convoy(), "run", "--json", "-o", tu_tmpdir(), "--",
						       tu_prog("lock_ring"), "3", "--fixed", NULL });
	cr_assert_eq(count_kind(root, "lock-order-cycle"), 0);
}

Test(lockorder, recursive_relocks_rwlock_readers_and_trylock_back_off_make_no_cycle, .timeout = 60)
{
	json_object *root = run_json((const char *[]){ tu_convoy(), "run", "--json", "-o", tu_tmpdir(), "--",
						       tu_prog("order_benign"), NULL });
	cr_assert_eq(count_kind(root, "lock-order-cycle"), 0, "%s",
		     json_object_to_json_string(tu_array(root, "findings")));
	cr_assert_eq(count_kind(root, "deadlock"), 0);
}

Test(lockorder, the_watchdog_stops_a_deadlocked_run_and_it_is_explained, .timeout = 60)
{
	struct tu_proc p;
	struct tu_opts o = { .timeout_s = 60, .env = (const char *const[]){ "CONVOY_WATCHDOG=1", NULL } };
	tu_run(&p, &o, (const char *[]){ tu_convoy(), "run", "--json", "-o", tu_tmpdir(), "--", tu_prog("lock_ring"),
					 "2", NULL });
	json_object *root = json_tokener_parse(p.out);
	cr_assert(root, "no JSON report (exit %d):\n%s\n%s", p.code, p.out, p.err);
	cr_assert(tu_bool(tu_get(root, "process"), "hung"));
	cr_assert(!tu_bool(tu_get(root, "process"), "timed_out"));
	cr_assert(tu_bool(tu_get(root, "process"), "hang_stopped"), "the default stops a proven deadlock");
	cr_assert_str_eq(tu_str(first_finding(root), "kind"), "deadlock");
}

/* A thread cancelled in sem_wait while it held m, and main then locking m:
 * a hang, but the ended thread waits for nothing (its wait was once left
 * in the profile, and this was a deadlock m -> s -> m through it). */
Test(lockorder, a_thread_cancelled_in_a_wait_waits_for_nothing, .timeout = 60)
{
	struct tu_proc p;
	struct tu_opts o = { .timeout_s = 60, .env = (const char *const[]){ "CONVOY_WATCHDOG=1", NULL } };
	tu_run(&p, &o, (const char *[]){ tu_convoy(), "run", "--json", "--on-hang", "stop", "-o", tu_tmpdir(), "--",
					 tu_prog("cancelled_holder"), NULL });
	json_object *root = json_tokener_parse(p.out);
	cr_assert(root, "no JSON report (exit %d):\n%s\n%s", p.code, p.out, p.err);
	cr_assert(tu_bool(tu_get(root, "process"), "hung"));
	cr_assert_eq(count_kind(root, "deadlock"), 0, "%s", json_object_to_json_string(tu_array(root, "findings")));
	json_object_put(root);
}

/* The edge of finding x whose held side is `holds`. */
static json_object *edge_holding(json_object *x, const char *holds)
{
	json_object *cycle = tu_array(x, "cycle");
	for (size_t i = 0; i < json_object_array_length(cycle); i++)
		if (!strcmp(tu_str(json_object_array_get_idx(cycle, i), "holds"), holds))
			return json_object_array_get_idx(cycle, i);
	cr_assert_fail("no edge holds %s: %s", holds, json_object_to_json_string(x));
	return NULL;
}

static json_object *cycle_through(json_object *root, const char *lock)
{
	json_object *f = tu_array(root, "findings");
	for (size_t i = 0; i < json_object_array_length(f); i++) {
		json_object *x = json_object_array_get_idx(f, i);
		json_object *objects = tu_array(x, "objects");
		for (size_t k = 0; !strcmp(tu_str(x, "kind"), "lock-order-cycle") && k < json_object_array_length(objects); k++)
			if (!strcmp(json_object_get_string(json_object_array_get_idx(objects, k)), lock))
				return x;
	}
	cr_assert_fail("no lock-order-cycle through %s: %s", lock, json_object_to_json_string(root));
	return NULL;
}

static const char *frame(json_object *edge, const char *key, size_t i)
{
	json_object *frames = tu_array(edge, key);
	cr_assert(i < json_object_array_length(frames), "%s has no frame %zu: %s", key, i,
		  json_object_to_json_string(edge));
	return json_object_get_string(json_object_array_get_idx(frames, i));
}

Test(lockorder, an_edge_shows_the_stack_its_held_lock_was_taken_in, .timeout = 60)
{
	json_object *root = run_json((const char *[]){ tu_convoy(), "run", "--json", "-o", tu_tmpdir(), "--",
						       tu_prog("order_helpers"), NULL });
	json_object *ab = edge_holding(cycle_through(root, "lock_a"), "lock_a");
	cr_assert(!strncmp(frame(ab, "holds_stack", 0), "outer (order_helpers.c:", 23), "%s",
		  json_object_to_json_string(ab));
	cr_assert(!strncmp(frame(ab, "holds_stack", 1), "nested (order_helpers.c:", 24),
		  "outer's caller, not inner: %s", json_object_to_json_string(ab));
	cr_assert(!tu_bool(ab, "holds_stack_partial"), "%s", json_object_to_json_string(ab));
	cr_assert(!strncmp(frame(ab, "wants_stack", 0), "inner (order_helpers.c:", 23), "%s",
		  json_object_to_json_string(ab));

	json_object *cd = edge_holding(cycle_through(root, "lock_c"), "lock_c");
	cr_assert(!strncmp(frame(cd, "holds_stack", 0), "take (order_helpers.c:", 22), "%s",
		  json_object_to_json_string(cd));
	cr_assert(tu_bool(cd, "holds_stack_partial"), "take had returned: %s", json_object_to_json_string(cd));
}

Test(lockorder, a_cycle_of_twelve_locks_is_found_whole, .timeout = 60)
{
	json_object *root = run_json((const char *[]){ tu_convoy(), "run", "--json", "-o", tu_tmpdir(), "--",
						       tu_prog("order_ring"), "12", NULL });
	json_object *x = first_finding(root);
	cr_assert_str_eq(tu_str(x, "kind"), "lock-order-cycle", "%s", json_object_to_json_string(x));
	cr_assert_eq(json_object_get_int(tu_get(tu_get(x, "evidence"), "locks")), 12, "%s", tu_str(x, "summary"));
	cr_assert_eq(json_object_array_length(tu_array(x, "cycle")), 12, "every edge with its stacks: %s",
		     tu_str(x, "summary"));
	cr_assert(!strstr(tu_str(x, "summary"), "in all"), "%s", tu_str(x, "summary"));
	cr_assert(json_object_is_type(tu_get(tu_get(root, "lock_order"), "cycle_search_stopped"), json_type_null));
}

Test(lockorder, a_cycle_longer_than_the_edges_a_finding_keeps_says_how_long, .timeout = 60)
{
	json_object *root = run_json((const char *[]){ tu_convoy(), "run", "--json", "-o", tu_tmpdir(), "--",
						       tu_prog("order_ring"), "40", NULL });
	json_object *x = first_finding(root);
	cr_assert_str_eq(tu_str(x, "kind"), "lock-order-cycle", "%s", json_object_to_json_string(x));
	cr_assert_eq(json_object_get_int(tu_get(tu_get(x, "evidence"), "locks")), 40, "%s", tu_str(x, "summary"));
	cr_assert(strstr(tu_str(x, "summary"), "(40 in all)"), "%s", tu_str(x, "summary"));
}

Test(lockorder, a_cycle_search_that_hits_its_bound_says_so, .timeout = 60)
{
	/* 8 locks, every ordered pair taken: thousands of cycles, more than
	 * the search keeps. */
	const char *dir = tu_tmpdir();
	json_object *root = run_json((const char *[]){ tu_convoy(), "run", "--json", "-o", dir, "--",
						       tu_prog("order_ring"), "8", "--dense", NULL });
	json_object *stopped = tu_get(tu_get(root, "lock_order"), "cycle_search_stopped");
	cr_assert(stopped && strstr(json_object_get_string(stopped), "search stopped at 16 cycles"), "%s",
		  json_object_to_json_string(tu_get(root, "lock_order")));
	cr_assert_eq(count_kind(root, "lock-order-cycle"), 16);
	struct tu_proc p;
	struct tu_opts o = { .timeout_s = 60 };
	tu_run(&p, &o, (const char *[]){ tu_convoy(), "report", tu_only_profile(dir), NULL });
	cr_assert(strstr(p.out, "Caution: the lock-order cycle search stopped at 16 cycles: more may exist"), "%s",
		  p.out);
}
