/* The ends of a process other than exit(): exec, _exit, quick_exit and fatal
 * signals. Each writes one profile (docs/lifecycle.md), and the program sees
 * no change: its output, exit status or killing signal, and the signal
 * dispositions it sets and reads, are what they are without the shim. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include "testutil.h"

#define EXIT_NORMAL "returned from main or called exit()"
#define EXIT_EXEC "called exec (this profile covers the image it replaced)"

static const char *const exec_ways[] = {
	"execve", "execv", "execvp", "execvpe", "execl", "execle", "execlp", "fexecve", "execveat",
};
#define NWAYS (sizeof(exec_ways) / sizeof(exec_ways[0]))

/* Runs argv natively and under the shim (quiet, CONVOY_DIR=dir) and asserts
 * the same stdout and the same end. */
static void run_both(struct tu_proc *shim, const char *dir, const char *const argv[], const char *const *env)
{
	struct tu_proc native;
	tu_run(&native, &(struct tu_opts){ .env = env }, argv);
	tu_run(shim, &(struct tu_opts){ .preload = true, .dir = dir, .quiet = true, .env = env }, argv);
	cr_assert(!shim->timed_out, "%s %s hung under the shim", argv[0], argv[1]);
	TU_STREQ(shim->out, native.out, "stdout of %s %s", argv[1], argv[2] ? argv[2] : "");
	TU_EQ(shim->exited, native.exited, "exited normally (%s %s)", argv[1], argv[2] ? argv[2] : "");
	TU_EQ(shim->exited ? shim->code : shim->sig, native.exited ? native.code : native.sig,
	      "%s of %s %s", native.exited ? "exit status" : "killing signal", argv[1], argv[2] ? argv[2] : "");
	TU_EQ(tu_count_entries(dir, "", ".tmp", NULL), 0, "*.tmp files left in %s", dir);
}

static json_object *profile_with_exit(char **files, size_t n, const char *why)
{
	for (size_t i = 0; i < n; i++) {
		json_object *r = tu_report(files[i]);
		if (strcmp(tu_str(tu_get(r, "process"), "exit"), why) == 0)
			return r;
	}
	cr_assert_fail("no profile says \"%s\"", why);
	return NULL;
}

Test(lifecycle, exec_writes_the_profile_of_the_image_it_replaces, .timeout = 120)
{
	for (size_t i = 0; i < NWAYS; i++) {
		struct tu_proc p;
		char *dir = tu_tmpdir();
		const char *argv[] = { tu_prog("exec_via"), exec_ways[i], NULL };
		run_both(&p, dir, argv, NULL);
		tu_assert_exit(&p, 0, exec_ways[i]);
		size_t n;
		char **files = tu_profiles(dir, &n);
		TU_EQ(n, 2, "profiles after %s (one per image)", exec_ways[i]);
		json_object *before = profile_with_exit(files, n, EXIT_EXEC);
		json_object *after = profile_with_exit(files, n, EXIT_NORMAL);
		TU_EQ(tu_int(tu_lock(before, "exec_lock"), "acquisitions"), 100, "%s: the replaced image's locks", exec_ways[i]);
		TU_EQ(tu_int(tu_lock(after, "exec_lock"), "acquisitions"), 7, "%s: the new image's locks", exec_ways[i]);
	}
}

/* The kernel counts a task's CPU time, switches and faults from its birth
 * and through exec: an image exec'd after a shell's long loop was
 * profiled with the loop's CPU time (372 ms over a 0.24 ms life). The
 * profile's counts are the image's own: no thread used more CPU than its
 * lifetime, nor the process more than its wall time on its CPUs (1 ms of
 * slack for the kernel's accounting at the edges). */
Test(lifecycle, an_exec_d_image_counts_its_own_cpu_time, .timeout = 60)
{
	char *dir = tu_tmpdir(), *cmd = NULL;
	cr_assert(asprintf(&cmd, "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; exec %s 10",
			   tu_prog("distinct_mutexes")) > 0);
	const char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	struct tu_proc p;
	struct tu_opts o = { .preload = true, .dir = dir, .quiet = true };
	tu_run(&p, &o, argv);
	tu_assert_exit(&p, 0, "sh -c 'loop; exec distinct_mutexes'");
	size_t n;
	char **files = tu_profiles(dir, &n);
	TU_EQ(n, 1, "profiles (the shell's is left to the image it exec'd)");
	json_object *r = tu_report(files[0]), *proc = tu_get(r, "process"), *threads = tu_array(r, "threads");
	const long long slack = 1000000;
	long long cpu = tu_int(proc, "cpu_ns"), wall = tu_int(proc, "wall_ns"), cpus = tu_int(proc, "cpus_allowed");
	cr_assert(cpu <= wall * cpus + slack, "process cpu_ns %lld over wall_ns %lld on %lld CPUs", cpu, wall, cpus);
	for (size_t i = 0; i < json_object_array_length(threads); i++) {
		json_object *t = json_object_array_get_idx(threads, i);
		long long tcpu = tu_int(t, "cpu_ns"), life = tu_int(t, "lifetime_ns");
		cr_assert(tcpu <= life + slack, "thread %lld: cpu_ns %lld over lifetime_ns %lld", tu_int(t, "tid"), tcpu,
			  life);
	}
}

