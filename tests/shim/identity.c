/* Lock identity is address plus generation: destroy (or a second init) ends
 * one lock; the next use of the address is a new one, with its own counts. */
#include <string.h>

#include "testutil.h"

Test(identity, destroy_and_reinit_two_generations, .timeout = 30)
{
	char *dir;
	const char *out = tu_same_behaviour("ident_reinit", &dir);
	cr_assert(tu_has_line(out, "destroy: 0 OK") && tu_has_line(out, "init: 0 OK"), "output:\n%s", out);
	json_object *r = tu_report_dir(dir);
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
	char *dir;
	const char *out = tu_same_behaviour("ident_heap", &dir);
	cr_assert(tu_has_line(out, "same address: yes"),
		  "malloc did not hand back the same address, the test proves nothing:\n%s", out);
	struct tu_proc p;
	char *dir2 = tu_tmpdir();
	tu_run_shim(&p, dir2, "ident_heap", NULL);   /* the address of this very run */
	tu_assert_exit(&p, 0, "ident_heap");
	const char *addr = tu_line_value(p.out, "addr");
	cr_assert(addr, "ident_heap printed no address:\n%s", p.out);
	json_object *r = tu_report_dir(dir2), *locks = tu_array(r, "locks");
	json_object *gen[2] = { NULL, NULL };
	size_t at_addr = 0;
	for (size_t i = 0; i < json_object_array_length(locks); i++) {
		json_object *l = json_object_array_get_idx(locks, i);
		if (strcmp(tu_str(l, "addr"), addr) != 0)
			continue;
		at_addr++;
		int64_t g = tu_int(l, "generation");
		cr_assert(g == 0 || g == 1, "generation %lld at %s", (long long)g, addr);
		gen[g] = l;
	}
	TU_EQ(at_addr, 2, "locks at the reused address %s", addr);
	cr_assert(gen[0] && gen[1], "generations 0 and 1 at %s", addr);
	TU_EQ(tu_int(gen[0], "acquisitions"), 100, "first heap mutex acquisitions");
	TU_EQ(tu_int(gen[1], "acquisitions"), 250, "second heap mutex acquisitions");
	cr_assert(tu_bool(gen[0], "destroyed") && tu_bool(gen[1], "destroyed"), "both were destroyed");
}
