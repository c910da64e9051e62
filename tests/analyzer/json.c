/* The JSON contract (DESIGN.md "Contracts"): locks[] entries with name, kind,
 * addr, acquisitions, contended, wait_ns, max_wait_ns; threads[]; findings[]. */
#include <string.h>

#include "testutil.h"

static void check_lock_entry(json_object *l, size_t i)
{
	cr_assert(json_object_is_type(l, json_type_object), "locks[%zu] is not an object", i);
	cr_assert(strlen(tu_str(l, "name")) > 0, "locks[%zu].name is empty", i);
	TU_STREQ(tu_str(l, "kind"), "mutex", "locks[%zu].kind", i);
	json_object *addr = tu_get(l, "addr");
	cr_assert(json_object_is_type(addr, json_type_string) ? strncmp(json_object_get_string(addr), "0x", 2) == 0
							      : json_object_is_type(addr, json_type_int),
		  "locks[%zu].addr is neither \"0x...\" nor an integer: %s", i, json_object_to_json_string(addr));
	static const char *const counts[] = { "acquisitions", "contended", "wait_ns", "max_wait_ns" };
	for (size_t k = 0; k < 4; k++)
		TU_LE(0, tu_int(l, counts[k]), "locks[%zu].%s", i, counts[k]);
	TU_LE(tu_int(l, "contended"), tu_int(l, "acquisitions"), "locks[%zu]: contended <= acquisitions", i);
	TU_LE(tu_int(l, "max_wait_ns"), tu_int(l, "wait_ns"), "locks[%zu]: max_wait_ns <= wait_ns", i);
}

Test(json, report_contract_fields, .timeout = 30)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "count_cond", NULL);
	tu_assert_exit(&p, 0, "count_cond");
	json_object *r = tu_report_dir(dir);
	json_object *locks = tu_array(r, "locks");
	cr_assert(json_object_array_length(locks) >= 1, "locks[] is empty");
	for (size_t i = 0; i < json_object_array_length(locks); i++)
		check_lock_entry(json_object_array_get_idx(locks, i), i);
	json_object *threads = tu_array(r, "threads");
	TU_EQ(json_object_array_length(threads), 2, "threads[] length");
	for (size_t i = 0; i < 2; i++) {
		json_object *t = json_object_array_get_idx(threads, i);
		TU_LE(1, tu_int(t, "tid"), "threads[%zu].tid", i);
		tu_str(t, "name");
	}
	tu_array(r, "findings");
	/* findings[] may be empty; whatever it holds follows the contract */
	json_object *findings = tu_array(r, "findings");
	for (size_t i = 0; i < json_object_array_length(findings); i++) {
		json_object *f = json_object_array_get_idx(findings, i);
		tu_str(f, "kind");
		const char *sev = tu_str(f, "severity");
		cr_assert(!strcmp(sev, "high") || !strcmp(sev, "medium") || !strcmp(sev, "low"),
			  "findings[%zu].severity \"%s\"", i, sev);
		tu_array(f, "objects");
		tu_str(f, "summary");
		tu_str(f, "fix");
	}
}

Test(json, report_of_program_without_locks, .timeout = 30)
{
	/* print_preload takes no lock: empty arrays, still the same shape */
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "print_preload", NULL);
	tu_assert_exit(&p, 0, "print_preload");
	json_object *r = tu_report_dir(dir);
	TU_EQ(json_object_array_length(tu_array(r, "locks")), 0, "locks[] of a program without locks");
	TU_EQ(json_object_array_length(tu_array(r, "threads")), 1, "threads[]");
	tu_array(r, "findings");
}
