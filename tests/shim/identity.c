/* Lock identity is address plus generation: destroy (or a second init) ends
 * one lock; the next use of the address is a new one, with its own counts. */
#include <string.h>

#include "testutil.h"

Test(identity, destroy_and_reinit_two_generations, .timeout = 30)
{
	json_object *r;
	const char *out = tu_same_behaviour("ident_reinit", &r);
	cr_assert(tu_has_line(out, "destroy: 0 OK") && tu_has_line(out, "init: 0 OK"), "output:\n%s", out);
	json_object *g0 = tu_lock_gen(r, "gen_lock", 0), *g1 = tu_lock_gen(r, "gen_lock", 1);
	cr_assert(g0 && g1, "gen_lock generation %s missing from locks[]: %s", g0 ? "1" : "0",
		  json_object_to_json_string(tu_array(r, "locks")));
	TU_STREQ(tu_str(g0, "name"), "gen_lock", "generation 0's name");
	TU_STREQ(tu_str(g0, "addr"), tu_str(g1, "addr"), "the two generations' addresses");
	TU_EQ(tu_int(g0, "acquisitions"), 400, "gen_lock generation 0 acquisitions (main 300 + worker 100)");
	TU_EQ(tu_int(g1, "acquisitions"), 900, "gen_lock generation 1 acquisitions (main 700 + worker 200)");
	cr_assert(tu_bool(g0, "destroyed"), "generation 0 is not marked destroyed");
	cr_assert(!tu_bool(g1, "destroyed"), "generation 1 is marked destroyed");
	TU_EQ(json_object_array_length(tu_array(g0, "threads")), 2, "threads in generation 0's split");
	TU_EQ(json_object_array_length(tu_array(g1, "threads")), 2, "threads in generation 1's split");
	TU_EQ(tu_split_sum(g0, "acquisitions"), 400, "generation 0 split sum");
	TU_EQ(tu_split_sum(g1, "acquisitions"), 900, "generation 1 split sum");
	cr_assert(!tu_lock_gen(r, "gen_lock", 2), "a third generation of gen_lock");

	json_object *t0 = tu_lock_gen(r, "twice_lock", 0), *t1 = tu_lock_gen(r, "twice_lock", 1);
	cr_assert(t0 && t1, "twice_lock (initialised twice) generation %s missing", t0 ? "1" : "0");
	TU_EQ(tu_int(t0, "acquisitions"), 10, "twice_lock generation 0 acquisitions");
	TU_EQ(tu_int(t1, "acquisitions"), 20, "twice_lock generation 1 acquisitions");
}

Test(identity, heap_mutex_at_reused_address, .timeout = 30)
{
	json_object *r;
	const char *out = tu_same_behaviour("ident_heap", &r);
	cr_assert(tu_has_line(out, "same address: yes"),
		  "malloc did not hand back the same address, the test proves nothing:\n%s", out);
	/* Exactly one address holds two locks: generations 0 and 1. */
	json_object *locks = tu_array(r, "locks"), *gen[2] = { NULL, NULL };
	size_t n = json_object_array_length(locks), pairs = 0;
	for (size_t i = 0; i < n; i++) {
		json_object *a = json_object_array_get_idx(locks, i);
		for (size_t k = 0; k < n; k++) {
			json_object *b = json_object_array_get_idx(locks, k);
			if (k == i || strcmp(tu_str(a, "addr"), tu_str(b, "addr")) != 0 ||
			    tu_int(a, "generation") != 0 || tu_int(b, "generation") != 1)
				continue;
			pairs++;
			gen[0] = a;
			gen[1] = b;
		}
	}
	TU_EQ(pairs, 1, "addresses with a generation 0 and a generation 1 lock (locks[]: %s)",
	      json_object_to_json_string(locks));
	TU_EQ(tu_int(gen[0], "acquisitions"), 100, "first heap mutex (generation 0) acquisitions");
	TU_EQ(tu_int(gen[1], "acquisitions"), 250, "second heap mutex (generation 1) acquisitions");
	cr_assert(tu_bool(gen[0], "destroyed") && tu_bool(gen[1], "destroyed"), "both were destroyed");
	TU_EQ(n, 2, "locks[] length");
}

