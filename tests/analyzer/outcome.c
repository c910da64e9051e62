/* outcome.c — `convoy run` and `convoy scale` explain a command whatever its
 * end: a non-zero exit, a signal, or a hang their --timeout stopped. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* ---- a snapshot at the hang, and the program goes on --------------------- */

/* hang_then_go --watch dir k: beside convoy, outside the command's tree, it
 * tells each process whose hang snapshot appears in dir to go on, until it
 * has seen k; killed and reaped by watcher_end. */
static pid_t watcher_start(const char *dir, int k)
{
	char count[16];
	snprintf(count, sizeof(count), "%d", k);
	char *prog = tu_prog("hang_then_go");
	pid_t w = fork();
	cr_assert(w >= 0, "fork: %s", strerror(errno));
	if (w == 0) {
		execl(prog, prog, "--watch", dir, count, (char *)NULL);
		_exit(127);
	}
	return w;
}

static void watcher_end(pid_t w)
{
	kill(w, SIGKILL);
	waitpid(w, NULL, 0);
}

/* hang_then_go under convoy run with on_hang (NULL: the default): it ends on
 * its own (status 0) only once its snapshot exists. */
static json_object *hang_then_go(const char *on_hang, struct tu_proc *p)
{
	char *dir = tu_tmpdir();
	pid_t w = watcher_start(dir, 1);
	struct tu_opts o = { .timeout_s = 60, .env = (const char *[]){ "CONVOY_WATCHDOG=0.2", NULL } };
	tu_run(p, &o, (const char *[]){ tu_convoy(), "run", "--json", "-o", dir, "--on-hang", on_hang ? on_hang : "auto",
					"--", tu_prog("hang_then_go"), "2", NULL });
	watcher_end(w);
	tu_assert_exit(p, 0, "the program went on and exited 0");
	cr_assert(strstr(p->err, "went on after the snapshot"), "%s", p->err);
	json_object *root = json_tokener_parse(p->out);
	cr_assert(root, "no JSON report: %s\n%s", p->out, p->err);
	json_object *proc = tu_get(root, "process");
	cr_assert(tu_bool(proc, "hung"));
	cr_assert(tu_bool(proc, "hang_snapshot"));
	cr_assert(!tu_bool(proc, "hang_stopped"));
	cr_assert_eq(tu_int(proc, "exit_status"), 0);
	return root;
}

Test(outcome, by_default_a_hang_without_a_deadlock_goes_on_and_is_said_once, .timeout = 60)
{
	struct tu_proc p;
	json_object *root = hang_then_go(NULL, &p);
	cr_assert_str_eq(tu_str(tu_get(root, "process"), "on_hang"), "auto");
	const char *said = strstr(p.err, "convoy: the command looks hung");
	cr_assert(said && strstr(said, "proves no deadlock, so it goes on"), "%s", p.err);
	cr_assert_null(strstr(said + 1, "convoy: the command looks hung"), "said twice: %s", p.err);
	cr_assert(strstr(said, "At the hang: Pool worker starved"), "what the snapshot shows: %s", p.err);
	cr_assert_str_eq(tu_str(json_object_array_get_idx(tu_array(root, "findings"), 0), "kind"), "pool-starvation");
}

Test(outcome, a_thread_waiting_for_another_process_is_not_hung, .timeout = 60)
{
	/* Its thread waits for a semaphore a child process would post, and the
	 * child waits in read(): one process stuck beside a live one. */
	struct tu_proc p;
	struct tu_opts o = { .timeout_s = 60, .env = (const char *[]){ "CONVOY_WATCHDOG=0.2", NULL } };
	tu_run(&p, &o, (const char *[]){ tu_convoy(), "run", "--json", "--timeout", "3", "--on-hang", "stop", "-o",
					 tu_tmpdir(), "--", tu_prog("wait_for_child"), NULL });
	json_object *root = json_tokener_parse(p.out);
	cr_assert(root, "no JSON report (exit %d):\n%s\n%s", p.code, p.out, p.err);
	json_object *proc = tu_get(root, "process");
	cr_assert(tu_bool(proc, "timed_out"), "%s", json_object_to_json_string(proc));
	cr_assert(!tu_bool(proc, "hung"), "%s", json_object_to_json_string(proc));
}

