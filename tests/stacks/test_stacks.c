/* test_stacks.c — call stacks and names (issue 5).
 *
 * Each test runs a program from tests/stacks/progs under the shim, reads
 * `convoy report --json` (or `convoy export --folded`) and checks what the
 * report says about the wait it made: which lock, from which function and
 * line. Expected lines come from marker comments in the programs' sources
 * ("SITE_LINE"), except for the golden deep stack, which is compared whole
 * with tests/stacks/golden/deep.txt.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "convoy/profile.h"
#include "testutil.h"

#ifndef SRC_DIR
#error "compile with -DSRC_DIR=\"/abs/path/to/source\""
#endif

/* ---- helpers ---------------------------------------------------------------- */

static char *stk_prog(const char *name)
{
	char *p = NULL;
	cr_assert(asprintf(&p, "%s/tests/stacks/progs/%s", BUILD_DIR, name) > 0);
	return p;
}

static char *src_path(const char *rel)
{
	char *p = NULL;
	cr_assert(asprintf(&p, "%s/%s", SRC_DIR, rel) > 0);
	return p;
}

/* The line of the first line in tests/stacks/progs/file containing marker. */
static int marker_line(const char *file, const char *marker)
{
	char rel[256];
	snprintf(rel, sizeof(rel), "tests/stacks/progs/%s", file);
	size_t len;
	char *text = (char *)tu_read_file(src_path(rel), &len);
	int line = 1;
	for (char *p = text; *p; p++) {
		if (!strncmp(p, marker, strlen(marker)))
			return line;
		if (*p == '\n')
			line++;
	}
	cr_assert_fail("marker %s not found in %s", marker, file);
	return 0;
}

/* Runs a program under the shim (CONVOY_QUIET, CONVOY_DIR=dir); env adds
 * more variables. Asserts it exited 0. */
static void run_prog(const char *dir, const char *const *env, const char *const argv[])
{
	struct tu_proc p;
	struct tu_opts o = { .preload = true, .dir = dir, .quiet = true, .env = env };
	tu_run(&p, &o, argv);
	tu_assert_exit(&p, 0, argv[0]);
}

/* `convoy ARGS... PROFILE`, with env; asserts exit status code. Returns stdout. */
static char *convoy_out(const char *const *env, int code, const char *a1, const char *a2, const char *profile)
{
	const char *argv[] = { tu_convoy(), a1, a2, profile, NULL };
	if (!a2) {
		argv[2] = profile;
		argv[3] = NULL;
	}
	struct tu_proc p;
	struct tu_opts o = { .env = env };
	tu_run(&p, &o, argv);
	cr_assert(p.exited && p.code == code, "convoy %s %s: exit %d (want %d); stderr: %s", a1, a2 ? a2 : "",
		  p.code, code, p.err);
	return p.out;
}

static json_object *report_env(const char *profile, const char *const *env)
{
	char *out = convoy_out(env, 0, "report", "--json", profile);
	json_object *r = json_tokener_parse(out);
	cr_assert(r, "report --json is not JSON: %.200s", out);
	return r;
}

/* Profile the program prog (argv after it in args, NULL-terminated) and
 * return the report. */
static json_object *profile_of(const char *prog, const char *const *env, const char *arg)
{
	char *dir = tu_tmpdir();
	const char *argv[] = { stk_prog(prog), arg, NULL };
	run_prog(dir, env, argv);
	return report_env(tu_only_profile(dir), NULL);
}

static json_object *lock_named(json_object *r, const char *name)
{
	json_object *l = tu_lock(r, name);
	if (!l) {
		char all[2048] = "";
		json_object *locks = tu_array(r, "locks");
		for (size_t i = 0; i < json_object_array_length(locks); i++) {
			strncat(all, tu_str(json_object_array_get_idx(locks, i), "name"), sizeof(all) - strlen(all) - 4);
			strncat(all, " | ", sizeof(all) - strlen(all) - 1);
		}
		cr_assert_fail("no lock named \"%s\"; the report has: %s", name, all);
	}
	return l;
}

static const char *str_or_null(json_object *o, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !v || json_object_get_type(v) != json_type_string)
		return NULL;
	return json_object_get_string(v);
}

static int64_t int_or_zero(json_object *o, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !v)
		return 0;
	return json_object_get_int64(v);
}

/* The lock's site (innermost frame of the program's own code, heaviest stack). */
static void assert_site(json_object *lock, const char *function, const char *file, int line)
{
	json_object *site = tu_get(lock, "site");
	cr_assert(site && json_object_get_type(site) == json_type_object, "the lock has no site");
	TU_STREQ(str_or_null(site, "function"), function, "site function");
	if (file) {
		TU_STREQ(str_or_null(site, "file"), file, "site file");
		TU_EQ(int_or_zero(site, "line"), line, "site line");
	} else {
		cr_assert(!str_or_null(site, "file"), "stripped: no file expected, got %s", str_or_null(site, "file"));
	}
}

static json_object *top_stack(json_object *lock)
{
	json_object *stacks = tu_array(lock, "stacks");
	cr_assert(json_object_array_length(stacks) >= 1, "the lock has no wait stack");
	return json_object_array_get_idx(stacks, 0);
}

/* ---- golden: a known deep stack --------------------------------------------- */

