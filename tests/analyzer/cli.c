/* The convoy command line: bad usage is one line and exit 2; `convoy run`
 * behaves like the command it runs (exit status, environment) and reports;
 * a report opens no debuginfod client nobody configured. */
#include <dlfcn.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"

static void expect_usage_error(const char *const argv_tail[], const char *what)
{
	const char *argv[16] = { tu_convoy() };
	size_t n = 1;
	for (; argv_tail[n - 1]; n++)
		argv[n] = argv_tail[n - 1];
	argv[n] = NULL;
	struct tu_proc p;
	tu_run(&p, NULL, argv);
	cr_assert(!p.signaled, "%s: signal %d", what, p.sig);
	TU_EQ(p.code, 2, "%s: exit status (stderr: %s)", what, p.err);
	TU_EQ(tu_count_lines(p.err), 1, "%s: stderr lines (stderr: %s)", what, p.err);
	cr_assert(strncmp(p.err, "convoy: ", 8) == 0, "%s: stderr does not start with \"convoy: \": %s", what, p.err);
	TU_EQ(p.out_len, 0, "%s: stdout bytes (stdout: %s)", what, p.out);
}

#define USAGE_ERROR(...) expect_usage_error((const char *const[]){ __VA_ARGS__, NULL }, #__VA_ARGS__)

Test(cli, bad_options_one_line_exit_2, .timeout = 30)
{
	USAGE_ERROR("report", "--bogus", "x.convoy");
	USAGE_ERROR("report", "--bogus");
	USAGE_ERROR("report");
	USAGE_ERROR("report", "a.convoy", "b.convoy");
	USAGE_ERROR("report", "--limit", "-3", "x.convoy");
	USAGE_ERROR("report", "--limit", "abc", "x.convoy");
	USAGE_ERROR("report", "--limit", "99999999999999999999", "x.convoy");
	USAGE_ERROR("report", "--limit");
	USAGE_ERROR("report", "-x", "x.convoy");
	USAGE_ERROR("run");
	USAGE_ERROR("run", "--");
	USAGE_ERROR("run", "--bogus", "--", "true");
	USAGE_ERROR("run", "-o");
	USAGE_ERROR("run", "--sample-hz", "fast", "--", "true");
	USAGE_ERROR("run", "--sample-hz", "100000", "--", "true");
	USAGE_ERROR("frobnicate");
	USAGE_ERROR("--frobnicate");
}

Test(cli, limit_names_the_bad_value, .timeout = 30)
{
	struct tu_proc p;
	const char *argv[] = { tu_convoy(), "report", "--limit", "-3", "x.convoy", NULL };
	tu_run(&p, NULL, argv);
	cr_assert(strstr(p.err, "-3"), "the message does not name the bad value: %s", p.err);
}

/* CONVOY_SAMPLE_SWITCHES is 0, 1 or unset: anything else is one line,
 * naming it, and exit 2, before the command runs. */
Test(cli, a_bad_switch_records_setting_is_one_line, .timeout = 30)
{
	static const char *const env[] = { "CONVOY_SAMPLE_SWITCHES=yes", NULL };
	struct tu_opts o = { .env = env };
	const char *argv[] = { tu_convoy(), "run", "--", "true", NULL };
	struct tu_proc p;
	tu_run(&p, &o, argv);
	TU_EQ(p.code, 2, "exit status (stderr: %s)", p.err);
	TU_EQ(tu_count_lines(p.err), 1, "stderr lines (stderr: %s)", p.err);
	cr_assert(strstr(p.err, "CONVOY_SAMPLE_SWITCHES") && strstr(p.err, "'yes'"), "stderr: %s", p.err);
}

Test(cli, help_and_version_exit_0, .timeout = 30)
{
	static const char *const cmds[][3] = { { "--help" }, { "--version" }, { "report", "--help" }, { "run", "--help" } };
	for (size_t i = 0; i < 4; i++) {
		const char *argv[] = { tu_convoy(), cmds[i][0], cmds[i][1], NULL };
		struct tu_proc p;
		tu_run(&p, NULL, argv);
		tu_assert_exit(&p, 0, cmds[i][0]);
		cr_assert(p.out_len > 0, "convoy %s %s printed nothing on stdout", cmds[i][0], cmds[i][1] ? cmds[i][1] : "");
	}
}