/* Past the objects cap a destroyed lock is merged and its memory in the shim
 * freed; the next locks made get it (tests/progs/freed_objects.c). What
 * named the gone locks (a lock-order edge, a condvar's monitor) must not
 * name the new ones: before objects were named by id there, the edge
 * gone_a -> gone_b came out as new_e -> new_d, and the condvar's monitor
 * as new_c. */
Test(identity, a_freed_lock_is_not_named_by_the_lock_that_reuses_its_memory, .timeout = 60)
{
	json_object *r;
	const char *out = tu_same_behaviour("freed_objects", &r);
	cr_assert(tu_has_line(out, "done"), "output:\n%s", out);
	cr_assert(!tu_lock(r, "gone_a"), "gone_a is in locks[]: not merged past the objects cap, the test proves nothing");
	static const char *const fresh[] = { "new_c", "new_d", "new_e" };
	for (int i = 0; i < 3; i++)
		cr_assert(tu_lock(r, fresh[i]), "%s missing from locks[]", fresh[i]);
	json_object *order, *edges;
	if (json_object_object_get_ex(r, "lock_order", &order) && json_object_object_get_ex(order, "edges", &edges))
		for (size_t i = 0; i < json_object_array_length(edges); i++) {
			json_object *e = json_object_array_get_idx(edges, i);
			for (int k = 0; k < 3; k++)
				cr_assert(strcmp(tu_str(e, "from"), fresh[k]) && strcmp(tu_str(e, "to"), fresh[k]),
					  "an edge %s -> %s: the new locks were only ever taken alone", tu_str(e, "from"),
					  tu_str(e, "to"));
		}
	json_object *cond = tu_cond(r, "kept_cond"), *mutex;
	cr_assert(cond, "no kept_cond in condvars[]");
	cr_assert(json_object_object_get_ex(cond, "mutex", &mutex));
	cr_assert(!mutex, "kept_cond's monitor is %s: it was only ever waited on under gone_m",
		  json_object_get_string(mutex));
}

/* An edge whose maker was merged past the threads cap is the merged
 * threads' row (tid -1), not the thread that got the maker's state, and a
 * cycle of such edges is not said to be one thread's
 * (tests/progs/edge_thread_merged.c). */
Test(identity, an_edge_of_a_merged_thread_is_the_merged_threads, .timeout = 60)
{
	json_object *r;
	const char *out = tu_same_behaviour("edge_thread_merged", &r);
	cr_assert(tu_has_line(out, "done"), "output:\n%s", out);
	json_object *edges = tu_array(tu_get(r, "lock_order"), "edges");
	TU_EQ(json_object_array_length(edges), 2, "edges (etm_a -> etm_b, etm_b -> etm_a)");
	for (size_t i = 0; i < 2; i++)
		TU_EQ(tu_int(json_object_array_get_idx(edges, i), "thread"), -1,
		      "edge %zu's thread (the merged threads' tid)", i);
	json_object *cycle = tu_find(tu_array(r, "findings"), "kind", "lock-order-cycle");
	cr_assert(cycle, "no lock-order-cycle finding");
	const char *summary = tu_str(cycle, "summary");
	cr_assert(strstr(summary, "merged threads") && !strstr(summary, "each order first seen on one thread"),
		  "the cycle's summary: %s", summary);
}

/* More mutexes and rwlocks than the shim's first caches hold, taken at
 * random by two threads in alternate turns (most found in the second caches,
 * preload/shim.h, cv_thread.l2; tests/progs/striped_reinit.c), every one
 * destroyed and initialised again before turn 20: each stripe's two
 * generations count exactly what the program counted; a hand-off each
 * time a turn of the other thread took it since (a thread finds in its
 * second cache mutexes the other took last: without its owner test, 5 of
 * stripes[0]'s 19); and timed holds as the sampling rule picks them: a
 * thread's acquisitions of one lock whose count so far is a multiple of 64
 * (CONVOY_HOLD_SAMPLE), ceil(n / 64) of its n, whichever cache found the
 * record (without the second cache's test, 3 of 6); an rwlock's reads and
 * writes, each generation's. */