/* One line per frame: "function file:line", " [inlined]" when inlined. */
static char *frames_text(json_object *frames)
{
	size_t cap = 4096, len = 0;
	char *buf = calloc(1, cap);
	for (size_t i = 0; i < json_object_array_length(frames); i++) {
		json_object *f = json_object_array_get_idx(frames, i);
		char line[512];
		snprintf(line, sizeof(line), "%s %s:%lld%s\n", str_or_null(f, "function") ? str_or_null(f, "function") : "?",
			 str_or_null(f, "file") ? str_or_null(f, "file") : "?", (long long)int_or_zero(f, "line"),
			 tu_bool(f, "inlined") ? " [inlined]" : "");
		if (len + strlen(line) + 1 > cap)
			buf = realloc(buf, cap *= 2);
		strcpy(buf + len, line);
		len += strlen(line);
	}
	return buf;
}

Test(stacks, golden_deep_recursion, .timeout = 30)
{
	json_object *r = profile_of("deep", NULL, NULL);
	json_object *lock = lock_named(r, "deep_lock");
	TU_EQ(tu_int(lock, "contended"), 1, "deep_lock contended waits");
	char *got = NULL;
	cr_assert(asprintf(&got, "wait:\n%sfirst use:\n%s", frames_text(tu_get(top_stack(lock), "frames")),
			   frames_text(tu_get(tu_get(lock, "first_use"), "frames"))) > 0);
	size_t len;
	char *want = (char *)tu_read_file(src_path("tests/stacks/golden/deep.txt"), &len);
	cr_assert(!strcmp(got, want), "the deep stack differs from tests/stacks/golden/deep.txt\n--- got:\n%s--- want:\n%s",
		  got, want);
}

/* Every level of a chain of 80 inlined functions is a frame, innermost
 * first, each with its own line. */
Test(stacks, a_chain_of_80_inlined_functions_is_80_frames, .timeout = 30)
{
	json_object *lock = lock_named(profile_of("inline_chain", NULL, NULL), "chain_lock");
	json_object *frames = tu_get(top_stack(lock), "frames");
	size_t n = json_object_array_length(frames), first = n;
	for (size_t i = 0; i < n && first == n; i++)
		if (str_or_null(json_object_array_get_idx(frames, i), "function") &&
		    !strcmp(str_or_null(json_object_array_get_idx(frames, i), "function"), "inline_0"))
			first = i;
	cr_assert(first + 81 <= n, "no inline_0 ... inline_79, worker in the wait's stack:\n%s", frames_text(frames));
	for (int k = 0; k < 80; k++) {
		json_object *f = json_object_array_get_idx(frames, first + (size_t)k);
		char want[32];
		snprintf(want, sizeof(want), "inline_%d", k);
		TU_STREQ(str_or_null(f, "function"), want, "frame %zu", first + (size_t)k);
		cr_assert(tu_bool(f, "inlined"), "%s is not marked inlined", want);
		cr_assert(int_or_zero(f, "line") > 0, "%s has no line", want);
	}
	TU_STREQ(str_or_null(json_object_array_get_idx(frames, first + 80), "function"), "worker", "the frame they are inlined into");
	assert_site(lock, "inline_0", "inline_chain.c", 14);
}

/* The folded export of the same stack: root first, inlined marked, the
 * lock as the leaf, weighted by the stack's wait time. */
Test(stacks, export_folded, .timeout = 30)
{
	char *dir = tu_tmpdir();
	const char *argv[] = { stk_prog("deep"), NULL };
	run_prog(dir, NULL, argv);
	char *profile = tu_only_profile(dir);
	json_object *lock = lock_named(report_env(profile, NULL), "deep_lock");
	char *out = convoy_out(NULL, 0, "export", "--folded", profile);
	char want[2048] = "worker";
	for (int i = 0; i < 13; i++)
		strcat(want, ";recurse");
	char tail[128];
	snprintf(tail, sizeof(tail), ";take_[i];[mutex deep_lock] %lld\n", (long long)tu_int(top_stack(lock), "wait_ns"));
	strcat(want, tail);
	cr_assert(strstr(out, want), "folded output lacks\n%s\ngot:\n%s", want, out);
	convoy_out(NULL, 2, "export", NULL, profile);            /* no format */
	convoy_out(NULL, 2, "export", "--bogus", profile);
}

/* ---- PIE, non-PIE, stripped ------------------------------------------------- */

Test(stacks, pie, .timeout = 30)
{
	json_object *lock = lock_named(profile_of("site-pie", NULL, NULL), "site_lock");
	assert_site(lock, "site_wait", "site.c", marker_line("site.c", "pthread_mutex_lock(&site_lock);   /* SITE_LINE"));
}

Test(stacks, non_pie, .timeout = 30)
{
	json_object *lock = lock_named(profile_of("site-nopie", NULL, NULL), "site_lock");
	assert_site(lock, "site_wait", "site.c", marker_line("site.c", "pthread_mutex_lock(&site_lock);   /* SITE_LINE"));
}

/* -rdynamic, then strip: .dynsym still names the function and the lock. */
Test(stacks, stripped_dynsym, .timeout = 30)
{
	json_object *lock = lock_named(profile_of("site-dynsym", NULL, NULL), "site_lock");
	assert_site(lock, "site_wait", NULL, 0);
}

