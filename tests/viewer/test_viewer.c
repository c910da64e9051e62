/* The HTML page, `convoy view` and the Perfetto export (issue 15).
 *
 * The page is checked in a real browser: tests/viewer/check.mjs drives
 * Debian's chromium through playwright-core, one check per test, each in a
 * browser context of its own in one chromium that this binary's run starts
 * (below). When chromium or playwright-core is missing or chromium cannot
 * start, those tests are skipped, saying why (check.mjs exits 77). The
 * page's bytes and the Perfetto export are checked here with json-c,
 * without a browser.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <zlib.h>

#include <criterion/hooks.h>
#include <criterion/internal/ordered-set.h>

#include "convoy/profile.h"
#include "testutil.h"

#ifndef SOURCE_DIR
#error "compile with -DSOURCE_DIR=\"/abs/path/to/the/repository\""
#endif

#define BROWSER_TIMEOUT_S 120
#define NODE "/usr/bin/node"
#define CHECK_MJS SOURCE_DIR "/tests/viewer/check.mjs"

static const char *const hostile[] = {
	"<img src=x onerror=alert(1)>",                  /* a lock's name */
	"<img src=x>",                                   /* a thread's (15 bytes at most) */
	"</script><script>alert(2)</script><!--",        /* a condvar's */
	NULL,
};

static void convoy(struct tu_proc *p, const char *const *args)
{
	const char *argv[16] = { tu_convoy() };
	for (int i = 0; args[i]; i++)
		argv[i + 1] = args[i];
	struct tu_opts o = { .timeout_s = 60 };
	tu_run(p, &o, argv);
}

/* Runs a demo (build/demos/NAME --workers N) under the shim; its profile. */
static char *demo_profile(const char *demo, const char *workers)
{
	char *dir = tu_tmpdir(), *path = tu_build_path("demos/");
	char prog[4096];
	snprintf(prog, sizeof(prog), "%s%s", path, demo);
	struct tu_proc p;
	struct tu_opts o = { .preload = true, .dir = dir, .quiet = true, .timeout_s = 60 };
	tu_run(&p, &o, (const char *[]){ prog, "--workers", workers, NULL });
	tu_assert_exit(&p, 0, demo);
	return tu_only_profile(dir);
}

static char *hostile_page(void)
{
	char *dir = tu_tmpdir(), *page = NULL;
	struct tu_proc p;
	tu_run_shim(&p, dir, "hostile_names", NULL);
	tu_assert_exit(&p, 0, "hostile_names");
	cr_assert(asprintf(&page, "%s/page.html", dir) > 0);
	convoy(&p, (const char *[]){ "report", "--html", page, tu_only_profile(dir), NULL });
	tu_assert_exit(&p, 0, "convoy report --html");
	return page;
}

/* One chromium for the whole run, and the checks run in the node process
 * that drives it (`check.mjs serve SOCKET`, started before the first test
 * and closed after the last) when a test of the viewer suite, where the
 * browser checks are, is to run. A check is asked of it on its unix
 * socket, whose path the test processes inherit from this, Criterion's
 * runner, in CONVOY_CHECK_SOCKET; when it did not start, or it ends a
 * connection without an answer (its chromium gone), the check is a `node
 * check.mjs CHECK PAGE` of its own, with its own chromium, or skips. A
 * node for each check, connected to a chromium server (whose node relayed
 * every message), made the machine busy for 25.6 s over test_viewer's run
 * (13.4 s wall); all in the serving process, for 19.4 s (10.3 s wall;
 * medians of 3, `tests/run build/tests/test_viewer`, 2 vCPUs).
 *
 * The server is not the runner's child: Criterion's child pump waits for any
 * child (waitid P_ALL, WNOWAIT) and spins for ever on one that is not a
 * test's, so it is started through a child that exits at once. It runs in
 * a session of its own (a terminal's ^C, which tests/run's background
 * binaries ignore, would close chromium under the checks) with the
 * environment tu_run gives the programs it runs. Its standard input is a
 * pipe whose writing end only the runner holds: it ends when the run does,
 * however the run ends, and the server then closes chromium and removes
 * its socket; its standard output ends when it has. */
static int server_stdin = -1, server_stdout = -1;
static char socket_path[64];

/* Reads a line of fd into line, without its newline, waiting at most
 * BROWSER_TIMEOUT_S for each piece: whether a whole line came. */
