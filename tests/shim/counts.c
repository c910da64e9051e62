/* Exact counts: the shim must count every acquisition, trylock and signal,
 * attribute each to its thread, and name globals by their symbols. */
#include <string.h>

#include "testutil.h"

Test(counts, two_threads_one_global_mutex_exact, .timeout = 60)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "count_two_threads", NULL);
	tu_assert_exit(&p, 0, "count_two_threads");
	json_object *r = tu_report_dir(dir);
	json_object *lock = tu_lock(r, "counter_lock");
	cr_assert(lock, "no lock named counter_lock (the global's symbol) in locks[]: %s",
		  json_object_to_json_string(tu_array(r, "locks")));
	TU_STREQ(tu_str(lock, "kind"), "mutex", "counter_lock kind");
	TU_EQ(tu_int(lock, "acquisitions"), 1000000, "counter_lock acquisitions");
	TU_LE(tu_int(lock, "contended"), tu_int(lock, "acquisitions"), "contended <= acquisitions");
	TU_LE(tu_int(lock, "max_wait_ns"), tu_int(lock, "wait_ns"), "max_wait_ns <= wait_ns");

	/* The per-thread split: two worker threads with 500,000 each, summing to
	 * the total; the main thread never locked it. */
	json_object *split = tu_array(lock, "threads");
	TU_EQ(json_object_array_length(split), 2, "threads that locked counter_lock");
	for (size_t i = 0; i < 2; i++)
		TU_EQ(tu_int(json_object_array_get_idx(split, i), "acquisitions"), 500000,
		      "counter_lock acquisitions by thread %zu of the split", i);
	TU_EQ(tu_split_sum(lock, "acquisitions"), tu_int(lock, "acquisitions"), "split sum of acquisitions");
	TU_EQ(tu_split_sum(lock, "contended"), tu_int(lock, "contended"), "split sum of contended");
	TU_EQ(tu_split_sum(lock, "wait_ns"), tu_int(lock, "wait_ns"), "split sum of wait_ns");
	int64_t main_tid = tu_int(tu_main_thread(r), "tid");
	for (size_t i = 0; i < 2; i++)
		cr_assert(tu_int(json_object_array_get_idx(split, i), "tid") != main_tid,
			  "the main thread appears in counter_lock's split");
	TU_EQ(json_object_array_length(tu_array(r, "threads")), 3, "threads[] length");
}

Test(counts, trylock_calls_and_failures_exact, .timeout = 30)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "count_trylock", NULL);
	tu_assert_exit(&p, 0, "count_trylock");
	cr_assert(tu_has_line(p.out, "busy 10 of 10") && tu_has_line(p.out, "acquired 5 of 5"),
		  "count_trylock output:\n%s", p.out);
	json_object *r = tu_report_dir(dir);
	json_object *lock = tu_lock(r, "try_lock");
	cr_assert(lock, "no lock named try_lock");
	TU_EQ(tu_int(lock, "trylocks"), 15, "try_lock trylocks");
	TU_EQ(tu_int(lock, "trylock_failures"), 10, "try_lock trylock_failures");
	TU_EQ(tu_int(lock, "acquisitions"), 6, "try_lock acquisitions (1 lock + 5 trylocks)");
	TU_EQ(tu_int(lock, "contended"), 0, "try_lock contended (a trylock never waits)");
	TU_EQ(tu_split_sum(lock, "trylocks"), 15, "split sum of trylocks");
	TU_EQ(tu_split_sum(lock, "trylock_failures"), 10, "split sum of trylock_failures");
	TU_EQ(json_object_array_length(tu_array(lock, "threads")), 3, "threads that used try_lock");
}

/* Every thread samples its holds by its own record's count, whichever
 * path took the lock (the fast paths read the period from the thread's
 * state, copied at its start). */