/* Stripped bare: no names at all; frames are module+offset, the lock is its
 * module and offset, and nothing breaks. */
Test(stacks, stripped_bare, .timeout = 30)
{
	json_object *r = profile_of("site-stripped", NULL, NULL);
	json_object *locks = tu_array(r, "locks"), *lock = NULL;
	for (size_t i = 0; i < json_object_array_length(locks); i++) {
		json_object *l = json_object_array_get_idx(locks, i);
		if (!strncmp(tu_str(l, "name"), "mutex@site-stripped+0x", 22))
			lock = l;
	}
	cr_assert(lock, "no lock named mutex@site-stripped+0x...");
	TU_EQ(tu_int(lock, "contended"), 1, "contended");
	json_object *f = json_object_array_get_idx(tu_get(top_stack(lock), "frames"), 0);
	cr_assert(f, "no frame");
	TU_STREQ(str_or_null(f, "module"), "site-stripped", "frame module");
	cr_assert(!str_or_null(f, "function"), "a stripped frame has no function");
	cr_assert(str_or_null(f, "offset") && !strncmp(str_or_null(f, "offset"), "0x", 2), "frame offset");
}

/* The report says why those names are offsets: which module, and that it
 * offered no symbol table, MiniDebugInfo or debug file. */
Test(stacks, offsets_are_said_to_be_offsets, .timeout = 30)
{
	json_object *r = profile_of("site-stripped", NULL, NULL);
	const char *note = str_or_null(r, "names_as_offsets");
	cr_assert(note && strstr(note, "site-stripped") && strstr(note, "only its exported symbols") &&
		  strstr(note, "no separate debug file"), "names_as_offsets: %s", note ? note : "(none)");
	cr_assert(!str_or_null(profile_of("site-pie", NULL, NULL), "names_as_offsets"),
		  "a binary with symbols has no offsets to explain");
}

/* A lock inside an exported data symbol a runtime is known by (CPython's
 * _PyRuntime, exported by the stripped python3): named by the symbol and
 * offset, and said to be inside that runtime's state. */
Test(stacks, a_lock_inside_pythons_runtime_state_says_so, .timeout = 30)
{
	json_object *r = profile_of("runtime_state", NULL, NULL);
	json_object *lock = lock_named(r, "_PyRuntime+360");
	TU_EQ(tu_int(lock, "contended"), 1, "contended");
	const char *inside = str_or_null(lock, "inside");
	cr_assert(inside && strstr(inside, "CPython's runtime state"), "inside: %s", inside ? inside : "(none)");
}

/* A lock 4 KiB past an exported label without a size (a linker's marker,
 * such as a stripped chromium's __bss_start): not named by the label, but
 * as a stripped binary's other locks are, by the code that took it. */
Test(stacks, a_label_without_a_size_names_no_lock_past_it, .timeout = 30)
{
	json_object *r = profile_of("label_area", NULL, NULL);
	json_object *locks = tu_array(r, "locks");
	TU_EQ(json_object_array_length(locks), 1, "locks");
	const char *name = tu_str(json_object_array_get_idx(locks, 0), "name");
	cr_assert(!strstr(name, "area_marker"), "named by the label: %s", name);
	lock_named(r, "mutex@main");
}

/* Stripped, with MiniDebugInfo (.gnu_debugdata): its static function and
 * lock are named from the compressed symbol table. */
Test(stacks, stripped_minidebuginfo, .timeout = 30)
{
	json_object *lock = lock_named(profile_of("site-minidebug", NULL, NULL), "site_lock");
	assert_site(lock, "site_wait", NULL, 0);
}

/* Stripped, with the debug info split off beside it (.gnu_debuglink). */
Test(stacks, stripped_debuglink, .timeout = 30)
{
	json_object *lock = lock_named(profile_of("site-debuglink", NULL, NULL), "site_lock");
	assert_site(lock, "site_wait", "site.c", marker_line("site.c", "pthread_mutex_lock(&site_lock);   /* SITE_LINE"));
}

/* Stripped, with the debug info found by build-id in a debug root laid out
 * like /usr/lib/debug/.build-id/xx/rest.debug. */
Test(stacks, stripped_build_id, .timeout = 30)
{
	char *dir = tu_tmpdir();
	const char *argv[] = { stk_prog("site-buildid"), NULL };
	run_prog(dir, NULL, argv);
	char *var = NULL;
	cr_assert(asprintf(&var, "CONVOY_DEBUGINFO_PATH=:.debug:%s/tests/stacks/progs/debugroot", BUILD_DIR) > 0);
	const char *env[] = { var, NULL };
	json_object *lock = lock_named(report_env(tu_only_profile(dir), env), "site_lock");
	assert_site(lock, "site_wait", "site.c", marker_line("site.c", "pthread_mutex_lock(&site_lock);   /* SITE_LINE"));
	/* Without the debug root it is a plain stripped binary. */
	json_object *r = report_env(tu_only_profile(dir), NULL);
	cr_assert(!tu_lock(r, "site_lock"), "site_lock named without its debug info");
}

/* ---- dlopen ------------------------------------------------------------------- */

/* Two libraries, each closed before exit, the second usually mapped where the
 * first was: both locks and both sites still have their own names. */
