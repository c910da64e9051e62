/* golden.c — the explanation, tested on recordings: profiles and sweeps
 * recorded from the demos and from tests/data/progs (each provokes one rule,
 * or is a control that must not fire one), with the analyzer's output on
 * them kept in tests/data/golden and compared exactly. Nothing here runs a
 * workload, so nothing depends on the machine's speed or load.
 *
 * The outputs are made with CONVOY_SYMBOLS=0 (names come from the profile
 * alone, whatever binaries are installed) from inside tests/data (every path
 * relative); those of sampled recordings with the binaries kept beside them. After a deliberate change to the output, `tests/data/regenerate
 * --goldens` rewrites them; review the diff, it is the specification. */
#include <math.h>
#include <string.h>

#include "forge.h"
#include "testutil.h"

static const char *const golden_env[] = { "CONVOY_SYMBOLS=0", NULL };
/* Recordings explained from their CPU samples' decoded instructions read
 * the binaries they ran, kept in tests/data/modules, and nothing else. */
static const char *const sampled_env[] = { "CONVOY_SYMBOLS=1", "CONVOY_MODULES_DIR=modules", NULL };
static const char *const *env = golden_env;

/* Runs convoy ARGS... in tests/data; exits 0. */
static char *convoy_out(const char *const args[])
{
	const char *argv[16] = { tu_convoy() };
	size_t n = 1;
	for (size_t i = 0; args[i] && n < 15; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	struct tu_proc p;
	struct tu_opts o = { .env = env, .cwd = DATA_DIR, .timeout_s = 60 };
	tu_run(&p, &o, argv);
	tu_assert_exit(&p, 0, args[0]);
	return p.out;
}

/* got must equal tests/data/golden/NAME, byte for byte; on a difference,
 * the first line that differs. */
static void expect_golden(const char *got, const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/golden/%s", DATA_DIR, name);
	size_t len;
	char *want = (char *)tu_read_file(path, &len);
	if (strlen(got) == len && !memcmp(got, want, len))
		return;
	size_t line = 1, i = 0;
	for (; got[i] && i < len && got[i] == want[i]; i++)
		line += got[i] == '\n';
	size_t start = i;
	while (start > 0 && got[start - 1] != '\n')
		start--;
	cr_assert_fail("output differs from tests/data/golden/%s at line %zu:\n  got:  %.*s\n  want: %.*s\n"
		       "(after a deliberate change: tests/data/regenerate --goldens, then review the diff)",
		       name, line, (int)strcspn(got + start, "\n"), got + start,
		       (int)strcspn(want + (start < len ? start : len), "\n"), want + (start < len ? start : len));
}

/* `report --json` and the text report of profiles/NAME.convoy, checked
 * against their goldens; the JSON parsed. */
static json_object *report(const char *name)
{
	char profile[256], golden[256];
	snprintf(profile, sizeof(profile), "profiles/%s.convoy", name);
	snprintf(golden, sizeof(golden), "%s.report.txt", name);
	expect_golden(convoy_out((const char *[]){ "report", profile, NULL }), golden);
	snprintf(golden, sizeof(golden), "%s.report.json", name);
	char *out = convoy_out((const char *[]){ "report", "--json", profile, NULL });
	expect_golden(out, golden);
	json_object *root = json_tokener_parse(out);
	cr_assert(root, "report --json printed no JSON");
	return root;
}

/* `scale --replay sweeps/NAME --json`, checked against its golden, parsed;
 * every run's stack adds up to threads × wall, and no component is negative
 * or above it (unexplained is negative by definition, never below -budget). */
static json_object *replay(const char *name)
{
	char dir[256], golden[256];
	snprintf(dir, sizeof(dir), "sweeps/%s", name);
	snprintf(golden, sizeof(golden), "%s.scale.json", name);
	char *out = convoy_out((const char *[]){ "scale", "--replay", dir, "--json", NULL });
	expect_golden(out, golden);
	json_object *root = json_tokener_parse(out);
	cr_assert(root, "scale --replay --json printed no JSON");
	json_object *runs = tu_array(root, "runs");
	cr_assert(json_object_array_length(runs) >= 2, "%s: fewer than two runs", name);
	for (size_t i = 0; i < json_object_array_length(runs); i++) {
		json_object *r = json_object_array_get_idx(runs, i), *stack = tu_get(r, "stack");
		int64_t sum = 0, budget = tu_int(r, "threads") * tu_int(r, "wall_ns");
		json_object_object_foreach(stack, key, val) {
			int64_t v = json_object_get_int64(val);
			sum += v;
			int64_t lo = strcmp(key, "unexplained") ? -16 : -budget, hi = strcmp(key, "unexplained") ? budget : 16;
			cr_assert(v >= lo && v <= hi, "%s run %zu: %s is %lld ns of a budget of %lld", name, i, key,
				  (long long)v, (long long)budget);
		}
		cr_assert(llabs(sum - budget) <= 16, "%s run %zu: the stack sums to %lld, threads × wall = %lld", name, i,
			  (long long)sum, (long long)budget);
	}
	return root;
}

/* The same for a recording made with its program's binary kept in
 * modules/ (SAMPLED=1 in regenerate): names come from that binary. */
static json_object *replay_sampled(const char *name)
{
	env = sampled_env;
	return replay(name);
}

static json_object *finding(json_object *root, size_t i)
{
	json_object *f = tu_array(root, "findings");
	cr_assert(json_object_array_length(f) > i, "fewer than %zu findings", i + 1);
	return json_object_array_get_idx(f, i);
}

static const char *object0(json_object *f)
{
	json_object *objs = tu_array(f, "objects");
	cr_assert(json_object_array_length(objs) > 0, "a finding about nothing");
	return json_object_get_string(json_object_array_get_idx(objs, 0));
}

static void expect_first(json_object *root, const char *kind, const char *object)
{
	json_object *f = finding(root, 0);
	TU_STREQ(tu_str(f, "kind"), kind, "the first finding's kind");
	if (object)
		cr_assert(strstr(object0(f), object), "the first finding is about '%s', not '%s'", object0(f), object);
}

static bool has_kind(json_object *root, const char *kind)
{
	json_object *f = tu_array(root, "findings");
	for (size_t i = 0; i < json_object_array_length(f); i++)
		if (!strcmp(tu_str(json_object_array_get_idx(f, i), "kind"), kind))
			return true;
	return false;
}

/* ---- the demos: each its one cause --------------------------------------- */

Test(golden, the_global_queue_lock_is_entered_too_often, .timeout = 60)
{
	json_object *s = replay("global_queue");
	expect_first(s, "acquisition-frequency", "workpool.global_queue");
	expect_first(report("global_queue"), "acquisition-frequency", "workpool.global_queue");
}

Test(golden, work_stealing_has_no_high_finding, .timeout = 60)
{
	json_object *f = tu_array(replay("work_stealing"), "findings");
	for (size_t i = 0; i < json_object_array_length(f); i++)
		cr_assert(strcmp(tu_str(json_object_array_get_idx(f, i), "severity"), "high"), "a high finding: %s",
			  json_object_to_json_string(json_object_array_get_idx(f, i)));
}

/* Recorded on a host whose other guests slowed both vCPUs: CPU for the
 * same work 1.6x at 2 threads, nothing located. Busy cores slow each other
 * that much with no line shared, so the suspicion is said, never high. */
Test(golden, cpu_grown_less_than_busy_cores_do_is_no_high_suspicion, .timeout = 60)
{
	json_object *s = replay("work_stealing_noisy");
	expect_first(s, "true-sharing", NULL);
	json_object *f = finding(s, 0);
	cr_assert(tu_bool(f, "suspected"));
	cr_assert(json_object_get_double(tu_get(f, "share")) >= 0.5, "not the case the cap is for");
	TU_STREQ(tu_str(f, "severity"), "medium", "severity of %s", tu_str(f, "summary"));
	cr_assert(strstr(tu_str(f, "summary"), "Cores slowed by each other") &&
			  strstr(tu_str(f, "summary"), "steal time)."),   /* whole, not cut */
		  "%s", tu_str(f, "summary"));
}

Test(golden, a_shared_atomic_is_suspected_true_sharing, .timeout = 60)
{
	json_object *s = replay("atomic_scaling");
	expect_first(s, "true-sharing", NULL);
	cr_assert(tu_bool(finding(s, 0), "suspected"));
}

Test(golden, eight_workers_on_two_cpus_oversubscribe, .timeout = 60)
{
	json_object *s = replay("worker_count");
	expect_first(s, "oversubscription", "run queue");
	cr_assert(!tu_bool(finding(s, 0), "external"), "more busy threads than CPUs is the program's doing");
	/* Its what-if: never faster than the useful work on the 2 CPUs (it
	 * once said 60 ms for 335 ms of work; helper-130). */
	json_object *runs = tu_array(s, "runs"), *last = json_object_array_get_idx(runs, json_object_array_length(runs) - 1);
	int64_t useful = tu_int(tu_get(last, "stack"), "useful"), predicted = tu_int(finding(s, 0), "predicted_wall_ns");
	cr_assert(predicted >= useful / 2 - 1, "what-if %lld ns, below %lld ns of useful work over 2 CPUs",
		  (long long)predicted, (long long)useful);
}

/* With switch records the run queue's wait is split: the part the
 * program's own threads explain by outnumbering the CPUs, and the rest,
 * other processes'. Eight workers on two CPUs explain most of theirs (the
 * rest: the machine's other load at recording). */
Test(golden, switch_records_say_how_much_of_the_run_queue_the_program_caused, .timeout = 60)
{
	json_object *s = replay_sampled("worker_count_sampled");
	expect_first(s, "oversubscription", "run queue");
	json_object *ev = tu_get(finding(s, 0), "evidence");
	double own = json_object_get_double(tu_get(ev, "runq_own_share"));
	cr_assert(own >= 0.5 && own <= 1, "the program's own threads explain %g of the wait", own);
	cr_assert(strstr(tu_str(finding(s, 0), "summary"), "came from the program's own threads outnumbering"));
	/* Two workers beside a CPU hog never outnumbered the CPUs themselves. */
	json_object *x = finding(replay_sampled("spin_preempted"), 1);
	cr_assert(tu_bool(x, "external"));
	cr_assert(json_object_get_double(tu_get(tu_get(x, "evidence"), "runq_own_share")) < 0.5);
}

/* Six threads, each started after the one before ended, beside a CPU hog:
 * never more than one busy, so the run queue is the hog's (an exited
 * thread's last switch record, a switch in, must not keep it busy). And
 * never more than one worker alive at once where two were asked for: the
 * idle slot is fewer workers than threads, first. */
Test(golden, threads_that_ran_in_turn_beside_a_hog_did_not_oversubscribe, .timeout = 60)
{
	json_object *s = replay_sampled("threads_in_turn");
	json_object *f = tu_array(s, "findings");
	json_object *first = json_object_array_get_idx(f, 0);
	TU_STREQ(tu_str(first, "kind"), "load-imbalance", "the first finding");
	TU_EQ(json_object_get_double(tu_get(tu_get(first, "evidence"), "workers_at_once")), 1.0, "%s",
	      tu_str(first, "summary"));
	size_t seen = 0;
	for (size_t i = 0; i < json_object_array_length(f); i++) {
		json_object *x = json_object_array_get_idx(f, i);
		if (strcmp(tu_str(x, "kind"), "oversubscription"))
			continue;
		seen++;
		cr_assert(tu_bool(x, "external"), "%s", tu_str(x, "summary"));
		cr_assert(json_object_get_double(tu_get(tu_get(x, "evidence"), "threads_busy")) <= 1,
			  "%s", tu_str(x, "summary"));
	}
	cr_assert(seen, "the hog's run queue is said");
}

/* One slow producer feeding consumers through a mutex and two condvars:
 * the consumers' parks end with the producer's wakes, never a peer's, so
 * the monitor is no lock in effect; the producer is the busiest worker,
 * named with its code. */
Test(golden, a_slow_producer_is_the_busiest_worker_not_a_lock_in_effect, .timeout = 60)
{
	json_object *s = replay_sampled("producer_queue");
	expect_first(s, "load-imbalance", NULL);
	cr_assert(!has_kind(s, "lock-contention"), "the queue's monitor is no lock in effect");
	const char *summary = tu_str(finding(s, 0), "summary");
	cr_assert(strstr(summary, "the busiest worker, producer (tid") && strstr(summary, "make_item"), "%s", summary);
}

Test(golden, all_work_on_one_worker_is_imbalance, .timeout = 60)
{
	expect_first(replay("imbalance"), "load-imbalance", NULL);
}

Test(golden, a_thread_per_task_is_churn, .timeout = 60)
{
	expect_first(replay("thread_per_task"), "thread-churn", NULL);
}

Test(golden, parking_at_once_is_park_wake, .timeout = 60)
{
	expect_first(replay("barrier_demo"), "park-wake", NULL);
}

/* ---- rules that misfired, and controls ------------------------------------ */

Test(golden, a_rarely_entered_lock_is_not_acquisition_frequency, .timeout = 60)
{
	json_object *s = replay("rare_lock");
	expect_first(s, "lock-contention", "rare_lock");
	cr_assert(!has_kind(s, "acquisition-frequency"));
	json_object *r = report("rare_lock");
	expect_first(r, "lock-contention", "rare_lock");
	cr_assert(strstr(tu_str(finding(r, 0), "summary"), "some holds are longer than the samples"),
		  "the summary does not say why short sampled holds cannot explain the waits: %s",
		  tu_str(finding(r, 0), "summary"));
}

/* Fewer sampled holds than FEW_HOLD_SAMPLES, but every hold sampled (a
 * thread's first hold of a lock always is): the hold is known, and long
 * (helper-131: 4 holds of 50 ms were "too few to say"). */
Test(golden, a_few_holds_all_sampled_are_known, .timeout = 60)
{
	json_object *r = report("hold_once");
	expect_first(r, "long-hold", "hold_lock");
	cr_assert(!strstr(tu_str(finding(r, 0), "summary"), "too few"), "%s", tu_str(finding(r, 0), "summary"));
}

Test(golden, a_long_critical_section_is_long_hold, .timeout = 60)
{
	expect_first(replay("long_hold"), "long-hold", "long_lock");
}

Test(golden, threads_at_a_barrier_on_too_few_cpus_are_oversubscribed, .timeout = 60)
{
	json_object *s = replay("barrier_oversub");
	expect_first(s, "oversubscription", "run queue");
	cr_assert(!has_kind(s, "park-wake"), "spinning before parking would make 4 threads on 2 CPUs worse");
	json_object *run4 = json_object_array_get_idx(tu_array(s, "runs"), 1);
	TU_EQ(tu_int(run4, "threads"), 4, "the second run");
	cr_assert(tu_int(tu_get(run4, "stack"), "runnable") > 0, "no run-queue delay at 4 threads on 2 CPUs");
	cr_assert(strstr(tu_str(finding(s, 0), "summary"), "round_barrier"), "the barrier time is not claimed: %s",
		  tu_str(finding(s, 0), "summary"));
}

Test(golden, uneven_work_between_barrier_rounds_names_the_barrier, .timeout = 60)
{
	expect_first(replay("barrier_uneven"), "load-imbalance", "step_barrier");
	expect_first(report("barrier_uneven"), "load-imbalance", "step_barrier");
}

Test(golden, a_pool_whose_tasks_wait_on_their_children_is_pool_starvation, .timeout = 60)
{
	/* nested_submit without helping, stopped by --timeout: both workers wait
	 * on their child's future; the main thread waits on theirs. */
	json_object *r = report("nested_submit");
	expect_first(r, "pool-starvation", "nest-*");
	cr_assert_eq(json_object_get_int(tu_get(tu_get(finding(r, 0), "evidence"), "workers")), 2);
	/* workpool counts its queue (CONVOY_QUEUED): the two children are queued. */
	cr_assert_eq(json_object_get_int(tu_get(tu_get(finding(r, 0), "evidence"), "queued_tasks")), 2);
	cr_assert(!has_kind(r, "deadlock"), "no lock cycle: the workers wait on condvars");
}

Test(golden, a_semaphore_whose_only_poster_waits_for_the_waiters_mutex_is_a_deadlock, .timeout = 60)
{
	json_object *r = report("sem_deadlock");
	expect_first(r, "deadlock", "semaphore@");
	json_object *cycle = tu_array(finding(r, 0), "cycle");
	cr_assert_eq(json_object_array_length(cycle), 2);
	const char *first = tu_str(json_object_array_get_idx(cycle, 0), "relation");
	const char *second = tu_str(json_object_array_get_idx(cycle, 1), "relation");
	cr_assert((!strcmp(first, "posts") && !strcmp(second, "holds")) ||
		  (!strcmp(first, "holds") && !strcmp(second, "posts")), "%s, %s", first, second);
	cr_assert(strstr(tu_str(finding(r, 0), "fix"), "Do not wait for semaphore@"), "%s", tu_str(finding(r, 0), "fix"));
}

Test(golden, a_pool_starved_at_the_hang_is_explained_after_the_program_went_on, .timeout = 60)
{
	/* The profile was written at the exit; the snapshot beside it at the hang. */
	json_object *r = report("hang_then_go");
	cr_assert_str_eq(tu_str(tu_get(r, "process"), "exit"), "returned from main or called exit()");
	expect_first(r, "pool-starvation", NULL);
	cr_assert(strstr(tu_str(finding(r, 0), "summary"), "at the hang, in the snapshot"), "%s",
		  tu_str(finding(r, 0), "summary"));
}

Test(golden, a_lock_order_edge_shows_both_acquisition_stacks, .timeout = 60)
{
	json_object *r = report("order_helpers");
	size_t partial = 0, whole = 0;
	for (size_t i = 0; i < 2; i++) {
		json_object *x = finding(r, i), *cycle = tu_array(x, "cycle");
		cr_assert_str_eq(tu_str(x, "kind"), "lock-order-cycle");
		for (size_t k = 0; k < json_object_array_length(cycle); k++) {
			json_object *e = json_object_array_get_idx(cycle, k);
			json_object *held = tu_array(e, "holds_stack"), *wants = tu_array(e, "wants_stack");
			cr_assert(json_object_array_length(held) > 0);
			partial += tu_bool(e, "holds_stack_partial");
			/* outer took lock_a, then called inner for lock_b: the held
			 * stack is outer's call, then the caller it shares with the
			 * wanting stack (inner, outer, that caller). */
			if (json_object_array_length(held) == 2 && json_object_array_length(wants) == 3 &&
			    !strcmp(json_object_get_string(json_object_array_get_idx(held, 1)),
				    json_object_get_string(json_object_array_get_idx(wants, 2))))
				whole++;
		}
	}
	cr_assert_eq(partial, 1, "the lock helper's edge only");
	cr_assert_eq(whole, 1, "the nested call's edge");
	json_object *edges = tu_array(tu_get(r, "lock_order"), "edges");
	cr_assert_eq(json_object_array_length(edges), 4);
	for (size_t i = 0; i < json_object_array_length(edges); i++) {   /* the graph has both stacks too */
		json_object *e = json_object_array_get_idx(edges, i);
		cr_assert(json_object_array_length(tu_array(e, "from_stack")) > 0 &&
			  json_object_array_length(tu_array(e, "to_stack")) > 0, "%s", json_object_to_json_string(e));
	}
}

Test(golden, churn_names_the_start_routine_and_its_creator, .timeout = 60)
{
	json_object *r = report("churn");
	expect_first(r, "thread-churn", "run_task");
	cr_assert(strstr(tu_str(finding(r, 0), "summary"), "created by main"), "summary: %s",
		  tu_str(finding(r, 0), "summary"));
	expect_first(replay("churn"), "thread-churn", "run_task");
}

Test(golden, workers_sharing_one_cpu_are_not_imbalanced, .timeout = 60)
{
	json_object *s = replay("pinned_even");
	expect_first(s, "oversubscription", NULL);
	cr_assert(!has_kind(s, "load-imbalance"), "waiting for the one CPU counted as uneven work");
}

Test(golden, findings_say_one_thread_not_one_threads, .timeout = 60)
{
	char *out = convoy_out((const char *[]){ "report", "profiles/many_locks.convoy", NULL });
	cr_assert(!strstr(out, " 1 threads") && !strstr(out, " 1 CPUs"), "%s", out);
}

/* ---- identity ------------------------------------------------------------- */

Test(golden, objects_made_at_one_site_share_a_text_row, .timeout = 60)
{
	json_object *r = report("many_locks");
	TU_EQ(json_object_array_length(tu_array(r, "locks")), 20, "locks[] lists each object");
	char *text = convoy_out((const char *[]){ "report", "profiles/many_locks.convoy", NULL });
	cr_assert(strstr(text, "  20 × mutex@many_locks+0x"), "no grouped row in:\n%s", text);
}

/* The text table under title in a report (to the blank line after it), a
 * copy. */
static char *table_in(const char *text, const char *title)
{
	const char *t = strstr(text, title), *end = t ? strstr(t, "\n\n") : NULL;
	cr_assert(t && end, "no table \"%s\" in:\n%s", title, text);
	return strndup(t, (size_t)(end - t));
}

/* A pool that remakes its locks and condvars at the same addresses, round
 * after round: each address's objects are generations of it, and a site's
 * objects, whatever their generation, share one text row in the lock, the
 * condvar and the park tables (pigz -p 2: its 226 mutexes of one site,
 * generations 0 to 26, took 22 rows, and its 225 condvars a row each), but
 * for one that holds a tenth of its table's wait (pigz's job queue's
 * mutex, made at the same site: 90 % of the mutexes' wait) or more than
 * half of its site's (one busy condvar among idle ones: ffmpeg's encoder's,
 * 8 % of a table its idle workers filled), which keeps its own. */
Test(golden, a_sites_objects_of_every_generation_share_a_text_row, .timeout = 60)
{
	struct forge f;
	forge_two_threads(&f, "pool", "worker");
	struct cv_stats little = { .acquisitions = 100, .contended = 1, .waits = 1, .wait_ns = 1000000,
				   .max_wait_ns = 1000000 };
	struct cv_stats idle = { .signals = 1 }, busy = { .waits = 5, .wait_ns = 5000000, .max_wait_ns = 1000000 };
	uint32_t id = 0;
	for (uint32_t i = 0; i < 7; i++) {   /* the queue's, then two slots, three generations each */
		struct cv_object o = forge_object(id++, CV_OBJ_MUTEX);
		o.addr = i ? 0x1000 + 64 * (i % 2) : 0x2000;
		o.generation = i ? (i - 1) / 2 : 0;
		forge_add_object(&f, o, "slot_lock", i ? &little : NULL);
		o.id = id++;   /* and the condvar beside each lock */
		o.kind = CV_OBJ_COND;
		forge_add_object(&f, o, "slot_cond", i ? &little : NULL);
	}
	for (uint32_t i = 0; i < 4; i++)   /* one busy condvar of four made at one site */
		forge_add_object(&f, forge_object(id++, CV_OBJ_COND), "idle_cond", i ? &idle : &busy);
	char *path = forge_write_as(&f, "pool");
	char *text = convoy_out((const char *[]){ "report", path, NULL });
	char *table = table_in(text, "Mutexes, by total wait");
	cr_assert(strstr(table, "  slot_lock   ") && strstr(table, "  6 × slot_lock ") &&
		  strstr(table, "6 more objects made at this site, generations 0 to 2;"),
		  "no row of the queue's and one of the six in:\n%s", table);
	cr_assert(!strstr(table, "(generation"), "a generation on a row of its own in:\n%s", table);
	static const char *const cond_tables[] = { "Condition variables, by total wait", "Park and wake" };
	for (size_t i = 0; i < 2; i++) {   /* the condvars' own table and the park table the same way */
		table = table_in(text, cond_tables[i]);
		cr_assert(strstr(table, "  slot_cond   ") && strstr(table, "  6 × slot_cond") &&
			  strstr(table, "6 more objects made at this site, generations 0 to 2;") && !strstr(table, "(generation"),
			  "not the queue's condvar and one row of the six in:\n%s", table);
		cr_assert(strstr(table, "  idle_cond   ") && strstr(table, "  3 × idle_cond") &&
			  strstr(table, "3 more objects made at this site;"),
			  "not the busy condvar and one row of its three idle siblings in:\n%s", table);
	}
	text = convoy_out((const char *[]){ "report", "--limit", "1", path, NULL });
	table = table_in(text, "Mutexes, by total wait");
	cr_assert(strstr(table, "  ... 1 more row (6 objects; use --limit 0)"), "the rows left out in:\n%s", table);
	text = convoy_out((const char *[]){ "report", "-v", path, NULL });
	cr_assert(strstr(text, "slot_lock (generation 2)"), "-v shows each object:\n%s", text);
}

static void expect_no_change(const char *a)
{
	json_object *d = json_tokener_parse(convoy_out((const char *[]){ "diff", "--json", a, a, NULL }));
	cr_assert(d, "diff --json printed no JSON");
	json_object *rows = tu_array(d, "differences");
	cr_assert(json_object_array_length(rows) > 0);
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i);
		TU_EQ(tu_int(row, "a_ns"), tu_int(row, "b_ns"), "%s", tu_str(row, "name"));
	}
}

