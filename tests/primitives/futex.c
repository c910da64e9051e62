/* futex.c — libc syscall(): SYS_futex counted per word (a C lock built on
 * futexes, Rust's std::sync::Mutex), everything else passed through with
 * its result and errno exactly as without the shim. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prim_test.h"

Test(futex, c_futex_lock_is_a_contended_lock, .timeout = 30)
{
	char *out;
	json_object *r = prim_run_prog("futex_lock", &out);
	cr_assert(tu_has_line(out, "counter=20 woke=0 lock_pi=0 trylock_pi=-1/EDEADLK unlock_pi=0"), "output: %s", out);
	json_object *l = prim_row(r, "locks", "futex_word");
	TU_STREQ(tu_str(l, "kind"), "futex", "futex_word.kind");
	TU_STREQ(tu_str(l, "type"), "lock", "futex_word.type (its waits expected 2)");
	PRIM_EQ(l, "waits", 20);
	PRIM_EQ(l, "contended", 20);
	PRIM_EQ(l, "wakeups", 20);
	PRIM_GT(l, "wait_ns", 0);
	PRIM_GT(l, "wake_latency_ns", 0);
	/* Drepper's mutex 2: the unlocker wakes each time the word said 2; the
	 * woken thread's own unlock then wakes nobody. */
	PRIM_EQ(l, "wakes", 40);
	PRIM_EQ(l, "woken", 20);
	PRIM_EQ(l, "wakes_unwaited", 20);
	/* each round main wakes it and the other thread, woken, takes it from main */
	PRIM_EQ(l, "handoffs", 20);
	json_object *lonely = prim_row(r, "futexes", "lonely_word");
	PRIM_EQ(lonely, "wakes", 7);
	PRIM_EQ(lonely, "wakes_unwaited", 7);
	PRIM_EQ(lonely, "waits", 0);
	cr_assert(!prim_row_where(r, "locks", "name", "lonely_word"), "a word nobody waited on is not a lock");
	json_object *pi = prim_row(r, "futexes", "pi_word");
	PRIM_EQ(pi, "pi_ops", 3);
	json_object_put(r);
}

Test(futex, other_syscalls_pass_through_exactly, .timeout = 30)
{
	char *out;
	json_object *r = prim_run_prog("syscall_passthrough", &out);
	/* prim_run compared the whole transcript with the native run's; a few
	 * lines pin what the transcript must say. */
	cr_assert(tu_has_line(out, "errno kept on success: 4242 (rc>0: 1)"), "output: %s", out);
	cr_assert(tu_has_line(out, "errno kept on futex success: 777 (rc 0)"), "output: %s", out);
	cr_assert(tu_has_line(out, "mmap with offset: second page"), "output: %s", out);
	cr_assert(strstr(out, "close(-1)                          rc=-1 errno=9 "), "output: %s", out);
	cr_assert(strstr(out, "unknown number 100000              rc=-1 errno=38 "), "output: %s", out);
	cr_assert(strstr(out, "futex WAIT wrong value             rc=-1 errno=11 "), "output: %s", out);
	cr_assert(strstr(out, "futex WAIT timeout                 rc=-1 errno=110 "), "output: %s", out);
	json_object_put(r);
}

/* rustc on PATH, or NULL. */
static char *find_rustc(void)
{
	const char *path = getenv("PATH");
	if (!path)
		return NULL;
	char *copy = strdup(path), *save = NULL;
	for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		char *p = NULL;
		if (asprintf(&p, "%s/rustc", *d ? d : ".") < 0)
			return NULL;
		if (access(p, X_OK) == 0)
			return p;
		free(p);
	}
	return NULL;
}

Test(futex, rust_std_mutex_reported_as_contended_lock, .timeout = 120)
{
	char *rustc = find_rustc();
	if (!rustc)
		cr_skip_test("rustc is not on PATH: the Rust std::sync::Mutex test needs it "
			     "(Debian's rustc, installed by `make deps`)");
	char *dir = tu_tmpdir(), *bin = NULL;
	cr_assert(asprintf(&bin, "%s/rust_mutex", dir) >= 0);
	const char *cc[] = { rustc, "-O", "-o", bin, PRIM_SRC_DIR "/rust_mutex.rs", NULL };
	struct tu_proc p;
	struct tu_opts o = { .cwd = dir, .timeout_s = 100 };
	tu_run(&p, &o, cc);
	tu_assert_exit(&p, 0, "rustc -O rust_mutex.rs");

	const char *argv[] = { bin, NULL };
	char *out;
	json_object *r = prim_run(argv, &out);
	cr_assert(tu_has_line(out, "count=20"), "output: %s", out);
	/* The Mutex's futex word: found by kind and role, named by address or site. */
	json_object *locks = tu_array(r, "locks"), *l = NULL;
	for (size_t i = 0; i < json_object_array_length(locks); i++) {
		json_object *x = json_object_array_get_idx(locks, i);
		if (strcmp(tu_str(x, "kind"), "futex") == 0 && tu_int(x, "contended") > 0)
			l = x;
	}
	cr_assert(l, "no contended futex in locks[]: %s", json_object_to_json_string(locks));
	TU_STREQ(tu_str(l, "type"), "lock", "the Mutex's futex role");
	PRIM_EQ(l, "contended", 20);
	PRIM_EQ(l, "wakeups", 20);
	PRIM_GT(l, "wait_ns", 0);
	PRIM_GT(l, "wake_latency_ns", 0);
	/* The Condvar's word: 5 notify_one with nobody waiting. */
	json_object *futexes = tu_array(r, "futexes");
	int found = 0;
	for (size_t i = 0; i < json_object_array_length(futexes); i++) {
		json_object *x = json_object_array_get_idx(futexes, i);
		if (tu_int(x, "wakes") == 5 && tu_int(x, "wakes_unwaited") == 5 && tu_int(x, "waits") == 0)
			found = 1;
	}
	cr_assert(found, "no futex word with 5 wakes that woke nobody: %s", json_object_to_json_string(futexes));
	json_object_put(r);
}
