/* outcome.c — `convoy run` and `convoy scale` explain a command whatever its
 * end: a non-zero exit, a signal, or a hang their --timeout stopped. */
#include <ctype.h>
#include <dirent.h>
#include <signal.h>
#include <string.h>

#include "testutil.h"

static void run_convoy(struct tu_proc *p, const char *const argv[])
{
	struct tu_opts o = { .timeout_s = 60 };
	tu_run(p, &o, argv);
}

Test(outcome, run_explains_a_command_that_exits_3, .timeout = 60)
{
	struct tu_proc p;
	run_convoy(&p, (const char *[]){ tu_convoy(), "run", "--json", "-o", tu_tmpdir(), "--", tu_prog("exit_status"),
					 "3", NULL });
	tu_assert_exit(&p, 3, "convoy run keeps the command's status");
	json_object *root = json_tokener_parse(p.out);
	cr_assert(root, "no JSON report: %s", p.out);
	json_object *proc = tu_get(root, "process");
	cr_assert_eq(tu_int(proc, "exit_status"), 3);
	cr_assert(!tu_bool(proc, "timed_out"));
	cr_assert(tu_lock(root, "exit_lock"), "the report has the program's lock");
}

Test(outcome, run_explains_a_hang_stopped_by_timeout, .timeout = 60)
{
	struct tu_proc p;
	run_convoy(&p, (const char *[]){ tu_convoy(), "run", "--timeout", "1", "-o", tu_tmpdir(), "--",
					 tu_prog("lock_ring"), NULL });
	cr_assert(p.exited && p.code == 128 + SIGTERM, "convoy run: exit %d signal %d\n%s", p.code, p.sig, p.err);
	cr_assert(strstr(p.out, "convoy report: "), "no report:\n%s\n%s", p.out, p.err);
	cr_assert(strstr(p.out, "ran past --timeout (1 s)"), "the report does not say it timed out:\n%s", p.out);
}

Test(outcome, scale_explains_runs_that_hang, .timeout = 120)
{
	struct tu_proc p;
	run_convoy(&p, (const char *[]){ tu_convoy(), "scale", "--json", "--timeout", "1", "--threads", "2", "-o",
					 tu_tmpdir(), "--", tu_prog("lock_ring"), "{threads}", NULL });
	tu_assert_exit(&p, 0, "convoy scale explains a hung run");
	json_object *root = json_tokener_parse(p.out);
	cr_assert(root, "no JSON: %s\n%s", p.out, p.err);
	json_object *run = json_object_array_get_idx(tu_array(root, "runs"), 0);
	cr_assert(tu_bool(run, "timed_out"));
	cr_assert_eq(tu_int(run, "signal"), SIGTERM);
}

/* ---- pool starvation: every run here hangs or ends the same way every time -- */

static json_object *run_json(const char *const argv[])
{
	struct tu_proc p;
	run_convoy(&p, argv);
	json_object *root = json_tokener_parse(p.out);
	cr_assert(root, "no JSON report (exit %d):\n%s\n%s", p.code, p.out, p.err);
	return root;
}

static json_object *finding_of_kind(json_object *root, const char *kind)
{
	return tu_find(tu_array(root, "findings"), "kind", kind);
}

Test(outcome, nested_submit_without_helping_is_pool_starvation_first, .timeout = 60)
{
	/* Its own watchdog (--timeout-ms) waits an hour: --timeout stops the hang. */
	json_object *root = run_json((const char *[]){ tu_convoy(), "run", "--json", "--timeout", "1", "-o",
						       tu_tmpdir(), "--", BUILD_DIR "/demos/nested_submit", "--workers",
						       "2", "--helping", "off", "--timeout-ms", "3600000", NULL });
	json_object *f = tu_array(root, "findings");
	cr_assert(json_object_array_length(f) > 0, "no findings: %s", json_object_to_json_string(root));
	json_object *x = json_object_array_get_idx(f, 0);
	cr_assert_str_eq(tu_str(x, "kind"), "pool-starvation", "%s", json_object_to_json_string(root));
	cr_assert_eq(json_object_get_int(tu_get(tu_get(x, "evidence"), "workers")), 2);
	const char *pool = json_object_get_string(json_object_array_get_idx(tu_array(x, "objects"), 0));
	cr_assert(!strncmp(pool, "nest-*", 6), "the pool is named by its workers: %s", pool);
	cr_assert(strstr(tu_str(x, "fix"), "help while waiting"));
}