Test(golden, a_profile_diffed_with_itself_has_no_change, .timeout = 60)
{
	expect_no_change("profiles/many_locks.convoy");
	expect_no_change("profiles/global_queue.convoy");
}

Test(golden, a_sweep_diffed_with_itself_has_no_change, .timeout = 60)
{
	expect_no_change("sweeps/global_queue");
}

/* One object "flag" of this kind and futex flags, its threads' waits
 * 100 ms in all (none when waits is 0). */
static char *forge_flag_run(const char *name, uint32_t kind, uint32_t flags, uint64_t waits)
{
	struct forge f;
	forge_two_threads(&f, "flagger", "worker");
	struct cv_stats st = { .acquisitions = kind == CV_OBJ_MUTEX ? 1000 : 0, .contended = waits, .waits = waits,
			       .wait_ns = waits ? 50000000 : 0, .max_wait_ns = waits ? 1000000 : 0, .signals = 10 };
	struct cv_object o = forge_object(0, kind);
	o.flags = flags;
	forge_add_object(&f, o, "flag", &st);
	return forge_write_as(&f, name);
}

/* convoy diff A B's one row of "flag": its name and both waits. */
static void expect_flag_row(const char *a, const char *b, const char *name, int64_t a_ns, int64_t b_ns)
{
	json_object *d = json_tokener_parse(convoy_out((const char *[]){ "diff", "--json", a, b, NULL }));
	cr_assert(d, "diff --json printed no JSON");
	json_object *rows = tu_array(d, "differences"), *flag = NULL;
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i);
		if (strstr(tu_str(row, "name"), "flag")) {
			cr_assert(!flag, "two rows of the word: %s", json_object_to_json_string(rows));
			flag = row;
		}
	}
	if (!name) {
		cr_assert(!flag, "a row of the word: %s", json_object_to_json_string(rows));
		return;
	}
	cr_assert(flag, "no row of the word: %s", json_object_to_json_string(rows));
	TU_STREQ(tu_str(flag, "name"), name, "the row");
	TU_EQ(tu_int(flag, "a_ns"), a_ns, "A's wait");
	TU_EQ(tu_int(flag, "b_ns"), b_ns, "B's wait");
}