Test(counts, one_hold_in_each_sample_period_is_timed_in_every_thread, .timeout = 60)
{
	static const struct {
		const char *env;
		int64_t hold_lock, outer_lock;
	} cases[] = {
		{ NULL, 2 * 5, 2 * 2 },                      /* 64: acquisitions 0, 64, 128, ... */
		/* Every outer_lock hold is sampled, and each sample dropped for
		 * the nested trylock's: one hold is timed at a time, the newest
		 * (mutex.c, hold_begin). */
		{ "CONVOY_HOLD_SAMPLE=1", 2 * 300, 0 },
		{ "CONVOY_HOLD_SAMPLE=128", 2 * 3, 2 * 1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tu_proc p;
		char *dir = tu_tmpdir();
		struct tu_opts o = { .preload = true, .dir = dir, .quiet = true,
				     .env = (const char *const[]){ cases[i].env, NULL } };
		tu_run(&p, &o, (const char *const[]){ tu_prog("count_holds"), NULL });
		tu_assert_exit(&p, 0, "count_holds");
		json_object *r = tu_report_dir(dir);
		json_object *hold = tu_lock(r, "hold_lock"), *outer = tu_lock(r, "outer_lock");
		cr_assert(hold && outer, "hold_lock and outer_lock in locks[]: %s",
			  json_object_to_json_string(tu_array(r, "locks")));
		const char *with = cases[i].env ? cases[i].env : "the default period";
		TU_EQ(tu_int(hold, "acquisitions"), 600, "hold_lock acquisitions, %s", with);
		TU_EQ(tu_int(hold, "trylocks"), 400, "hold_lock trylocks, %s", with);
		TU_EQ(tu_int(hold, "hold_samples"), cases[i].hold_lock, "hold_lock hold_samples, %s", with);
		TU_EQ(tu_int(outer, "hold_samples"), cases[i].outer_lock, "outer_lock hold_samples, %s", with);
		TU_EQ(tu_split_sum(hold, "hold_samples"), cases[i].hold_lock, "split sum, %s", with);
	}
}

Test(counts, condvar_signals_with_no_waiter_exact, .timeout = 30)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "count_cond", NULL);
	tu_assert_exit(&p, 0, "count_cond");
	json_object *r = tu_report_dir(dir);

	json_object *idle = tu_cond(r, "idle_cond");
	cr_assert(idle, "no condvar named idle_cond in condvars[]: %s",
		  json_object_to_json_string(tu_array(r, "condvars")));
	TU_STREQ(tu_str(idle, "kind"), "condvar", "idle_cond kind");
	TU_EQ(tu_int(idle, "signals"), 1000, "idle_cond signals");
	TU_EQ(tu_int(idle, "signals_unwaited"), 1000, "idle_cond signals_unwaited");
	TU_EQ(tu_int(idle, "broadcasts"), 500, "idle_cond broadcasts");
	TU_EQ(tu_int(idle, "broadcasts_unwaited"), 500, "idle_cond broadcasts_unwaited");
	TU_EQ(tu_int(idle, "waits"), 0, "idle_cond waits");

	json_object *ready = tu_cond(r, "ready_cond");
	cr_assert(ready, "no condvar named ready_cond");
	TU_EQ(tu_int(ready, "signals"), 60, "ready_cond signals");
	TU_EQ(tu_int(ready, "signals_unwaited"), 0, "ready_cond signals_unwaited (each had a waiter)");
	TU_EQ(tu_int(ready, "broadcasts"), 40, "ready_cond broadcasts");
	TU_EQ(tu_int(ready, "broadcasts_unwaited"), 0, "ready_cond broadcasts_unwaited");
	TU_LE(100, tu_int(ready, "waits"), "ready_cond waits (at least one per round)");
	TU_EQ(tu_int(ready, "timeouts"), 0, "ready_cond timeouts");
}

Test(counts, static_and_struct_member_mutexes_named_by_symbol, .timeout = 30)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "count_static", NULL);
	tu_assert_exit(&p, 0, "count_static");
	cr_assert(tu_has_line(p.out, "lock offset 8"), "count_static output:\n%s", p.out);
	json_object *r = tu_report_dir(dir);
	json_object *table = tu_lock(r, "table_lock");
	cr_assert(table, "no lock named table_lock (a file-scope static) in locks[]: %s",
		  json_object_to_json_string(tu_array(r, "locks")));
	TU_EQ(tu_int(table, "acquisitions"), 777, "table_lock acquisitions");
	/* a member of a global struct: named by the symbol and, with DWARF, the member */
	json_object *pool = tu_lock(r, "pool.lock");
	cr_assert(pool, "no lock named pool.lock (struct member) in locks[]: %s",
		  json_object_to_json_string(tu_array(r, "locks")));
	TU_EQ(tu_int(pool, "acquisitions"), 333, "pool.lock acquisitions");
}

/* OpenMP's own barriers and locks park with inline futex calls; the shim
 * sees them at libgomp's entry points (preload/gomp.c). */