Test(stacks, dlopen_dlclose, .timeout = 30)
{
	char *dir = tu_tmpdir(), *libdir = NULL;
	cr_assert(asprintf(&libdir, "%s/tests/stacks/progs", BUILD_DIR) > 0);
	const char *argv[] = { stk_prog("dlmain"), libdir, NULL };
	run_prog(dir, NULL, argv);
	json_object *r = report_env(tu_only_profile(dir), NULL);
	assert_site(lock_named(r, "one_lock"), "one_wait", "dl_one.c", marker_line("dl_one.c", "pthread_mutex_lock(&one_lock);   /* ONE_WAIT_LINE"));
	assert_site(lock_named(r, "two_lock"), "two_wait", "dl_two.c", marker_line("dl_two.c", "pthread_mutex_lock(&two_lock);   /* TWO_WAIT_LINE"));
}

/* A library closed, another build of it written to the same path and
 * loaded at the same address: captures there must unwind by the new
 * build's tables. The shim remembers the unwinder's table lookups
 * (preload/stacks.c, fde_table); keyed by the module map's generation,
 * which a same-path, same-size library leaves as it was, an answer kept
 * from the first build crashed the program (helper-81;
 * tests/stacks/progs/replug_v1.S says how). */
Test(stacks, a_library_replaced_at_its_path_and_address_unwinds_by_its_own_tables, .timeout = 30)
{
	char *dir = tu_tmpdir(), *libdir = NULL;
	cr_assert(asprintf(&libdir, "%s/tests/stacks/progs", BUILD_DIR) > 0);
	const char *argv[] = { stk_prog("replug"), libdir, dir, NULL };
	struct tu_proc p;
	struct tu_opts o = { .preload = true, .dir = dir, .quiet = true };
	tu_run(&p, &o, argv);
	tu_assert_exit(&p, 0, argv[0]);
	cr_assert(tu_has_line(p.out, "v2: a() returned"), "%s", p.out);
	if (!tu_has_line(p.out, "v2 loaded where v1"))
		cr_skip_test("the loader put the second build elsewhere: nothing to tell here\n%s", p.out);
}

/* ---- C++ ----------------------------------------------------------------------- */

Test(stacks, cxx_lambda_std_mutex, .timeout = 30)
{
	json_object *r = profile_of("lambda", NULL, NULL);
	json_object *lock = lock_named(r, "table_mutex");
	int line = marker_line("lambda.cc", "std::lock_guard<std::mutex> guard(table_mutex);   // LAMBDA_LINE");
	assert_site(lock, "main::{lambda}::operator()", "lambda.cc", line);
	/* The frames inside it are the library's, inlined, and marked so. */
	json_object *f0 = json_object_array_get_idx(tu_get(top_stack(lock), "frames"), 0);
	cr_assert(tu_bool(f0, "runtime") && tu_bool(f0, "inlined"), "innermost frame: inlined runtime code");
	/* A heap std::mutex: named by the line of main that first locked it. */
	char name[128];
	snprintf(name, sizeof(name), "mutex@main (lambda.cc:%d)", marker_line("lambda.cc", "a->m.lock();   // ACCOUNT_FIRST_LINE"));
	json_object *heap = lock_named(r, name);
	assert_site(heap, "main::{lambda}::operator()", "lambda.cc",
		    marker_line("lambda.cc", "std::lock_guard<std::mutex> guard(a->m);   // ACCOUNT_LINE"));
	/* A std::mutex in a namespace's std::array of structs: its member path. */
	TU_EQ(tu_int(lock_named(r, "bank::shards[2].m"), "contended"), 1, "bank::shards[2].m contended");
}

/* ---- names ------------------------------------------------------------------------ */

Test(stacks, member_paths, .timeout = 30)
{
	json_object *r = profile_of("members", NULL, NULL);
	const char *names[] = { "workers[3].lock", "pool.q.queue_lock", "pool.grid[1][2]", "main::spare.lock" };
	for (int i = 0; i < 4; i++)
		TU_EQ(tu_int(lock_named(r, names[i]), "contended"), 1, "%s contended", names[i]);
}

Test(stacks, heap_names, .timeout = 30)
{
	json_object *r = profile_of("heap", NULL, NULL);
	char name[128];
	snprintf(name, sizeof(name), "mutex@make_queue (heap.c:%d)", marker_line("heap.c", "pthread_mutex_init(&q->lock, NULL);   /* MAKE_QUEUE_LINE"));
	TU_EQ(tu_int(lock_named(r, name), "contended"), 1, "%s contended", name);
	snprintf(name, sizeof(name), "mutex@use_plain (heap.c:%d)", marker_line("heap.c", "pthread_mutex_lock(&p->lock);   /* USE_PLAIN_LINE"));
	lock_named(r, name);
	/* One helper, two callers: the caller is part of the name. */
	int init_line = marker_line("heap.c", "pthread_mutex_init(m, NULL);   /* INIT_LOCK_LINE");
	snprintf(name, sizeof(name), "mutex@init_lock (heap.c:%d) from make_a (heap.c:%d)", init_line,
		 marker_line("heap.c", "init_lock(m);   /* MAKE_A_LINE"));
	lock_named(r, name);
	snprintf(name, sizeof(name), "mutex@init_lock (heap.c:%d) from make_b (heap.c:%d)", init_line,
		 marker_line("heap.c", "init_lock(m);   /* MAKE_B_LINE"));
	lock_named(r, name);
	snprintf(name, sizeof(name), "condvar@main (heap.c:%d)", marker_line("heap.c", "pthread_cond_init(&r->cv, NULL);   /* COND_INIT_LINE"));
	json_object *cv = tu_cond(r, name);
	cr_assert(cv, "no condvar named %s", name);
	assert_site(cv, "wait_ready", "heap.c", marker_line("heap.c", "pthread_cond_wait(&r->cv, &r->m);   /* WAIT_READY_LINE"));
}

