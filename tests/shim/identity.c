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
