/* Every way a process ends writes its profile, and the shim's own output
 * (one stderr line, or none when quiet) never changes the program's. */
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#define EXIT_NORMAL "returned from main or called exit()"

Test(exit, return_from_main, .timeout = 30)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "exit_status", "0", NULL);
	tu_assert_exit(&p, 0, "exit_status 0");
	json_object *r = tu_report_dir(dir);
	json_object *proc = tu_get(r, "process");
	TU_STREQ(tu_str(proc, "exit"), EXIT_NORMAL, "process.exit");
	cr_assert(!tu_bool(proc, "forked"), "process.forked");
	json_object *lock = tu_lock(r, "exit_lock");
	cr_assert(lock, "no lock named exit_lock");
	TU_EQ(tu_int(lock, "acquisitions"), 100, "exit_lock acquisitions");
}

Test(exit, exit_from_other_thread_while_others_run, .timeout = 30)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "exit_from_thread", NULL);
	tu_assert_exit(&p, 7, "exit_from_thread");
	cr_assert(tu_has_line(p.out, "exiting from a thread") && !strstr(p.out, "not reached"),
		  "exit_from_thread output:\n%s", p.out);
	json_object *r = tu_report_dir(dir);
	TU_STREQ(tu_str(tu_get(r, "process"), "exit"), EXIT_NORMAL, "process.exit");
	json_object *lock = tu_lock(r, "exit_lock");
	cr_assert(lock, "no lock named exit_lock");
	TU_EQ(tu_int(lock, "acquisitions"), 1000, "exit_lock acquisitions");
	json_object *busy = tu_lock(r, "busy_lock");
	cr_assert(busy, "no lock named busy_lock");
	TU_LE(1, tu_int(busy, "acquisitions"), "busy_lock acquisitions");
}

Test(exit, main_pthread_exit_then_last_thread, .timeout = 30)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "exit_main_pthread_exit", NULL);
	tu_assert_exit(&p, 0, "exit_main_pthread_exit");
	cr_assert(tu_has_line(p.out, "last thread done"), "output:\n%s", p.out);
	json_object *r = tu_report_dir(dir);
	const char *why = tu_str(tu_get(r, "process"), "exit");
	cr_assert(strstr(why, "pthread_exit"), "process.exit is \"%s\", expected it to name pthread_exit", why);
	json_object *main_thread = tu_main_thread(r);
	cr_assert(tu_bool(main_thread, "pthread_exit"), "main thread's pthread_exit flag");
	json_object *lock = tu_lock(r, "late_lock");
	cr_assert(lock, "no lock named late_lock");
	TU_EQ(tu_int(lock, "acquisitions"), 1000, "late_lock acquisitions");
}

/* Two threads call exit() at once: the one that finds glibc's exit handlers
 * taken used to end the process in the middle of the other's profile write
 * (a profile in 13 of 60 runs, and 2 .tmp files left). Now it waits for the
 * shim's destructor (up to 2 s before the write begins, a bound this
 * microseconds-long gap never meets), so every run leaves its whole
 * profile, and nothing half-written is ever left (the file is unnamed
 * until complete). */
Test(exit, two_threads_in_exit_at_once_each_leave_the_whole_profile, .timeout = 120)
{
	char *dir = tu_tmpdir();
	for (int i = 0; i < 20; i++) {
		struct tu_proc p;
		tu_run_shim(&p, dir, "exit_together", NULL);
		tu_assert_exit(&p, 3, "exit_together");
	}
	TU_EQ(tu_count_entries(dir, "convoy-", ".tmp", NULL), 0, "temporary files left in %s", dir);
	size_t n;
	char **profiles = tu_profiles(dir, &n);
	TU_EQ(n, 20, "profiles in %s", dir);
	for (size_t i = 0; i < n; i++) {
		json_object *lock = tu_lock(tu_report(profiles[i]), "exit_lock");
		cr_assert(lock, "%s: no lock named exit_lock", profiles[i]);
		TU_EQ(tu_int(lock, "acquisitions"), 100, "%s: exit_lock acquisitions", profiles[i]);
	}
}

Test(exit, fork_child_writes_its_own_profile, .timeout = 30)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "exit_fork", NULL);
	tu_assert_exit(&p, 0, "exit_fork");
	cr_assert(tu_has_line(p.out, "child locked 1000") &&
		  tu_has_line(p.out, "parent locked 2000; child exit 0"), "exit_fork output:\n%s", p.out);
	json_object *parent, *child;
	tu_fork_reports(dir, &parent, &child);
	cr_assert(tu_int(tu_get(child, "process"), "pid") != tu_int(tu_get(parent, "process"), "pid"),
		  "both profiles have pid %lld", (long long)tu_int(tu_get(child, "process"), "pid"));
	TU_EQ(tu_int(tu_get(child, "process"), "ppid"), tu_int(tu_get(parent, "process"), "pid"),
	      "child's ppid vs parent's pid");
	json_object *cl = tu_lock(child, "fork_lock"), *pl = tu_lock(parent, "fork_lock");
	cr_assert(cl && pl, "fork_lock missing from the %s profile", cl ? "parent's" : "child's");
	TU_EQ(tu_int(cl, "acquisitions"), 1000, "child's fork_lock acquisitions (its own only)");
	TU_EQ(tu_int(pl, "acquisitions"), 2000, "parent's fork_lock acquisitions");
	TU_EQ(json_object_array_length(tu_array(child, "threads")), 1, "child's threads[]");
}