static int64_t timed_of(long n)
{
	return (n + 63) / 64;
}

/* Owner changes over turns in order (owner[i] took n[i]), empty turns left out. */
static int64_t handoffs_of(const long *n, const int *owner, int turns)
{
	int64_t changes = 0;
	int last = -1;
	for (int i = 0; i < turns; i++) {
		if (!n[i])
			continue;
		changes += last >= 0 && owner[i] != last;
		last = owner[i];
	}
	return changes;
}

/* The numbers after a name on a line of the program's output: n of them,
 * each "%ld" or "%ld/%ld" (pairs: into a and b). */
static void turn_counts(const char *line, int at, int n, bool pairs, long *a, long *b)
{
	for (int i = 0, used; i < n; i++, at += used)
		cr_assert(pairs ? sscanf(line + at, " %ld/%ld%n", &a[i], &b[i], &used) == 2
				: sscanf(line + at, " %ld%n", &a[i], &used) == 1,
			  "%.*s", (int)strcspn(line, "\n"), line);
}

Test(identity, tables_of_locks_reinitialised_while_in_the_second_caches, .timeout = 60)
{
	enum { STRIPES = 512, TURNS = 30, REINIT = 20 };   /* striped_reinit.c's */
	json_object *r;
	const char *out = tu_same_behaviour("striped_reinit", &r);
	cr_assert(tu_has_line(out, "total 245760"), "%.200s", out);
	int owner[TURNS];
	for (int i = 0; i < TURNS; i++)
		owner[i] = i % 2;   /* main's turns even, the worker's odd */
	int mutexes = 0, rwlocks = 0;
	json_object *index = tu_rows_by_gen(r, "locks");
	for (const char *line = out; *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] != '\0')) {
		int k, at;
		long n[TURNS], wr[TURNS];
		char name[32];
		bool rwlock = sscanf(line, "rw_stripes[%d]%n", &k, &at) == 1;
		if (!rwlock && sscanf(line, "stripes[%d]%n", &k, &at) != 1)
			continue;
		turn_counts(line, at, TURNS, rwlock, n, wr);
		snprintf(name, sizeof(name), rwlock ? "rw_stripes[%d]" : "stripes[%d]", k);
		for (int g = 0; g < 2; g++) {
			int first = g ? REINIT : 0, count = g ? TURNS - REINIT : REINIT;
			long by[2] = { 0, 0 }, writes = 0;   /* main's, the worker's; an rwlock's: its reads */
			for (int i = first; i < first + count; i++) {
				by[owner[i]] += n[i];
				writes += rwlock ? wr[i] : 0;
			}
			json_object *lock = tu_indexed_row(index, name, g);
			cr_assert(lock, "%s generation %d missing from locks[]", name, g);
			if (rwlock) {
				TU_EQ(tu_int(lock, "read_acquisitions"), by[0] + by[1], "%s generation %d reads", name, g);
				TU_EQ(tu_int(lock, "write_acquisitions"), writes, "%s generation %d writes", name, g);
				continue;
			}
			TU_EQ(tu_int(lock, "acquisitions"), by[0] + by[1], "%s generation %d acquisitions", name, g);
			TU_EQ(tu_int(lock, "hold_samples"), timed_of(by[0]) + timed_of(by[1]),
			      "%s generation %d hold_samples", name, g);
			TU_EQ(tu_int(lock, "handoffs"), handoffs_of(n + first, owner + first, count),
			      "%s generation %d handoffs", name, g);
		}
		cr_assert(!tu_indexed_row(index, name, 2), "a third generation of %s", name);
		if (rwlock)
			rwlocks++;
		else
			mutexes++;
	}
	TU_EQ(mutexes, STRIPES, "stripes[] in the program's output");
	TU_EQ(rwlocks, STRIPES, "rw_stripes[] in the program's output");
	json_object_put(index);
	json_object_put(r);
}