static bool read_line(int fd, char *line, size_t size)
{
	size_t len = 0;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	while (len < size - 1) {
		int ready = poll(&pfd, 1, BROWSER_TIMEOUT_S * 1000);
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready != 1)
			break;   /* the time is up, or poll failed */
		ssize_t n = read(fd, line + len, size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (memchr(line, '\n', len))
			break;
	}
	line[len] = '\0';
	char *nl = strchr(line, '\n');
	if (nl)
		*nl = '\0';
	return nl != NULL;
}

static bool browser_tests_enabled(struct criterion_test_set *set)
{
	FOREACH_SET(struct criterion_suite_set *suite, set->suites) {
		FOREACH_SET(struct criterion_test *test, suite->tests) {
			if (strcmp(test->category, "viewer") == 0 && !test->data->disabled)
				return true;
		}
	}
	return false;
}

ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
	int in[2], out[2];
	if (!browser_tests_enabled(set) || access(NODE, X_OK) != 0 || pipe2(in, O_CLOEXEC) != 0)
		return;
	if (pipe2(out, O_CLOEXEC) != 0) {
		close(in[0]);
		close(in[1]);
		return;
	}
	snprintf(socket_path, sizeof(socket_path), "/tmp/convoy-viewer-checks-%d.sock", (int)getpid());
	unlink(socket_path);   /* left by a server killed before it could remove it */
	char *argv[] = { NODE, CHECK_MJS, "serve", socket_path, NULL }, **env = tu_env(&(struct tu_opts){ 0 });
	pid_t child = fork();
	if (child == 0) {
		if (_Fork() == 0) {   /* no fork handlers: a child of a threaded runner */
			setsid();
			/* dup2 onto itself (a runner started without 0 or 1) would
			 * leave close-on-exec set */
			if (in[0] == 0)
				fcntl(0, F_SETFD, 0);
			else
				dup2(in[0], 0);
			if (out[1] == 1)
				fcntl(1, F_SETFD, 0);
			else
				dup2(out[1], 1);
			close_range(3, ~0U, 0);   /* the runner's descriptors are not the server's */
			execve(NODE, argv, env);
		}
		_exit(0);
	}
	close(in[0]);
	close(out[1]);
	free(env);
	server_stdin = in[1];
	server_stdout = out[0];
	while (child > 0 && waitpid(child, NULL, 0) < 0 && errno == EINTR)
		;
	/* Its first line: "ready", or "SKIP: why" and its end. */
	char line[512];
	if (read_line(server_stdout, line, sizeof(line)) && strcmp(line, "ready") == 0)
		setenv("CONVOY_CHECK_SOCKET", socket_path, 1);
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
	(void)stats;
	if (server_stdin < 0)
		return;
	close(server_stdin);
	char rest[512];
	while (read_line(server_stdout, rest, sizeof(rest)))
		;   /* to its end: chromium closed, the socket removed */
	close(server_stdout);
	unlink(socket_path);   /* by a server that ended before it could */
}

/* Asks the serving check.mjs at path for a check (argv: CHECK PAGE
 * ARGS...): whether it answered, with *code and *out (its text). */
static bool ask_server(const char *path, const char *const *argv, int *code, char **out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || strlen(path) >= sizeof(sa.sun_path)) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	strcpy(sa.sun_path, path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return false;
	}
	json_object *request = json_object_new_array();
	for (int i = 0; argv[i]; i++)
		json_object_array_add(request, json_object_new_string(argv[i]));
	char *line = NULL;
	cr_assert(asprintf(&line, "%s\n", json_object_to_json_string_ext(request, JSON_C_TO_STRING_PLAIN)) > 0);
	json_object_put(request);
	for (size_t done = 0, len = strlen(line); done < len;) {
		ssize_t n = send(fd, line + done, len - done, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		cr_assert(n > 0, "writing to the check server: %s", strerror(errno));
		done += (size_t)n;
	}
	free(line);
	/* Its answer, to the connection's end. */
	size_t len;
	char *answer = tu_read_to_end(fd, BROWSER_TIMEOUT_S * tu_timeout_mult(), &len);
	close(fd);
	if (len == 0) {   /* no answer: its chromium is gone */
		free(answer);
		return false;
	}
	json_object *a = json_tokener_parse(answer), *c, *o;
	cr_assert(a && json_object_object_get_ex(a, "code", &c) && json_object_is_type(c, json_type_int) &&
		  json_object_object_get_ex(a, "out", &o) && json_object_is_type(o, json_type_string),
		  "the check server's answer is not {code, out}: %s", answer);
	*code = json_object_get_int(c);
	*out = strdup(json_object_get_string(o));
	json_object_put(a);
	free(answer);
	return true;
}