Test(counts, openmp_barriers_and_critical_sections_exact, .timeout = 60)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "count_omp", NULL);
	tu_assert_exit(&p, 0, "count_omp");
	cr_assert(tu_has_line(p.out, "critical 100 named 40 lock 20"), "count_omp output:\n%s", p.out);
	json_object *r = tu_report_dir(dir);
	json_object *barriers = tu_array(r, "barriers"), *barrier = NULL;
	for (size_t i = 0; i < json_object_array_length(barriers); i++)
		if (!strcmp(tu_str(json_object_array_get_idx(barriers, i), "name"), "omp barrier"))
			barrier = json_object_array_get_idx(barriers, i);
	cr_assert(barrier, "no barrier named omp barrier: %s", json_object_to_json_string(barriers));
	TU_EQ(tu_int(barrier, "waits"), 200, "omp barrier waits (100 per thread)");
	json_object *critical = tu_lock(r, "omp critical"), *named = tu_lock(r, "omp named critical");
	json_object *lock = tu_lock(r, "omp lock");
	cr_assert(critical && named && lock, "OpenMP locks missing: %s", json_object_to_json_string(tu_array(r, "locks")));
	TU_EQ(tu_int(critical, "acquisitions"), 100, "omp critical acquisitions");
	TU_EQ(tu_int(named, "acquisitions"), 40, "omp named critical acquisitions");
	TU_EQ(tu_int(lock, "acquisitions"), 20, "omp lock acquisitions");
	TU_LE(tu_int(critical, "contended"), 100, "contended <= acquisitions");
}

/* argv run natively and under the shim, whose profile goes to the
 * directory returned: both exit 0 and print want. */
static char *same_output(const char *const argv[], const char *want)
{
	struct tu_proc native, shim;
	char *dir = tu_tmpdir();
	struct tu_opts n = { .timeout_s = 50 }, sh = { .preload = true, .dir = dir, .quiet = true, .timeout_s = 50 };
	tu_run(&native, &n, argv);
	tu_run(&shim, &sh, argv);
	tu_assert_exit(&native, 0, argv[0]);
	tu_assert_exit(&shim, 0, argv[0]);
	TU_STREQ(native.out, want, "%s natively", argv[0]);
	TU_STREQ(shim.out, want, "%s under the shim", argv[0]);
	return dir;
}

/* OpenMP in plugins opened with RTLD_LOCAL (Python's ctypes, extension
 * modules): each plugin's libgomp is in its own scope only, behind the
 * shim's exports. The shim once found no libgomp there and ran each region
 * as a team of one, and each critical section and omp_set_lock as nothing
 * (helper-129); then one table for every plugin sent a second plugin's
 * critical to the first one's libgomp copy, whose lock its end never
 * released: a hang (helper-131); and a team thread that looked a function
 * up waited for the loader's lock that dlopen held while a constructor ran
 * a parallel region: a hang (helper-131; helper-132 for a schedule(dynamic)
 * loop's GOMP_parallel_loop_*, interposed since). The shim finds each plugin's own
 * libgomp (preload/gomp.c, "which runtime"), resolved on the master, and
 * counts its locks. */
Test(counts, openmp_in_plugins_opened_locally_keeps_their_teams_and_their_locks, .timeout = 120)
{
	const char *argv[] = { tu_prog("omp_plugin"), tu_build_path("tests/progs/libompplugin.so"),
			       tu_build_path("tests/progs/libompplugin_copy.so"),
			       tu_build_path("tests/progs/libompplugin.so"), tu_build_path("tests/progs/libompctor.so"),
			       NULL };
	static const char *const want = "team 2 critical 100 named 40 lock 20\n"
					"team 2 critical 100 named 40 lock 20\n"
					"team 2 critical 100 named 40 lock 20\n"
					"ctor critical 6 barrier 3\n";
	char *dir = same_output(argv, want);
	json_object *r = tu_report_dir(dir), *critical = tu_lock(r, "omp critical"), *lock = tu_lock(r, "omp lock");
	cr_assert(critical && lock, "OpenMP locks missing: %s", json_object_to_json_string(tu_array(r, "locks")));
	/* One object for every runtime's unnamed critical: 3 runs and the constructor's 6. */
	TU_EQ(tu_int(critical, "acquisitions"), 306, "omp critical acquisitions");
}

