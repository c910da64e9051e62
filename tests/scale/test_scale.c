/* test_scale.c — convoy scale, the speedup stack and the findings, on the
 * demos that each carry one known cause of poor scaling (issue 4).
 *
 * These run real sweeps, so what they see depends on the machine doing what
 * the demo provokes (two CPUs here). They check the diagnosis and the
 * accounting — which component, which object, that the stack adds up — never
 * a timing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define DEMO(name) BUILD_DIR "/demos/" name

/* Runs `convoy scale --json` with the given counts on the demo command and
 * returns the parsed sweep. */
static json_object *sweep(const char *threads, const char *const cmd[])
{
	const char *argv[40] = { tu_convoy(), "scale", "--json", "--repeat", "3", "--threads", threads,
				 "-o", tu_tmpdir(), "--" };
	size_t n = 10;
	for (size_t i = 0; cmd[i] && n < 39; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	struct tu_proc p;
	struct tu_opts o = { .timeout_s = 240 };
	tu_run(&p, &o, argv);
	tu_assert_exit(&p, 0, "convoy scale");
	json_object *root = json_tokener_parse(p.out);
	cr_assert(root, "convoy scale --json printed no JSON: %s", p.out);
	return root;
}

static json_object *first_finding(json_object *root)
{
	json_object *f = tu_array(root, "findings");
	cr_assert(json_object_array_length(f) > 0, "no findings: %s",
		  json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY));
	return json_object_array_get_idx(f, 0);
}

static void expect_first(json_object *root, const char *kind)
{
	json_object *f = first_finding(root);
	cr_assert(!strcmp(tu_str(f, "kind"), kind), "first finding is %s, expected %s: %s",
		  tu_str(f, "kind"), kind, json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY));
}

/* Every run's components add up to threads × wall (rounding: 1 ns each). */
static void expect_stack_adds_up(json_object *root)
{
	json_object *runs = tu_array(root, "runs");
	cr_assert(json_object_array_length(runs) > 0);
	for (size_t i = 0; i < json_object_array_length(runs); i++) {
		json_object *r = json_object_array_get_idx(runs, i), *stack = tu_get(r, "stack");
		double sum = 0;
		json_object_object_foreach(stack, key, val) {
			(void)key;
			sum += (double)json_object_get_int64(val);
		}
		double budget = (double)tu_int(r, "threads") * (double)tu_int(r, "wall_ns");
		cr_assert(fabs(sum - budget) <= 16, "run %zu: stack sums to %.0f, threads × wall = %.0f", i, sum, budget);
		TU_EQ(tu_int(r, "budget_ns"), (int64_t)llround(budget), "run %zu budget", i);
	}
}

Test(scale, global_queue_blames_the_queue_lock, .timeout = 240)
{
	const char *cmd[] = { DEMO("global_queue"), "--workers", "{threads}", "--tasks", "1000000", NULL };
	json_object *root = sweep("1,2", cmd);
	expect_stack_adds_up(root);
	json_object *f = first_finding(root);
	const char *kind = tu_str(f, "kind");
	cr_assert(!strcmp(kind, "acquisition-frequency") || !strcmp(kind, "lock-contention"),
		  "first finding is %s: %s", kind, json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY));
	json_object *objs = tu_array(f, "objects");
	cr_assert(strstr(json_object_get_string(json_object_array_get_idx(objs, 0)), "global_queue"),
		  "the finding is about %s", json_object_get_string(json_object_array_get_idx(objs, 0)));
	cr_assert(json_object_get_double(tu_get(f, "share")) >= 0.5, "share %f",
		  json_object_get_double(tu_get(f, "share")));
	cr_assert(tu_int(f, "predicted_wall_ns") < tu_int(f, "wall_ns"));
}

Test(scale, work_stealing_has_no_high_finding, .timeout = 240)
{
	const char *cmd[] = { DEMO("work_stealing"), "--workers", "{threads}", "--tasks", "1000000", NULL };
	json_object *root = sweep("1,2", cmd);
	expect_stack_adds_up(root);
	json_object *f = tu_array(root, "findings");
	for (size_t i = 0; i < json_object_array_length(f); i++)
		cr_assert(strcmp(tu_str(json_object_array_get_idx(f, i), "severity"), "high"),
			  "high finding: %s", json_object_to_json_string(json_object_array_get_idx(f, i)));
}