Test(outcome, nested_submit_with_helping_does_not_starve, .timeout = 60)
{
	json_object *root = run_json((const char *[]){ tu_convoy(), "run", "--json", "-o", tu_tmpdir(), "--",
						       BUILD_DIR "/demos/nested_submit", "--workers", "2", "--helping",
						       "on", NULL });
	cr_assert_null(finding_of_kind(root, "pool-starvation"), "%s", json_object_to_json_string(root));
}

Test(outcome, idle_workers_stopped_by_timeout_are_not_starvation, .timeout = 60)
{
	json_object *root = run_json((const char *[]){ tu_convoy(), "run", "--json", "--timeout", "1", "-o",
						       tu_tmpdir(), "--", tu_prog("idle_pool"), "2", NULL });
	cr_assert_null(finding_of_kind(root, "pool-starvation"), "%s", json_object_to_json_string(root));
}

Test(outcome, a_deadlock_is_not_pool_starvation, .timeout = 60)
{
	json_object *root = run_json((const char *[]){ tu_convoy(), "run", "--json", "--timeout", "1", "-o",
						       tu_tmpdir(), "--", BUILD_DIR "/demos/deadlock", "--workers", "2",
						       "--timeout-ms", "3600000", NULL });
	json_object *f = tu_array(root, "findings");
	cr_assert(json_object_array_length(f) > 0, "no findings: %s", json_object_to_json_string(root));
	cr_assert_str_eq(tu_str(json_object_array_get_idx(f, 0), "kind"), "deadlock");
	cr_assert_null(finding_of_kind(root, "pool-starvation"), "%s", json_object_to_json_string(root));
}

/* ---- --on-hang continue: a snapshot at the hang, and the program goes on -- */

Test(outcome, on_hang_continue_lets_the_program_go_on_and_explains_the_hang, .timeout = 60)
{
	/* hang_then_go ends on its own (status 0) only once the snapshot exists. */
	struct tu_proc p;
	struct tu_opts o = { .timeout_s = 60, .env = (const char *[]){ "CONVOY_WATCHDOG=0.2", NULL } };
	tu_run(&p, &o, (const char *[]){ tu_convoy(), "run", "--json", "--on-hang", "continue", "-o", tu_tmpdir(), "--",
					 tu_prog("hang_then_go"), "2", NULL });
	tu_assert_exit(&p, 0, "the program went on and exited 0");
	cr_assert(strstr(p.err, "went on after the snapshot"), "%s", p.err);
	json_object *root = json_tokener_parse(p.out);
	cr_assert(root, "no JSON report: %s\n%s", p.out, p.err);
	json_object *proc = tu_get(root, "process");
	cr_assert(tu_bool(proc, "hung"));
	cr_assert_str_eq(tu_str(proc, "on_hang"), "continue");
	cr_assert(tu_bool(proc, "hang_snapshot"));
	cr_assert_eq(tu_int(proc, "exit_status"), 0);
	/* The profile written at exit cannot show a starved pool; the snapshot does. */
	json_object *x = json_object_array_get_idx(tu_array(root, "findings"), 0);
	cr_assert(x, "no findings: %s", p.out);
	cr_assert_str_eq(tu_str(x, "kind"), "pool-starvation", "%s", p.out);
	cr_assert(strstr(tu_str(x, "summary"), "at the hang, in the snapshot"), "%s", tu_str(x, "summary"));
}

