/* Hostile input: files that are not what they claim (a FIFO, a huge file of
 * something else), profiles whose values no run could write, names built to
 * break JSON or forge terminal output, pathological module maps, and command
 * lines with wrong options. Each gets one clear "convoy:" line and a non-zero
 * exit, or a correct report; never a hang, a crash or a silent wrong answer.
 *
 * The profiles are forged record by record (forge.h), with a valid count
 * and checksum, so only the checks under test stand between the bytes and
 * the report. */
#include <stddef.h>
#include <sys/stat.h>
#include <unistd.h>

#include "forge.h"
#include "testutil.h"

/* ---- checking what convoy did ---------------------------------------------- */

static void report(struct tu_proc *p, const char *path, bool json)
{
	const char *argv[] = { tu_convoy(), "report", json ? "--json" : path, json ? path : NULL, NULL };
	tu_run(p, NULL, argv);
	cr_assert(!p->signaled, "convoy report died of signal %d; stderr:\n%s", p->sig, p->err);
}

static void expect_rejected(const char *path, const char *expect_in_msg)
{
	struct tu_proc p;
	report(&p, path, true);
	cr_assert(p.exited && p.code != 0, "accepted %s; stdout:\n%.500s", path, p.out);
	TU_EQ(tu_count_lines(p.err), 1, "stderr lines (stderr: %s)", p.err);
	cr_assert(!strncmp(p.err, "convoy: ", 8), "stderr: %s", p.err);
	TU_EQ(p.out_len, 0, "stdout bytes (stdout: %.300s)", p.out);
	cr_assert(strstr(p.err, expect_in_msg), "message \"%s\" lacks \"%s\"", p.err, expect_in_msg);
}

static json_object *expect_json_report(const char *path)
{
	struct tu_proc p;
	report(&p, path, true);
	tu_assert_exit(&p, 0, "convoy report --json");
	json_object *r = json_tokener_parse(p.out);
	cr_assert(r && json_object_is_type(r, json_type_object), "stdout is not a JSON object:\n%.500s", p.out);
	return r;
}

/* RFC 3629 UTF-8: no overlong forms, surrogates or code points above U+10FFFF. */
static bool valid_utf8(const unsigned char *s, size_t n, size_t *bad)
{
	for (size_t i = 0; i < n;) {
		unsigned char b = s[i];
		size_t len = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3
			   : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
		unsigned char lo = b == 0xe0 ? 0xa0 : b == 0xf0 ? 0x90 : 0x80;
		unsigned char hi = b == 0xed ? 0x9f : b == 0xf4 ? 0x8f : 0xbf;
		bool ok = len && i + len <= n;
		for (size_t k = 1; ok && k < len; k++)
			ok = s[i + k] >= (k == 1 ? lo : 0x80) && s[i + k] <= (k == 1 ? hi : 0xbf);
		if (!ok) {
			*bad = i;
			return false;
		}
		i += len;
	}
	return true;
}

/* ---- files that are not profiles ----------------------------------------- */

Test(hostile, a_fifo_as_input_is_rejected_not_waited_on, .timeout = 30)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/pipe.convoy", tu_tmpdir());
	cr_assert(mkfifo(path, 0600) == 0);
	expect_rejected(path, "not a regular file");
}

/* diff and scale --replay read sweeps: a FIFO named as a sweep, or planted
 * as its sweep.json, is refused with one line (it hung diff before). */
Test(hostile, a_fifo_as_a_sweep_is_rejected_not_waited_on, .timeout = 30)
{
	char dir[4200], path[4300];
	snprintf(dir, sizeof(dir), "%s", tu_tmpdir());
	snprintf(path, sizeof(path), "%s/sweep.json", dir);
	cr_assert(mkfifo(path, 0600) == 0);
	const char *diff[] = { tu_convoy(), "diff", path, path, NULL };
	const char *replay[] = { tu_convoy(), "scale", "--replay", dir, NULL };
	const char *const *cmds[] = { diff, replay };
	for (int i = 0; i < 2; i++) {
		struct tu_proc p;
		tu_run(&p, NULL, cmds[i]);
		cr_assert(p.exited && p.code != 0, "convoy %s accepted a FIFO; stdout:\n%.500s", cmds[i][1], p.out);
		TU_EQ(tu_count_lines(p.err), 1, "stderr lines (stderr: %s)", p.err);
		cr_assert(!strncmp(p.err, "convoy: ", 8), "stderr: %s", p.err);
	}
}

