/* rust.c — Rust programs' names: symbols demangled in both manglings (v0
 * "_R..." and legacy "_ZN...17h<hash>E"), the standard library's frames
 * skipped as runtime, so an object is named after the program's own code
 * (tests/data/progs/rust_lock.rs). */
#include <string.h>

#include "testutil.h"

/* The report of one run in which the waiter blocked; NULL when it never
 * did in five runs (each gives it 200 ms to reach the lock). */
static json_object *contended_report(const char *prog)
{
	for (int attempt = 0; attempt < 5; attempt++) {
		struct tu_proc p;
		char *dir = tu_tmpdir();
		struct tu_opts o = { .preload = true, .dir = dir, .quiet = true };
		tu_run(&p, &o, (const char *[]){ prog, NULL });
		tu_assert_exit(&p, 0, prog);
		json_object *r = tu_report_dir(dir);
		json_object *locks = tu_array(r, "locks");
		for (size_t i = 0; i < json_object_array_length(locks); i++)
			if (strstr(tu_str(json_object_array_get_idx(locks, i), "name"), "wait_for_it"))
				return r;
	}
	return NULL;
}

static void expect_rust_names(const char *prog)
{
	json_object *r = contended_report(prog);
	cr_assert(r, "%s: no lock named after rust_lock::wait_for_it in 5 runs", prog);
	json_object *locks = tu_array(r, "locks"), *lock = NULL;
	for (size_t i = 0; i < json_object_array_length(locks) && !lock; i++)
		if (strstr(tu_str(json_object_array_get_idx(locks, i), "name"), "wait_for_it"))
			lock = json_object_array_get_idx(locks, i);
	const char *name = tu_str(lock, "name");
	cr_assert(!strncmp(name, "futex@rust_lock::wait_for_it", 28), "%s: the lock is named '%s'", prog, name);
	/* Every named frame of its stacks is demangled. */
	json_object *stacks = tu_array(lock, "stacks");
	cr_assert(json_object_array_length(stacks) > 0, "%s: no stack", prog);
	json_object *frames = tu_array(json_object_array_get_idx(stacks, 0), "frames");
	bool std_frame = false;
	for (size_t i = 0; i < json_object_array_length(frames); i++) {
		json_object *f = json_object_array_get_idx(frames, i), *fn;
		if (!json_object_object_get_ex(f, "function", &fn) || !json_object_is_type(fn, json_type_string))
			continue;
		const char *s = json_object_get_string(fn);
		cr_assert(strncmp(s, "_R", 2) && strncmp(s, "_ZN", 3), "%s: frame %zu not demangled: %s", prog, i, s);
		std_frame |= strstr(s, "std::") && tu_bool(f, "runtime");
	}
	cr_assert(std_frame, "%s: no std frame marked runtime", prog);
}

Test(rust, v0_symbols_are_demangled_and_std_is_runtime, .timeout = 60)
{
	expect_rust_names(tu_build_path("tests/data/progs/rust_lock_v0"));
}

Test(rust, legacy_symbols_are_demangled_and_std_is_runtime, .timeout = 60)
{
	expect_rust_names(tu_build_path("tests/data/progs/rust_lock_legacy"));
}
