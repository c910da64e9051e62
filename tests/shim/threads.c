/* Threads: names, start routines, creators, detached threads, and every one
 * of 100 short-lived threads. */
#include <string.h>

#include "testutil.h"

static json_object *report;
static const char *out;

static void run_lifecycle(void)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "threads_lifecycle", NULL);
	tu_assert_exit(&p, 0, "threads_lifecycle");
	out = p.out;
	report = tu_report_dir(dir);
}

static json_object *named(const char *name)
{
	json_object *t = tu_thread_named(report, name);
	cr_assert(t, "no thread named \"%s\" in threads[]; names:%s", name, ({
		static char names[4096];
		json_object *ts = tu_array(report, "threads");
		names[0] = '\0';
		for (size_t i = 0; i < json_object_array_length(ts) && strlen(names) < 3900; i++) {
			strcat(names, " ");
			strncat(names, tu_str(json_object_array_get_idx(ts, i), "name"), 16);
		}
		names;
	}));
	return t;
}

Test(threads, names_from_setname_np, .timeout = 30)
{
	run_lifecycle();
	named("main-thr");
	named("self-named");
	named("by-creator");
	named("nest-parent");
	named("nest-child");
	cr_assert(tu_bool(named("main-thr"), "main"), "main-thr is not the main thread");
}

Test(threads, start_routines_and_creators, .timeout = 30)
{
	run_lifecycle();
	int64_t main_tid = tu_int(tu_main_thread(report), "tid");
	const char *main_line = tu_line_value(out, "main tid");
	cr_assert(main_line, "no main tid line:\n%s", out);
	TU_EQ(main_tid, atoll(main_line), "main thread's tid in the report vs gettid()");
	static const struct { const char *name, *routine; } expect[] = {
		{ "self-named", "self_named" }, { "by-creator", "other_named" },
		{ "det-attr", "detached_attr" }, { "det-self", "self_detach" },
		{ "det-creator", "creator_detached" },
		{ "nest-parent", "nested_parent" },
	};
	for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
		json_object *t = named(expect[i].name);
		TU_STREQ(tu_str(t, "start_routine"), expect[i].routine, "start routine of %s", expect[i].name);
		TU_EQ(tu_int(t, "creator_tid"), main_tid, "creator of %s", expect[i].name);
	}
	json_object *child = named("nest-child");
	TU_STREQ(tu_str(child, "start_routine"), "nested_child", "start routine of nest-child");
	const char *np = tu_line_value(out, "nest-parent tid");
	cr_assert(np, "no nest-parent tid line:\n%s", out);
	TU_EQ(tu_int(child, "creator_tid"), atoll(np), "creator of nest-child (nest-parent's tid)");
	TU_EQ(tu_int(named("nest-parent"), "tid"), atoll(np), "nest-parent's tid");
	json_object *main_thread = tu_main_thread(report), *creator;
	cr_assert(!json_object_object_get_ex(main_thread, "creator_tid", &creator) || !creator ||
		  json_object_get_int(creator) == 0, "the main thread has a creator");
	TU_EQ(tu_int(main_thread, "threads_created"), 6 + 100, "threads the main thread created");
}

Test(threads, detached_threads_reported, .timeout = 30)
{
	run_lifecycle();
	cr_assert(tu_bool(named("det-attr"), "detached"), "det-attr (created detached) not reported detached");
	cr_assert(tu_bool(named("det-self"), "detached"), "det-self (pthread_detach(self)) not reported detached");
	cr_assert(tu_bool(named("det-creator"), "detached"),
		  "det-creator (pthread_detach by its creator right after pthread_create) not reported detached");
	cr_assert(!tu_bool(named("by-creator"), "detached"), "by-creator (joined) reported detached");
}

Test(threads, hundred_short_lived_threads_all_appear, .timeout = 30)
{
	run_lifecycle();
	json_object *threads = tu_array(report, "threads");
	/* main, self-named, by-creator, det-attr, det-self, det-creator, nest-parent,
	 * nest-child, 100 short */
	TU_EQ(json_object_array_length(threads), 108, "threads[] length");
	size_t short_ones = 0;
	for (size_t i = 0; i < json_object_array_length(threads); i++) {
		json_object *t = json_object_array_get_idx(threads, i), *sr;
		if (json_object_object_get_ex(t, "start_routine", &sr) && sr &&
		    strcmp(json_object_get_string(sr), "short_worker") == 0) {
			short_ones++;
			cr_assert(tu_bool(t, "exited"), "a short_worker thread is not marked exited");
		}
	}
	TU_EQ(short_ones, 100, "threads with start routine short_worker");
	json_object *lock = tu_lock(report, "short_lock");
	cr_assert(lock, "no lock named short_lock");
	TU_EQ(tu_int(lock, "acquisitions"), 100, "short_lock acquisitions");
	TU_EQ(json_object_array_length(tu_array(lock, "threads")), 100, "threads in short_lock's split");
}