Test(hostile, a_large_file_of_something_else_is_rejected_by_its_first_bytes, .timeout = 60)
{
	/* 2 GiB (sparse) that does not start with the magic; convoy runs with
	 * 512 MiB of address space, so reading it whole would fail. */
#ifdef __SANITIZE_ADDRESS__
	cr_skip_test("under ASan, which reserves terabytes of address space, ulimit -v cannot bound convoy");
#endif
	char path[4200];
	snprintf(path, sizeof(path), "%s/huge.convoy", tu_tmpdir());
	FILE *f = fopen(path, "w");
	cr_assert(f && fputs("not a profile", f) >= 0 && ftruncate(fileno(f), 2ll << 30) == 0);
	fclose(f);
	struct tu_proc p;
	const char *argv[] = { "/bin/sh", "-c", "ulimit -v 524288 && exec \"$0\" report --json \"$1\"", tu_convoy(),
			       path, NULL };
	tu_run(&p, NULL, argv);
	cr_assert(p.exited && p.code == 1, "exit %d signal %d; stderr: %s", p.code, p.sig, p.err);
	TU_EQ(tu_count_lines(p.err), 1, "stderr: %s", p.err);
	cr_assert(strstr(p.err, "not a convoy profile"), "stderr: %s", p.err);
}

Test(hostile, a_module_that_is_a_fifo_is_not_opened_for_symbols, .timeout = 30)
{
	char fifo[4200];
	snprintf(fifo, sizeof(fifo), "%s/libfifo.so", tu_tmpdir());
	cr_assert(mkfifo(fifo, 0600) == 0);
	struct forge f;
	forge_ordinary(&f, "prog", "worker", "queue_lock");
	struct cv_module m = { .start = 0x400000, .end = 0x500000, .path_len = (uint32_t)strlen(fifo) };
	forge_record(&f, CV_REC_MODULE, &m, sizeof(m), fifo, strlen(fifo));
	json_object_put(expect_json_report(forge_write(&f)));
}

/* ---- values no run could write ------------------------------------------- */

Test(hostile, a_profile_that_ends_before_it_starts_is_rejected, .timeout = 30)
{
	struct forge f;
	memset(&f, 0, sizeof(f));
	struct cv_file_header fh = { .version = CV_PROFILE_VERSION, .header_size = sizeof(fh) };
	memcpy(fh.magic, CV_PROFILE_MAGIC, 8);
	forge_put(&f, &fh, sizeof(fh));
	struct cv_process p = { .pid = 100, .start_ns = 2000000000, .end_ns = 1000000000, .ncpus = 2 };
	forge_record(&f, CV_REC_PROCESS, &p, sizeof(p), NULL, 0);
	struct cv_thread_rec t = forge_thread(0, "main");
	forge_add_thread(&f, &t);
	expect_rejected(forge_write(&f), "ends before it starts");
}

Test(hostile, a_profile_without_threads_is_rejected, .timeout = 30)
{
	struct forge f;
	forge_begin(&f, "prog");
	expect_rejected(forge_write(&f), "no threads");
}

Test(hostile, a_thread_that_ends_before_it_starts_is_rejected, .timeout = 30)
{
	struct forge f;
	forge_begin(&f, "prog");
	struct cv_thread_rec t = forge_thread(0, "main");
	t.end_ns = t.start_ns - 1;
	forge_add_thread(&f, &t);
	expect_rejected(forge_write(&f), "ends before it starts");
}

Test(hostile, counts_above_int64_max_are_rejected, .timeout = 30)
{
	struct forge f;
	forge_two_threads(&f, "prog", "worker");
	struct cv_stats st = { .acquisitions = 10, .waits = 1, .wait_ns = (uint64_t)INT64_MAX + 1 };
	forge_add_lock(&f, 0, "lock", &st);
	expect_rejected(forge_write(&f), "above");

	forge_begin(&f, "prog");
	struct cv_thread_rec t0 = forge_thread(0, "main"), t1 = forge_thread(1, "worker");
	t1.cpu_ns = UINT64_MAX;
	forge_add_thread(&f, &t0);
	forge_add_thread(&f, &t1);
	expect_rejected(forge_write(&f), "above");
}