Test(scale, shared_atomic_is_suspected_true_sharing, .timeout = 240)
{
	const char *cmd[] = { DEMO("atomic_scaling"), "--workers", "{threads}", "--total", "40000000", NULL };
	json_object *root = sweep("1,2", cmd);
	expect_stack_adds_up(root);
	expect_first(root, "true-sharing");
	cr_assert(tu_bool(first_finding(root), "suspected"));
}

Test(scale, eight_workers_on_two_cpus_oversubscribe, .timeout = 240)
{
	const char *cmd[] = { DEMO("worker_count"), "--workers", "{threads}", "--total", "200000000", NULL };
	json_object *root = sweep("1,8", cmd);
	expect_stack_adds_up(root);
	expect_first(root, "oversubscription");
}

Test(scale, all_work_on_one_worker_is_imbalance, .timeout = 240)
{
	const char *cmd[] = { DEMO("imbalance"), "--workers", "{threads}", "--stealing", "off", NULL };
	json_object *root = sweep("1,2", cmd);
	expect_stack_adds_up(root);
	expect_first(root, "load-imbalance");
}

Test(scale, a_thread_per_task_is_churn, .timeout = 240)
{
	const char *cmd[] = { DEMO("thread_per_task"), "--workers", "{threads}", NULL };
	json_object *root = sweep("1,2", cmd);
	expect_stack_adds_up(root);
	expect_first(root, "thread-churn");
}

Test(scale, parking_at_once_is_park_wake, .timeout = 240)
{
	const char *cmd[] = { DEMO("barrier"), "--workers", "{threads}", "--idle-spin", "0", "--iterations", "20000", NULL };
	json_object *root = sweep("1,2", cmd);
	expect_stack_adds_up(root);
	expect_first(root, "park-wake");
}

/* ---- the command's contract --------------------------------------------- */

static void expect_usage_error(const char *const argv[])
{
	struct tu_proc p;
	struct tu_opts o = { 0 };
	tu_run(&p, &o, argv);
	cr_assert(p.exited && p.code == 2, "exit %d (signal %d) for %s", p.code, p.sig, argv[2]);
	TU_EQ(tu_count_lines(p.err), 1, "error lines: %s", p.err);
	cr_assert(!strncmp(p.err, "convoy: ", 8), "stderr: %s", p.err);
}

Test(scale, usage_errors, .timeout = 30)
{
	const char *no_placeholder[] = { tu_convoy(), "scale", "--threads", "1,2", "--", "/bin/true", NULL };
	const char *bad_list[] = { tu_convoy(), "scale", "--threads", "1,x", "--", "/bin/echo", "{threads}", NULL };
	const char *zero[] = { tu_convoy(), "scale", "--threads", "0", "--", "/bin/echo", "{threads}", NULL };
	const char *twice[] = { tu_convoy(), "scale", "--threads", "2,2", "--", "/bin/echo", "{threads}", NULL };
	const char *no_list[] = { tu_convoy(), "scale", "--", "/bin/echo", "{threads}", NULL };
	const char *no_cmd[] = { tu_convoy(), "scale", "--threads", "1", NULL };
	const char *repeat[] = { tu_convoy(), "scale", "--threads", "1", "--repeat", "0", "--", "/bin/echo", "{threads}", NULL };
	expect_usage_error(no_placeholder);
	expect_usage_error(bad_list);
	expect_usage_error(zero);
	expect_usage_error(twice);
	expect_usage_error(no_list);
	expect_usage_error(no_cmd);
	expect_usage_error(repeat);
}

Test(scale, a_failing_command_stops_the_sweep, .timeout = 60)
{
	const char *argv[] = { tu_convoy(), "scale", "--threads", "1,2", "-o", tu_tmpdir(), "--",
			       "/bin/sh", "-c", "exit 3", "{threads}", NULL };
	struct tu_proc p;
	struct tu_opts o = { 0 };
	tu_run(&p, &o, argv);
	cr_assert(p.exited && p.code == 1, "exit %d", p.code);
	TU_EQ(tu_count_lines(p.err), 1, "error lines: %s", p.err);
	cr_assert(strstr(p.err, "status 3"), "stderr: %s", p.err);
}