Test(lifecycle, an_image_that_recorded_nothing_leaves_the_profile_to_the_next, .timeout = 30)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	const char *argv[] = { tu_prog("exec_via"), "execv", "bare", NULL };
	run_both(&p, dir, argv, NULL);
	tu_assert_exit(&p, 0, "exec_via execv bare");
	json_object *r = tu_report_dir(dir);   /* exactly one: the new image's */
	TU_STREQ(tu_str(tu_get(r, "process"), "exit"), EXIT_NORMAL, "process.exit");
	TU_EQ(tu_int(tu_lock(r, "exec_lock"), "acquisitions"), 7, "the new image's locks");
}

Test(lifecycle, a_failed_exec_leaves_one_complete_profile, .timeout = 120)
{
	for (size_t i = 0; i < NWAYS; i++) {
		struct tu_proc p;
		char *dir = tu_tmpdir();
		const char *argv[] = { tu_prog("exec_via"), exec_ways[i], "fail", NULL };
		run_both(&p, dir, argv, NULL);
		tu_assert_exit(&p, 0, exec_ways[i]);
		json_object *r = tu_report_dir(dir);   /* exactly one */
		TU_STREQ(tu_str(tu_get(r, "process"), "exit"), EXIT_NORMAL, "%s fail: process.exit", exec_ways[i]);
		TU_EQ(tu_int(tu_lock(r, "exec_lock"), "acquisitions"), 200, "%s fail: locks before and after", exec_ways[i]);
	}
}

static char *preload_with_others(void)
{
	char *v = malloc(strlen(tu_shim()) + 64);
	sprintf(v, "LD_PRELOAD=libz.so.1 %s libm.so.6", tu_shim());
	return v;
}

Test(lifecycle, follow_0_keeps_children_unprofiled_and_the_rest_of_ld_preload, .timeout = 60)
{
	const char *ways[] = { "execve", "execlp", "posix_spawn" };
	for (size_t i = 0; i < 3; i++) {
		struct tu_proc p;
		char *dir = tu_tmpdir();
		const char *argv[] = { tu_prog("exec_via"), ways[i], "show-preload", NULL };
		const char *env[] = { preload_with_others(), "CONVOY_FOLLOW=0", "CONVOY_QUIET=1", NULL };
		struct tu_opts o = { .dir = dir, .env = env };
		tu_run(&p, &o, argv);
		tu_assert_exit(&p, 0, ways[i]);
		cr_assert(tu_has_line(p.out, "child LD_PRELOAD=libz.so.1 libm.so.6"), "%s: child's output:\n%s", ways[i], p.out);
		json_object *r = tu_report_dir(dir);   /* the parent's only */
		TU_EQ(tu_int(tu_lock(r, "exec_lock"), "acquisitions"), 100, "%s: the parent's locks", ways[i]);
	}
}

Test(lifecycle, follow_is_the_default_for_spawned_children, .timeout = 30)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	const char *argv[] = { tu_prog("exec_via"), "posix_spawn", NULL };
	tu_run(&p, &(struct tu_opts){ .preload = true, .dir = dir, .quiet = true }, argv);
	tu_assert_exit(&p, 0, "posix_spawn");
	size_t n;
	tu_profiles(dir, &n);
	TU_EQ(n, 2, "profiles (parent and spawned child)");
}

Test(lifecycle, a_fatal_signal_writes_the_profile_then_the_program_dies_its_own_way, .timeout = 120)
{
	static const struct { const char *how, *why; } ways[] = {
		{ "segv", "killed by SIGSEGV" },       { "bus", "killed by SIGBUS" },
		{ "abort", "killed by SIGABRT (abort)" }, { "fpe", "killed by SIGFPE" },
		{ "ill", "killed by SIGILL" },         { "raise-segv", "killed by SIGSEGV" },
		{ "thread-segv", "killed by SIGSEGV" }, { "threads-segv", "killed by SIGSEGV" },
	};
	for (size_t i = 0; i < sizeof(ways) / sizeof(ways[0]); i++) {
		struct tu_proc p;
		char *dir = tu_tmpdir();
		const char *argv[] = { tu_prog("crash"), ways[i].how, NULL };
		run_both(&p, dir, argv, (const char *const[]){ "CONVOY_STACKS=0", NULL });
		cr_assert(p.signaled, "crash %s was not killed by a signal under the shim", ways[i].how);
		json_object *r = tu_report_dir(dir);
		TU_STREQ(tu_str(tu_get(r, "process"), "exit"), ways[i].why, "crash %s: process.exit", ways[i].how);
		TU_EQ(tu_int(tu_lock(r, "crash_lock"), "acquisitions"), 100, "crash %s: locks", ways[i].how);
	}
}