/* A futex word's class comes from how a run's waits were made: one whose
 * threads waited only for the value 2 in one run (a lock) and for other
 * values too in the other (a park) is one row with both waits, marked
 * where it was parked on. A word nobody waited on in one run (its unlocks'
 * wakes found nobody) is no park there, and a mutex is not compared with a
 * futex word that has its name. */
Test(golden, a_futex_word_locked_in_one_run_and_parked_on_in_the_other_keeps_both_waits, .timeout = 60)
{
	char *lock = forge_flag_run("lock", CV_OBJ_FUTEX, CV_FUTEX_WAIT_2, 100);
	char *park = forge_flag_run("park", CV_OBJ_FUTEX, CV_FUTEX_WAIT_2 | CV_FUTEX_WAIT_OTHER, 100);
	char *woken_only = forge_flag_run("woken", CV_OBJ_FUTEX, 0, 0);
	char *mutex = forge_flag_run("mutex", CV_OBJ_MUTEX, 0, 100);
	expect_flag_row(lock, park, "lock (a park in B) flag wait", 100000000, 100000000);
	expect_flag_row(park, lock, "lock (a park in A) flag wait", 100000000, 100000000);
	expect_flag_row(park, park, NULL, 0, 0);   /* parked on in both: no lock row */
	expect_flag_row(lock, woken_only, "lock flag wait", 100000000, 0);
	expect_flag_row(mutex, park, "lock flag wait", 100000000, 0);
}