/* 3,000 mutexes initialised before any is used, then used in the other
 * order on another thread: each is named by its init (make_all), kept
 * until its first use in a table that grows with the inits waiting (16
 * sets at first), and the objects fill a registry whose shards grow. */
Test(stacks, every_init_kept_until_first_use_names_its_object, .timeout = 60)
{
	json_object *r = profile_of("init_many", NULL, "3000");
	char want[128];
	snprintf(want, sizeof(want), "mutex@make_all (init_many.c:%d)",
		 marker_line("init_many.c", "pthread_mutex_init(&items[i].lock, NULL);   /* MAKE_ALL_LINE"));
	json_object *locks = tu_array(r, "locks");
	size_t named = 0, n = json_object_array_length(locks);
	const char *other = "";
	for (size_t i = 0; i < n; i++) {
		const char *name = tu_str(json_object_array_get_idx(locks, i), "name");
		if (!strcmp(name, want))
			named++;
		else
			other = name;
	}
	TU_EQ(n, 3000, "locks");
	TU_EQ(named, 3000, "locks named %s (one other: %s)", want, other);
	json_object_put(r);
}

/* The locks made at one address in turn are each named by the init that
 * made them, or by their first use where no init did: an init never used
 * leaves no stack behind for the next object there, whether the address is
 * destroyed or made again (tests/stacks/progs/reinit.c; a destroy of an
 * object whose first use took its stack has none to drop, and drops none:
 * preload/objects.c, cv__object_end). */
Test(stacks, an_init_never_used_names_nothing_made_after_it, .timeout = 60)
{
	json_object *r = profile_of("reinit", NULL, NULL);
	static const struct { const char *fn, *marker, *generation; } made[] = {
		{ "first_made", "pthread_mutex_init(m, NULL);   /* FIRST_MADE_LINE", "" },
		{ "second_made", "pthread_mutex_init(m, NULL);   /* SECOND_MADE_LINE", " (generation 1)" },
		{ "third_made", "pthread_mutex_init(m, NULL);   /* THIRD_MADE_LINE", " (generation 2)" },
		{ "first_used", "MUST(pthread_mutex_lock(m));   /* FIRST_USED_LINE", " (generation 3)" },
	};
	for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
		char name[128];
		snprintf(name, sizeof(name), "mutex@%s (reinit.c:%d)%s", made[i].fn, marker_line("reinit.c", made[i].marker),
			 made[i].generation);
		TU_EQ(tu_int(lock_named(r, name), "acquisitions"), 1, "%s acquisitions", name);
	}
	TU_EQ(json_object_array_length(tu_array(r, "locks")), 4, "locks");
	json_object_put(r);
}

/* A capture reuses the outer frames of the thread's recent ones while
 * their return addresses are where they were (preload/stacks.c,
 * reuse_known): captures in a row through two callers of one shape,
 * through a recursion of changing depth, through three callers in turn,
 * through more frames than the shim keeps, the same stack twice, and a
 * shallow stack after one too deep to keep must each still name their own
 * callers (tests/stacks/progs/reuse.c). On a thread the C library made,
 * and on the main thread (arg "main"), whose captures are kept when they
 * end in _start's frame. */