Test(cli, run_propagates_exit_status_and_reports, .timeout = 30)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	const char *argv[] = { tu_convoy(), "run", "-o", dir, "--", tu_prog("exit_status"), "3", NULL };
	tu_run(&p, NULL, argv);
	tu_assert_exit(&p, 3, "convoy run -- exit_status 3");
	cr_assert(strstr(p.out, "hello from exit_status"), "the command's own output is missing:\n%s", p.out);
	cr_assert(strstr(p.out, "convoy report:") && strstr(p.out, "exit_lock"),
		  "convoy run printed no report (or one without exit_lock):\n%s", p.out);
	/* nothing of convoy's own, but the one line saying sampling is off
	 * where perf_event_open is refused (containers, perf_event_paranoid) */
	if (p.err_len)
		cr_assert(tu_count_lines(p.err) == 1 && !strncmp(p.err, "convoy: CPU sampling off: ", 26),
			  "stderr: %s", p.err);
	free(tu_only_profile(dir));
}

Test(cli, run_json_stdout_is_the_report_alone, .timeout = 30)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	const char *argv[] = { tu_convoy(), "run", "-o", dir, "--json", "--", tu_prog("count_trylock"), NULL };
	tu_run(&p, NULL, argv);
	tu_assert_exit(&p, 0, "convoy run --json");
	/* The command's own output goes to stderr; stdout is one JSON object. */
	json_object *r = json_tokener_parse(p.out);
	cr_assert(r && json_object_is_type(r, json_type_object), "convoy run --json: stdout is not one JSON object:\n%s",
		  p.out);
	cr_assert(p.err_len > 0, "the command's output is on neither stdout nor stderr");
	json_object *lock = tu_lock(r, "try_lock");
	cr_assert(lock, "no try_lock in the run's JSON report");
	TU_EQ(tu_int(lock, "trylocks"), 15, "try_lock trylocks");
}

Test(cli, run_missing_command_one_line, .timeout = 30)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	const char *argv[] = { tu_convoy(), "run", "-o", dir, "--", "/nonexistent/command", NULL };
	tu_run(&p, NULL, argv);
	cr_assert(!p.signaled, "signal %d", p.sig);
	cr_assert(p.code != 0, "convoy run of a missing command exited 0");
	TU_EQ(tu_count_lines(p.err), 1, "stderr lines (stderr: %s)", p.err);
	cr_assert(strncmp(p.err, "convoy: ", 8) == 0 && strstr(p.err, "/nonexistent/command"),
		  "stderr: %s", p.err);
	TU_EQ(p.out_len, 0, "stdout bytes (stdout: %s)", p.out);
}

Test(cli, run_killed_command_exit_128_plus_signal, .timeout = 30)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	const char *argv[] = { tu_convoy(), "run", "-o", dir, "--", "/bin/sh", "-c", "kill -TERM $$", NULL };
	tu_run(&p, NULL, argv);
	cr_assert(!p.signaled, "convoy itself died of signal %d", p.sig);
	TU_EQ(p.code, 128 + 15, "exit status of convoy run for a command killed by SIGTERM");
	TU_EQ(tu_count_lines(p.err), 1, "stderr lines (stderr: %s)", p.err);
}

Test(cli, run_appends_to_existing_ld_preload, .timeout = 30)
{
	struct tu_proc p;
	char *dir = tu_tmpdir(), *marker = tu_prog("libmarker.so"), env[4200];
	snprintf(env, sizeof(env), "LD_PRELOAD=%s", marker);
	const char *argv[] = { tu_convoy(), "run", "-o", dir, "--", tu_prog("print_preload"), NULL };
	struct tu_opts o = { .env = (const char *const[]){ env, NULL } };
	tu_run(&p, &o, argv);
	tu_assert_exit(&p, 0, "convoy run -- print_preload");
	char expect[8400];
	snprintf(expect, sizeof(expect), "LD_PRELOAD=%s:%s", marker, tu_shim());
	cr_assert(tu_has_line(p.out, expect), "expected the line \"%s\" in:\n%s", expect, p.out);
	cr_assert(tu_has_line(p.out, "marker loaded: yes"), "the user's preload library was dropped:\n%s", p.out);
	cr_assert(tu_has_line(p.out, "convoy loaded: yes"), "libconvoy.so was not loaded:\n%s", p.out);
	free(tu_only_profile(dir));
}