Test(golden, limit_applies_to_per_thread_rows, .timeout = 60)
{
	char *out = convoy_out((const char *[]){ "report", "--limit", "1", "profiles/global_queue.convoy", NULL });
	cr_assert(strstr(out, "    ... 2 more threads (use --limit 0)"), "per-thread rows not limited:\n%s", out);
}

/* ---- real programs' shapes (issue 13) ------------------------------------- */

/* The role's tids in a run of a sweep's JSON. */
static size_t role_count(json_object *run, const char *role)
{
	return json_object_array_length(tu_array(tu_get(run, "roles"), role));
}

/* Workers spinning on a pthread spinlock, preempted by a CPU hog for most
 * of their lives: their CPU time is in the lock's waits, yet they were busy,
 * not asleep beside the work; the cause is the lock. */
Test(golden, preempted_workers_spinning_in_a_lock_are_workers_and_the_lock_is_the_cause, .timeout = 60)
{
	json_object *s = replay_sampled("spin_preempted");
	json_object *runs = tu_array(s, "runs");
	for (size_t i = 0; i < json_object_array_length(runs); i++) {
		json_object *r = json_object_array_get_idx(runs, i);
		TU_EQ((int64_t)role_count(r, "worker"), tu_int(r, "threads"), "workers at run %zu", i);
		TU_EQ((int64_t)role_count(r, "helper"), 0, "helpers at run %zu", i);
	}
	expect_first(s, "lock-contention", "histogram.lock");
}

Test(golden, helper_threads_run_beside_the_workers_outside_the_stack, .timeout = 60)
{
	json_object *s = replay("io_helper");   /* replay() checks every component is within the budget */
	json_object *runs = tu_array(s, "runs");
	for (size_t i = 0; i < json_object_array_length(runs); i++) {
		json_object *r = json_object_array_get_idx(runs, i);
		TU_EQ((int64_t)role_count(r, "worker"), tu_int(r, "threads"), "workers at run %zu", i);
		cr_assert(role_count(r, "helper") + role_count(r, "waiter") == 2, "the reader and writer at run %zu", i);
		cr_assert(tu_int(r, "helper_ns") > 0, "no helper time at run %zu", i);
	}
	cr_assert(!has_kind(s, "load-imbalance"), "helper threads counted as uneven work");
	/* A control for the monitor rule: chunk_lock's condvars are signalled by
	 * the reader and the workers, not by the threads that wait on each. */
	json_object *f = tu_array(s, "findings");
	for (size_t i = 0; i < json_object_array_length(f); i++)
		cr_assert(!strstr(tu_str(json_object_array_get_idx(f, i), "summary"), "one at a time"),
			  "a producer and its consumers taken for threads taking turns");
}

/* The run's threads of one role whose name is name. */
static int named_roles(json_object *root, const char *name, const char *role)
{
	json_object *t = tu_array(root, "threads");
	int n = 0;
	for (size_t i = 0; i < json_object_array_length(t); i++) {
		json_object *x = json_object_array_get_idx(t, i);
		n += strstr(tu_str(x, "name"), name) && !strcmp(tu_str(x, "role"), role);
	}
	return n;
}

/* A writer thread parked beside a pool of compressing workers, with a
 * start routine of its own: a stage that waits for the pool's output, a
 * helper; with it counted a worker, pbzip2's and zstd's single runs
 * blamed a 1,924x load-imbalance on it (helper-130). */
Test(golden, a_parked_stage_beside_a_pool_is_a_helper_not_an_idle_worker, .timeout = 60)
{
	json_object *r = report("io_helper");
	TU_EQ((int64_t)named_roles(r, "writer", "helper"), 1, "the writer");
	TU_EQ((int64_t)named_roles(r, "compress", "worker"), 2, "the compressing workers");
	cr_assert(!has_kind(r, "load-imbalance"), "the parked writer taken for an idle worker");
}

/* The same stage, running the workers' own start routine in a pool of its
 * own (zstd -T2's I/O thread beside its compression workers, both
 * POOL_thread): it parked on its pool's queue, made at another site than
 * the workers', so it is no idle member of theirs. Counted a worker, it
 * made zstd's load-imbalance (2.5x) and here "3 busy threads shared 2
 * CPUs". */
Test(golden, a_parked_pool_of_the_workers_start_routine_made_elsewhere_is_a_helper, .timeout = 60)
{
	json_object *r = report("two_pools");
	TU_EQ((int64_t)named_roles(r, "writer", "helper"), 1, "the writer");
	TU_EQ((int64_t)named_roles(r, "compress", "worker"), 2, "the compressing workers");
	cr_assert(!has_kind(r, "load-imbalance"), "the parked writer taken for an idle worker");
	json_object *f = tu_array(r, "findings");
	for (size_t i = 0; i < json_object_array_length(f); i++) {
		json_object *x = json_object_array_get_idx(f, i);
		if (!strcmp(tu_str(x, "kind"), "oversubscription"))
			cr_assert(json_object_get_double(tu_get(tu_get(x, "evidence"), "threads_busy")) <= 2,
				  "the parked writer counted busy");
	}
}

/* A barrier made of a mutex and a condvar, uneven rounds, beside a CPU
 * hog: the last arrival's broadcast releases the others together. Taken
 * for threads running one at a time through a monitor ("a lock in
 * effect", [high], helper-134's imbalance-gate), it hid the imbalance. */
Test(golden, a_condvar_barrier_releasing_its_waiters_together_is_no_monitor, .timeout = 60)
{
	json_object *r = report("cond_barrier");
	cr_assert(has_kind(r, "load-imbalance"), "the uneven rounds");
	cr_assert(!has_kind(r, "lock-contention"), "a barrier taken for a lock in effect");
}

/* A futex word used only to park threads (tests/data/progs/park_word.c):
 * its waits are parks, in where the time went and in the summary, which
 * counts no lock wait for it and does not call it a lock whose uncontended
 * acquisitions go unseen; it is no lock in the header or the lock table,
 * and the futex table shows the stack its threads parked in. */
Test(golden, a_futex_word_used_to_park_is_waited_on_not_locked, .timeout = 30)
{
	json_object *r = report("park_word");
	char *text = convoy_out((const char *[]){ "report", "profiles/park_word.convoy", NULL });
	cr_assert(strstr(text, "\nNo thread waited for a mutex (no mutex was used).\n"), "a lock wait named in:\n%s", text);
	cr_assert(!strstr(text, "waiting for locks") && !strstr(text, "a lock on a futex word"),
		  "the park word taken for a lock in:\n%s", text);
	cr_assert(strstr(text, " 0 locks, ") && !strstr(text, "\nLocks ("), "the park word counted as a lock in:\n%s", text);
	cr_assert(strstr(text, "% parked"), "no parked time in:\n%s", text);
	const char *futexes = strstr(text, "\nFutex words");
	cr_assert(futexes && strstr(futexes, "stack 1: 100.0% of the sampled wait"), "the parks' stack not shown in:\n%s", text);
	TU_EQ((int64_t)json_object_array_length(tu_array(r, "locks")), 0, "locks[]");
	TU_EQ((int64_t)json_object_array_length(tu_array(r, "futexes")), 1, "futexes[]");
	json_object_put(r);
}

Test(golden, service_threads_asleep_beside_the_workers_are_helpers_not_busy_threads, .timeout = 60)
{
	json_object *r = report("sleeping_helpers");
	TU_EQ((int64_t)named_roles(r, "service", "helper"), 6, "the service threads");
	TU_EQ((int64_t)named_roles(r, "worker", "worker"), 2, "the workers");
	json_object *f = tu_array(r, "findings");
	for (size_t i = 0; i < json_object_array_length(f); i++) {
		json_object *x = json_object_array_get_idx(f, i);
		if (!strcmp(tu_str(x, "kind"), "oversubscription"))
			cr_assert(json_object_get_double(tu_get(tu_get(x, "evidence"), "threads_busy")) <= 2,
				  "sleeping threads counted busy");
	}
	json_object *s = replay("sleeping_helpers"), *runs = tu_array(s, "runs");
	for (size_t i = 0; i < json_object_array_length(runs); i++) {
		json_object *run = json_object_array_get_idx(runs, i);
		TU_EQ((int64_t)role_count(run, "worker"), tu_int(run, "threads"), "workers at run %zu", i);
		TU_EQ((int64_t)role_count(run, "helper"), 6, "helpers at run %zu", i);
		/* The workers only computed: the helpers' sleep is not theirs. */
		cr_assert(tu_int(tu_get(run, "stack"), "other_offcpu") < tu_int(run, "helper_ns") / 100,
			  "the helpers' sleep in the workers' stack at run %zu", i);
	}
}