static void reused_frames_are_the_callers(const char *arg)
{
	char *dir = tu_tmpdir();
	const char *env[] = { "CONVOY_STACK_STATS=1", NULL };
	const char *argv[] = { stk_prog("reuse"), arg, NULL };
	struct tu_proc p;
	struct tu_opts o = { .preload = true, .dir = dir, .env = env };
	tu_run(&p, &o, argv);
	tu_assert_exit(&p, 0, argv[0]);
	/* Each kind of reuse happened (else this test proves nothing): the
	 * previous capture whole, a recent one's from the caller out
	 * (preload/stacks.c, unwind), and frames reached by the unwinder. */
	unsigned long long whole = 0, caller = 0;
	double frames = 0;
	const char *st = strstr(p.err, ", table ");
	cr_assert(st && sscanf(st, ", table %*u; %llu the previous capture's whole, %llu a recent one's from the caller "
				  "out, %lf frames", &whole, &caller, &frames) == 3,
		  "no stack statistics: %s", p.err);
	cr_assert(whole >= 1 && caller >= 1 && frames > 0, "no reuse: %s", p.err);
	unsigned long long emptied = 0;
	const char *em = strstr(p.err, "the recent frames emptied ");
	cr_assert(em && sscanf(em, "the recent frames emptied %llu", &emptied) == 1 && emptied >= 1,
		  "the recent frames never emptied: %s", p.err);

	json_object *r = report_env(tu_only_profile(dir), NULL);
	json_object *locks = tu_array(r, "locks");
	int checked = 0;
	for (char *line = strtok(p.out, "\n"); line; line = strtok(NULL, "\n"), checked++) {
		char addr[64], path[32];
		int recs;
		cr_assert(sscanf(line, "%63s %31s %d", addr, path, &recs) == 3, "reuse printed %s", line);
		for (char *c = path; *c; c++)
			*c = *c == ',' ? ' ' : *c;   /* "f_alloca,via_a,call_via": three functions */
		if (recs < 0)
			continue;   /* cut at the capture's depth */
		json_object *lock = NULL;
		for (size_t i = 0; i < json_object_array_length(locks) && !lock; i++)
			if (!strcmp(tu_str(json_object_array_get_idx(locks, i), "addr"), addr))
				lock = json_object_array_get_idx(locks, i);
		cr_assert(lock, "no lock at %s", addr);
		json_object *fr = tu_array(tu_get(lock, "first_use"), "frames");
		char got[2048] = "", want[2048];
		for (size_t i = 0; i < json_object_array_length(fr); i++) {
			const char *fn = str_or_null(json_object_array_get_idx(fr, i), "function");
			strncat(got, fn ? fn : "?", sizeof(got) - strlen(got) - 2);
			strncat(got, " ", sizeof(got) - strlen(got) - 1);
		}
		int len = snprintf(want, sizeof(want), "leaf mid ");
		for (int i = 0; i < recs; i++)
			len += snprintf(want + len, sizeof(want) - (size_t)len, "rec ");
		snprintf(want + len, sizeof(want) - (size_t)len, "%s body %s", path, arg ? "main " : "");
		TU_STREQ(got, want, "the stack of the mutex made through %s", path);
	}
	TU_EQ(checked, 72, "lines read");   /* reuse.c: 8 + 8 + 24 + 16 + 8 + 4 + 2 + 2 */
}

Test(stacks, reused_frames_are_still_the_callers, .timeout = 30)
{
	reused_frames_are_the_callers(NULL);
}

Test(stacks, reused_frames_on_the_main_thread_are_still_the_callers, .timeout = 30)
{
	reused_frames_are_the_callers("main");
}

/* Runs prog (arg: its argument or NULL) under the shim with
 * CONVOY_STACK_STATS=1; asserts it exits 0 after at least two captures
 * (else it would prove nothing about them). */
static void run_capturing(const char *prog, const char *arg)
{
	const char *env[] = { "CONVOY_STACK_STATS=1", NULL };
	const char *argv[] = { stk_prog(prog), arg, NULL };
	struct tu_proc p;
	struct tu_opts o = { .preload = true, .dir = tu_tmpdir(), .env = env };
	tu_run(&p, &o, argv);
	tu_assert_exit(&p, 0, argv[0]);
	unsigned long long captures = 0;
	const char *st = strstr(p.err, "stacks: ");
	cr_assert(st && sscanf(st, "stacks: %llu captures", &captures) == 1, "no stack statistics: %s", p.err);
	cr_assert(captures >= 2, "%s %s: %llu captures", prog, arg ? arg : "", captures);
}

/* A capture with a signal frame, or a frame off the thread's own stack, is
 * not kept for the next: its frames may lie on a stack since unmapped
 * (tests/stacks/progs/sigstack_gone.c, stack_switch.c). */
Test(stacks, a_capture_after_a_signal_on_a_stack_since_unmapped, .timeout = 30)
{
	run_capturing("sigstack_gone", NULL);
}

Test(stacks, a_capture_after_a_switch_to_a_stack_since_unmapped, .timeout = 30)
{
	run_capturing("stack_switch", NULL);
	run_capturing("stack_switch", "carved");
	run_capturing("stack_switch", "main");
}

/* A frame a signal interrupted is at an instruction, not a return address:
 * a handler that makes a lock when a function faults at its first
 * instruction names that function in the lock's stack, not the one laid
 * out before it, which a look one byte early finds
 * (tests/stacks/progs/interrupted.c). */
Test(stacks, a_frame_a_signal_interrupted_is_its_own_instruction, .timeout = 30)
{
	json_object *r = profile_of("interrupted", NULL, NULL);
	char name[128];
	snprintf(name, sizeof(name), "mutex@on_sigill (interrupted.c:%d)",
		 marker_line("interrupted.c", "pthread_mutex_init(made, NULL);   /* MADE_LINE"));
	json_object *fu = tu_get(lock_named(r, name), "first_use");
	cr_assert(fu && json_object_get_type(fu) == json_type_object, "%s has no first_use stack", name);
	char *text = frames_text(tu_array(fu, "frames"));
	cr_assert(strstr(text, "\ninterrupted ?:0\nmain interrupted.c:"),
		  "the interrupted frame, then main, after the handler and its trampoline:\n%s", text);
	cr_assert(!strstr(text, "before_interrupted"), "the interrupted pc looked up one byte early:\n%s", text);
	free(text);
	json_object_put(r);
}

/* ---- what is captured, and when ------------------------------------------------------ */

