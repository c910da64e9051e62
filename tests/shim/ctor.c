/* A library whose constructor locks a mutex and creates and joins a thread
 * before the shim's own constructor has run (libfaketime's
 * test_constructors.sh): the program works and every lock is counted. */
#include <string.h>

#include "testutil.h"

/* The order the loader ran the constructors in, from LD_DEBUG=files
 * ("calling init: PATH" lines). */
static void constructor_order(const char *dir, long *ctorlock_at, long *convoy_at)
{
	struct tu_proc p;
	const char *argv[] = { tu_prog("ctor_main"), NULL };
	struct tu_opts o = { .preload = true, .dir = dir, .quiet = true,
			     .env = (const char *const[]){ "LD_DEBUG=files", NULL } };
	tu_run(&p, &o, argv);
	tu_assert_exit(&p, 0, "ctor_main with LD_DEBUG=files");
	const char *a = strstr(p.err, "calling init: "), *c = NULL, *s = NULL;
	for (; a; a = strstr(a + 1, "calling init: ")) {
		size_t n = strcspn(a, "\n");
		if (!c && memmem(a, n, "libctorlock.so", 14))
			c = a;
		if (!s && memmem(a, n, "libconvoy.so", 12))
			s = a;
	}
	cr_assert(c && s, "LD_DEBUG=files did not show both constructors:\n%s", p.err);
	*ctorlock_at = c - p.err;
	*convoy_at = s - p.err;
}

Test(ctor, library_constructor_locks_before_shim_init, .timeout = 30)
{
	long ctor_at, convoy_at;
	constructor_order(tu_tmpdir(), &ctor_at, &convoy_at);
	cr_assert(ctor_at < convoy_at,
		  "libctorlock's constructor ran after libconvoy's: this test would not exercise early calls");

	json_object *r;
	const char *out = tu_same_behaviour("ctor_main", &r);
	static const char *const lines[] = { "constructor thread: 0 OK", "constructor errno kept: yes",
					     "count 160", NULL };
	for (size_t i = 0; lines[i]; i++)
		cr_expect(tu_has_line(out, lines[i]), "no line \"%s\" in ctor_main's output:\n%s", lines[i], out);
	json_object *lock = tu_lock(r, "ctor_lock");
	cr_assert(lock, "no lock named ctor_lock in locks[]: %s", json_object_to_json_string(tu_array(r, "locks")));
	TU_EQ(tu_int(lock, "acquisitions"), 160, "ctor_lock acquisitions (constructor 100 + its thread 50 + main 10)");
	json_object *threads = tu_array(r, "threads");
	TU_EQ(json_object_array_length(threads), 2, "threads[] (main and the constructor's thread)");
	json_object *t = tu_find(threads, "start_routine", "ctor_thread");
	cr_assert(t, "no thread with start routine ctor_thread: %s", json_object_to_json_string(threads));
	TU_EQ(tu_int(t, "creator_tid"), tu_int(tu_main_thread(r), "tid"), "creator of the constructor's thread");
}

/* A profile written before the shim's own constructors ran (here: the
 * child a library constructor forks and ends at once) is whole: the
 * checksum's table was built by a constructor of the shim's and was still
 * empty (a profile the analyzer rejected as corrupt). */
Test(ctor, a_profile_written_before_the_shims_constructors_loads, .timeout = 60)
{
	char *dir = tu_tmpdir();
	const char *argv[] = { tu_prog("ctor_main"), NULL };
	struct tu_proc p;
	struct tu_opts o = { .preload = true, .dir = dir, .quiet = true,
			     .env = (const char *const[]){ "CTORLOCK_FORK=1", NULL } };
	tu_run(&p, &o, argv);
	tu_assert_exit(&p, 0, "ctor_main with CTORLOCK_FORK");
	size_t n;
	char **profiles = tu_profiles(dir, &n);
	TU_EQ(n, 2, "profiles (the constructor's child and the program)");
	for (size_t i = 0; i < n; i++)
		json_object_put(tu_report(profiles[i]));
}