/* Each OpenMP call goes where the caller's reference would go without the
 * shim, whose exports are unversioned and take every version's calls
 * (preload/gomp.c, "which runtime"). count_omp's libgomp is in the global
 * scope; a clang-built plugin's omp_set_lock@VERSION is LLVM's libomp's,
 * not libgomp's (forwarded to libgomp, its lock crashed in
 * __kmpc_unset_lock); a library built for GCC before 4.4 has
 * omp_set_nest_lock@OMP_1.0, the 8-byte lock's function (forwarded to the
 * default, it overwrote the guard after the lock). Both plugins' locks
 * are counted. A third plugin's constructor thread makes its first call
 * while dlopen holds the loader's lock (helper-134: it hung looking the
 * runtime up). A library linked without libgomp names no version: the
 * loader binds its nest locks to the base, OMP_1.0 (helper-135: the shim
 * sent its sets to OMP_3.0's, and the threads hung). */
Test(counts, openmp_calls_reach_the_runtime_and_version_their_reference_names, .timeout = 60)
{
	const char *argv[] = { tu_prog("count_omp"), tu_build_path("tests/progs/libompclang.so"),
			       tu_build_path("tests/progs/libompold.so"),
			       tu_build_path("tests/progs/libompctorthread.so"),
			       tu_build_path("tests/progs/libompnestnolink.so"), NULL };
	static const char *const want = "critical 100 named 40 lock 20\n"
					"team 2 critical 100 named 40 lock 20\n"
					"nest25 count 2 1 guard 11111111 22222222\n"
					"ctor thread critical 1000\n"
					"nest nolink 4000\n";
	char *dir = same_output(argv, want);
	json_object *locks = tu_array(tu_report_dir(dir), "locks");
	int64_t omp_locks = 0, nest = 0;
	for (size_t i = 0; i < json_object_array_length(locks); i++) {
		json_object *l = json_object_array_get_idx(locks, i), *name;
		if (!json_object_object_get_ex(l, "name", &name) || !json_object_is_type(name, json_type_string))
			continue;
		if (!strcmp(json_object_get_string(name), "omp lock"))
			omp_locks += tu_int(l, "acquisitions");
		else if (!strcmp(json_object_get_string(name), "omp nest lock"))
			nest += tu_int(l, "acquisitions");
	}
	TU_EQ(omp_locks, 40, "omp lock acquisitions, count_omp's and the clang plugin's");
	TU_EQ(nest, 2 + 8000, "omp nest lock acquisitions of the OMP_1.0 locks");
	/* The OMP_1.0 references of a program that is not position-independent
	 * and exports nothing: its GNU hash table counts one symbol. */
	const char *nopie[] = { tu_prog("omp_old_nopie"), NULL };
	same_output(nopie, "nest25 count 2 1 guard 11111111 22222222\n");
}

/* Libraries the loader places oddly still find their runtime
 * (helper-133): one linked without libgomp, whose OpenMP comes from the
 * plugin that loaded it (no runtime was found, and its combined loop ran
 * outside a work share: a crash); one loaded below the address it was
 * linked at (its dynamic section read as if unrelocated: a crash). */
Test(counts, openmp_in_libraries_the_loader_places_oddly_finds_its_runtime, .timeout = 60)
{
	const char *argv[] = { tu_prog("omp_plugin"), tu_build_path("tests/progs/libompnolinkuser.so"),
			       tu_build_path("tests/progs/libomphighfirst.so"),
			       tu_build_path("tests/progs/libomphigh.so"), NULL };
	static const char *const want = "nolink team 2 sum 4950 critical 100\n"
					"high team 2\n";
	char *dir = same_output(argv, want);
	json_object *critical = tu_lock(tu_report_dir(dir), "omp critical");
	cr_assert(critical, "no omp critical");
	TU_EQ(tu_int(critical, "acquisitions"), 100, "omp critical acquisitions");
}

/* An OpenMP lock is peeked at before the call (preload/gomp.c, lock_call):
 * one nobody else holds is not contended, however long the call took.
 * libslowomp.so makes each take last 2 ms, as a preemption inside it on a
 * busy machine does; timed alone, all 10 counted as contended (a
 * single-threaded ImageMagick's "omp lock" showed as queued for:
 * helper-129). */