/* Check CHECK of PAGE (ARGS...: check.mjs's), asked of the serving
 * check.mjs or run by a node of its own: passes, fails with its reason, or
 * skips. */
static void browser_check(const char *check, const char *page, const char *const *args)
{
	const char *argv[16] = { NODE, CHECK_MJS, check, page };
	int n = 4;
	for (int i = 0; args && args[i]; i++)
		argv[n++] = args[i];
	int code;
	char *out;
	const char *server = getenv("CONVOY_CHECK_SOCKET");
	if (!server || !ask_server(server, argv + 2, &code, &out)) {
		struct stat st;
		if (stat(argv[0], &st) != 0)
			cr_skip_test("no node at %s (apt-get install nodejs, or 'make deps')", argv[0]);
		struct tu_proc p;
		struct tu_opts o = { .timeout_s = BROWSER_TIMEOUT_S };
		tu_run(&p, &o, argv);
		code = p.exited ? p.code : -1;
		cr_assert(asprintf(&out, "%s%s", p.out, p.err) >= 0);
	}
	if (code == 77)
		cr_skip_test("%s", out);
	cr_assert(code == 0, "browser check %s of %s failed:\n%s", check, page, out);
}

Test(viewer, a_sweep_page_draws_every_section, .timeout = 240)
{
	char *dir = tu_tmpdir(), *page = NULL, *beside = NULL, *demo = tu_build_path("demos/global_queue");
	cr_assert(asprintf(&page, "%s/sweep.html", dir) > 0 && asprintf(&beside, "%s/sweep/report.html", dir) > 0);
	char out[4200];
	snprintf(out, sizeof(out), "%s/sweep", dir);
	struct tu_proc p;
	convoy(&p, (const char *[]){ "scale", "--threads", "1,2", "--html", page, "-o", out, "--",
				     demo, "--workers", "{threads}", NULL });
	tu_assert_exit(&p, 0, "convoy scale --html");
	struct stat st;
	cr_assert(stat(beside, &st) == 0, "scale -o DIR --html did not also write %s", beside);
	browser_check("sections", page, NULL);
}

/* The analyzer has no cache-line or lock-order data yet: the page draws
 * them from data check.mjs adds to a copy of a sweep's page. */
Test(viewer, the_cache_line_map_and_lock_order_graph_draw_when_given_data, .timeout = 180)
{
	char *dir = tu_tmpdir(), *page = NULL, *demo = tu_build_path("demos/global_queue");
	cr_assert(asprintf(&page, "%s/sweep.html", dir) > 0);
	struct tu_proc p;
	convoy(&p, (const char *[]){ "scale", "--threads", "1,2", "--html", page, "-o", dir, "--",
				     demo, "--workers", "{threads}", NULL });
	tu_assert_exit(&p, 0, "convoy scale --html");
	browser_check("optional", page, NULL);
}

Test(viewer, a_profile_page_says_what_one_profile_cannot_show, .timeout = 180)
{
	char *profile = demo_profile("global_queue", "2"), *page = NULL;
	cr_assert(asprintf(&page, "%s.page.html", profile) > 0);
	struct tu_proc p;
	convoy(&p, (const char *[]){ "report", "--html", page, profile, NULL });
	tu_assert_exit(&p, 0, "convoy report --html");
	cr_assert(p.out_len == 0, "report --html printed to stdout: %s", p.out);
	browser_check("single", page, NULL);
}

Test(viewer, the_lock_table_sorts_filters_and_opens, .timeout = 180)
{
	char *profile = demo_profile("global_queue", "2"), *page = NULL;
	cr_assert(asprintf(&page, "%s.html", profile) > 0);
	struct tu_proc p;
	convoy(&p, (const char *[]){ "view", profile, NULL });
	tu_assert_exit(&p, 0, "convoy view");
	char want[4200];
	snprintf(want, sizeof(want), "%s\n", page);
	TU_STREQ(p.out, want, "convoy view prints the page's path");
	browser_check("sort", page, NULL);
}

Test(viewer, hostile_names_show_as_text_and_run_nothing, .timeout = 180)
{
	browser_check("hostile", hostile_page(), hostile);
}

Test(viewer, a_diff_page_draws_both_sides, .timeout = 180)
{
	char *a = demo_profile("global_queue", "2"), *b = demo_profile("work_stealing", "2");
	char *dir = tu_tmpdir(), *page = NULL;
	cr_assert(asprintf(&page, "%s/diff.html", dir) > 0);
	struct tu_proc p;
	convoy(&p, (const char *[]){ "diff", "--html", page, a, b, NULL });
	tu_assert_exit(&p, 0, "convoy diff --html");
	browser_check("diff", page, NULL);
}