Test(golden, workers_parked_on_a_timer_are_not_uneven_work, .timeout = 60)
{
	json_object *s = replay("parked_workers");
	cr_assert(!has_kind(s, "load-imbalance"), "parked time taken for uneven work");
}

/* The first finding names the monitor: its mutex and both condvars. */
static void expect_monitor(json_object *root, const char *mutex, const char *cond)
{
	expect_first(root, "lock-contention", mutex);
	json_object *f = finding(root, 0), *objs = tu_array(f, "objects");
	bool named = false;
	for (size_t i = 1; i < json_object_array_length(objs); i++)
		named |= !strcmp(json_object_get_string(json_object_array_get_idx(objs, i)), cond);
	cr_assert(named, "the monitor finding does not name %s", cond);
	cr_assert(strstr(tu_str(f, "summary"), "one at a time"), "summary: %s", tu_str(f, "summary"));
	cr_assert(!has_kind(root, "park-wake"), "the condvar's parks reported apart from its mutex");
}

/* Ruby's GVL: each thread parks on a condvar of its own and is woken by
 * the thread letting go, so no wake is sent on a condvar its sender parks
 * on; every thread both parks and wakes in the monitor, as often (the
 * turns handed: findings.c, turn_use_sum). ruby 3.1's sweep got no
 * finding at all (helper-130). */
Test(golden, threads_handing_a_gvl_over_on_their_own_condvars_are_one_monitor, .timeout = 60)
{
	expect_monitor(replay("gvl"), "gvl_mutex", "thread_cond");
}

Test(golden, threads_taking_turns_through_a_gil_are_one_monitor, .timeout = 60)
{
	expect_monitor(replay("gil"), "gil_mutex", "gil_cond");
	expect_monitor(report("gil"), "gil_mutex", "switch_cond");
	json_object *ev = tu_get(finding(report("gil"), 0), "evidence");
	cr_assert(json_object_get_double(tu_get(ev, "timeouts")) > 0, "the switch interval's timed waits are evidence");
}

/* The GIL with a word every thread writes in its turn (a reference
 * count), recorded with CPU that grew elsewhere: the samples locate its
 * line, true sharing, but a line claims no more than the time sampled on
 * it (1.4% of the samples), too little for a finding; before, it claimed
 * all the growth, a quarter of the lost time (a starved host's Python
 * sweep ranked a reference count so above the GIL). */
Test(golden, a_word_written_in_turns_under_a_gil_claims_only_its_samples_time, .timeout = 60)
{
	json_object *s = replay_sampled("gil_refcounts");
	expect_monitor(s, "gil_mutex", "gil_cond");
	cr_assert(!has_kind(s, "true-sharing") && !has_kind(s, "false-sharing"), "a sharing finding");
	char *profile = tu_only_profile(DATA_DIR "/sweeps/gil_refcounts/threads-2-run-1");
	json_object *r = json_tokener_parse(convoy_out((const char *[]){ "report", "--json", profile, NULL }));
	json_object *lines = tu_array(tu_get(r, "cpu_samples"), "cache_lines");
	cr_assert(json_object_array_length(lines) > 0, "the samples located no line");
	TU_STREQ(tu_str(json_object_array_get_idx(lines, 0), "verdict"), "true-sharing", "the hottest line");
	json_object_put(r);
	free(profile);
}

Test(golden, a_cold_first_run_is_flagged_not_paid_for, .timeout = 60)
{
	json_object *s = replay("cold_start");
	const char *step = json_object_get_string(json_object_array_get_idx(tu_array(s, "steps"), 0));
	cr_assert(strstr(step, "superlinear") && !strstr(step, "paid for themselves"), "step: %s", step);
	const char *c = tu_str(s, "caution");
	cr_assert(strstr(c, "page cache") && strstr(c, "--warmup"), "caution: %s", c);
}

/* A pool thread parked beside the work with a routine of its own is a
 * helper (speedup.c, find_sleepers), and its parks no growth of the
 * workers': ffmpeg's idle filter thread (44 us of CPU, parked 306 ms) was
 * once the heart of "Threads ran one at a time through the monitor of
 * ...: a lock in effect", with the interpreter-lock fix (helper-130). A
 * real recording, kept as made (tests/data/README). */
Test(golden, an_idle_pool_thread_beside_the_work_is_no_lock_in_effect, .timeout = 60)
{
	json_object *r = json_tokener_parse(
		convoy_out((const char *[]){ "report", "--json", "profiles/ffmpeg_idle_thread.convoy", NULL }));
	cr_assert(r, "report --json printed no JSON");
	json_object *f = tu_array(r, "findings");
	for (size_t i = 0; i < json_object_array_length(f); i++)
		cr_assert(!strstr(tu_str(json_object_array_get_idx(f, i), "summary"), "one at a time"), "%s",
			  tu_str(json_object_array_get_idx(f, i), "summary"));
}

/* A slow middle run: the step out of it is superlinear, the speedups
 * against the first run are not, and the caution the step sentence points
 * to is there and names the slow run (helper-130: a python sweep said "see
 * the caution below" over no caution). */
Test(golden, a_superlinear_step_after_the_first_has_its_caution, .timeout = 60)
{
	json_object *s = replay("cold_middle");
	const char *step = json_object_get_string(json_object_array_get_idx(tu_array(s, "steps"), 1));
	cr_assert(strstr(step, "2 → 4 threads") && strstr(step, "see the caution below"), "step: %s", step);
	json_object *c = tu_get(s, "caution");
	cr_assert(c && json_object_get_string(c), "a step points to a caution that is not there");
	cr_assert(strstr(json_object_get_string(c), "the 2-thread run was slowed"), "caution: %s",
		  json_object_get_string(c));
}

/* With switch samples the caution says what the first run's off-CPU time
 * was (here the program's own sleep standing for the cold read) and guesses
 * at a disk only where they say read or major faults. */
Test(golden, a_cold_first_run_is_described_from_its_samples, .timeout = 60)
{
	const char *c = tu_str(replay_sampled("cold_start_sampled"), "caution");
	cr_assert(strstr(c, "dp_sleep_ns") && strstr(c, "called from main"), "caution: %s", c);
	cr_assert_null(strstr(c, "read from disk"), "caution: %s", c);
}

/* A reference run that waited for CPUs other processes held: its
 * speedups measure their load (helper-130: a pigz sweep's 1-thread run
 * was 68% runnable and the sweep said nothing). spin_preempted was
 * recorded beside a CPU hog, with switch records that say the program's
 * own threads explain none of its wait; sem_lock's run had one busy
 * thread on two CPUs. */
Test(golden, a_reference_run_slowed_by_other_processes_is_cautioned, .timeout = 60)
{
	const char *c = tu_str(replay_sampled("spin_preempted"), "caution");
	cr_assert(strstr(c, "the 1-thread run spent") && strstr(c, "other processes' load") &&
		  strstr(c, "its own threads outnumbering the CPUs explain 0.0%"), "caution: %s", c);
	c = tu_str(replay("sem_lock"), "caution");
	cr_assert(strstr(c, "with 1 busy thread on 2 CPUs: other processes' load"), "caution: %s", c);
}

/* A process that made no thread at a count of 2: fewer workers than
 * asked, said to be made in no thread, and never high: a command whose
 * work runs in other processes (make -j) got "[high] load-imbalance" on
 * one compiler run (helper-130). */
Test(golden, a_process_that_made_no_thread_is_not_blamed_high, .timeout = 60)
{
	json_object *s = replay("no_threads"), *f = finding(s, 0);
	expect_first(s, "load-imbalance", "workers");
	cr_assert(strcmp(tu_str(f, "severity"), "high") != 0, "severity %s", tu_str(f, "severity"));
	cr_assert(strstr(tu_str(f, "summary"), "The process made no thread at all"), "%s", tu_str(f, "summary"));
}

Test(golden, a_sweep_without_superlinear_steps_or_io_has_no_caution, .timeout = 60)
{
	json_object *s = replay("global_queue");
	cr_assert(json_object_is_type(tu_get(s, "caution"), json_type_null), "caution: %s",
		  json_object_get_string(tu_get(s, "caution")));
}

Test(golden, threads_taking_turns_through_a_recursive_lock_are_one_monitor, .timeout = 60)
{
	expect_monitor(replay("rlock"), "rlock_mutex", "rlock_cond");
}

/* libgomp's barrier waits (inline futex calls) are barrier time, not
 * "off-CPU for other reasons" (preload/gomp.c). */