Test(outcome, on_hang_continue_says_no_snapshot_was_written_where_the_program_handles_the_signal_itself,
     .timeout = 60)
{
	/* hang_own_rtmax's own SIGRTMAX handler takes convoy's request (and
	 * ends its hang): the shim writes nothing, and the report must not
	 * say it did. */
	struct tu_proc p;
	char *dir = tu_tmpdir();
	struct tu_opts o = { .timeout_s = 60, .env = (const char *[]){ "CONVOY_WATCHDOG=0.2", NULL } };
	tu_run(&p, &o, (const char *[]){ tu_convoy(), "run", "--json", "--on-hang", "continue", "--timeout", "50", "-o",
					 dir, "--", tu_prog("hang_own_rtmax"), NULL });
	tu_assert_exit(&p, 0, "the program's handler ended its hang");
	cr_assert(strstr(p.err, "woken by SIGRTMAX"), "%s", p.err);
	TU_EQ(tu_count_entries(dir, "convoy-", ".hang", NULL), 0, "snapshots in %s", dir);
	json_object *root = json_tokener_parse(p.out);
	cr_assert(root, "no JSON report: %s\n%s", p.out, p.err);
	json_object *proc = tu_get(root, "process");
	cr_assert(tu_bool(proc, "hung"));
	cr_assert(tu_bool(proc, "hang_snapshot_asked"), "%s", p.out);
	cr_assert(!tu_bool(proc, "hang_snapshot"), "%s", p.out);
	tu_run(&p, &o, (const char *[]){ tu_convoy(), "run", "--on-hang", "continue", "--timeout", "50", "-o", dir, "--",
					 tu_prog("hang_own_rtmax"), NULL });
	tu_assert_exit(&p, 0, "convoy run, text report");
	char *text = strdup(p.out), *o2 = text;   /* the report's lines joined: its words are wrapped */
	for (const char *c = p.out; *c; c++)
		if (!isspace((unsigned char)*c) || (o2 > text && o2[-1] != ' '))
			*o2++ = isspace((unsigned char)*c) ? ' ' : *c;
	*o2 = '\0';
	cr_assert(strstr(text, "but none was written (the program handles that signal itself"), "%s", p.out);
	free(text);
}

Test(outcome, of_several_snapshots_of_a_process_the_report_reads_the_earliest, .timeout = 60)
{
	/* snapshot_waits asks for three snapshots, one per blocked thread. */
	char env_sig[48];
	snprintf(env_sig, sizeof(env_sig), "CONVOY_SNAPSHOT_SIGNAL=%d", SIGRTMAX);
	char *dir = tu_tmpdir();
	struct tu_proc p;
	tu_run(&p, &(struct tu_opts){ .preload = true, .dir = dir, .quiet = true, .env = (const char *const[]){ env_sig, NULL } },
	       (const char *[]){ tu_prog("snapshot_waits"), "send", NULL });
	tu_assert_exit(&p, 0, "snapshot_waits send");
	size_t n;
	char **files = tu_profiles(dir, &n);
	TU_EQ(n, 1, "profiles in %s", dir);
	const char *earliest = NULL;
	int64_t earliest_wall = INT64_MAX;
	DIR *d = opendir(dir);
	for (struct dirent *e; (e = readdir(d));) {
		size_t len = strlen(e->d_name);
		if (len < 5 || strcmp(e->d_name + len - 5, ".hang"))
			continue;
		char *path = malloc(strlen(dir) + len + 2);
		sprintf(path, "%s/%s", dir, e->d_name);
		int64_t wall = tu_int(tu_get(tu_report(path), "process"), "wall_ns");   /* the same start: the same order */
		if (wall < earliest_wall) {
			earliest_wall = wall;
			earliest = path;
		}
	}
	closedir(d);
	cr_assert(earliest, "no snapshot in %s", dir);
	TU_STREQ(tu_str(tu_get(tu_report(files[0]), "process"), "hang_snapshot_profile"), earliest,
		 "the snapshot read beside %s", files[0]);
}