/* The uncontended path never unwinds: no wait stack, only the first use. */
Test(stacks, uncontended_has_no_wait_stack, .timeout = 30)
{
	json_object *r = profile_of("uncontended", NULL, NULL);
	json_object *lock = lock_named(r, "quiet");
	TU_EQ(json_object_array_length(tu_array(lock, "stacks")), 0, "wait stacks of an uncontended lock");
	json_object *fu = tu_get(lock, "first_use");
	cr_assert(fu && json_object_get_type(fu) == json_type_object, "no first-use stack");
	TU_STREQ(str_or_null(tu_get(fu, "site"), "function"), "main", "first use site");
}

static void sums(json_object *lock, int64_t *samples, int64_t *waits, int64_t *wait_ns)
{
	json_object *stacks = tu_array(lock, "stacks");
	*samples = *waits = *wait_ns = 0;
	for (size_t i = 0; i < json_object_array_length(stacks); i++) {
		json_object *s = json_object_array_get_idx(stacks, i);
		*samples += tu_int(s, "samples");
		*waits += tu_int(s, "waits");
		*wait_ns += tu_int(s, "wait_ns");
	}
}

/* CONVOY_STACK_PERIOD=1: every wait is kept with weight 1, so the stacks add
 * up to the lock's own counts exactly, and both call sites are there. */
Test(stacks, every_wait_kept_adds_up, .timeout = 40)
{
	const char *env[] = { "CONVOY_STACK_PERIOD=1", NULL };
	json_object *lock = lock_named(profile_of("hammer", env, "20"), "hot");
	int64_t samples, waits, wait_ns;
	sums(lock, &samples, &waits, &wait_ns);
	TU_LE(40, tu_int(lock, "waits"), "certain waits");
	TU_EQ(samples, tu_int(lock, "waits"), "samples");
	TU_EQ(waits, tu_int(lock, "waits"), "estimated waits");
	TU_EQ(wait_ns, tu_int(lock, "wait_ns"), "estimated wait_ns");
	json_object *stacks = tu_array(lock, "stacks");
	int a = 0, b = 0;
	for (size_t i = 0; i < json_object_array_length(stacks); i++) {
		const char *fn = str_or_null(tu_get(json_object_array_get_idx(stacks, i), "site"), "function");
		a += fn && !strcmp(fn, "site_a");
		b += fn && !strcmp(fn, "site_b");
	}
	cr_assert(a == 1 && b == 1, "sites: site_a %d, site_b %d stacks", a, b);
}

/* Sampling: with no always-kept waits and a 1 s period, a wait of w ns is
 * kept with probability w / 1 s and stands for 1 s of waiting and 1 s / w
 * waits. Whatever the draw, the invariants hold. */
Test(stacks, sampled_waits_are_weighted, .timeout = 40)
{
	const char *env[] = { "CONVOY_STACK_FIRST=0", "CONVOY_STACK_PERIOD=1000000000", NULL };
	json_object *lock = lock_named(profile_of("hammer", env, "20"), "hot");
	json_object *stacks = tu_array(lock, "stacks");
	for (size_t i = 0; i < json_object_array_length(stacks); i++) {
		json_object *s = json_object_array_get_idx(stacks, i);
		int64_t n = tu_int(s, "samples");
		TU_LE(n, tu_int(lock, "waits"), "samples");
		TU_LE(n, tu_int(s, "waits"), "estimated waits >= samples");
		TU_LE(n * 1000000000ll, tu_int(s, "wait_ns"), "each sampled wait stands for at least the period");
	}
	/* And the first K are always kept: with K large, every wait. */
	const char *env2[] = { "CONVOY_STACK_FIRST=1000", "CONVOY_STACK_PERIOD=1000000000", NULL };
	lock = lock_named(profile_of("hammer", env2, "10"), "hot");
	int64_t samples, waits, wait_ns;
	sums(lock, &samples, &waits, &wait_ns);
	TU_EQ(samples, tu_int(lock, "waits"), "first K: every wait kept");
	TU_EQ(wait_ns, tu_int(lock, "wait_ns"), "first K: weight 1");
}

Test(stacks, disabled, .timeout = 30)
{
	const char *env[] = { "CONVOY_STACKS=0", NULL };
	json_object *r = profile_of("site-pie", env, NULL);
	json_object *lock = lock_named(r, "site_lock");
	TU_EQ(tu_int(lock, "contended"), 1, "contended");
	TU_EQ(json_object_array_length(tu_array(lock, "stacks")), 0, "stacks when disabled");
	cr_assert(!json_object_get_type(tu_get(lock, "first_use")), "first_use when disabled");
}

/* A frame without unwind info and with a garbage frame pointer: the stack
 * ends there; the program is not disturbed. */
Test(stacks, unwinding_stops_safely, .timeout = 30)
{
	json_object *lock = lock_named(profile_of("nocfi", NULL, NULL), "nocfi_lock");
	assert_site(lock, "do_lock", "nocfi.c", marker_line("nocfi.c", "pthread_mutex_lock(&nocfi_lock);   /* DO_LOCK_LINE"));
}

/* ---- the format is checked like the rest ------------------------------------------------ */

/* Rewrites the first record of type `type` through patch(), then fixes the
 * end record's CRC so that only the reference check can object. */