Test(cli, run_output_dir_is_created, .timeout = 30)
{
	struct tu_proc p;
	char *base = tu_tmpdir(), dir[4200];
	snprintf(dir, sizeof(dir), "%s/new-profiles", base);
	const char *argv[] = { tu_convoy(), "run", "-o", dir, "--", tu_prog("exit_status"), NULL };
	tu_run(&p, NULL, argv);
	tu_assert_exit(&p, 0, "convoy run -o NEWDIR");
	struct stat st;
	cr_assert(stat(dir, &st) == 0 && S_ISDIR(st.st_mode), "%s was not created", dir);
	char *prof = tu_only_profile(dir);
	cr_assert(strstr(p.out, prof), "the report does not name the profile %s:\n%s", prof, p.out);
}

Test(cli, run_output_dir_unusable_one_line, .timeout = 30)
{
	/* a directory under a regular file: not even root can make it */
	struct tu_proc p;
	char *base = tu_tmpdir(), file[4200], dir[4300];
	snprintf(file, sizeof(file), "%s/plain-file", base);
	tu_write_file(file, "x", 1);
	snprintf(dir, sizeof(dir), "%s/sub", file);
	const char *argv[] = { tu_convoy(), "run", "-o", dir, "--", tu_prog("exit_status"), NULL };
	tu_run(&p, NULL, argv);
	cr_assert(!p.signaled && p.code != 0, "convoy run -o %s: exit %d", dir, p.code);
	TU_EQ(tu_count_lines(p.err), 1, "stderr lines (stderr: %s)", p.err);
	cr_assert(strncmp(p.err, "convoy: ", 8) == 0, "stderr: %s", p.err);
	cr_assert(!strstr(p.out, "hello from exit_status"), "the command ran anyway:\n%s", p.out);
}

/* libdw 0.188 opens libdebuginfod (and libcurl with some thirty libraries)
 * at the first module whose debug file is not on disk, servers or none:
 * convoy lets it only where DEBUGINFOD_URLS names one (analyzer/dlopen.c).
 * The loader's own account of what it opened (LD_DEBUG=files, which names
 * a file before it searches for it) says which. The program is stripped,
 * its debug file nowhere (tests/tests.mk, exit_status_stripped). */
Test(cli, a_report_opens_debuginfod_only_where_servers_are_named, .timeout = 60)
{
	char *dir = tu_tmpdir(), *cache = NULL;
	cr_assert(asprintf(&cache, "%s/cache", dir) > 0);
	struct tu_proc p;
	tu_run_shim(&p, dir, "exit_status_stripped", NULL);
	tu_assert_exit(&p, 0, "exit_status_stripped under the shim");
	const char *profile = tu_only_profile(dir);
	char *dbg_cache = NULL;
	cr_assert(asprintf(&dbg_cache, "DEBUGINFOD_CACHE_PATH=%s", cache) > 0);
	tu_run(&p, &(struct tu_opts){ .env = (const char *const[]){ "LD_DEBUG=files", "DEBUGINFOD_URLS", NULL } },
	       (const char *[]){ tu_convoy(), "report", profile, NULL });
	tu_assert_exit(&p, 0, "convoy report");
	cr_assert(!strstr(p.err, "libdebuginfod"), "libdebuginfod opened with no server named:\n%s", p.err);
	/* Named (a directory that is not there: the client's ask fails at
	 * once, with no network and no proxy), libdw has its client, where
	 * the library is installed. */
	void *lib = dlopen("libdebuginfod.so.1", RTLD_LAZY);
	if (!lib)
		cr_skip_test("libdebuginfod.so.1 is not installed: libdw has no client to open");
	dlclose(lib);
	tu_run(&p, &(struct tu_opts){ .env = (const char *const[]){ "LD_DEBUG=files",
								      "DEBUGINFOD_URLS=file:///nonexistent-convoy-test/",
								      dbg_cache, NULL } },
	       (const char *[]){ tu_convoy(), "report", profile, NULL });
	tu_assert_exit(&p, 0, "convoy report with a server named");
	cr_assert(strstr(p.err, "libdebuginfod"), "libdebuginfod not opened with a server named:\n%s", p.err);
}