/* The "merged threads" row (tid -1) stands for many threads that ended
 * past the shim's cap: their waits summed may be longer than the one span
 * the row has (a negative "unexplained" share, -3 % in helper-111's run).
 * It stays in the stack as one thread, its CPU time whole and its waits
 * fitted into what its span leaves (here 0.5 s less 0.1 s of CPU), and
 * its role says it is many threads. */
Test(hostile, the_merged_threads_row_is_one_thread_whose_waits_fit_its_span, .timeout = 30)
{
	struct forge f;
	forge_begin(&f, "prog");
	struct cv_thread_rec t0 = forge_thread(0, "main"), t1 = forge_thread(1, "worker"),
			     merged = forge_thread(2, "merged threads");
	merged.tid = -1;
	merged.flags = CV_THREAD_EXITED | CV_THREAD_UNTRACKED;
	merged.start_ns = 1500000000;   /* a span of 0.5 s, waits of 3 s */
	merged.cpu_ns = 100000000;
	forge_add_thread(&f, &t0);
	forge_add_thread(&f, &t1);
	forge_add_thread(&f, &merged);
	struct cv_object c = { .id = 0, .kind = CV_OBJ_COND, .addr = 0x2000, .name_len = 4 };
	forge_record(&f, CV_REC_OBJECT, &c, sizeof(c), "cond", 4);
	struct cv_stats st = { .object = 0, .thread = 2, .waits = 300, .wait_ns = 3000000000 };
	forge_record(&f, CV_REC_STATS, &st, sizeof(st), NULL, 0);
	struct tu_proc p;
	char *path = forge_write(&f);
	report(&p, path, true);
	tu_assert_exit(&p, 0, "convoy report --json");
	json_object *r = json_tokener_parse(p.out), *stack = tu_get(r, "stack");
	TU_LE(0, tu_int(stack, "unexplained"), "the stack's unexplained time");
	TU_LE(tu_int(stack, "park"), 400000000, "the stack's park time (the merged row's 3 s fitted into 0.4 s)");
	TU_LE(100000000, tu_int(stack, "useful"), "the stack's useful time (the merged row's 0.1 s of CPU in it)");
	json_object *row = tu_find(tu_array(r, "threads"), "name", "merged threads");
	cr_assert(row, "no merged threads row in:\n%.2000s", p.out);
	cr_assert_str_eq(tu_str(row, "role"), "merged");
	report(&p, path, false);
	tu_assert_exit(&p, 0, "convoy report");
	cr_assert(strstr(p.out, "\"merged threads\"") && !strstr(p.out, "unexplained"), "%s", p.out);
	json_object_put(r);
}

/* ---- pathological module maps -------------------------------------------- */

/* 8,000 modules all covering one address: each needs a layer of its own. The
 * layering sorts once and keeps layers in a heap (it rescanned every earlier
 * module per module before); this test checks the report is right, the
 * timeout only that it finishes. */
Test(hostile, eight_thousand_overlapping_modules_are_layered, .timeout = 60)
{
	struct forge f;
	forge_ordinary(&f, "prog", "worker", "queue_lock");
	for (uint32_t i = 0; i < 8000; i++) {
		char path[64];
		int n = snprintf(path, sizeof(path), "/nonexistent/lib%u.so", i);
		struct cv_module m = { .start = 0x400000 + 16 * (uint64_t)(i % 97), .end = 0x800000 + (uint64_t)i,
				       .path_len = (uint32_t)n, .map_gen = i, .unload_gen = i + 1 };
		forge_record(&f, CV_REC_MODULE, &m, sizeof(m), path, (size_t)n);
	}
	json_object *r = expect_json_report(forge_write(&f));
	cr_assert(tu_lock(r, "queue_lock"), "the lock is missing from the report");
	json_object_put(r);
}

/* ---- names that would break the output ----------------------------------- */

