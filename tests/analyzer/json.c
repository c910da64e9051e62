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

static const char *const finding_kinds[] = {
	"lock-contention", "acquisition-frequency", "long-hold", "false-sharing", "true-sharing",
	"oversubscription", "load-imbalance", "thread-churn", "park-wake", "lock-order-cycle",
	"deadlock", "pool-starvation", NULL,
};

static void check_contract(const char *prog, size_t nthreads)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, prog, NULL);
	tu_assert_exit(&p, 0, prog);
	json_object *r = tu_report_dir(dir);
	json_object *locks = tu_array(r, "locks");
	cr_assert(json_object_array_length(locks) >= 1, "%s: locks[] is empty", prog);
	for (size_t i = 0; i < json_object_array_length(locks); i++)
		check_lock_entry(json_object_array_get_idx(locks, i), i);
	json_object *threads = tu_array(r, "threads");
	TU_EQ(json_object_array_length(threads), nthreads, "%s: threads[] length", prog);
	for (size_t i = 0; i < nthreads; i++) {
		json_object *t = json_object_array_get_idx(threads, i);
		TU_LE(1, tu_int(t, "tid"), "%s: threads[%zu].tid", prog, i);
		tu_str(t, "name");
	}
	/* findings[] may be empty; whatever it holds follows the contract */
	json_object *findings = tu_array(r, "findings");
	for (size_t i = 0; i < json_object_array_length(findings); i++) {
		json_object *f = json_object_array_get_idx(findings, i);
		const char *kind = tu_str(f, "kind");
		bool known = false;
		for (size_t k = 0; finding_kinds[k]; k++)
			known |= strcmp(kind, finding_kinds[k]) == 0;
		cr_assert(known, "%s: findings[%zu].kind \"%s\" is not in DESIGN.md's vocabulary", prog, i, kind);
		const char *sev = tu_str(f, "severity");
		cr_assert(!strcmp(sev, "high") || !strcmp(sev, "medium") || !strcmp(sev, "low"),
			  "%s: findings[%zu].severity \"%s\"", prog, i, sev);
		json_object *share = tu_get(f, "share");
		cr_assert(json_object_is_type(share, json_type_double) || json_object_is_type(share, json_type_int),
			  "%s: findings[%zu].share is not a number", prog, i);
		double v = json_object_get_double(share);
		cr_assert(v >= 0 && v <= 1, "%s: findings[%zu].share %g is outside 0..1", prog, i, v);
		tu_array(f, "objects");
		tu_str(f, "summary");
		tu_str(f, "fix");
	}
}

Test(json, report_contract_fields, .timeout = 30)
{
	check_contract("count_cond", 2);
	check_contract("count_two_threads", 3);
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

Test(json, a_wait_in_progress_when_the_profile_is_written_counts_up_to_then, .timeout = 60)
{
	/* Two workers parked on idle when main exits: their waits never end,
	 * yet they are the workers' time, and the condvar's. */
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "parked_at_exit", "2", NULL);
	tu_assert_exit(&p, 0, "parked_at_exit");
	json_object *r = tu_report_dir(dir);
	json_object *proc = tu_get(r, "process");
	TU_EQ(tu_int(proc, "inflight_waits"), 2, "process.inflight_waits");
	json_object *idle = tu_cond(r, "idle");
	cr_assert(idle, "no condvar idle: %s", json_object_to_json_string(tu_array(r, "condvars")));
	TU_EQ(tu_int(idle, "waits"), 2, "idle.waits: the two waits in progress");
	TU_EQ(tu_int(idle, "wait_ns"), tu_int(proc, "inflight_wait_ns"), "idle.wait_ns is their time");
	TU_LE(1, tu_int(idle, "wait_ns"), "idle.wait_ns");
}

Test(json, a_thread_cancelled_in_a_join_is_not_left_joining, .timeout = 60)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "cancel_in_join", NULL);
	tu_assert_exit(&p, 0, "cancel_in_join");
	json_object *r = tu_report_dir(dir);
	TU_EQ(tu_int(tu_get(r, "process"), "inflight_waits"), 1, "only the semaphore wait is still in progress");
}