Test(outcome, on_hang_takes_stop_or_continue, .timeout = 30)
{
	struct tu_proc p;
	run_convoy(&p, (const char *[]){ tu_convoy(), "run", "--on-hang", "later", "--", tu_prog("exit_status"), "0",
					 NULL });
	tu_assert_exit(&p, 2, "a bad --on-hang is a usage error");
	cr_assert(strstr(p.err, "convoy: run: --on-hang takes stop or continue, not 'later'"), "%s", p.err);
}

Test(outcome, a_semaphore_whose_only_poster_waits_for_the_waiters_mutex_is_a_deadlock, .timeout = 60)
{
	/* sem_deadlock hangs for good; the watchdog stops it once it has. */
	struct tu_proc p;
	struct tu_opts o = { .timeout_s = 60, .env = (const char *[]){ "CONVOY_WATCHDOG=0.2", NULL } };
	tu_run(&p, &o, (const char *[]){ tu_convoy(), "run", "--json", "-o", tu_tmpdir(), "--", tu_prog("sem_deadlock"),
					 NULL });
	json_object *root = json_tokener_parse(p.out);
	cr_assert(root, "no JSON report (exit %d):\n%s\n%s", p.code, p.out, p.err);
	cr_assert(tu_bool(tu_get(root, "process"), "hung"));
	json_object *x = json_object_array_get_idx(tu_array(root, "findings"), 0);
	cr_assert(x, "no findings: %s", p.out);
	cr_assert_str_eq(tu_str(x, "kind"), "deadlock", "%s", p.out);
	json_object *cycle = tu_array(x, "cycle");
	cr_assert_eq(json_object_array_length(cycle), 2, "%s", json_object_to_json_string(x));
	int posts = 0, holds = 0;
	for (size_t i = 0; i < 2; i++) {
		json_object *e = json_object_array_get_idx(cycle, i);
		const char *rel = tu_str(e, "relation");
		posts += !strcmp(rel, "posts") && !strcmp(tu_str(e, "holds"), "ready");
		holds += !strcmp(rel, "holds") && !strcmp(tu_str(e, "holds"), "table");
	}
	cr_assert(posts == 1 && holds == 1, "the poster posts ready, the waiter holds table: %s",
		  json_object_to_json_string(x));
}

/* ---- pool-starvation from the scheduler's queue count (CONVOY_QUEUED) ------ */

static json_object *hung_run(const char *prog, const char *arg)
{
	struct tu_proc p;
	struct tu_opts o = { .timeout_s = 60, .env = (const char *[]){ "CONVOY_WATCHDOG=0.2", NULL } };
	tu_run(&p, &o, (const char *[]){ tu_convoy(), "run", "--json", "-o", tu_tmpdir(), "--", tu_prog(prog), arg, NULL });
	json_object *root = json_tokener_parse(p.out);
	cr_assert(root, "no JSON report (exit %d):\n%s\n%s", p.code, p.out, p.err);
	cr_assert(tu_bool(tu_get(root, "process"), "hung"), "%s", p.out);
	return root;
}

Test(outcome, a_pool_blocked_while_its_counted_queue_holds_tasks_is_starved, .timeout = 60)
{
	json_object *root = hung_run("counted_pool", "3");
	json_object *x = json_object_array_get_idx(tu_array(root, "findings"), 0);
	cr_assert(x, "no findings: %s", json_object_to_json_string(root));
	cr_assert_str_eq(tu_str(x, "kind"), "pool-starvation", "%s", json_object_to_json_string(root));
	json_object *ev = tu_get(x, "evidence");
	cr_assert_eq(json_object_get_int(tu_get(ev, "queued_tasks")), 3, "%s", json_object_to_json_string(ev));
	cr_assert_eq(json_object_get_int(tu_get(ev, "free_workers")), 0, "%s", json_object_to_json_string(ev));
	cr_assert(strstr(tu_str(x, "summary"), "3 tasks were queued"), "%s", tu_str(x, "summary"));
}