Test(lifecycle, the_program_sees_and_runs_its_own_signal_dispositions, .timeout = 30)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	const char *argv[] = { tu_prog("signal_view"), "handle", NULL };
	run_both(&p, dir, argv, NULL);
	tu_assert_exit(&p, 42, "signal_view handle (its SIGSEGV handler calls _exit(42))");
	cr_assert(tu_has_line(p.out, "own handler ran"), "stdout:\n%s", p.out);
	TU_STREQ(tu_str(tu_get(tu_report_dir(dir), "process"), "exit"), "called _exit() or _Exit()", "process.exit");
}

Test(lifecycle, underscore_exit_and_quick_exit_write_a_profile, .timeout = 60)
{
	static const struct { const char *how, *why; int code, locks; } ways[] = {
		{ "_exit", "called _exit() or _Exit()", 5, 100 },
		{ "_Exit", "called _exit() or _Exit()", 6, 100 },
		{ "quick_exit", "called quick_exit()", 7, 110 },   /* the program's handler ran first */
	};
	for (size_t i = 0; i < sizeof(ways) / sizeof(ways[0]); i++) {
		struct tu_proc p;
		char *dir = tu_tmpdir();
		const char *argv[] = { tu_prog("exit_underscore"), ways[i].how, NULL };
		run_both(&p, dir, argv, NULL);
		tu_assert_exit(&p, ways[i].code, ways[i].how);
		json_object *r = tu_report_dir(dir);
		TU_STREQ(tu_str(tu_get(r, "process"), "exit"), ways[i].why, "%s: process.exit", ways[i].how);
		TU_EQ(tu_int(tu_lock(r, "quick_lock"), "acquisitions"), ways[i].locks, "%s: locks", ways[i].how);
	}
}

Test(lifecycle, a_vfork_child_writes_no_profile_of_its_own, .timeout = 30)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	const char *argv[] = { tu_prog("exit_underscore"), "vfork", NULL };
	run_both(&p, dir, argv, NULL);
	tu_assert_exit(&p, 0, "exit_underscore vfork");
	cr_assert(tu_has_line(p.out, "vfork child exit 127"), "stdout:\n%s", p.out);
	json_object *r = tu_report_dir(dir);   /* exactly one: the parent's */
	TU_STREQ(tu_str(tu_get(r, "process"), "exit"), EXIT_NORMAL, "process.exit");
	TU_EQ(tu_int(tu_lock(r, "quick_lock"), "acquisitions"), 100, "the parent's locks");
}

Test(lifecycle, a_fork_child_that_calls_underscore_exit_writes_its_own_profile, .timeout = 30)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	const char *argv[] = { tu_prog("exit_underscore"), "fork", NULL };
	run_both(&p, dir, argv, NULL);
	tu_assert_exit(&p, 0, "exit_underscore fork");
	size_t n;
	char **files = tu_profiles(dir, &n);
	TU_EQ(n, 2, "profiles (parent and fork child)");
	json_object *child = profile_with_exit(files, n, "called _exit() or _Exit()");
	cr_assert(tu_bool(tu_get(child, "process"), "forked"), "the _exit profile is not the fork child's");
	TU_EQ(tu_int(tu_lock(child, "quick_lock"), "acquisitions"), 10, "the child's locks");
	json_object *parent = profile_with_exit(files, n, EXIT_NORMAL);
	TU_EQ(tu_int(tu_lock(parent, "quick_lock"), "acquisitions"), 100, "the parent's locks");
}

/* Below this much CPU time a process the command started that recorded
 * nothing writes no profile (preload/lifecycle.c, CV_CHILD_CPU_WORTH_NS). */
#define CHILD_CPU_WORTH_NS 10000000

struct written {
	long long pid, ppid, cpu_ns;
	bool forked;
	char *path;
};

/* The profiles a run left in dir, into w[0..cap): asserts there are
 * `expected`, or more by no more than the processes among them that show
 * CHILD_CPU_WORTH_NS of CPU or more and whose parent wrote a profile (the
 * command's own always writes). The shim writes the profile of such a
 * process by rule, and on a busy machine one that did next to nothing can
 * be charged that much (where the kernel does not account the time a
 * virtual CPU is stolen, it is the task's own; seen on CI), so which ones
 * those are is a matter of timing the tests do not depend on. Asserts too
 * that exactly one profile's parent wrote none: the chain of parents
 * `convoy run` follows (analyzer/analysis.c, mark_tree) holds from every
 * profile up to the command's. */