Test(golden, openmp_barrier_time_is_barrier_time, .timeout = 60)
{
	json_object *s = replay("omp_barriers");
	json_object *run2 = json_object_array_get_idx(tu_array(s, "runs"), 1), *stack = tu_get(run2, "stack");
	cr_assert(tu_int(stack, "barrier") > tu_int(stack, "other_offcpu"), "barrier %lld, other %lld",
		  (long long)tu_int(stack, "barrier"), (long long)tu_int(stack, "other_offcpu"));
	json_object *f = tu_array(s, "findings");
	bool named = false;
	for (size_t i = 0; i < json_object_array_length(f); i++)
		named |= !strcmp(object0(json_object_array_get_idx(f, i)), "omp barrier");
	cr_assert(named, "no finding names the OpenMP barrier");
}

/* ... and with its code: the call path its CPU samples put it in while it
 * ran alone (main's serial load spins in dp_spin). */
Test(golden, a_serial_phase_is_named_with_its_thread_and_site, .timeout = 60)
{
	json_object *s = replay_sampled("serial_phase");
	expect_first(s, "load-imbalance", "main");
	const char *summary = tu_str(finding(s, 0), "summary");
	cr_assert(strstr(summary, "ran alone") && strstr(summary, "dp_spin (data_progs.h:") &&
		  strstr(summary, "in main (serial_phase.c:"), "summary: %s", summary);
	json_object *run2 = json_object_array_get_idx(tu_array(s, "runs"), 1);
	cr_assert(tu_int(tu_get(run2, "serial"), "alone_ns") > 0, "no serial phase at 2 threads");
}

/* ... and where the phase's CPU time was the C library's (memset) in a
 * program without frame pointers, with the program's code that called it:
 * the recording's chains were unwound from call-frame information by the
 * launcher (samples file version 4). */
Test(golden, a_serial_phase_in_the_c_library_is_named_with_the_programs_caller, .timeout = 60)
{
	json_object *s = replay_sampled("serial_memset");
	expect_first(s, "load-imbalance", "main");
	const char *summary = tu_str(finding(s, 0), "summary");
	cr_assert(strstr(summary, "its own code mostly in clear_table (serial_memset.c:") &&
		  strstr(summary, ") in prepare (serial_memset.c:"), "summary: %s", summary);
}

/* Off-CPU time outside waits is explained by thread and kind, and the
 * missing call sites are said to be missing. */
Test(golden, off_cpu_time_names_its_thread_and_evidence, .timeout = 60)
{
	json_object *s = replay("cold_start");
	json_object *run1 = json_object_array_get_idx(tu_array(s, "runs"), 0), *o = tu_get(run1, "offcpu_other");
	cr_assert(tu_int(o, "other_ns") > 0 && tu_int(o, "voluntary_switches") >= 0, "offcpu_other: %s",
		  json_object_to_json_string(o));
	json_object *missing = tu_array(s, "evidence_unavailable");
	bool said = false;
	for (size_t i = 0; i < json_object_array_length(missing); i++)
		said |= strstr(json_object_get_string(json_object_array_get_idx(missing, i)), "context switches") != NULL;
	cr_assert(said, "the missing off-CPU call sites are not mentioned (the recording was not sampled)");
}

/* Waits the shim cannot see (futex calls issued inline, as Go and libgomp
 * do) are timed by the switch records and split out of other_offcpu as a
 * runtime's own wait, with the function that entered the kernel. */
Test(golden, inline_futex_waits_are_timed_as_a_runtimes_wait, .timeout = 60)
{
	json_object *s = replay_sampled("inline_futex");
	json_object *run2 = json_object_array_get_idx(tu_array(s, "runs"), 1);
	json_object *stack = tu_get(run2, "stack"), *by = tu_get(run2, "other_offcpu_by_kind");
	int64_t other = tu_int(stack, "other_offcpu"), runtime = tu_int(by, "runtime"), sum = tu_int(by, "untimed");
	json_object_object_foreach(by, key, val) {
		(void)key;
		if (strcmp(key, "untimed"))
			sum += json_object_get_int64(val);
	}
	cr_assert(other > 0 && runtime > other / 2, "runtime %lld of other_offcpu %lld", (long long)runtime, (long long)other);
	cr_assert(sum >= other - 16 && sum <= other + 16, "the split adds up to %lld, not %lld", (long long)sum,
		  (long long)other);
	json_object *o = tu_get(run2, "offcpu_other"), *site = json_object_array_get_idx(tu_array(o, "sites"), 0);
	TU_STREQ(tu_str(site, "kind"), "runtime", "kind of the top site");
	cr_assert(!strncmp(tu_str(site, "function"), "park_on_futex (inline_futex.c:", 30), "function %s",
		  tu_str(site, "function"));
	/* park_on_futex keeps no frame (a leaf): the chain's first return
	 * address is worker's, and the call before it says take_turn was lost */
	TU_STREQ(tu_str(site, "site"), "take_turn", "the caller the frame-pointer chain skipped");
	cr_assert(tu_int(site, "timed_ns") > 0 && tu_int(o, "switch_samples_timed") > 0, "not timed: %s",
		  json_object_to_json_string(o));
}

/* A lock built from a futex word and a semaphore (no pthread_mutex, so no
 * call names the pair) is still one monitor: one lock-contention finding
 * names both, and the semaphore is not judged alone. */
Test(golden, a_futex_word_lock_and_its_semaphore_are_one_monitor, .timeout = 60)
{
	json_object *s = replay_sampled("futex_monitor");
	json_object *f = tu_array(s, "findings"), *monitor = NULL;
	for (size_t i = 0; i < json_object_array_length(f); i++) {
		json_object *x = json_object_array_get_idx(f, i);
		if (!strcmp(tu_str(x, "kind"), "lock-contention"))
			monitor = x;
	}
	cr_assert(monitor, "no lock-contention finding");
	json_object *objs = tu_array(monitor, "objects");
	cr_assert(json_object_array_length(objs) == 2 &&
		  !strcmp(json_object_get_string(json_object_array_get_idx(objs, 0)), "turn_lock") &&
		  !strcmp(json_object_get_string(json_object_array_get_idx(objs, 1)), "turn_sem"),
		  "objects: %s", json_object_to_json_string(objs));
	cr_assert(strstr(tu_str(monitor, "summary"), "monitor of futex turn_lock and semaphore turn_sem"), "summary: %s",
		  tu_str(monitor, "summary"));
	cr_assert(!has_kind(s, "park-wake"), "the semaphore's parks reported apart from its lock");
}

Test(golden, threads_taking_turns_through_a_semaphore_are_one_lock, .timeout = 60)
{
	json_object *s = replay("sem_lock");
	expect_first(s, "lock-contention", "turn_sem");
	cr_assert(strstr(tu_str(finding(s, 0), "summary"), "used as a lock"), "summary: %s", tu_str(finding(s, 0), "summary"));
	cr_assert(!has_kind(s, "park-wake"), "the semaphore's parks reported as park-wake");
}

/* A thread's runnable time and its waits never overlap: its split adds up
 * to no more than its life. */
Test(golden, a_threads_runnable_time_and_waits_do_not_overlap, .timeout = 60)
{
	const char *names[] = { "gil", "global_queue", "rare_lock", "churn", "barrier_uneven" };
	for (size_t n = 0; n < sizeof(names) / sizeof(names[0]); n++) {
		json_object *threads = tu_array(report(names[n]), "threads");
		for (size_t i = 0; i < json_object_array_length(threads); i++) {
			json_object *t = json_object_array_get_idx(threads, i), *split = tu_get(t, "split");
			int64_t sum = 0;
			json_object_object_foreach(split, key, val) {
				(void)key;
				sum += json_object_get_int64(val);
			}
			cr_assert(sum <= tu_int(t, "lifetime_ns") + 16, "%s thread %zu: %lld ns split in a %lld ns life",
				  names[n], i, (long long)sum, (long long)tu_int(t, "lifetime_ns"));
		}
	}
}

/* ---- where the extra CPU went: located from CPU samples (issue 12) ------- */


Test(golden, counters_eight_bytes_apart_are_false_sharing_with_both_words, .timeout = 60)
{
	json_object *s = replay_sampled("false_sharing_8");
	expect_first(s, "false-sharing", NULL);
	json_object *f = finding(s, 0);
	cr_assert(!tu_bool(f, "suspected"), "located from the samples, not suspected");
	/* heap counters have no symbol: the two words by address, 8 bytes apart */
	json_object *objs = tu_array(f, "objects");
	TU_EQ(json_object_array_length(objs), 2, "words named");
	uint64_t a = strtoull(json_object_get_string(json_object_array_get_idx(objs, 0)), NULL, 16);
	uint64_t b = strtoull(json_object_get_string(json_object_array_get_idx(objs, 1)), NULL, 16);
	TU_EQ(b - a, 8, "the two counters' distance");
	TU_EQ(json_object_get_double(tu_get(tu_get(f, "evidence"), "writing_threads")), 2, "threads writing the line");
}

Test(golden, watchpoints_confirm_the_false_sharing_of_counters_eight_bytes_apart, .timeout = 60)
{
	json_object *ev = tu_get(finding(replay_sampled("false_sharing_8"), 0), "evidence");
	TU_EQ(json_object_get_double(tu_get(ev, "confirmed_by_watchpoints")), 1, "confirmed by the watchpoints");
	cr_assert(json_object_get_double(tu_get(ev, "watched_writes")) > 0, "no write counted");
}

Test(golden, counters_a_line_apart_are_no_sharing, .timeout = 60)
{
	json_object *s = replay_sampled("false_sharing_64");
	cr_assert(!has_kind(s, "false-sharing") && !has_kind(s, "true-sharing"), "a sharing finding at 64 bytes");
}