static const char data_open[] = "<script type=\"application/json\" id=\"convoy-data\">";

/* The page's embedded data, parsed. */
static json_object *page_data(const char *page)
{
	size_t len;
	char *html = (char *)tu_read_file(page, &len), *start = strstr(html, data_open);
	cr_assert(start, "no data block in %s", page);
	start += sizeof(data_open) - 1;
	*strstr(start, "</script>") = '\0';
	json_object *data = json_tokener_parse(start);
	cr_assert(data, "the data block of %s is not JSON", page);
	return data;
}

/* The data block ends only at the page's own "</script>", and holds the
 * report exactly: json-c reads the escaped text back to the same names. */
Test(viewer, program_strings_cannot_end_the_data_block, .timeout = 60)
{
	size_t len;
	char *path = hostile_page(), *html = (char *)tu_read_file(path, &len);
	int closes = 0;
	for (char *s = html; (s = strstr(s, "</script")); s++)
		closes++;
	TU_EQ(closes, 2, "\"</script\" in the page (its two script blocks only)");
	cr_assert(!memmem(html, len, "\xe2\x80\xa8", 3) && !memmem(html, len, "\xe2\x80\xa9", 3),
		  "a raw U+2028 or U+2029 is in the page");
	static const char replaced[] = "bytes \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd not UTF-8";
	cr_assert(memmem(html, len, replaced, sizeof(replaced) - 1),
		  "a name that is not UTF-8 is not written with U+FFFD");
	char *start = strstr(html, data_open) + sizeof(data_open) - 1;
	*strstr(start, "</script>") = '\0';
	cr_assert(!strchr(start, '<'), "a '<' is left in the data block");
	json_object *report = tu_get(page_data(path), "report");
	cr_assert(tu_lock(report, hostile[0]), "lock %s is not in the page's data", hostile[0]);
	cr_assert(tu_cond(report, hostile[2]), "condvar %s is not in the page's data", hostile[2]);
	cr_assert(tu_thread_named(report, hostile[1]), "thread %s is not in the page's data", hostile[1]);
	json_object *worker = tu_thread_named(report, hostile[1]);
	cr_assert(tu_get(tu_get(worker, "counters"), "line\xe2\x80\xa8separator"), "the U+2028 counter name did not survive");
}

Test(viewer, perfetto_export_has_a_track_per_thread, .timeout = 60)
{
	char *profile = demo_profile("global_queue", "2"), *file = NULL;
	cr_assert(asprintf(&file, "%s.trace.json", profile) > 0);
	struct tu_proc p;
	convoy(&p, (const char *[]){ "export", "--perfetto", "-o", file, profile, NULL });
	tu_assert_exit(&p, 0, "convoy export --perfetto");
	json_object *trace = json_object_from_file(file), *report = tu_report(profile);
	cr_assert(trace, "the export is not JSON");
	json_object *events = tu_array(trace, "traceEvents"), *threads = tu_array(report, "threads");
	size_t nthreads = json_object_array_length(threads);
	int named = 0, lifetimes = 0, flow_starts = 0, flow_ends = 0, counters = 0;
	for (size_t i = 0; i < json_object_array_length(events); i++) {
		json_object *e = json_object_array_get_idx(events, i);
		const char *ph = tu_str(e, "ph");
		tu_str(e, "name");
		tu_int(e, "pid");
		int64_t tid = tu_int(e, "tid");
		if (strcmp(ph, "M") != 0)
			cr_assert(json_object_is_type(tu_get(e, "ts"), json_type_double), "event %zu has no numeric ts", i);
		if (!strcmp(ph, "X"))
			cr_assert(json_object_is_type(tu_get(e, "dur"), json_type_double), "slice %zu has no dur", i);
		if (!strcmp(ph, "M") && !strcmp(tu_str(e, "name"), "thread_name")) {
			named++;
			int found = 0;
			for (size_t k = 0; k < nthreads; k++)
				found |= tu_int(json_object_array_get_idx(threads, k), "tid") == tid;
			cr_assert(found, "thread_name for tid %lld, which the profile does not have", (long long)tid);
		}
		lifetimes += !strcmp(ph, "X") && json_object_object_get_ex(e, "cat", NULL) && !strcmp(tu_str(e, "cat"), "lifetime");
		flow_starts += !strcmp(ph, "s");
		flow_ends += !strcmp(ph, "f");
		counters += !strcmp(ph, "C");
	}
	TU_EQ(named, nthreads, "thread_name tracks");
	TU_EQ(lifetimes, nthreads, "lifetime slices");
	TU_EQ(flow_starts, nthreads - 1, "creation flows (every thread but main)");
	TU_EQ(flow_ends, flow_starts, "flow ends");
	TU_EQ(counters, 2 * nthreads, "live-thread counter samples");
	TU_STREQ(tu_str(tu_get(trace, "otherData"), "convoy_timeline"), "aggregate", "the trace says it has no trace events");
}