Test(scale, repeats_and_keeps_every_profile, .timeout = 120)
{
	char *dir = tu_tmpdir();
	const char *argv[] = { tu_convoy(), "scale", "--json", "--repeat", "3", "--threads", "2,1", "-o", dir, "--",
			       DEMO("work_stealing"), "--workers", "{threads}", "--tasks", "20000", NULL };
	struct tu_proc p;
	struct tu_opts o = { .timeout_s = 100 };
	tu_run(&p, &o, argv);
	tu_assert_exit(&p, 0, "convoy scale");
	json_object *root = json_tokener_parse(p.out);
	json_object *runs = tu_array(root, "runs");
	TU_EQ(json_object_array_length(runs), 2, "runs");
	TU_EQ(tu_int(json_object_array_get_idx(runs, 0), "threads"), 1, "ascending, reference first");
	for (size_t i = 0; i < 2; i++) {
		json_object *r = json_object_array_get_idx(runs, i);
		TU_EQ(json_object_array_length(tu_array(r, "walls_ns")), 3, "walls per count");
		cr_assert(tu_int(r, "wall_ns") > 0);
	}
	cr_assert(fabs(json_object_get_double(tu_get(json_object_array_get_idx(runs, 0), "speedup")) - 1.0) < 1e-9);
	for (int n = 1; n <= 2; n++)
		for (int k = 1; k <= 3; k++) {
			char sub[512];
			size_t count = 0;
			snprintf(sub, sizeof(sub), "%s/threads-%d-run-%d", dir, n, k);
			tu_profiles(sub, &count);
			TU_EQ(count, 1, "profiles in %s", sub);
		}
	char path[512];
	snprintf(path, sizeof(path), "%s/sweep.json", dir);
	json_object *saved = json_object_from_file(path);
	cr_assert(saved, "no sweep.json");
	TU_EQ(json_object_array_length(tu_array(saved, "runs")), 2, "saved runs");
}

Test(scale, progress_points_drive_the_curve, .timeout = 60)
{
	const char *argv[] = { tu_convoy(), "scale", "--json", "--threads", "1,2", "-o", tu_tmpdir(), "--",
			       BUILD_DIR "/tests/progs/progress_work", "{threads}", NULL };
	struct tu_proc p;
	struct tu_opts o = { .timeout_s = 50 };
	tu_run(&p, &o, argv);
	tu_assert_exit(&p, 0, "convoy scale");
	json_object *root = json_tokener_parse(p.out);
	cr_assert(tu_bool(root, "throughput_from_progress"));
	json_object *runs = tu_array(root, "runs");
	for (size_t i = 0; i < json_object_array_length(runs); i++)
		cr_assert(json_object_get_double(tu_get(json_object_array_get_idx(runs, i), "progress_units")) > 0);
}

Test(scale, diff_of_two_sweeps, .timeout = 120)
{
	char *a = tu_tmpdir(), *b = tu_tmpdir();
	const char *run_a[] = { tu_convoy(), "scale", "--threads", "1,2", "-o", a, "--",
				DEMO("global_queue"), "--workers", "{threads}", "--tasks", "20000", NULL };
	const char *run_b[] = { tu_convoy(), "scale", "--threads", "1,2", "-o", b, "--",
				DEMO("work_stealing"), "--workers", "{threads}", "--tasks", "20000", NULL };
	struct tu_proc p;
	struct tu_opts o = { .timeout_s = 100 };
	tu_run(&p, &o, run_a);
	tu_assert_exit(&p, 0, "scale a");
	tu_run(&p, &o, run_b);
	tu_assert_exit(&p, 0, "scale b");
	const char *diff[] = { tu_convoy(), "diff", "--json", a, b, NULL };
	tu_run(&p, &o, diff);
	tu_assert_exit(&p, 0, "diff");
	json_object *root = json_tokener_parse(p.out);
	TU_EQ(json_object_array_length(tu_array(root, "runs")), 2, "thread counts in common");
	cr_assert(json_object_array_length(tu_array(root, "differences")) > 0);
}