Test(outcome, on_hang_continue_lets_the_program_go_on_and_explains_the_hang, .timeout = 60)
{
	struct tu_proc p;
	json_object *root = hang_then_go("continue", &p);
	json_object *proc = tu_get(root, "process");
	cr_assert_str_eq(tu_str(proc, "on_hang"), "continue");
	cr_assert_null(strstr(p.err, "looks hung"), "continue says nothing at the hang: %s", p.err);
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

Test(outcome, on_hang_takes_auto_stop_or_continue, .timeout = 30)
{
	struct tu_proc p;
	run_convoy(&p, (const char *[]){ tu_convoy(), "run", "--on-hang", "later", "--", tu_prog("exit_status"), "0",
					 NULL });
	tu_assert_exit(&p, 2, "a bad --on-hang is a usage error");
	cr_assert(strstr(p.err, "convoy: run: --on-hang takes auto, stop or continue, not 'later'"), "%s", p.err);
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

/* prog arg under convoy run, stopped by the watchdog with on_hang: the
 * default (auto) stops a deadlock; a starved pool needs stop. */
static json_object *hung_run(const char *on_hang, const char *prog, const char *arg)
{
	struct tu_proc p;
	struct tu_opts o = { .timeout_s = 60, .env = (const char *[]){ "CONVOY_WATCHDOG=0.2", NULL } };
	tu_run(&p, &o, (const char *[]){ tu_convoy(), "run", "--json", "--on-hang", on_hang, "-o", tu_tmpdir(), "--",
					 tu_prog(prog), arg, NULL });
	json_object *root = json_tokener_parse(p.out);
	cr_assert(root, "no JSON report (exit %d):\n%s\n%s", p.code, p.out, p.err);
	cr_assert(tu_bool(tu_get(root, "process"), "hung"), "%s", p.out);
	cr_assert(tu_bool(tu_get(root, "process"), "hang_stopped"), "%s", p.out);
	return root;
}

Test(outcome, a_pool_blocked_while_its_counted_queue_holds_tasks_is_starved, .timeout = 60)
{
	json_object *root = hung_run("stop", "counted_pool", "3");
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
	json_object *root = hung_run("stop", "counted_pool", "0");
	cr_assert_null(finding_of_kind(root, "pool-starvation"), "%s", json_object_to_json_string(root));
}

Test(outcome, a_hang_of_200_threads_is_found_and_its_deadlock_shown, .timeout = 120)
{
	json_object *root = hung_run("auto", "hang_many", "200");
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
	char *dir = tu_tmpdir();
	pid_t w = watcher_start(dir, 1);
	tu_run(&p, &o, (const char *[]){ tu_convoy(), "scale", "--json", "--on-hang", "continue", "--threads", "2", "-o",
					 dir, "--", tu_prog("hang_then_go"), "{threads}", NULL });
	watcher_end(w);
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
	/* The forked child hangs, its parent waits for it: the whole tree is
	 * stuck. Told to go on after the child's snapshot, the child ends and
	 * the parent reaps it. Both processes write a snapshot, in either
	 * order: the watcher tells each (2), or it could stop after telling
	 * the parent alone, and the child would hang to the time limit. */
	struct tu_proc p;
	struct tu_opts o = { .timeout_s = 60, .env = (const char *[]){ "CONVOY_WATCHDOG=0.2", NULL } };
	char *dir = tu_tmpdir();
	pid_t w = watcher_start(dir, 2);
	tu_run(&p, &o, (const char *[]){ tu_convoy(), "run", "--json", "--on-hang", "continue", "-o", dir, "--",
					 tu_prog("hang_then_go"), "2", "--in-child", NULL });
	watcher_end(w);
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
	json_object *root = hung_run("auto", "lock_ring", "12");
	json_object *x = json_object_array_get_idx(tu_array(root, "findings"), 0);
	cr_assert(x, "no findings");
	cr_assert_str_eq(tu_str(x, "kind"), "deadlock", "%s", json_object_to_json_string(root));
	cr_assert_eq(json_object_get_int(tu_get(tu_get(x, "evidence"), "threads")), 12);
	cr_assert_eq(json_object_array_length(tu_array(x, "cycle")), 12, "every edge: %s", tu_str(x, "summary"));
}

Test(outcome, semaphores_used_as_locks_in_opposite_orders_are_a_deadlock_the_default_stops, .timeout = 60)
{
	/* Each semaphore's holder is the thread that took it and has not posted
	 * it back; no thread posts one it did not take. */
	json_object *root = hung_run("auto", "sem_as_locks", NULL);
	json_object *x = json_object_array_get_idx(tu_array(root, "findings"), 0);
	cr_assert(x, "no findings");
	cr_assert_str_eq(tu_str(x, "kind"), "deadlock", "%s", json_object_to_json_string(root));
	json_object *cycle = tu_array(x, "cycle");
	cr_assert_eq(json_object_array_length(cycle), 2, "%s", json_object_to_json_string(x));
	for (size_t i = 0; i < 2; i++) {
		json_object *e = json_object_array_get_idx(cycle, i);
		cr_assert_str_eq(tu_str(e, "relation"), "holds");
		cr_assert(!strcmp(tu_str(e, "holds"), "s1") || !strcmp(tu_str(e, "holds"), "s2"), "%s",
			  json_object_to_json_string(e));
	}
}

Test(outcome, joining_a_thread_that_needs_a_lock_the_joiner_holds_is_a_deadlock, .timeout = 60)
{
	json_object *root = hung_run("auto", "hold_and_wait", "join");
	json_object *x = json_object_array_get_idx(tu_array(root, "findings"), 0);
	cr_assert(x, "no findings");
	cr_assert_str_eq(tu_str(x, "kind"), "deadlock", "%s", json_object_to_json_string(root));
	json_object *cycle = tu_array(x, "cycle");
	cr_assert_eq(json_object_array_length(cycle), 2, "%s", json_object_to_json_string(x));
	int joined = 0, holds = 0;
	for (size_t i = 0; i < 2; i++) {
		json_object *e = json_object_array_get_idx(cycle, i);
		joined += !strcmp(tu_str(e, "relation"), "is joined") && !strcmp(tu_str(e, "wants"), "registry");
		holds += !strcmp(tu_str(e, "relation"), "holds") && !strcmp(tu_str(e, "holds"), "registry");
	}
	cr_assert(joined == 1 && holds == 1, "%s", json_object_to_json_string(x));
	cr_assert(strstr(tu_str(x, "fix"), "before pthread_join"), "%s", tu_str(x, "fix"));
}

Test(outcome, a_condvar_wait_holding_the_lock_its_only_signaller_needs_is_a_deadlock, .timeout = 60)
{
	json_object *root = hung_run("auto", "hold_and_wait", "cond");
	json_object *x = json_object_array_get_idx(tu_array(root, "findings"), 0);
	cr_assert(x, "no findings");
	cr_assert_str_eq(tu_str(x, "kind"), "deadlock", "%s", json_object_to_json_string(root));
	json_object *cycle = tu_array(x, "cycle");
	cr_assert_eq(json_object_array_length(cycle), 2, "%s", json_object_to_json_string(x));
	int signals = 0, holds = 0;
	for (size_t i = 0; i < 2; i++) {
		json_object *e = json_object_array_get_idx(cycle, i);
		signals += !strcmp(tu_str(e, "relation"), "signals") && !strcmp(tu_str(e, "holds"), "ready_cv");
		holds += !strcmp(tu_str(e, "relation"), "holds") && !strcmp(tu_str(e, "holds"), "config");
	}
	cr_assert(signals == 1 && holds == 1, "%s", json_object_to_json_string(x));
}

/* ---- starved or idle: a wait inside a task, or the worker loop's ---------- */

static json_object *queue_pool(const char *workers, const char *how)
{
	struct tu_proc p;
	struct tu_opts o = { .timeout_s = 60, .env = (const char *[]){ "CONVOY_WATCHDOG=0.2", NULL } };
	tu_run(&p, &o, (const char *[]){ tu_convoy(), "run", "--json", "--on-hang", "stop", "-o", tu_tmpdir(), "--",
					 tu_prog("queue_pool"), workers, how, NULL });
	json_object *root = json_tokener_parse(p.out);
	cr_assert(root, "no JSON report (exit %d):\n%s\n%s", p.code, p.out, p.err);
	cr_assert(tu_bool(tu_get(root, "process"), "hung"), "%s", p.out);
	return root;
}

Test(outcome, workers_whose_tasks_wait_for_children_no_worker_is_free_to_run_are_a_starved_pool, .timeout = 60)
{
	json_object *root = queue_pool("2", "starve");
	json_object *x = json_object_array_get_idx(tu_array(root, "findings"), 0);
	cr_assert_str_eq(tu_str(x, "kind"), "pool-starvation", "%s", json_object_to_json_string(root));
	cr_assert_eq(json_object_get_int(tu_get(tu_get(x, "evidence"), "workers")), 2);
}

Test(outcome, a_lone_worker_whose_task_waits_for_its_own_child_is_a_starved_pool, .timeout = 60)
{
	json_object *root = queue_pool("1", "starve");
	json_object *x = json_object_array_get_idx(tu_array(root, "findings"), 0);
	cr_assert_str_eq(tu_str(x, "kind"), "pool-starvation", "%s", json_object_to_json_string(root));
	cr_assert_eq(json_object_get_int(tu_get(tu_get(x, "evidence"), "workers")), 1);
}

Test(outcome, idle_workers_at_their_get_work_wait_while_main_waits_for_a_lost_completion_are_not_starved,
     .timeout = 60)
{
	json_object *root = queue_pool("2", "lost");
	cr_assert_null(finding_of_kind(root, "pool-starvation"), "%s", json_object_to_json_string(root));
}

/* `convoy` (a shell command line) started in the background, its stdout
 * into DIR/out.txt and its stderr into DIR/err.txt; once the shell test
 * `ready` holds (polled every 50 ms for 40 s: else "not ready" on p's
 * stderr, convoy killed) the shell lines `then` (where $c is convoy's
 * pid), and a wait for convoy: its status is p's. */
static void convoy_in_background(struct tu_proc *p, const char *dir, const char *convoy, const char *ready,
				 const char *then)
{
	char script[16384];
	snprintf(script, sizeof(script),
		 "%s >'%s/out.txt' 2>'%s/err.txt' & c=$!\n"
		 "n=0\n"
		 "until %s; do\n"
		 "  n=$((n + 1)); [ $n -le 800 ] || { echo not ready >&2; kill $c; exit 1; }; sleep 0.05\n"
		 "done\n"
		 "%s\n"
		 "wait $c\n",
		 convoy, dir, dir, ready, then);
	tu_run(p, &(struct tu_opts){ .timeout_s = 55 }, (const char *[]){ "/bin/sh", "-c", script, NULL });
}

/* DIR/NAME's text. */
static char *dir_file(const char *dir, const char *name)
{
	char path[4200];
	size_t len;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return (char *)tu_read_file(path, &len);
}

/* convoy run exits as a shell would: 127 for a command not found, 126 for
 * one found but not runnable; and with the command's status when the
 * reader of its report has gone (| head), not by SIGPIPE (helper-127).
 * The reader is gone before the command ends: the command writes until
 * its own write fails. */
Test(outcome, run_exits_as_the_shell_would_and_as_the_command_did_when_its_reader_left, .timeout = 60)
{
	char *dir = tu_tmpdir(), plain[4200], script[8192];
	struct tu_proc p;
	run_convoy(&p, (const char *[]){ tu_convoy(), "run", "-o", dir, "--", "/nonexistent/command", NULL });
	tu_assert_exit(&p, 127, "not found");
	TU_EQ(tu_count_lines(p.err), 1, "error lines: %s", p.err);
	snprintf(plain, sizeof(plain), "%s/not-executable", dir);
	FILE *f = fopen(plain, "w");
	cr_assert(f && fputs("data\n", f) >= 0 && fclose(f) == 0);
	run_convoy(&p, (const char *[]){ tu_convoy(), "run", "-o", dir, "--", plain, NULL });
	tu_assert_exit(&p, 126, "not executable");
	TU_EQ(tu_count_lines(p.err), 1, "error lines: %s", p.err);

	snprintf(script, sizeof(script),
		 "{ '%s' run -o '%s' -- sh -c 'trap \"\" PIPE; while echo a 2>/dev/null; do :; done; exit 4'; "
		 "echo $? >'%s/status'; } | head -1 >/dev/null\n",
		 tu_convoy(), dir, dir);
	run_convoy(&p, (const char *[]){ "/bin/sh", "-c", script, NULL });
	char path[4300];
	size_t len;
	snprintf(path, sizeof(path), "%s/status", dir);
	TU_STREQ((char *)tu_read_file(path, &len), "4\n", "convoy run's status with its reader gone; stderr: %s", p.err);
	cr_assert(!strstr(p.err, "cannot write"), "a reader that left is no error: %s", p.err);
}

/* A SIGTERM or SIGHUP sent to convoy run alone (a supervisor's stop, a
 * kill of its pid) goes on to the command, which was orphaned before
 * (helper-127), and convoy exits as the command did. SIGTERM is convoy's
 * stop signal: the program writes its profile, which says convoy passed
 * the signal on, and convoy reports. SIGHUP ends the program as it would
 * natively, with no profile (as a closed terminal's). A SIGTERM the
 * program sends itself is not convoy's. (With --json the command's output
 * goes to stderr.) */
Test(outcome, a_signal_sent_to_convoy_run_alone_reaches_the_command, .timeout = 60)
{
	static const char *const sigs[] = { "TERM", "HUP" };
	static const int nums[] = { SIGTERM, SIGHUP };
	for (size_t i = 0; i < 2; i++) {
		char *dir = tu_tmpdir(), convoy[4096], ready[4200], then[4200];
		snprintf(convoy, sizeof(convoy), "'%s' run --json -o '%s' -- '%s'", tu_convoy(), dir,
			 tu_prog("ready_then_pause"));
		snprintf(ready, sizeof(ready), "grep -q ready '%s/err.txt'", dir);
		snprintf(then, sizeof(then), "ps -o pid= --ppid $c >'%s/command.pid'\nkill -%s $c", dir, sigs[i]);
		struct tu_proc p;
		convoy_in_background(&p, dir, convoy, ready, then);
		cr_assert(p.exited && p.code == 128 + nums[i], "SIG%s: convoy run: exit %d signal %d; %s", sigs[i],
			  p.code, p.sig, p.err);
		pid_t pid = (pid_t)atoi(dir_file(dir, "command.pid"));
		cr_assert(pid > 0 && kill(pid, 0) != 0 && errno == ESRCH, "SIG%s: the command %d still runs", sigs[i],
			  (int)pid);
		if (nums[i] != SIGTERM)
			continue;
		json_object *root = json_tokener_parse(dir_file(dir, "out.txt"));
		cr_assert(root, "SIGTERM: no JSON report");
		json_object *proc = tu_get(root, "process");
		TU_EQ(tu_int(proc, "signal"), SIGTERM, "SIGTERM: the command's end");
		TU_STREQ(tu_str(proc, "exit"),
			 "stopped by convoy run/scale (CONVOY_DUMP_SIGNAL: --timeout, the watchdog, or a signal convoy "
			 "passed on)", "SIGTERM: process.exit");
	}

	struct tu_proc p;
	run_convoy(&p, (const char *[]){ tu_convoy(), "run", "--json", "-o", tu_tmpdir(), "--", tu_prog("term_self"),
					 NULL });
	cr_assert(p.exited && p.code == 128 + SIGTERM, "term_self: exit %d signal %d\n%s", p.code, p.sig, p.err);
	json_object *root = json_tokener_parse(p.out);
	cr_assert(root, "term_self: no JSON report: %s", p.out);
	TU_STREQ(tu_str(tu_get(root, "process"), "exit"),
		 "killed by CONVOY_DUMP_SIGNAL (SIGTERM under convoy run/scale) from another process or itself, not "
		 "from convoy", "term_self: process.exit");
}

/* convoy scale passes a SIGTERM it is sent on to the run in progress (it
 * always runs under a time limit: to its group), then stops the sweep
 * there and exits by it: before, it ran every later count and analysed
 * the cut run as the reference (helper-128). */
Test(outcome, a_signal_sent_to_convoy_scale_stops_the_sweep, .timeout = 60)
{
	char *dir = tu_tmpdir(), convoy[4096], ready[4200], path[4200];
	snprintf(convoy, sizeof(convoy), "'%s' scale --threads 1,2 -o '%s/sweep' -- '%s' '{threads}'", tu_convoy(), dir,
		 tu_prog("ready_then_pause"));
	snprintf(ready, sizeof(ready), "grep -q ready '%s/sweep/threads-1-run-1/output.txt' 2>/dev/null", dir);
	struct tu_proc p;
	convoy_in_background(&p, dir, convoy, ready, "kill -TERM $c");
	char *err = dir_file(dir, "err.txt");
	cr_assert(p.exited && p.code == 128 + SIGTERM, "convoy scale: exit %d signal %d; %s; %s", p.code, p.sig, p.err,
		  err);
	cr_assert(strstr(err, "stopped by signal 15") && tu_count_lines(err) == 1, "stderr: %s", err);
	snprintf(path, sizeof(path), "%s/sweep/threads-2-run-1", dir);
	cr_assert(access(path, F_OK) != 0, "the sweep went on to 2 threads");
}

/* A starved pool goes on under the default --on-hang auto (nothing proves it
 * can never be woken); a user's Ctrl-C or a closed terminal then kills the
 * program, which writes no profile on SIGINT or SIGHUP: the snapshot taken
 * at the hang explains it. SIGHUP here: a background job ignores SIGINT. */
Test(outcome, a_program_interrupted_after_a_hang_is_explained_by_its_snapshot, .timeout = 60)
{
	char *dir = tu_tmpdir(), convoy[4096], ready[4200];
	snprintf(convoy, sizeof(convoy), "CONVOY_WATCHDOG=0.2 '%s' run --json -o '%s' -- '%s' 2 starve", tu_convoy(), dir,
		 tu_prog("queue_pool"));
	snprintf(ready, sizeof(ready), "f=$(ls '%s'/convoy-*.hang 2>/dev/null) && [ -n \"$f\" ]", dir);
	struct tu_proc p;
	convoy_in_background(&p, dir, convoy, ready, "pid=${f%.hang}; kill -HUP \"${pid##*-}\"");
	char *err = dir_file(dir, "err.txt");
	cr_assert(!strstr(p.err, "not ready"), "the watchdog wrote no snapshot in 40 s; convoy said: %s", err);
	cr_assert(strstr(err, "snapshot taken at the hang"), "stderr: %s", err);
	json_object *root = json_tokener_parse(dir_file(dir, "out.txt"));
	cr_assert(root, "no JSON report; stderr: %s", err);
	cr_assert_str_eq(tu_str(json_object_array_get_idx(tu_array(root, "findings"), 0), "kind"), "pool-starvation",
			 "%s", json_object_to_json_string(root));
}
