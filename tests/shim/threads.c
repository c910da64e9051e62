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

/* Threads that end before the next is made each get the state of the one
 * before (thread.c, thread_retire): still one row each, in the order they
 * were made; each lock's hand-off to the thread given its last owner's
 * state counted (without the last owner forgotten: 0 of 49); a thread
 * that ended holding a lock and one still running, whose states are kept
 * whole, in their places after them. */
Test(threads, recycled_states_keep_each_thread_and_its_order, .timeout = 30)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "thread_rows", NULL);
	tu_assert_exit(&p, 0, "thread_rows");
	report = tu_report_dir(dir);
	json_object *threads = tu_array(report, "threads");
	TU_EQ(json_object_array_length(threads), 1 + 50 + 2, "threads[]: main, 50 rows, holder, sleeper");
	cr_assert(tu_bool(json_object_array_get_idx(threads, 0), "main"), "threads[0] is not the main thread");
	for (int i = 0; i < 52; i++) {
		char want[16];
		snprintf(want, sizeof(want), i < 50 ? "row-%d" : i == 50 ? "holder" : "sleeper", i);
		json_object *t = json_object_array_get_idx(threads, i + 1);
		TU_STREQ(tu_str(t, "name"), want, "threads[%d]'s name", i + 1);
		cr_assert(tu_bool(t, "exited") == (i < 51), "%s: exited is %d", want, tu_bool(t, "exited"));
		TU_EQ(tu_int(t, "index"), i + 1, "%s's index", want);
	}
	json_object *lock = tu_lock(report, "row_lock");
	cr_assert(lock, "no lock named row_lock");
	TU_EQ(tu_int(lock, "acquisitions"), 50, "row_lock's acquisitions");
	TU_EQ(tu_int(lock, "handoffs"), 49, "row_lock's hand-offs (each thread took it from the one before)");
	TU_EQ(json_object_array_length(tu_array(lock, "threads")), 50, "threads in row_lock's split");
}

/* A thread the program made forks, and ends in the child: the child's
 * profile has the child's three threads (the one that forked, ended;
 * in-child; after, made after that end), not the parent's worker and its
 * 1,000 locks; the parent's has them. */
Test(threads, a_thread_that_forks_and_ends_in_the_child_is_the_childs, .timeout = 30)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "fork_in_worker", NULL);
	tu_assert_exit(&p, 0, "fork_in_worker");
	cr_assert(tu_has_line(p.out, "child exit 3"), "stdout:\n%s", p.out);
	size_t n;
	char **files = tu_profiles(dir, &n);
	TU_EQ(n, 2, "profiles (parent and fork child)");
	int children = 0;
	for (size_t i = 0; i < n; i++) {
		json_object *r = tu_report(files[i]);
		json_object *threads = tu_array(r, "threads"), *lock = tu_lock(r, "worker_lock");
		if (!tu_bool(tu_get(r, "process"), "forked")) {
			cr_assert(lock, "the parent's profile has no worker_lock");
			TU_EQ(tu_int(lock, "acquisitions"), 1000, "the parent's worker_lock acquisitions");
			continue;
		}
		children++;
		cr_assert(!lock || tu_int(lock, "acquisitions") == 0, "the child's profile has the parent's worker_lock");
		TU_EQ(json_object_array_length(threads), 3, "the child's threads: the one that forked, in-child, after");
		json_object *forker = json_object_array_get_idx(threads, 0);
		TU_STREQ(tu_str(forker, "name"), "worker", "the child's first thread");
		cr_assert(tu_bool(forker, "exited"), "the thread that forked ended in the child");
		TU_STREQ(tu_str(json_object_array_get_idx(threads, 1), "name"), "in-child", "the child's second thread");
		TU_STREQ(tu_str(json_object_array_get_idx(threads, 2), "name"), "after", "the child's third thread");
	}
	TU_EQ(children, 1, "fork child profiles");
}

/* pthread_create failing after its clone, 100 times, then five threads:
 * the program sees what it sees natively, the failed ones are in no row,
 * and the five are, their lock's five acquisitions too (the failed
 * creates' states go to the next threads: thread.c, child_created). */
Test(threads, failed_creates_leave_no_row_and_serve_the_next, .timeout = 30)
{
	json_object *r;
	const char *out = tu_same_behaviour("create_fails", &r);
	cr_assert(tu_has_line(out, "failed creates: 100 of 100"), "%s", out);
	json_object *threads = tu_array(r, "threads");
	TU_EQ(json_object_array_length(threads), 6, "threads[]: main and the five made");
	for (size_t i = 1; i < 6; i++)
		TU_STREQ(tu_str(json_object_array_get_idx(threads, i), "start_routine"), "made", "threads[%zu]", i);
	TU_EQ(tu_int(tu_lock(r, "made_lock"), "acquisitions"), 5, "made_lock's acquisitions");
}