Test(viewer, view_rejects_what_is_not_a_profile_or_sweep, .timeout = 30)
{
	char *dir = tu_tmpdir(), *junk = NULL;
	cr_assert(asprintf(&junk, "%s/junk", dir) > 0);
	tu_write_file(junk, "not a profile\n", 14);
	char *fifo = NULL;
	cr_assert(asprintf(&fifo, "%s/fifo", dir) > 0 && mkfifo(fifo, 0600) == 0);
	const char *const cases[][3] = {
		{ "view", junk, NULL },
		{ "view", dir, NULL },                 /* a directory without sweep.json */
		{ "view", "/nonexistent/x", NULL },
		{ "view", fifo, NULL },                /* must not block on it */
		{ "view", NULL, NULL },
		{ "report", "--html", NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tu_proc p;
		convoy(&p, cases[i]);
		cr_assert(p.exited && p.code != 0, "convoy %s %s exited %d", cases[i][0], cases[i][1] ? cases[i][1] : "", p.code);
		TU_EQ(tu_count_lines(p.err), 1, "error lines for case %zu (%s)", i, p.err);
		cr_assert(!strncmp(p.err, "convoy: ", 8), "case %zu: %s", i, p.err);
	}
}

/* ---- trace mode (CONVOY_TRACE=1, preload/trace.c) ------------------------ */

/* prog under the shim, with these extra environment entries; the report
 * as the page embeds it (trace included). */
static json_object *traced_report_of(const char *name, const char *const *env, char **out)
{
	char *dir = tu_tmpdir(), *prog = tu_prog(name), *page = NULL;
	struct tu_proc p;
	struct tu_opts o = { .preload = true, .dir = dir, .quiet = true, .env = env };
	tu_run(&p, &o, (const char *[]){ prog, NULL });
	tu_assert_exit(&p, 0, name);
	if (out)
		*out = p.out;
	cr_assert(asprintf(&page, "%s/page.html", dir) > 0);
	struct tu_proc v;
	convoy(&v, (const char *[]){ "view", "-o", page, tu_only_profile(dir), NULL });
	tu_assert_exit(&v, 0, "convoy view");
	return tu_get(page_data(page), "report");
}

static json_object *traced_report(const char *const *env, char **out)
{
	return traced_report_of("count_cond", env, out);
}

Test(trace, is_off_unless_asked_for, .timeout = 60)
{
	json_object *report = traced_report(NULL, NULL);
	cr_assert(!json_object_object_get_ex(report, "trace", NULL), "a profile recorded without CONVOY_TRACE has a trace");
}

Test(trace, leaves_the_program_output_unchanged, .timeout = 60)
{
	struct tu_proc native;
	tu_run_native(&native, "count_cond", NULL);
	tu_assert_exit(&native, 0, "count_cond natively");
	char *traced;
	traced_report((const char *[]){ "CONVOY_TRACE=1", NULL }, &traced);
	TU_STREQ(traced, native.out, "stdout with trace mode on");
}

/* Every blocked condvar wait is an event, and every wake-up the report counts
 * is a flow from the thread that signalled to the thread it woke. */
Test(trace, records_every_wait_and_each_wake_with_its_waker, .timeout = 60)
{
	json_object *report = traced_report((const char *[]){ "CONVOY_TRACE=1", NULL }, NULL);
	json_object *trace = tu_get(report, "trace");
	TU_EQ(tu_int(trace, "dropped"), 0, "events dropped");
	json_object *cond = tu_cond(report, "ready_cond");
	cr_assert(cond, "no ready_cond in the report");
	int64_t waits = 0, flows = 0;
	json_object *threads = tu_array(trace, "threads");
	for (size_t i = 0; i < json_object_array_length(threads); i++) {
		json_object *evs = tu_array(json_object_array_get_idx(threads, i), "events");
		for (size_t k = 0; k < json_object_array_length(evs); k++) {
			json_object *e = json_object_array_get_idx(evs, k), *obj;
			if (!strcmp(tu_str(e, "type"), "wait") && json_object_object_get_ex(e, "object", &obj) &&
			    obj && !strcmp(json_object_get_string(obj), "ready_cond"))
				waits++;
		}
	}
	TU_EQ(waits, tu_int(cond, "waits"), "traced waits on ready_cond against the report's");
	json_object *fl = tu_array(trace, "flows");
	for (size_t i = 0; i < json_object_array_length(fl); i++) {
		json_object *f = json_object_array_get_idx(fl, i), *obj;
		if (!json_object_object_get_ex(f, "object", &obj) || !obj || strcmp(json_object_get_string(obj), "ready_cond"))
			continue;
		flows++;
		TU_EQ(tu_int(f, "from_thread"), 0, "the waker of ready_cond (main)");
		cr_assert(tu_int(f, "to_thread") != 0, "a wake of ready_cond went to main, which never waits on it");
		TU_LE(tu_int(f, "wake_ns"), tu_int(f, "woken_ns"), "a wake after the wake-up it caused");
	}
	TU_EQ(flows, tu_int(cond, "wakeups"), "waker-to-woken flows on ready_cond against the report's wake-ups");
}

/* Events on locks merged past the objects cap and freed name no object,
 * not the locks that reuse their memory in the shim
 * (tests/progs/freed_objects.c: new_c, new_d and new_e are each taken
 * once; before events named objects by id, 256 sampled holds and a wake
 * of the gone locks came out as theirs). */
Test(trace, events_on_a_freed_lock_do_not_name_the_lock_that_reuses_its_memory, .timeout = 60)
{
	json_object *report = traced_report_of("freed_objects", (const char *[]){ "CONVOY_TRACE=1", NULL }, NULL);
	json_object *threads = tu_array(tu_get(report, "trace"), "threads");
	int64_t holds = 0;
	for (size_t i = 0; i < json_object_array_length(threads); i++) {
		json_object *evs = tu_array(json_object_array_get_idx(threads, i), "events");
		for (size_t k = 0; k < json_object_array_length(evs); k++) {
			json_object *e = json_object_array_get_idx(evs, k), *obj;
			if (!json_object_object_get_ex(e, "object", &obj) || !obj ||
			    strncmp(json_object_get_string(obj), "new_", 4))
				continue;
			cr_assert(!strcmp(tu_str(e, "type"), "hold"), "a %s event on %s, which no thread waited on or woke",
				  tu_str(e, "type"), json_object_get_string(obj));
			holds++;
		}
	}
	TU_LE(holds, 3, "hold events on new_c, new_d and new_e, each taken once");
}

Test(trace, a_full_ring_keeps_the_newest_events_and_counts_the_rest, .timeout = 60)
{
	json_object *report = traced_report((const char *[]){ "CONVOY_TRACE=1", "CONVOY_TRACE_EVENTS=16", NULL }, NULL);
	json_object *trace = tu_get(report, "trace");
	TU_EQ(tu_int(trace, "capacity"), 16, "ring size");
	cr_assert(tu_int(trace, "dropped") > 0, "100 condvar rounds fit in 16 events without a drop");
	json_object *threads = tu_array(trace, "threads");
	for (size_t i = 0; i < json_object_array_length(threads); i++)
		TU_LE(json_object_array_length(tu_array(json_object_array_get_idx(threads, i), "events")), 16,
		      "events kept by thread %zu", i);
}

Test(trace, perfetto_draws_waits_at_their_times_and_wakes_as_flows, .timeout = 60)
{
	char *dir = tu_tmpdir(), *prog = tu_prog("count_cond"), *file = NULL;
	struct tu_proc p;
	struct tu_opts o = { .preload = true, .dir = dir, .quiet = true, .env = (const char *[]){ "CONVOY_TRACE=1", NULL } };
	tu_run(&p, &o, (const char *[]){ prog, NULL });
	tu_assert_exit(&p, 0, "count_cond");
	char *profile = tu_only_profile(dir);
	cr_assert(asprintf(&file, "%s/trace.json", dir) > 0);
	convoy(&p, (const char *[]){ "export", "--perfetto", "-o", file, profile, NULL });
	tu_assert_exit(&p, 0, "convoy export --perfetto");
	json_object *trace = json_object_from_file(file);
	cr_assert(trace, "the export is not JSON");
	TU_STREQ(tu_str(tu_get(trace, "otherData"), "convoy_timeline"), "trace", "the export's timeline");
	json_object *events = tu_array(trace, "traceEvents");
	int waits = 0, starts = 0, ends = 0, aggregate = 0;
	for (size_t i = 0; i < json_object_array_length(events); i++) {
		json_object *e = json_object_array_get_idx(events, i), *cat;
		if (!json_object_object_get_ex(e, "cat", &cat))
			continue;
		const char *c = json_object_get_string(cat), *ph = tu_str(e, "ph");
		waits += !strcmp(c, "wait");
		aggregate += !strcmp(c, "aggregate");
		starts += !strcmp(c, "wake") && !strcmp(ph, "s");
		ends += !strcmp(c, "wake") && !strcmp(ph, "f");
	}
	cr_assert(waits > 0, "no wait slice");
	cr_assert(starts > 0, "no wake flow");
	TU_EQ(ends, starts, "wake flow ends");
	TU_EQ(aggregate, 0, "aggregate slices beside a trace");
}

/* A trace record with a bad field, its file checksum made valid again: every
 * command that reads traces accepts or rejects it with one line, never dies. */
Test(trace, damaged_trace_records_are_rejected_in_one_line, .timeout = 120)
{
	char *dir = tu_tmpdir(), *prog = tu_prog("count_cond");
	struct tu_proc p;
	struct tu_opts o = { .preload = true, .dir = dir, .quiet = true, .env = (const char *[]){ "CONVOY_TRACE=1", NULL } };
	tu_run(&p, &o, (const char *[]){ prog, NULL });
	tu_assert_exit(&p, 0, "count_cond");
	size_t len;
	unsigned char *orig = tu_read_file(tu_only_profile(dir), &len);
	/* The first trace record with events: its header and first event. */
	size_t off = sizeof(struct cv_file_header), rec = 0;
	struct cv_rec_header h;
	for (; off + sizeof(h) <= len; off += sizeof(h) + h.size) {
		memcpy(&h, orig + off, sizeof(h));
		struct cv_trace_rec t;
		if (h.type == CV_REC_TRACE && (memcpy(&t, orig + off + sizeof(h), sizeof(t)), t.nevents)) {
			rec = off + sizeof(h);
			break;
		}
	}
	cr_assert(rec, "no trace record with events in the profile");
	size_t ev = rec + sizeof(struct cv_trace_rec);
	const struct { size_t at; uint32_t value; const char *what; } damage[] = {
		{ rec + offsetof(struct cv_trace_rec, thread), 9999, "thread index out of range" },
		{ rec + offsetof(struct cv_trace_rec, nevents), 0x7fffffff, "more events than the record holds" },
		{ rec + offsetof(struct cv_trace_rec, event_size), 0, "events of 0 bytes" },
		{ rec + offsetof(struct cv_trace_rec, event_size), 4, "events of 4 bytes" },
		{ ev + offsetof(struct cv_trace_event, object), 123456, "an event on an object that does not exist" },
		{ ev + offsetof(struct cv_trace_event, type), 99, "an event of an unknown type" },
		{ ev + offsetof(struct cv_trace_event, ts_ns), 0, "an event before the process started" },
	};
	char *bad = NULL;
	cr_assert(asprintf(&bad, "%s/damaged.convoy", dir) > 0);
	for (size_t i = 0; i < sizeof(damage) / sizeof(damage[0]); i++) {
		unsigned char *data = malloc(len);
		memcpy(data, orig, len);
		memcpy(data + damage[i].at, &damage[i].value, sizeof(uint32_t));
		struct cv_end end;   /* the checksum covers every byte before the end record's payload */
		memcpy(&end, data + len - sizeof(end), sizeof(end));
		end.crc32 = (uint32_t)crc32(crc32(0, Z_NULL, 0), data, (uInt)(len - sizeof(end)));
		memcpy(data + len - sizeof(end), &end, sizeof(end));
		tu_write_file(bad, data, len);
		free(data);
		const char *const commands[][6] = {
			{ "view", "-o", "/dev/null", bad, NULL },
			{ "export", "--perfetto", "-o", "/dev/null", bad, NULL },
		};
		for (size_t c = 0; c < 2; c++) {
			convoy(&p, commands[c]);
			cr_assert(!p.signaled, "%s: convoy %s died of signal %d", damage[i].what, commands[c][0], p.sig);
			if (p.code != 0) {
				TU_EQ(tu_count_lines(p.err), 1, "%s: convoy %s's error lines (%s)", damage[i].what, commands[c][0], p.err);
				cr_assert(!strncmp(p.err, "convoy: ", 8), "%s: %s", damage[i].what, p.err);
			}
		}
	}
}

Test(viewer, view_finds_the_profiles_of_a_moved_sweep, .timeout = 120)
{
	char *dir = tu_tmpdir(), *demo = tu_build_path("demos/global_queue");
	char first[4200], moved[4200], page[4300];
	snprintf(first, sizeof(first), "%s/sweep", dir);
	snprintf(moved, sizeof(moved), "%s/moved", dir);
	snprintf(page, sizeof(page), "%s/report.html", moved);
	struct tu_proc p;
	convoy(&p, (const char *[]){ "scale", "--threads", "1,2", "-o", first, "--", demo, "--workers", "{threads}", NULL });
	tu_assert_exit(&p, 0, "convoy scale");
	cr_assert(rename(first, moved) == 0);
	convoy(&p, (const char *[]){ "view", moved, NULL });
	tu_assert_exit(&p, 0, "convoy view of the moved sweep");
	json_object *reports = tu_array(page_data(page), "reports");
	TU_EQ(json_object_array_length(reports), 2, "reports, one per thread count");
}

Test(trace, a_signal_handler_may_post_a_semaphore_while_tracing, .timeout = 120)
{
	struct tu_proc native;
	tu_run_native(&native, "trace_signal", NULL);
	tu_assert_exit(&native, 0, "trace_signal natively");
	char *dir = tu_tmpdir(), *prog = tu_prog("trace_signal");
	struct tu_proc p;
	struct tu_opts o = { .preload = true, .dir = dir, .quiet = true, .timeout_s = 60,
			     .env = (const char *[]){ "CONVOY_TRACE=1", NULL } };
	tu_run(&p, &o, (const char *[]){ prog, NULL });
	tu_assert_exit(&p, 0, "trace_signal traced");
	TU_STREQ(p.out, native.out, "stdout with trace mode on");
	TU_EQ(p.err_len, 0, "stderr bytes (%s)", p.err);
	char *profile = tu_only_profile(dir);
	convoy(&p, (const char *[]){ "export", "--perfetto", "-o", "/dev/null", profile, NULL });
	tu_assert_exit(&p, 0, "convoy export --perfetto of the traced profile");
}

Test(viewer, a_diff_page_of_two_sweeps_draws_both_curves, .timeout = 240)
{
	char *dir = tu_tmpdir(), *page = NULL;
	char sweeps[2][4200];
	const char *demos[2] = { "global_queue", "work_stealing" };
	struct tu_proc p;
	for (int i = 0; i < 2; i++) {
		char *demo = NULL;
		cr_assert(asprintf(&demo, "%s/demos/%s", BUILD_DIR, demos[i]) > 0);
		snprintf(sweeps[i], sizeof(sweeps[i]), "%s/%s", dir, demos[i]);
		convoy(&p, (const char *[]){ "scale", "--threads", "1,2", "-o", sweeps[i], "--", demo, "--workers", "{threads}", NULL });
		tu_assert_exit(&p, 0, "convoy scale");
	}
	cr_assert(asprintf(&page, "%s/diff.html", dir) > 0);
	convoy(&p, (const char *[]){ "diff", "--html", page, sweeps[0], sweeps[1], NULL });
	tu_assert_exit(&p, 0, "convoy diff --html of two sweeps");
	browser_check("diff", page, NULL);
}

/* Past the shim's cap of ended threads, states (and their rings) are
 * reused: the traced profile of 2,000 short threads still reads, with a
 * trace for no more threads than the report has. */
Test(trace, threads_past_the_cap_reuse_their_rings, .timeout = 120)
{
	char *dir = tu_tmpdir(), *prog = tu_build_path("demos/thread_per_task"), *page = NULL;
	struct tu_proc p;
	struct tu_opts o = { .preload = true, .dir = dir, .quiet = true, .timeout_s = 60,
			     .env = (const char *[]){ "CONVOY_TRACE=1", NULL } };
	tu_run(&p, &o, (const char *[]){ prog, "--workers", "2", NULL });
	tu_assert_exit(&p, 0, "thread_per_task traced");
	cr_assert(asprintf(&page, "%s/page.html", dir) > 0);
	convoy(&p, (const char *[]){ "view", "-o", page, tu_only_profile(dir), NULL });
	tu_assert_exit(&p, 0, "convoy view");
	json_object *report = tu_get(page_data(page), "report");
	size_t threads = json_object_array_length(tu_array(report, "threads"));
	size_t traced = json_object_array_length(tu_array(tu_get(report, "trace"), "threads"));
	cr_assert(traced > 0 && traced <= threads, "%zu traced threads, %zu in the report", traced, threads);
}