Test(golden, padded_per_thread_stats_are_no_sharing, .timeout = 60)
{
	json_object *s = replay_sampled("padded_stats");
	cr_assert(!has_kind(s, "false-sharing") && !has_kind(s, "true-sharing"), "a sharing finding on padded stats");
}

Test(golden, a_spinlock_taken_seven_million_times_is_lock_contention, .timeout = 60)
{
	json_object *s = replay_sampled("spin_counter");
	expect_first(s, "lock-contention", "counter_spin");
	cr_assert(!has_kind(s, "true-sharing") && !has_kind(s, "false-sharing"), "a sharing verdict for a spinlock");
	/* a spinlock's hand-offs are counted, so the bouncing rule can claim its line */
	json_object *ev = tu_get(finding(s, 0), "evidence");
	cr_assert(json_object_get_double(tu_get(ev, "handoff_fraction")) > 0, "no hand-offs counted on the spinlock");
}

Test(golden, a_hand_written_spinlock_is_lock_contention_on_its_word, .timeout = 60)
{
	json_object *s = replay_sampled("cas_spin");
	expect_first(s, "lock-contention", "user_lock");
	cr_assert(!has_kind(s, "true-sharing") && !has_kind(s, "false-sharing"), "a sharing verdict for a spinlock");
}

/* The report of the one profile in sampled/NAME, checked against its
 * goldens; its JSON. These rest on the decoded samples alone, not on wall
 * times: they hold on any machine. */
static json_object *sampled_run_report(const char *name)
{
	char dir[4096], rel[512], golden[256];
	snprintf(dir, sizeof(dir), "%s/sampled/%s", DATA_DIR, name);
	char *path = tu_only_profile(dir);
	snprintf(rel, sizeof(rel), "sampled/%s/%s", name, strrchr(path, '/') + 1);
	env = sampled_env;
	snprintf(golden, sizeof(golden), "%s.report.txt", name);
	expect_golden(convoy_out((const char *[]){ "report", rel, NULL }), golden);
	snprintf(golden, sizeof(golden), "%s.report.json", name);
	char *out = convoy_out((const char *[]){ "report", "--json", rel, NULL });
	expect_golden(out, golden);
	json_object *root = json_tokener_parse(out);
	cr_assert(root, "report --json printed no JSON");
	return root;
}

/* Its cpu_samples. */
static json_object *sampled_report(const char *name)
{
	return tu_get(sampled_run_report(name), "cpu_samples");
}

/* Its cache lines, most samples first. */
static json_object *sampled_lines(const char *name)
{
	return tu_array(sampled_report(name), "cache_lines");
}

/* A thread's use of a word that the samples or the watchpoints saw (a
 * watchpoint also says which threads did not write it: 0 writes). */
static bool used(json_object *w)
{
	return tu_int(w, "writes") || tu_int(w, "reads") || tu_int(w, "spins") || tu_int(w, "watched_writes");
}

/* The words of a line: name → the one thread using it (0 when several). */
static int64_t word_thread(json_object *line, const char *name)
{
	json_object *words = tu_array(line, "words");
	int64_t tid = -1;
	for (size_t i = 0; i < json_object_array_length(words); i++) {
		json_object *w = json_object_array_get_idx(words, i);
		if (strcmp(tu_str(w, "name"), name) || !used(w))
			continue;
		tid = tid < 0 ? tu_int(w, "tid") : tid == tu_int(w, "tid") ? tid : 0;
	}
	cr_assert(tid >= 0, "no word named %s on the line", name);
	return tid;
}

Test(golden, a_packed_stats_array_is_false_sharing_with_member_paths, .timeout = 60)
{
	json_object *lines = sampled_lines("packed_stats_2");
	cr_assert(json_object_array_length(lines) > 0, "no shared line located");
	json_object *l = json_object_array_get_idx(lines, 0);
	TU_STREQ(tu_str(l, "verdict"), "false-sharing", "the line's verdict");
	int64_t a = word_thread(l, "stats[0].hits"), b = word_thread(l, "stats[1].hits");
	cr_assert(a > 0 && b > 0 && a != b, "stats[0].hits and stats[1].hits by different single threads (%lld, %lld)",
		  (long long)a, (long long)b);
}

Test(golden, watchpoints_count_each_threads_writes_to_each_stats_entry, .timeout = 60)
{
	json_object *l = json_object_array_get_idx(sampled_lines("packed_stats_2"), 0);
	TU_STREQ(tu_str(l, "watchpoints"), "confirmed", "the watchpoints' word on the false sharing");
	/* each entry written by its own worker only, as counted */
	json_object *words = tu_array(l, "words");
	int64_t writers0 = 0, writers1 = 0;
	for (size_t i = 0; i < json_object_array_length(words); i++) {
		json_object *w = json_object_array_get_idx(words, i);
		if (!tu_bool(w, "watched") || !tu_int(w, "watched_writes"))
			continue;
		writers0 += !strcmp(tu_str(w, "name"), "stats[0].hits");
		writers1 += !strcmp(tu_str(w, "name"), "stats[1].hits");
	}
	TU_EQ(writers0, 1, "threads counted writing stats[0].hits");
	TU_EQ(writers1, 1, "threads counted writing stats[1].hits");
}

Test(golden, padded_stats_share_no_line, .timeout = 60)
{
	TU_EQ(json_object_array_length(sampled_lines("padded_stats_2")), 0, "shared lines located");
}

Test(golden, one_shared_atomic_is_true_sharing_naming_it, .timeout = 60)
{
	json_object *lines = sampled_lines("shared_atomic_2");
	cr_assert(json_object_array_length(lines) > 0, "no shared line located");
	json_object *l = json_object_array_get_idx(lines, 0);
	TU_STREQ(tu_str(l, "verdict"), "true-sharing", "the line's verdict");
	TU_EQ(word_thread(l, "shared_counter"), 0, "shared_counter used by several threads");
}

Test(golden, watchpoints_confirm_one_shared_atomic, .timeout = 60)
{
	json_object *l = json_object_array_get_idx(sampled_lines("shared_atomic_2"), 0);
	TU_STREQ(tu_str(l, "watchpoints"), "confirmed", "the watchpoints' word on the true sharing");
}

/* A word threads spin on (a compare-and-swap lock, test-and-set, polling): the
 * line's verdict is spinning, on that word, by every worker, and never a
 * plain store. */
static void expect_spinning_on(const char *recording, const char *word)
{
	json_object *c = sampled_report(recording);
	cr_assert(tu_int(c, "spin_loop_samples") > 0, "no sample recognised in a spin loop");
	json_object *l = json_object_array_get_idx(tu_array(c, "cache_lines"), 0);
	cr_assert(l, "no line located");
	TU_STREQ(tu_str(l, "verdict"), "spinning", "the line's verdict");
	json_object *words = tu_array(l, "words");
	int spinners = 0;
	for (size_t i = 0; i < json_object_array_length(words); i++) {
		json_object *w = json_object_array_get_idx(words, i);
		if (strcmp(tu_str(w, "name"), word))
			continue;
		spinners += tu_int(w, "spins") > 0;
	}
	TU_EQ(spinners, 2, "threads spinning on %s", word);
}

Test(golden, a_hand_written_spinlock_is_spinning_on_its_word, .timeout = 60)
{
	expect_spinning_on("cas_spin_2", "user_lock");
}

Test(golden, a_test_and_set_spinlock_is_spinning_on_its_word, .timeout = 60)
{
	expect_spinning_on("tas_spin_2", "tas_lock");
}

/* A CAS loop storing old + 1 updates shared data without a lock: its
 * retries are contended stores of one word (true sharing), not a wait. */
Test(golden, a_compare_and_swap_increment_loop_is_true_sharing_on_its_counter, .timeout = 60)
{
	json_object *c = sampled_report("cas_increment_2");
	TU_EQ(tu_int(c, "spin_loop_samples"), 0, "samples in a CAS update loop counted as spinning");
	json_object *l = json_object_array_get_idx(tu_array(c, "cache_lines"), 0);
	cr_assert(l, "no shared line located");
	TU_STREQ(tu_str(l, "verdict"), "true-sharing", "the line's verdict");
	TU_EQ(word_thread(l, "cas_counter"), 0, "cas_counter written by several threads");
}

Test(golden, heap_counters_eight_bytes_apart_are_false_sharing, .timeout = 60)
{
	json_object *lines = sampled_lines("false_sharing_8_2");
	cr_assert(json_object_array_length(lines) > 0, "no shared line located");
	json_object *l = json_object_array_get_idx(lines, 0), *words = tu_array(l, "words");
	TU_STREQ(tu_str(l, "verdict"), "false-sharing", "the line's verdict");
	int64_t lo = INT64_MAX, hi = -1, n = 0;
	for (size_t i = 0; i < json_object_array_length(words); i++) {
		json_object *w = json_object_array_get_idx(words, i);
		if (!used(w))
			continue;
		n++;
		lo = tu_int(w, "offset") < lo ? tu_int(w, "offset") : lo;
		hi = tu_int(w, "offset") > hi ? tu_int(w, "offset") : hi;
	}
	TU_EQ(n, 2, "thread-words used");
	TU_EQ(hi - lo, 8, "the counters' distance");
}