Test(outcome, a_blocked_pool_whose_counted_queue_is_empty_is_idle_not_starved, .timeout = 60)
{
	json_object *root = hung_run("counted_pool", "0");
	cr_assert_null(finding_of_kind(root, "pool-starvation"), "%s", json_object_to_json_string(root));
}

Test(outcome, a_hang_of_200_threads_is_found_and_its_deadlock_shown, .timeout = 120)
{
	json_object *root = hung_run("hang_many", "200");
	json_object *x = json_object_array_get_idx(tu_array(root, "findings"), 0);
	cr_assert(x, "no findings");
	cr_assert_str_eq(tu_str(x, "kind"), "deadlock", "%s", tu_str(x, "summary"));
	cr_assert_eq(json_object_array_length(tu_array(x, "cycle")), 2, "%s", tu_str(x, "summary"));
	cr_assert_eq(json_object_array_length(tu_array(root, "threads")), 201);
}

Test(outcome, scale_lets_a_hung_run_go_on_and_explains_it_from_the_snapshot, .timeout = 120)
{
	struct tu_proc p;
	struct tu_opts o = { .timeout_s = 120, .env = (const char *[]){ "CONVOY_WATCHDOG=0.2", NULL } };
	tu_run(&p, &o, (const char *[]){ tu_convoy(), "scale", "--json", "--on-hang", "continue", "--threads", "2", "-o",
					 tu_tmpdir(), "--", tu_prog("hang_then_go"), "{threads}", NULL });
	tu_assert_exit(&p, 0, "convoy scale");
	json_object *root = json_tokener_parse(p.out);
	cr_assert(root, "no JSON: %s\n%s", p.out, p.err);
	json_object *run = json_object_array_get_idx(tu_array(root, "runs"), 0);
	cr_assert(tu_bool(run, "hung") && tu_bool(run, "hang_snapshot"), "%s", json_object_to_json_string(run));
	cr_assert_eq(tu_int(run, "exit_status"), 0);
	json_object *x = json_object_array_get_idx(tu_array(root, "findings"), 0);
	cr_assert(x, "no findings: %s", p.out);
	cr_assert_str_eq(tu_str(x, "kind"), "pool-starvation", "%s", p.out);
}

Test(outcome, on_hang_continue_snapshots_a_hung_fork_child, .timeout = 60)
{
	/* The forked child hangs; its parent watches for the child's snapshot,
	 * lets it go on and reaps it. */
	struct tu_proc p;
	struct tu_opts o = { .timeout_s = 60, .env = (const char *[]){ "CONVOY_WATCHDOG=0.2", NULL } };
	tu_run(&p, &o, (const char *[]){ tu_convoy(), "run", "--json", "--on-hang", "continue", "-o", tu_tmpdir(), "--",
					 tu_prog("hang_then_go"), "2", "--in-child", NULL });
	tu_assert_exit(&p, 0, "parent and child went on and exited 0");
	json_object *root = json_tokener_parse(p.out);
	cr_assert(root, "no JSON report: %s\n%s", p.out, p.err);
	cr_assert(tu_bool(tu_get(root, "process"), "forked"), "the child's profile is the one explained");
	json_object *x = json_object_array_get_idx(tu_array(root, "findings"), 0);
	cr_assert(x, "no findings: %s", p.out);
	cr_assert_str_eq(tu_str(x, "kind"), "pool-starvation", "%s", p.out);
}

Test(outcome, a_ring_of_12_threads_is_a_deadlock_of_12, .timeout = 60)
{
	json_object *root = hung_run("lock_ring", "12");
	json_object *x = json_object_array_get_idx(tu_array(root, "findings"), 0);
	cr_assert(x, "no findings");
	cr_assert_str_eq(tu_str(x, "kind"), "deadlock", "%s", json_object_to_json_string(root));
	cr_assert_eq(json_object_get_int(tu_get(tu_get(x, "evidence"), "threads")), 12);
	cr_assert(strstr(tu_str(x, "summary"), "(12 in all)"), "%s", tu_str(x, "summary"));
}