static size_t profiles_of_a_run(const char *dir, const char *what, size_t expected, struct written *w, size_t cap)
{
	size_t n, busy = 0, roots = 0;
	char **files = tu_profiles(dir, &n);
	cr_assert(n <= cap, "%s: %zu profiles", what, n);
	char seen[512] = "";
	for (size_t k = 0; k < n; k++) {
		json_object *proc = tu_get(tu_report(files[k]), "process");
		w[k] = (struct written){ tu_int(proc, "pid"), tu_int(proc, "ppid"), tu_int(proc, "cpu_ns"),
					 tu_bool(proc, "forked"), files[k] };
		size_t used = strlen(seen);
		snprintf(seen + used, sizeof(seen) - used, "\n  pid %lld ppid %lld%s cpu %lld ns", w[k].pid, w[k].ppid,
			 w[k].forked ? " forked" : "", w[k].cpu_ns);
	}
	for (size_t k = 0; k < n; k++) {
		bool parent_wrote = false;
		for (size_t j = 0; j < n; j++)
			parent_wrote |= j != k && w[j].pid == w[k].ppid;
		roots += !parent_wrote;
		busy += parent_wrote && w[k].cpu_ns >= CHILD_CPU_WORTH_NS;
	}
	cr_assert(n >= expected && n - expected <= busy, "%s: %zu profiles, expected %zu (+ up to %zu busy):%s", what, n,
		  expected, busy, seen);
	cr_assert(roots == 1, "%s: %zu profiles whose parent wrote none:%s", what, roots, seen);
	return n;
}

Test(lifecycle, a_fork_child_that_recorded_nothing_leaves_no_profile_of_its_own, .timeout = 60)
{
	static const struct { const char *how; int status; } ends[] = { { "exit", 0 }, { "_exit", 3 }, { "quick_exit", 4 } };
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		struct tu_proc p;
		char *dir = tu_tmpdir();
		const char *argv[] = { tu_prog("fork_empty"), ends[i].how, NULL };
		run_both(&p, dir, argv, NULL);
		char line[32];
		snprintf(line, sizeof(line), "child exit %d", ends[i].status);
		cr_assert(tu_has_line(p.out, line), "%s: stdout:\n%s", ends[i].how, p.out);
		struct written w[2];
		size_t n = profiles_of_a_run(dir, ends[i].how, 1, w, 2);   /* the parent's */
		size_t parent = n == 2 && w[0].forked;
		cr_assert(!w[parent].forked, "%s: no profile is the parent's", ends[i].how);
		TU_EQ(tu_int(tu_lock(tu_report(w[parent].path), "fork_lock"), "acquisitions"), 100, "%s: the parent's locks",
		      ends[i].how);
	}
}

/* A fork child writes its profile, though it recorded nothing, when it
 * used CPU time `convoy run` may pick it for, or had a child of its own,
 * however made, waited for or not, or reaped by the kernel: the chain of
 * parents `convoy run` follows (analyzer/analysis.c, mark_tree) holds from
 * every profile up to the first process's. */