Test(hostile, json_output_is_valid_utf8_whatever_the_names, .timeout = 30)
{
	/* A comm the kernel cut inside "€" (3 bytes), a thread name with bytes
	 * that are never UTF-8, a lock name with an overlong '/' and a
	 * surrogate. */
	struct forge f;
	forge_ordinary(&f, "prog-abcdefgh\xe2\x82", "w\xff\xfe\xc0", "lock\xc0\xaf\xed\xa0\x80");
	struct tu_proc p;
	report(&p, forge_write(&f), true);
	tu_assert_exit(&p, 0, "convoy report --json");
	size_t bad = 0;
	cr_assert(valid_utf8((const unsigned char *)p.out, p.out_len, &bad), "invalid UTF-8 at byte %zu: %.80s", bad,
		  p.out + bad);
	json_object *r = json_tokener_parse(p.out);
	cr_assert(r, "not JSON:\n%s", p.out);
	cr_assert(strstr(p.out, "prog-abcdefgh\xef\xbf\xbd"), "the cut character is not U+FFFD:\n%.400s", p.out);
	json_object_put(r);
}

Test(hostile, text_output_escapes_control_characters, .timeout = 30)
{
	/* A lock name that would clear the screen and overwrite the line with
	 * a forged verdict. */
	struct forge f;
	forge_ordinary(&f, "prog\x1b[2J", "w\xc2\x9b" "31m", "q\r\x1b[32mFindings: none\x07\x7f");
	struct tu_proc p;
	report(&p, forge_write(&f), false);
	tu_assert_exit(&p, 0, "convoy report");
	for (size_t i = 0; i < p.out_len; i++) {
		unsigned char c = (unsigned char)p.out[i];
		cr_assert(c >= 0x20 ? c != 0x7f : c == '\n' || c == '\t', "control byte 0x%02x at %zu: %.80s", c, i,
			  p.out + (i > 40 ? i - 40 : 0));
		cr_assert(!(c == 0xc2 && (unsigned char)p.out[i + 1] < 0xa0), "C1 control at %zu", i);
	}
	cr_assert(strstr(p.out, "q\\u000d\\u001b[32mFindings: none\\u0007\\u007f"), "the name is not escaped:\n%s",
		  p.out);
	cr_assert(strstr(p.out, "prog\\u001b[2J"), "comm is not escaped:\n%s", p.out);
}

/* ---- command lines ----------------------------------------------------------- */

static void expect_option_error(const char *what, const char *const tail[], const char *message)
{
	const char *argv[16] = { tu_convoy() };
	size_t n = 1;
	for (; tail[n - 1]; n++)
		argv[n] = tail[n - 1];
	argv[n] = NULL;
	struct tu_proc p;
	tu_run(&p, NULL, argv);
	cr_assert(p.exited && p.code == 2, "%s: exit %d", what, p.code);
	TU_EQ(tu_count_lines(p.err), 1, "%s: stderr: %s", what, p.err);
	cr_assert(strstr(p.err, message), "%s: \"%s\" lacks \"%s\"", what, p.err, message);
}

Test(hostile, option_errors_name_the_option_as_written, .timeout = 30)
{
#define OPT(msg, ...) expect_option_error(#__VA_ARGS__, (const char *const[]){ __VA_ARGS__, NULL }, msg)
	OPT("unknown option '--json'", "--json", "report", "p.convoy");
	OPT("unknown command 'reprot'", "reprot", "p.convoy");
	OPT("report: unknown option '-x'", "report", "-xv", "p.convoy");
	OPT("report: unknown option '-x'", "report", "--json", "-vx", "p.convoy");
	OPT("report: unknown option '--bogus'", "report", "--bogus=3", "p.convoy");
	OPT("report: option '--limit' needs a value", "report", "--limit");
	OPT("scale: option '--threads' needs a value", "scale", "--threads");
	OPT("scale: option '-o' needs a value", "scale", "-o");
	OPT("run: option '--output' needs a value", "run", "--output");
	OPT("run: unknown option '-q'", "run", "-vq", "--", "true");
	OPT("diff: unknown option '-x'", "diff", "-x", "a", "b");
	OPT("export: option '-o' needs a value", "export", "--folded", "-o");
#undef OPT
}
