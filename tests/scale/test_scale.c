/* test_scale.c — the contract of convoy scale: its options, its errors, the
 * profiles and files a sweep leaves. Nothing here depends on how fast the
 * machine is; the diagnoses of live sweeps are in test_scale_live.c
 * (make test-live). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define DEMO(name) BUILD_DIR "/demos/" name

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
	const char *warmup[] = { tu_convoy(), "scale", "--threads", "1", "--warmup", "-1", "--", "/bin/echo", "{threads}", NULL };
	const char *replay_warmup[] = { tu_convoy(), "scale", "--replay", ".", "--warmup", "1", NULL };
	expect_usage_error(repeat);
	expect_usage_error(warmup);
	expect_usage_error(replay_warmup);
}

/* A warm-up run is run, at the first count, and not analysed: its
 * directory holds a profile, and sweep.json says how many there were. */
Test(scale, warmup_runs_come_first_and_are_not_analysed, .timeout = 120)
{
	char *dir = tu_tmpdir();
	const char *argv[] = { tu_convoy(), "scale", "--json", "--warmup", "2", "--threads", "1,2", "-o", dir, "--",
			       DEMO("work_stealing"), "--workers", "{threads}", "--tasks", "20000", NULL };
	struct tu_proc p;
	struct tu_opts o = { .timeout_s = 100 };
	tu_run(&p, &o, argv);
	tu_assert_exit(&p, 0, "convoy scale");
	json_object *root = json_tokener_parse(p.out);
	TU_EQ(tu_int(root, "warmup"), 2, "warm-up runs");
	TU_EQ(json_object_array_length(tu_array(root, "runs")), 2, "analysed runs");
	for (int k = 1; k <= 2; k++) {
		char sub[512];
		size_t count = 0;
		snprintf(sub, sizeof(sub), "%s/warmup-%d", dir, k);
		tu_profiles(sub, &count);
		TU_EQ(count, 1, "profiles in %s", sub);
	}
}

Test(scale, a_failing_command_is_explained_with_its_exit_status, .timeout = 60)
{
	char *prog = tu_prog("exit_status");
	const char *argv[] = { tu_convoy(), "scale", "--json", "--threads", "1,2", "-o", tu_tmpdir(), "--",
			       prog, "3", "{threads}", NULL };
	struct tu_proc p;
	struct tu_opts o = { 0 };
	tu_run(&p, &o, argv);
	cr_assert(p.exited && p.code == 0, "exit %d: %s", p.code, p.err);
	json_object *root = json_tokener_parse(p.out);
	cr_assert(root, "no JSON: %s", p.out);
	for (size_t i = 0; i < 2; i++) {
		json_object *run = json_object_array_get_idx(tu_array(root, "runs"), i);
		TU_EQ(tu_int(run, "exit_status"), 3, "runs[%zu].exit_status", i);
		cr_assert(!tu_bool(run, "timed_out"));
	}
}

Test(scale, a_command_that_writes_no_profile_stops_the_sweep, .timeout = 60)
{
	const char *argv[] = { tu_convoy(), "scale", "--threads", "1,2", "-o", tu_tmpdir(), "--",
			       "/bin/sh", "-c", "kill -KILL $$", "{threads}", NULL };
	struct tu_proc p;
	struct tu_opts o = { 0 };
	tu_run(&p, &o, argv);
	cr_assert(p.exited && p.code == 1, "exit %d", p.code);
	TU_EQ(tu_count_lines(p.err), 1, "error lines: %s", p.err);
	cr_assert(strstr(p.err, "wrote no profile") && strstr(p.err, "signal 9"), "stderr: %s", p.err);
}

/* "no process of the command created a thread" is said of the largest
 * count, once: a sweep through a shell (two processes) of a program that
 * never makes one says it; one whose program makes threads only past one
 * (pigz -p 1 makes none) does not. */
static const char *unthreaded_note = "no process of the command created a thread";

static char *sweep_through_a_shell(const char *script)
{
	static struct tu_proc p;
	const char *argv[] = { tu_convoy(), "scale", "--json", "--threads", "1,2", "-o", tu_tmpdir(), "--",
			       "/bin/sh", "-c", script, "{threads}", NULL };
	struct tu_opts o = { .timeout_s = 100 };
	tu_run(&p, &o, argv);
	tu_assert_exit(&p, 0, "convoy scale");
	return p.err;
}

Test(scale, a_command_that_never_makes_a_thread_is_said_to_once, .timeout = 120)
{
	char script[1024];
	snprintf(script, sizeof(script), "%s 0 $0; :", tu_prog("exit_status"));
	const char *err = sweep_through_a_shell(script);
	const char *at = strstr(err, unthreaded_note);
	cr_assert(at && !strstr(at + 1, unthreaded_note), "said once: %s", err);
}

Test(scale, a_program_without_threads_at_one_count_only_is_not_said_to_make_none, .timeout = 120)
{
	char script[1024];
	snprintf(script, sizeof(script),
		 "if [ $0 -gt 1 ]; then %s --workers $0 --tasks 2000; else %s 0; fi; :", DEMO("work_stealing"),
		 tu_prog("exit_status"));
	const char *err = sweep_through_a_shell(script);
	cr_assert(!strstr(err, unthreaded_note), "stderr: %s", err);
	cr_assert(strstr(err, "convoy: analysing"), "the first run says what it analyses: %s", err);
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