Test(lifecycle, a_fork_child_that_computed_or_had_a_child_writes_its_profile, .timeout = 60)
{
	/* "spawn", "ignored", "ignored-reset", "inherited", "preignored",
	 * "popen": the grandchild is an exec'd image, which writes.
	 * "preignored" starts with SIGCHLD ignored by the shell that execs it
	 * (bash: dash does not ignore it for a trap of its own). */
	static const struct { const char *how; size_t profiles; } cases[] = {
		{ "compute", 2 }, { "grandchild", 2 }, { "spawn", 3 }, { "unwaited", 2 }, { "ignored", 3 },
		{ "ignored-reset", 3 }, { "inherited", 3 }, { "preignored", 3 }, { "popen", 3 }, { "orphan", 3 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *how = cases[i].how;
		struct tu_proc p;
		char *dir = tu_tmpdir();
		const char *argv[] = { tu_prog("fork_empty"), how, NULL };
		const char *via_shell[] = { "/bin/bash", "-c", "trap '' CHLD; exec \"$0\" preignored", tu_prog("fork_empty"), NULL };
		run_both(&p, dir, strcmp(how, "preignored") ? argv : via_shell, NULL);
		cr_assert(tu_has_line(p.out, "child exit 0"), "%s: stdout:\n%s", how, p.out);
		struct written w[8];
		profiles_of_a_run(dir, how, cases[i].profiles, w, 8);
	}
}

/* Under `convoy run` a program the command runs that has nothing to add
 * (here /bin/true, run by the command's shell) writes no profile, as a
 * fork child does, and leaves no CPU samples; a shell between the command and a program that
 * recorded something still writes, for the chain of parents; and a
 * command with nothing to add writes its own. Plain preloading names no
 * launcher, so there every exec'd image writes. */
Test(lifecycle, under_convoy_run_a_program_the_command_runs_with_nothing_to_add_leaves_no_profile, .timeout = 60)
{
	const char *script = "/bin/true; /bin/sh -c '\"$0\" exit; :' \"$0\"; :";
	const char *sh[] = { "/bin/sh", "-c", script, tu_prog("fork_empty"), NULL };
	char *plain = tu_tmpdir();
	struct tu_proc p;
	struct written w[8];
	tu_run(&p, &(struct tu_opts){ .preload = true, .dir = plain, .quiet = true }, sh);
	tu_assert_exit(&p, 0, "plain preload: sh -c SCRIPT");
	/* sh, true, the inner sh, fork_empty (its fork child recorded nothing) */
	profiles_of_a_run(plain, "plain preload", 4, w, 8);

	char *dir = tu_tmpdir();
	const char *run[] = { tu_convoy(), "run", "-o", dir, "--", "/bin/sh", "-c", script, tu_prog("fork_empty"), NULL };
	tu_run(&p, &(struct tu_opts){ 0 }, run);
	tu_assert_exit(&p, 0, "convoy run -- sh -c SCRIPT");
	cr_assert(tu_has_line(p.out, "child exit 0"), "stdout:\n%s", p.out);
	size_t n = profiles_of_a_run(dir, "convoy run", 3, w, 8);   /* sh, the inner sh, fork_empty */
	DIR *d = opendir(dir);   /* CPU samples (when perf lets convoy take them) only beside a profile */
	for (struct dirent *e; (e = readdir(d));) {
		int pid = 0, end = 0;
		if (sscanf(e->d_name, "convoy-%d.samples%n", &pid, &end) != 1 || e->d_name[end])
			continue;
		bool profiled = false;
		for (size_t k = 0; k < n; k++)
			profiled |= w[k].pid == pid;
		cr_assert(profiled, "%s of a process without a profile", e->d_name);
	}
	closedir(d);

	char *alone = tu_tmpdir();
	const char *true_alone[] = { tu_convoy(), "run", "-o", alone, "--", "/bin/true", NULL };
	tu_run(&p, &(struct tu_opts){ 0 }, true_alone);
	tu_assert_exit(&p, 0, "convoy run -- /bin/true");
	free(tu_only_profile(alone));

	/* the command's later image, under its pid, is the command too */
	char *later = tu_tmpdir();
	const char *exec_true[] = { tu_convoy(), "run", "-o", later, "--", "/bin/sh", "-c", "exec /bin/true", NULL };
	tu_run(&p, &(struct tu_opts){ 0 }, exec_true);
	tu_assert_exit(&p, 0, "convoy run -- sh -c 'exec /bin/true'");
	TU_EQ(tu_count_entries(later, "convoy-true-", ".convoy", NULL), 1, "true's profiles in %s", later);

	/* --comm naming one of them says why there is no profile to report */
	char *named = tu_tmpdir();
	const char *comm_true[] = { tu_convoy(), "run", "--comm", "true", "-o", named, "--", "/bin/sh", "-c", "/bin/true; :", NULL };
	tu_run(&p, &(struct tu_opts){ 0 }, comm_true);
	tu_assert_exit(&p, 1, "convoy run --comm true -- sh -c '/bin/true; :'");
	cr_assert(strstr(p.err, "no process of /bin/sh named true wrote a profile"), "stderr:\n%s", p.err);

	/* A child that had a child the kernel reaped (SIGCHLD ignored), then
	 * execs with SIGCHLD back at SIG_DFL: the new image cannot tell, so
	 * the image it replaces writes (fork_empty, its child, the locker). */
	char *reaped = tu_tmpdir();
	const char *ignored_exec[] = { tu_convoy(), "run", "-o", reaped, "--", tu_prog("fork_empty"), "ignored-exec", NULL };
	tu_run(&p, &(struct tu_opts){ 0 }, ignored_exec);
	tu_assert_exit(&p, 0, "convoy run -- fork_empty ignored-exec");
	cr_assert(tu_has_line(p.out, "child exit 0"), "stdout:\n%s", p.out);
	profiles_of_a_run(reaped, "ignored-exec", 3, w, 8);
}

Test(lifecycle, perl_exiting_with_running_ithreads_leaves_one_profile, .timeout = 60)
{
	struct tu_proc native, shim;
	char *dir = tu_tmpdir();
	const char *argv[] = { "/usr/bin/perl", "-Mthreads", "-e",
			       "threads->create(sub { sleep 30 }); print qq(main done\\n); exit 3", NULL };
	if (access(argv[0], X_OK) != 0)
		cr_skip_test("no /usr/bin/perl");
	tu_run(&native, &(struct tu_opts){ 0 }, argv);
	if (!native.exited || strstr(native.err, "Can't locate"))
		cr_skip_test("perl has no ithreads here: %s", native.err);
	tu_run(&shim, &(struct tu_opts){ .preload = true, .dir = dir, .quiet = true }, argv);
	TU_STREQ(shim.out, native.out, "stdout");
	TU_STREQ(shim.err, native.err, "stderr");
	TU_EQ(shim.exited ? shim.code : -shim.sig, native.code, "exit status");
	free(tu_only_profile(dir));
	TU_EQ(tu_count_entries(dir, "", ".tmp", NULL), 0, "*.tmp files left in %s", dir);
}

Test(lifecycle, convoy_run_reports_the_last_image_of_a_command_that_execs, .timeout = 60)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	const char *argv[] = { tu_convoy(), "run", "-o", dir, "--json", "--", tu_prog("exec_via"), "execve", NULL };
	tu_run(&p, &(struct tu_opts){ 0 }, argv);
	tu_assert_exit(&p, 0, "convoy run -- exec_via execve");
	size_t n;
	tu_profiles(dir, &n);
	TU_EQ(n, 2, "profiles in %s (one per image)", dir);
	const char *json = strchr(p.out, '{');
	cr_assert(json, "no JSON in convoy run's output:\n%s", p.out);
	json_object *r = json_tokener_parse(json);
	cr_assert(r, "convoy run's JSON does not parse:\n%s", json);
	TU_STREQ(tu_str(tu_get(r, "process"), "exit"), EXIT_NORMAL, "the reported profile's process.exit");
	TU_EQ(tu_int(tu_lock(r, "exec_lock"), "acquisitions"), 7, "the reported image's locks");
}