Test(counts, an_openmp_lock_nobody_else_holds_is_never_contended, .timeout = 60)
{
	char *dir = tu_tmpdir(), *preload = NULL, *convoy_dir = NULL;
	cr_assert(asprintf(&preload, "LD_PRELOAD=%s %s", tu_shim(), tu_build_path("tests/progs/libslowomp.so")) > 0 &&
		  asprintf(&convoy_dir, "CONVOY_DIR=%s", dir) > 0);
	const char *env[] = { preload, convoy_dir, "CONVOY_QUIET=1", NULL };
	const char *argv[] = { tu_prog("omp_lock_alone"), NULL };
	struct tu_opts o = { .env = env };
	struct tu_proc p;
	tu_run(&p, &o, argv);
	tu_assert_exit(&p, 0, "omp_lock_alone");
	cr_assert(tu_has_line(p.out, "locked 10"), "%s", p.out);
	json_object *r = tu_report_dir(dir), *lock = tu_lock(r, "omp lock");
	cr_assert(lock, "no omp lock: %s", json_object_to_json_string(tu_array(r, "locks")));
	TU_EQ(tu_int(lock, "acquisitions"), 10, "omp lock acquisitions");
	TU_EQ(tu_int(lock, "contended"), 0, "omp lock contended");
}

/* The OpenMP interposers change nothing in an OpenMP program's behaviour
 * (its output and exit status are the same as without the shim), and a
 * program without libgomp never loads it: they resolve it only when called. */
Test(counts, an_openmp_program_behaves_the_same_under_the_shim, .timeout = 60)
{
	tu_same_behaviour("count_omp", NULL);
}

Test(counts, a_program_without_libgomp_never_loads_it, .timeout = 30)
{
	const char *argv[] = { "/bin/sh", "-c", "grep -c libgomp /proc/$$/maps; exit 0", NULL };
	struct tu_proc p;
	struct tu_opts o = { .preload = true, .dir = tu_tmpdir(), .quiet = true };
	tu_run(&p, &o, argv);
	tu_assert_exit(&p, 0, "sh");
	cr_assert(tu_has_line(p.out, "0"), "libgomp mapped in a program that does not use it: %s", p.out);
}

/* Every row of section in report r: its wait histogram counts each of its
 * waits once. Returns the waits seen. */
static int64_t waits_in_histograms(json_object *r, const char *section)
{
	json_object *rows = tu_array(r, section);
	int64_t all = 0;
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i), *hist = tu_array(row, "wait_histogram");
		int64_t in_hist = 0;
		for (size_t k = 0; k < json_object_array_length(hist); k++)
			in_hist += tu_int(json_object_array_get_idx(hist, k), "count");
		TU_EQ(in_hist, tu_int(row, "waits"), "%s[%zu] (%s): waits in its histogram", section, i,
		      json_object_to_json_string(tu_get(row, "name")));
		all += in_hist;
	}
	return all;
}

/* The shim keeps a record's wait histogram apart from its counters, made
 * at its first wait (preload/shim.h, struct cv_rec_more), and adds it up
 * when the records of threads ended past the thread cap fold into the
 * "merged threads" row: each wait is still in one bucket. */
Test(counts, every_wait_is_in_its_objects_wait_histogram, .timeout = 300)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "count_cond", NULL);
	tu_assert_exit(&p, 0, "count_cond");
	json_object *r = tu_report_dir(dir);
	cr_assert(waits_in_histograms(r, "condvars") >= 60, "count_cond: ready_cond's 60 waits are in no histogram");
	waits_in_histograms(r, "locks");

	dir = tu_tmpdir();
	tu_run_shim(&p, dir, "churn_threads", "waited", "1500", NULL);
	tu_assert_exit(&p, 0, "churn_threads waited 1500");
	r = tu_report_dir(dir);
	cr_assert(tu_thread_named(r, "merged threads"), "no \"merged threads\" row: no record was folded");
	cr_assert(waits_in_histograms(r, "condvars") >= 1499, "churn_threads: its 1,499 waits at least");
	waits_in_histograms(r, "locks");
}

/* A contended acquisition's wait is counted once the program has left the
 * critical section (preload/mutex.c, wait_pending), not as the lock is
 * taken: at the unlock, at the thread's end (it never let the lock go),
 * or by the profile's writer for a thread still running, waiting on a
 * condvar with the lock (tests/progs/pending_waits.c). Each lock: the
 * thread's two acquisitions and main's, one contended, one wait in the
 * histogram. */