static void patch_record(const char *path, uint32_t type, void (*patch)(unsigned char *payload))
{
	size_t len;
	unsigned char *d = tu_read_file(path, &len);
	size_t off = sizeof(struct cv_file_header);
	int done = 0;
	while (off + sizeof(struct cv_rec_header) <= len) {
		struct cv_rec_header h;
		memcpy(&h, d + off, sizeof(h));
		if (h.type == CV_REC_END) {
			uint32_t crc = (uint32_t)crc32(crc32(0, Z_NULL, 0), d, (uInt)(off + sizeof(h)));
			memcpy(d + off + sizeof(h) + offsetof(struct cv_end, crc32), &crc, sizeof(crc));
			break;
		}
		if (h.type == type && !done) {
			patch(d + off + sizeof(h));
			done = 1;
		}
		off += sizeof(h) + h.size;
	}
	cr_assert(done, "no record of type %u in %s", type, path);
	tu_write_file(path, d, len);
}

static void bad_stack_ref(unsigned char *payload)
{
	uint32_t bogus = 0x7fffffff;
	memcpy(payload + offsetof(struct cv_stack_wait, stack), &bogus, sizeof(bogus));
}

static void bad_depth(unsigned char *payload)
{
	uint32_t zero = 0;
	memcpy(payload + offsetof(struct cv_stack_rec, depth), &zero, sizeof(zero));
}

Test(stacks, corrupt_stack_records_rejected, .timeout = 30)
{
	char *dir = tu_tmpdir();
	const char *argv[] = { stk_prog("site-pie"), NULL };
	run_prog(dir, NULL, argv);
	char *profile = tu_only_profile(dir);
	size_t len;
	unsigned char *orig = tu_read_file(profile, &len);

	patch_record(profile, CV_REC_STACK_WAIT, bad_stack_ref);
	const char *a[] = { tu_convoy(), "report", profile, NULL };
	struct tu_proc p;
	tu_run(&p, NULL, a);
	cr_assert(p.exited && p.code == 1 && strstr(p.err, "corrupt (a stack-wait record names"),
		  "bad stack reference: exit %d, stderr %s", p.code, p.err);
	TU_EQ(tu_count_lines(p.err), 1, "error lines");

	tu_write_file(profile, orig, len);
	patch_record(profile, CV_REC_STACK, bad_depth);
	tu_run(&p, NULL, a);
	cr_assert(p.exited && p.code == 1 && strstr(p.err, "frames; 1 to"), "bad depth: exit %d, stderr %s", p.code, p.err);
}

/* ---- fork ---------------------------------------------------------------------------------- */

/* Forks while two threads keep capturing: each child (its own profile) gets
 * through its own contended wait, with its stack. */
Test(stacks, fork_while_capturing, .timeout = 60)
{
	char *dir = tu_tmpdir();
	const char *env[] = { "CONVOY_STACK_PERIOD=1", NULL };
	const char *argv[] = { stk_prog("forker"), "5", NULL };
	run_prog(dir, env, argv);
	size_t n;
	char **profiles = tu_profiles(dir, &n);
	TU_EQ(n, 6, "profiles (the parent and 5 children)");
	int line = marker_line("forker.c", "pthread_mutex_lock(&child_lock);   /* CHILD_WAIT_LINE");
	int children = 0;
	for (size_t i = 0; i < n; i++) {
		json_object *r = report_env(profiles[i], NULL);
		if (!tu_bool(tu_get(r, "process"), "forked"))
			continue;
		children++;
		assert_site(lock_named(r, "child_lock"), "child_wait", "forker.c", line);
	}
	TU_EQ(children, 5, "child profiles");
}

/* A fork inside another fork's steps (a handler that forks between the
 * shim's prepare and parent steps): every one of the four processes keeps
 * capturing stacks, with its waits counted on its own main thread. Before
 * the fix the inner child's fork gate stayed closed for good (its count
 * went below zero) and its main thread went on with a state of the
 * parent's profile. */
Test(stacks, a_fork_inside_a_forks_steps_leaves_every_process_capturing, .timeout = 60)
{
	char *dir = tu_tmpdir();
	const char *argv[] = { stk_prog("nested_fork"), NULL };
	run_prog(dir, NULL, argv);
	size_t n;
	char **profiles = tu_profiles(dir, &n);
	TU_EQ(n, 4, "profiles (parent, child, inner child, its child)");
	int line = marker_line("nested_fork.c", "pthread_mutex_lock(&fork_lock);   /* WORKER_WAIT_LINE");
	for (size_t i = 0; i < n; i++) {
		json_object *r = report_env(profiles[i], NULL);
		json_object *lock = lock_named(r, "fork_lock");
		assert_site(lock, "worker_wait", "nested_fork.c", line);
		TU_EQ(tu_int(lock, "acquisitions"), 2, "%s: fork_lock acquisitions", profiles[i]);
		int64_t main_tid = tu_int(tu_main_thread(r), "tid"), by_main = 0;
		json_object *by_thread = tu_array(lock, "threads");
		for (size_t t = 0; t < json_object_array_length(by_thread); t++) {
			json_object *row = json_object_array_get_idx(by_thread, t);
			if (tu_int(row, "tid") == main_tid)
				by_main += tu_int(row, "acquisitions");
		}
		TU_EQ(by_main, 1, "%s: fork_lock acquisitions by the main thread", profiles[i]);
	}
}