Test(lifecycle, sigterm_writes_a_profile_only_when_the_launcher_asks, .timeout = 60)
{
	const char *argv[] = { tu_prog("term_self"), NULL };
	struct tu_proc p;
	char *plain = tu_tmpdir();
	run_both(&p, plain, argv, NULL);
	cr_assert(p.signaled && p.sig == SIGTERM, "plain preload: the program dies of SIGTERM");
	TU_EQ(tu_count_entries(plain, "convoy-", ".convoy", NULL), 0, "plain preloading handles no SIGTERM");

	char *asked = tu_tmpdir();
	run_both(&p, asked, argv, (const char *const[]){ "CONVOY_DUMP_SIGNAL=15", NULL });
	cr_assert(p.signaled && p.sig == SIGTERM, "CONVOY_DUMP_SIGNAL=15: the program still dies of SIGTERM");
	json_object *r = tu_report_dir(asked);
	/* Sent by the program itself, not by a launcher: not convoy's stop. */
	TU_STREQ(tu_str(tu_get(r, "process"), "exit"),
		 "killed by CONVOY_DUMP_SIGNAL (SIGTERM under convoy run/scale) from another process or itself, "
		 "not from convoy", "process.exit");
	TU_EQ(tu_int(tu_lock(r, "term_lock"), "acquisitions"), 100, "the profile has the program's locks");
}

Test(lifecycle, a_snapshot_request_leaves_the_programs_waits_errno_and_signal_view_alone, .timeout = 60)
{
	char sig[16], env_sig[48];
	snprintf(sig, sizeof(sig), "%d", SIGRTMAX);
	snprintf(env_sig, sizeof(env_sig), "CONVOY_SNAPSHOT_SIGNAL=%s", sig);
	char *dir = tu_tmpdir();
	const char *const env[] = { env_sig, NULL };
	struct tu_proc native, shim;
	tu_run(&native, &(struct tu_opts){ .env = env }, (const char *[]){ tu_prog("snapshot_waits"), NULL });
	tu_run(&shim, &(struct tu_opts){ .preload = true, .dir = dir, .quiet = true, .env = env },
	       (const char *[]){ tu_prog("snapshot_waits"), "send", NULL });
	cr_assert(!shim.timed_out, "snapshot_waits send hung under the shim:\n%s", shim.err);
	TU_STREQ(shim.out, native.out, "stdout: each wait's result and errno, and SIGRTMAX as the program sees it");
	tu_assert_exit(&shim, 0, "snapshot_waits send");
	TU_EQ(tu_count_entries(dir, "convoy-", ".hang", NULL), 3, "one snapshot per request in %s", dir);
	TU_EQ(tu_count_entries(dir, "convoy-", ".convoy", NULL), 1, "and the process's own profile at its end");
	TU_EQ(tu_count_entries(dir, "", ".tmp", NULL), 0, "*.tmp files left in %s", dir);
	json_object *r = tu_report_dir(dir);
	TU_STREQ(tu_str(tu_get(r, "process"), "exit"), EXIT_NORMAL, "the profile is the end's, not a snapshot");
}

Test(lifecycle, the_snapshot_signal_sent_without_convoys_mark_keeps_its_default_action, .timeout = 60)
{
	/* term_self sends itself SIGTERM: named as the snapshot signal, a plain
	 * kill still ends the program, as it would natively. */
	const char *argv[] = { tu_prog("term_self"), NULL };
	struct tu_proc p;
	char *dir = tu_tmpdir();
	run_both(&p, dir, argv, (const char *const[]){ "CONVOY_SNAPSHOT_SIGNAL=15", NULL });
	cr_assert(p.signaled && p.sig == SIGTERM, "the program still dies of SIGTERM");
	TU_EQ(tu_count_entries(dir, "convoy-", ".hang", NULL), 0, "no snapshot");
	json_object *r = tu_report_dir(dir);
	TU_STREQ(tu_str(tu_get(r, "process"), "exit"), "killed by CONVOY_SNAPSHOT_SIGNAL sent without convoy's mark",
		 "process.exit");
}