Test(counts, a_wait_counted_after_its_section_is_in_the_profile, .timeout = 60)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "pending_waits", NULL);
	tu_assert_exit(&p, 0, "pending_waits");
	json_object *r = tu_report_dir(dir);
	static const char *const names[] = { "timed_lock", "running_lock", "ended_lock" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		json_object *lock = tu_lock(r, names[i]);
		cr_assert(lock, "no lock named %s: %s", names[i], json_object_to_json_string(tu_array(r, "locks")));
		TU_EQ(tu_int(lock, "acquisitions"), 3, "%s acquisitions", names[i]);
		TU_EQ(tu_int(lock, "contended"), 1, "%s contended", names[i]);
		TU_EQ(tu_int(lock, "waits"), 1, "%s waits", names[i]);
		cr_assert(tu_int(lock, "wait_ns") > 0, "%s: no wait time", names[i]);
	}
	TU_EQ(waits_in_histograms(r, "locks") >= 3, 1, "the three waits in their histograms");
}

/* The same for 1,100 threads that each end holding a lock of their own
 * taken after a wait: past the 1,024 ended threads the shim keeps, an
 * ended thread's records fold into the merged row, its pending wait
 * counted first (without that: 1,024 of 1,100). */
Test(counts, the_waits_of_threads_past_the_cap_are_counted, .timeout = 120)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "pending_waits", "ended", "1100", NULL);
	tu_assert_exit(&p, 0, "pending_waits ended 1100");
	json_object *r = tu_report_dir(dir), *locks = tu_array(r, "locks");
	int64_t n = 0, contended = 0, waits = 0;
	for (size_t i = 0; i < json_object_array_length(locks); i++) {
		json_object *l = json_object_array_get_idx(locks, i);
		if (strncmp(tu_str(l, "name"), "many[", 5))
			continue;
		n++;
		contended += tu_int(l, "contended");
		waits += tu_int(l, "waits");
	}
	TU_EQ(n, 1100, "locks named many[...]");
	TU_EQ(contended, 1100, "contended acquisitions of many[...]");
	TU_EQ(waits, 1100, "waits on many[...]");
	cr_assert(tu_thread_named(r, "merged threads"), "no \"merged threads\" row: no thread was folded");
}

/* Twelve semaphores in turn, more than the thread's cache of them holds
 * (a fixed entry, its partner and CV_SEM_WAYS aside: preload/shim.h,
 * cv__sem_rec), two destroyed and made again while their records were
 * aside: every wait, trywait and post is on its own semaphore and
 * generation. */
Test(counts, semaphores_taken_in_turn_keep_their_counts, .timeout = 60)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "sems_in_turn", NULL);
	tu_assert_exit(&p, 0, "sems_in_turn");
	json_object *r = tu_report_dir(dir);
	int rows = 0;
	for (const char *line = p.out; *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] != '\0')) {
		int i, g;
		long acquired, tries, posts;
		if (sscanf(line, "sems[%d] generation %d: %ld acquired, %ld tries, %ld posts", &i, &g, &acquired, &tries,
			   &posts) != 5)
			continue;
		char name[16];
		snprintf(name, sizeof(name), "sems[%d]", i);
		json_object *s = tu_row_gen(r, "semaphores", name, g);
		cr_assert(s, "%s generation %d missing from semaphores[]", name, g);
		TU_EQ(tu_int(s, "acquisitions"), acquired, "%s generation %d acquisitions", name, g);
		TU_EQ(tu_int(s, "trywaits"), tries, "%s generation %d trywaits", name, g);
		TU_EQ(tu_int(s, "posts"), posts, "%s generation %d posts", name, g);
		rows++;
	}
	TU_EQ(rows, 14, "generations printed (twelve semaphores, two made again)");
	json_object_put(r);
}

/* One address a condvar, then a barrier, a hundred times: past the 64
 * generations kept of an address, its last object stays through re-inits,
 * and each barrier made there still counts its rounds
 * (tests/progs/barrier_after_condvar.c; helper-139). */
Test(counts, a_barrier_made_where_a_condvar_was_counts_its_rounds, .timeout = 60)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "barrier_after_condvar", NULL);
	tu_assert_exit(&p, 0, "barrier_after_condvar");
	cr_assert(tu_has_line(p.out, "rounds 200"), "%s", p.out);
	json_object *r = tu_report_dir(dir);
	TU_EQ(tu_sum(r, "barriers", "rounds"), 200, "barrier rounds");
	TU_EQ(tu_sum(r, "barriers", "waits"), 200, "barrier waits");
	json_object_put(r);
}