static void unwritable_dir(const char *dir)
{
	struct tu_proc native, shim;
	const char *argv[] = { tu_prog("exit_status"), "5", NULL };
	tu_run(&native, NULL, argv);
	struct tu_opts o = { .preload = true, .dir = dir };
	tu_run(&shim, &o, argv);
	tu_assert_exit(&native, 5, "exit_status 5 natively");
	TU_EQ(shim.exited ? shim.code : -shim.sig, 5, "exit status under the shim with CONVOY_DIR=%s", dir);
	TU_STREQ(shim.out, native.out, "stdout under the shim with CONVOY_DIR=%s", dir);
	TU_EQ(tu_count_lines(shim.err), 1, "stderr lines with CONVOY_DIR=%s (stderr: %s)", dir, shim.err);
	cr_assert(strncmp(shim.err, "convoy: ", 8) == 0, "stderr does not start with \"convoy: \": %s", shim.err);
	cr_assert(strstr(shim.err, dir), "stderr does not name the directory %s: %s", dir, shim.err);
}

Test(exit, unwritable_dir_one_line_program_unchanged, .timeout = 30)
{
	cr_assert(access("/nonexistent", F_OK) != 0, "/nonexistent exists on this machine: the test needs it absent");
	unwritable_dir("/nonexistent/dir");
	/* and one that cannot exist even for root: a directory under a file */
	char *base = tu_tmpdir(), file[4200], dir[4300];
	snprintf(file, sizeof(file), "%s/plain-file", base);
	tu_write_file(file, "x", 1);
	snprintf(dir, sizeof(dir), "%s/dir", file);
	unwritable_dir(dir);
}

Test(exit, quiet_prints_nothing, .timeout = 30)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	const char *argv[] = { tu_prog("exit_status"), "0", NULL };
	struct tu_opts o = { .preload = true, .dir = dir, .env = (const char *const[]){ "CONVOY_QUIET=1", NULL } };
	tu_run(&p, &o, argv);
	tu_assert_exit(&p, 0, "exit_status");
	TU_EQ(p.err_len, 0, "stderr bytes with CONVOY_QUIET=1 (stderr: %s)", p.err);
	free(tu_only_profile(dir));
}

/* The profile's name is said on a terminal only (preload/output.c,
 * announce): on a pipe or a file the line would be in the program's
 * output (a parent reading a child's stderr: helper-129). Through
 * script(1)'s terminal, one line names the file; on a pipe, none. */
Test(exit, one_line_naming_the_file_on_a_terminal_only, .timeout = 30)
{
	char *dir = tu_tmpdir(), *cmd = NULL;
	cr_assert(asprintf(&cmd, "env LD_PRELOAD=%s CONVOY_DIR=%s %s 0", tu_shim(), dir, tu_prog("exit_status")) > 0);
	const char *on_terminal[] = { "/usr/bin/script", "-qec", cmd, "/dev/null", NULL };
	struct tu_proc t;
	tu_run(&t, NULL, on_terminal);
	tu_assert_exit(&t, 0, "exit_status on script's terminal");
	char *file = tu_only_profile(dir);
	const char *line = strstr(t.out, "convoy: ");
	cr_assert(line && strstr(line, file) && !strstr(line + 1, "convoy: "),
		  "the terminal's output does not name the profile %s once:\n%s", file, t.out);
	cr_assert(strstr(t.out, "hello from exit_status"), "%s", t.out);

	struct tu_proc p;
	char *piped = tu_tmpdir();
	const char *argv[] = { tu_prog("exit_status"), "0", NULL };
	struct tu_opts o = { .preload = true, .dir = piped };
	tu_run(&p, &o, argv);
	tu_assert_exit(&p, 0, "exit_status");
	TU_STREQ(p.out, "hello from exit_status\n", "stdout");
	TU_EQ(p.err_len, 0, "stderr bytes on a pipe (stderr: %s)", p.err);
	free(tu_only_profile(piped));
}

Test(exit, default_dir_is_the_working_directory, .timeout = 30)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	const char *argv[] = { tu_prog("exit_status"), "0", NULL };
	struct tu_opts o = { .preload = true, .cwd = dir, .quiet = true };
	tu_run(&p, &o, argv);
	tu_assert_exit(&p, 0, "exit_status");
	free(tu_only_profile(dir));
}

Test(exit, exit_while_another_thread_holds_stdout, .timeout = 30)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "exit_stdout_locked", NULL);
	cr_assert(!p.timed_out, "exit hung under the shim while another thread held stdout's lock");
	tu_assert_exit(&p, 0, "exit_stdout_locked");
	TU_STREQ(p.out, "printed before exit\n", "stdout");
	free(tu_only_profile(dir));
}