/* prog (with arg, if any) under the shim with convoy's snapshot signal set
 * (SIGRTMAX), as convoy run and scale set it; profiles in dir. */
static void run_asked_for_snapshots(struct tu_proc *p, const char *dir, const char *prog, const char *arg)
{
	char env_sig[48];
	snprintf(env_sig, sizeof(env_sig), "CONVOY_SNAPSHOT_SIGNAL=%d", SIGRTMAX);
	tu_run(p, &(struct tu_opts){ .preload = true, .dir = dir, .quiet = true, .env = (const char *const[]){ env_sig, NULL } },
	       (const char *[]){ tu_prog(prog), arg, NULL });
}

/* A thread with the asynchronous cancellation type, sent a snapshot
 * request and then cancelled, 40 times. The write's own guard put the
 * asynchronous type back as it left, a pending cancellation unwound the
 * thread with the write still claimed, and the process's end waited for
 * it and wrote no profile (helper-89: none in 40 rounds, 2.3 s). */
Test(lifecycle, a_thread_cancelled_during_a_snapshot_leaves_the_profile_to_be_written, .timeout = 60)
{
	char *dir = tu_tmpdir();
	struct tu_proc p;
	run_asked_for_snapshots(&p, dir, "snapshot_cancel", NULL);
	tu_assert_exit(&p, 0, "snapshot_cancel");
	cr_assert(tu_has_line(p.out, "main returned"), "%s", p.out);
	TU_EQ(tu_count_entries(dir, "convoy-", ".convoy", NULL), 1, "the process's profile in %s", dir);
	json_object *r = tu_report_dir(dir);
	TU_STREQ(tu_str(tu_get(r, "process"), "exit"), EXIT_NORMAL, "the profile is the end's");
	json_object_put(r);
}

Test(lifecycle, snapshot_requests_at_any_instruction_leave_the_program_as_it_is, .timeout = 120)
{
	char env_sig[48];
	snprintf(env_sig, sizeof(env_sig), "CONVOY_SNAPSHOT_SIGNAL=%d", SIGRTMAX);
	char *dir = tu_tmpdir();
	const char *const env[] = { env_sig, NULL };
	struct tu_proc native, shim;
	tu_run(&native, &(struct tu_opts){ .env = env, .timeout_s = 120 }, (const char *[]){ tu_prog("snapshot_storm"), NULL });
	tu_run(&shim, &(struct tu_opts){ .preload = true, .dir = dir, .quiet = true, .env = env, .timeout_s = 120 },
	       (const char *[]){ tu_prog("snapshot_storm"), "send", NULL });
	cr_assert(!shim.timed_out, "snapshot_storm send hung under the shim:\n%s", shim.err);
	TU_STREQ(shim.out, native.out, "what the worker counted");
	tu_assert_exit(&shim, 0, "snapshot_storm send");
	TU_EQ(tu_count_entries(dir, "", ".tmp", NULL), 0, "*.tmp files left in %s", dir);
	/* Every request was honoured (one that found the worker inside the shim
	 * when it left), and every snapshot, taken mid-bookkeeping, reads back. */
	TU_EQ(tu_count_entries(dir, "convoy-", ".hang", NULL), 40, "snapshots in %s", dir);
	DIR *d = opendir(dir);
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len < 5 || strcmp(e->d_name + len - 5, ".hang"))
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		TU_STREQ(tu_str(tu_get(tu_report(path), "process"), "exit"),
			 "snapshot at a hang; the program went on (convoy run/scale, --on-hang auto or continue)", "%s", path);
	}
	closedir(d);
}

Test(lifecycle, a_snapshot_request_during_fork_is_answered_by_the_parent_alone, .timeout = 60)
{
	/* The request lands inside fork (a fork handler of the program's sends
	 * it): the parent writes the snapshot; the child, which nobody asked,
	 * writes none. */
	char *dir = tu_tmpdir();
	struct tu_proc p;
	run_asked_for_snapshots(&p, dir, "snapshot_fork", "send");
	tu_assert_exit(&p, 0, "snapshot_fork send");
	TU_STREQ(tu_line_value(p.out, "child exit:"), "0", "the child's exit status");
	char *hang = NULL, want[64];
	snprintf(want, sizeof(want), "-%s.hang", tu_line_value(p.out, "parent:"));
	TU_EQ(tu_count_entries(dir, "convoy-", ".hang", &hang), 1, "snapshots in %s", dir);
	cr_assert(strstr(hang, want), "the snapshot %s is the parent's (%s)", hang, want);
	TU_EQ(tu_count_entries(dir, "convoy-", ".convoy", NULL), 2, "and each process's own profile");
}