/* The word of this name on a line, used by this thread: its size. */
static int64_t word_size(json_object *line, const char *name)
{
	json_object *words = tu_array(line, "words");
	for (size_t i = 0; i < json_object_array_length(words); i++) {
		json_object *w = json_object_array_get_idx(words, i);
		if (!strcmp(tu_str(w, "name"), name))
			return tu_int(w, "size");
	}
	cr_assert(0, "no word named %s on the line", name);
	return 0;
}

/* Each thread's own 4-byte counter, two in one 8-byte word: different
 * data (false sharing naming both), not one word written by both, and the
 * watchpoints, as wide as the counters, confirm it. */
static void expect_packed_ints(const char *recording, const char *first, const char *second)
{
	json_object *lines = sampled_lines(recording);
	cr_assert(json_object_array_length(lines) > 0, "no shared line located");
	json_object *l = json_object_array_get_idx(lines, 0);
	TU_STREQ(tu_str(l, "verdict"), "false-sharing", "the line's verdict");
	int64_t a = word_thread(l, first), b = word_thread(l, second);
	cr_assert(a > 0 && b > 0 && a != b, "%s and %s by different single threads (%lld, %lld)", first, second,
		  (long long)a, (long long)b);
	TU_EQ(word_size(l, first), 4, "bytes of %s", first);
	TU_EQ(word_size(l, second), 4, "bytes of %s", second);
	TU_STREQ(tu_str(l, "watchpoints"), "confirmed", "the 4-byte watchpoints' word on it");
}

Test(golden, packed_int_counters_are_false_sharing_naming_both, .timeout = 60)
{
	expect_packed_ints("packed_ints_2", "worker_hits[0]", "worker_hits[1]");
}

Test(golden, packed_atomic_int_counters_are_false_sharing_naming_both, .timeout = 60)
{
	expect_packed_ints("packed_atomic_ints_2", "thread_ops[0]", "thread_ops[1]");
}

/* A 1-byte lock in the 8-byte word of the count it guards is named itself,
 * and its line is the lock's, whatever else is written on it. */
Test(golden, a_one_byte_lock_beside_its_data_is_named_and_owns_its_line, .timeout = 60)
{
	expect_spinning_on("guarded_flag_2", "queue.flag");
	json_object *l = json_object_array_get_idx(sampled_lines("guarded_flag_2"), 0);
	TU_EQ(word_size(l, "queue.flag"), 1, "bytes of the flag");
	TU_EQ(word_size(l, "queue.len"), 4, "bytes of the count beside it");
}

Test(golden, a_spinlock_sharing_its_line_with_its_data_is_lock_contention, .timeout = 60)
{
	json_object *s = replay_sampled("guarded_flag");
	expect_first(s, "lock-contention", "queue.flag");
	cr_assert(!has_kind(s, "true-sharing") && !has_kind(s, "false-sharing"), "a sharing verdict for a spinlock");
	cr_assert(strstr(tu_str(finding(s, 0), "summary"), "same line moves with the lock: queue.len"),
		  "the data written on the lock's line is not said: %s", tu_str(finding(s, 0), "summary"));
}

/* Spinning for a lock is not work: the worker that spun most is not the
 * busiest one. */
Test(golden, a_worker_that_spun_more_is_not_the_busiest, .timeout = 60)
{
	cr_assert(!has_kind(sampled_run_report("tas_spin_2"), "load-imbalance"), "tas_spin_2: spinning called work");
	cr_assert(!has_kind(sampled_run_report("cas_spin_2"), "load-imbalance"), "cas_spin_2: spinning called work");
	cr_assert(!has_kind(replay_sampled("guarded_flag"), "load-imbalance"), "guarded_flag: spinning called work");
}

Test(golden, a_rust_mutex_spin_is_charged_to_its_futex_word, .timeout = 60)
{
	json_object *c = sampled_report("rust_mutex_2");
	cr_assert(tu_int(c, "lock_samples") > 0, "no sample inside std's mutex");
	TU_EQ(tu_int(c, "lock_samples_unknown_lock"), 0, "lock samples whose lock was not told");
	json_object *locks = tu_array(c, "locks");
	TU_EQ(json_object_array_length(locks), 1, "locks with samples");
	TU_STREQ(tu_str(json_object_array_get_idx(locks, 0), "kind"), "futex", "the mutex's futex word");
	json_object *fns = tu_array(c, "functions");
	bool rust = false;
	for (size_t i = 0; i < json_object_array_length(fns); i++) {
		json_object *impl = tu_get(json_object_array_get_idx(fns, i), "lock_implementation");
		rust |= impl && !strcmp(json_object_get_string(impl), "Rust std Mutex");
	}
	cr_assert(rust, "no function recognised as Rust std's Mutex");
	/* the line it spins on is the mutex's own: the futex word and the u64 beside it */
	json_object *l = json_object_array_get_idx(tu_array(c, "cache_lines"), 0);
	cr_assert(l && tu_bool(l, "sync_object"), "the hottest line is not the mutex's");
}

Test(golden, a_contended_rust_mutex_is_lock_contention_not_sharing, .timeout = 60)
{
	json_object *s = replay_sampled("rust_mutex");
	expect_first(s, "lock-contention", "futex");
	cr_assert(!has_kind(s, "true-sharing") && !has_kind(s, "false-sharing"), "a sharing verdict for a mutex");
	json_object *ev = tu_get(finding(s, 0), "evidence");
	cr_assert(json_object_get_double(tu_get(ev, "sampled_spin_ns")) > 0, "no sampled spin claimed by the mutex");
}

Test(golden, a_sweep_says_why_names_are_module_offsets, .timeout = 60)
{
	replay_sampled("stripped_lock");   /* its binary kept with no symbols at all */
	char *text = convoy_out((const char *[]){ "scale", "--replay", "sweeps/stripped_lock", NULL });
	cr_assert(strstr(text, "Names that are module+offset: no symbol covered those addresses in stripped_lock"),
		  "no note on the offsets in:\n%s", text);
}

Test(golden, a_heap_futex_word_is_named_by_its_code_not_its_address, .timeout = 60)
{
	/* The Arc<Mutex>'s word is on the heap, at another address each run
	 * (ASLR): named by its address, runs of a sweep could not match it. */
	const char *name = object0(finding(replay_sampled("rust_mutex"), 0));
	cr_assert(!strstr(name, "@0x") && !strncmp(name, "futex@", 6), "the futex word is named %s", name);
}

/* Rust inlines the program's small functions into its closures, and the
 * thread's closure into std's thread start: the machine code of all a
 * thread does is inside std::sys::backtrace::__rust_begin_short_backtrace.
 * The debug info's inlined frames name the program's own functions. */
static bool std_function(const char *fn)
{
	static const char *const prefixes[] = { "std::", "core::", "alloc::", "<std::", "<core::", "<alloc::" };
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(fn, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

Test(golden, a_rust_mutex_used_from_inlined_functions_is_named_after_them, .timeout = 60)
{
	json_object *r = sampled_run_report("rust_inlined_2");
	json_object *locks = tu_array(r, "locks");
	TU_EQ(json_object_array_length(locks), 1, "locks");
	json_object *lock = json_object_array_get_idx(locks, 0);
	const char *name = tu_str(lock, "name");
	cr_assert(!strncmp(name, "futex@rust_inlined::tally (rust_inlined.rs:", 43), "the std Mutex is named %s", name);
	json_object *fns = tu_array(tu_get(r, "cpu_samples"), "functions");
	TU_STREQ(tu_str(json_object_array_get_idx(fns, 0), "function"), "rust_inlined::mix",
		 "the function with the most CPU time");
	/* std's frames, inlined or not, are the runtime's; the program's are
	 * its own, its implementation of std's Extend for its type included. */
	json_object *frames = tu_array(json_object_array_get_idx(tu_array(lock, "stacks"), 0), "frames");
	bool std_inlined = false, own_impl = false;
	for (size_t i = 0; i < json_object_array_length(frames); i++) {
		json_object *f = json_object_array_get_idx(frames, i);
		const char *fn = tu_str(f, "function");
		bool runtime = tu_bool(f, "runtime");
		if (std_function(fn))
			cr_assert(runtime, "std's frame %s is not marked runtime", fn);
		else
			cr_assert(!runtime, "the program's frame %s is marked runtime", fn);
		std_inlined |= runtime && tu_bool(f, "inlined");
		own_impl |= !strncmp(fn, "<&rust_inlined::Tally as core::", 31) && !runtime;
	}
	cr_assert(std_inlined, "no inlined std frame on the lock's stack");
	cr_assert(own_impl, "the program's Extend impl is not on the lock's stack as its own code");
}

/* Off-CPU call sites are said to be missing only when the run sampled no
 * context switches. */
static bool says_sites_missing(json_object *s)
{
	json_object *missing = tu_array(s, "evidence_unavailable");
	for (size_t i = 0; i < json_object_array_length(missing); i++)
		if (strstr(json_object_get_string(json_object_array_get_idx(missing, i)), "context switches"))
			return true;
	return false;
}

Test(golden, offcpu_sites_are_missing_only_without_switch_samples, .timeout = 60)
{
	cr_assert(says_sites_missing(replay("global_queue")), "an unsampled sweep claims off-CPU call sites");
	cr_assert(!says_sites_missing(replay_sampled("rust_mutex")), "a sampled sweep says its switch samples are missing");
}