Test(lifecycle, a_snapshot_request_on_a_thread_with_a_small_signal_stack_leaves_it_running, .timeout = 60)
{
	/* The program's 4 KiB alternate signal stack is its own handlers'; the
	 * snapshot, which needs more, must not run on it. */
	char *dir = tu_tmpdir();
	struct tu_proc p;
	run_asked_for_snapshots(&p, dir, "snapshot_altstack", NULL);
	tu_assert_exit(&p, 0, "snapshot_altstack");
	TU_STREQ(p.out, "went on\n", "stdout");
	TU_EQ(tu_count_entries(dir, "convoy-", ".hang", NULL), 1, "snapshots in %s", dir);
}

Test(lifecycle, a_snapshot_request_on_a_thread_deep_in_its_stack_waits_until_it_has_room, .timeout = 60)
{
	/* The thread has about 6 KiB of stack left when the request comes; the
	 * snapshot needs more, and is written once the thread has come back up
	 * (at its end). */
	char *dir = tu_tmpdir();
	struct tu_proc p;
	run_asked_for_snapshots(&p, dir, "snapshot_deep_stack", NULL);
	tu_assert_exit(&p, 0, "snapshot_deep_stack");
	TU_STREQ(p.out, "went on\n", "stdout");
	TU_EQ(tu_count_entries(dir, "convoy-", ".hang", NULL), 1, "snapshots in %s", dir);
}

Test(lifecycle, a_snapshot_request_on_a_small_alternate_stack_waits_until_the_thread_is_off_it, .timeout = 60)
{
	/* The request lands while a handler runs on an alternate stack cut
	 * from main's stack, with room for the kernel's frames and little
	 * more: the write would run past that stack's end into main's frames
	 * (whose bytes the program checks). It waits, and is written at the
	 * thread's next call into the shim. Also on a stack set with
	 * SS_AUTODISARM, which the kernel reports as none while the handler
	 * runs on it. */
	static const char *const hows[] = { NULL, "autodisarm" };
	for (size_t i = 0; i < sizeof(hows) / sizeof(hows[0]); i++) {
		char *dir = tu_tmpdir();
		struct tu_proc p;
		run_asked_for_snapshots(&p, dir, "snapshot_small_altstack", hows[i]);
		tu_assert_exit(&p, 0, hows[i] ? hows[i] : "snapshot_small_altstack");
		TU_STREQ(p.out, "changed 0, snapshots 0 then 1\n", "stdout %s", hows[i] ? hows[i] : "");
	}
}

/* The request lands on a coroutine's 16 KiB stack carved from main's
 * frame, with about 2 KiB more than a signal frame left: within the main
 * thread's bounds, so by them the write would have room there. It takes a
 * stack of the shim's own; written on the coroutine's (helper-118, at
 * 8f65f2e) it changed 116 to 1,411 of the known bytes below. */
Test(lifecycle, a_snapshot_on_a_coroutines_stack_carved_from_main_writes_nothing_below_it, .timeout = 60)
{
	char *dir = tu_tmpdir();
	struct tu_proc p;
	run_asked_for_snapshots(&p, dir, "snapshot_carved_coroutine", NULL);
	tu_assert_exit(&p, 0, "snapshot_carved_coroutine");
	TU_STREQ(p.out, "changed 0, snapshots 1\n", "stdout");
}

Test(lifecycle, a_snapshot_request_that_waits_on_a_coroutines_stack_leaves_errno_alone, .timeout = 60)
{
	/* The request lands in a contended wait on a 12 KiB coroutine stack
	 * with 16 KiB of guard below: each later call into the shim looks for
	 * the room again, and the kernel's answer for the guard page (EFAULT)
	 * reached the program's errno (helper-72). */
	char *dir = tu_tmpdir();
	struct tu_proc p;
	run_asked_for_snapshots(&p, dir, "snapshot_coroutine_errno", NULL);
	tu_assert_exit(&p, 0, "snapshot_coroutine_errno");
	TU_STREQ(p.out, "errno 1234 4321 777\n", "stdout");
}

/* A fork child's lock-order edges are its own, not the parent's under the
 * child's object ids (tests/progs/fork_order.c). */
Test(lifecycle, a_fork_childs_lock_order_is_its_own, .timeout = 30)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "fork_order", NULL);
	tu_assert_exit(&p, 0, "fork_order");
	json_object *parent, *child;
	tu_fork_reports(dir, &parent, &child);
	cr_assert(tu_has_edge(parent, "fo_p0", "fo_p1"), "the parent lacks its edge fo_p0 -> fo_p1");
	cr_assert(tu_has_edge(child, "fo_c1", "fo_c0"), "the child lacks its edge fo_c1 -> fo_c0");
	cr_assert(!tu_has_edge(child, "fo_c0", "fo_c1"), "the child has the parent's edge as fo_c0 -> fo_c1");
	TU_EQ(json_object_array_length(tu_array(tu_get(child, "lock_order"), "edges")), 1, "the child's edges");
}
