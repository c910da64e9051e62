/* The fast paths' promise (issue 11): an uncontended acquisition writes
 * nothing another thread reads. Counted by hardware watchpoints on the
 * lines other threads read (tests/progs/fastpath_writes.c says which), not
 * timed, so the result does not depend on the machine's load. */
#include <string.h>

#include "testutil.h"

Test(fastpath, an_uncontended_acquisition_writes_only_its_threads_lines, .timeout = 300)
{
	struct tu_proc p;
	tu_run_shim(&p, tu_tmpdir(), "fastpath_writes", NULL);
	if (p.exited && p.code == 77)
		cr_skip_test("%s", p.out);
	cr_assert(p.exited && p.code == 0,
		  "fastpath_writes (exit %d, signal %d; watching by page protection, a SIGSEGV is a write to a "
		  "watched page with signals blocked):\n%s%s", p.code, p.sig, p.out, p.err);
	cr_assert(strstr(p.out, "ok: ") == p.out, "%s", p.out);
}

/* A lock that a short-lived lock's fill moved to the partner of its own
 * cache entry goes back to that entry once the short-lived one is
 * destroyed (preload/shim.h, cv__ways_miss_n: found beside a retired
 * record, it takes the slow path once, whose fill puts it home): then it
 * takes the fast path, as many instructions as a lock that never left home.
 * Before, it stayed in the partner until another fill of its entry, every
 * acquisition through the slower path (openssl verify: 116,000 to 173,000
 * of its 403,000 read locks). A read lock and a semaphore (whose cache is
 * one fixed entry and its partner). Instructions counted by single steps
 * (tests/progs/partner_back_home.c), with controls that the count tells
 * the partner's path apart. */
Test(fastpath, a_lock_moved_aside_goes_home_when_the_lock_in_its_entry_ends, .timeout = 60)
{
	struct tu_proc p;
	static const char *const env[] = { "CONVOY_HOLD_SAMPLE=1073741824", NULL };   /* no hold-time samples */
	struct tu_opts o = { .preload = true, .dir = tu_tmpdir(), .quiet = true, .env = env };
	tu_run(&p, &o, (const char *[]){ tu_prog("partner_back_home"), NULL });
	if (p.exited && p.code == 77)
		cr_skip_test("%s", p.out);
	cr_assert(p.exited && p.code == 0, "partner_back_home (exit %d, signal %d):\n%s%s", p.code, p.sig, p.out,
		  p.err);
	cr_assert(strstr(p.out, "ok: ") == p.out, "%s", p.out);
}

/* Every call the shim's own code makes, it makes from a frame of its own:
 * stacks.c takes every frame in the shim for one that saved its caller's
 * frame pointer, and the Makefile leaves frames out of leaves only
 * (-momit-leaf-frame-pointer: the lock fast paths that read their caller's
 * return address set up no frame they never use). Checked at each call
 * instruction against the library's call-frame information
 * (tests/progs/call_frames.c; mutex.c built with -fomit-frame-pointer
 * fails it: mtx_lock's and mtx_unlock's calls to their slow paths, among
 * others; the library built at -O1 or -Os passes, as at -O2). */
Test(fastpath, no_call_without_a_frame, .timeout = 60)
{
	struct tu_proc p;
	tu_run(&p, NULL, (const char *const[]){ tu_prog("call_frames"), tu_shim(), NULL });
	if (p.exited && p.code == 77)
		cr_skip_test("%s", p.out);
	cr_assert(p.exited && p.code == 0, "call_frames (exit %d, signal %d):\n%s%s", p.code, p.sig, p.out, p.err);
	cr_assert(strstr(p.out, "ok: ") == p.out, "%s", p.out);
}

/* The uncontended steps the shim makes itself (glibc's compare-and-swap,
 * exchange or first test, where it is exactly glibc's) are made there:
 * glibc's mutex, rwlock, spinlock, semaphore and condvar functions are
 * never entered for them. A probe of glibc's words that failed, or a
 * switch left off (real.c), would send every call to glibc without
 * changing any result. Counted by breakpoints
 * (tests/progs/glibc_not_entered.c), which natively count every call. */
Test(fastpath, the_steps_the_shim_makes_itself_never_enter_glibc, .timeout = 60)
{
	struct tu_proc native, shim;
	tu_run_native(&native, "glibc_not_entered", NULL);
	if (native.exited && native.code == 77)
		cr_skip_test("%s", native.out);
	cr_assert(native.exited && native.code == 0, "natively (exit %d):\n%s%s", native.code, native.out, native.err);
	tu_run_shim(&shim, tu_tmpdir(), "glibc_not_entered", NULL);
	cr_assert(shim.exited && shim.code == 0, "under the shim (exit %d):\n%s%s", shim.code, shim.out, shim.err);
	cr_assert(strstr(shim.out, "ok: under the shim") == shim.out, "%s", shim.out);
}

/* The shim writes each fresh page of its memory before reading it: no
 * copy-on-write of the zero page (with its TLB shootdown across the
 * program's CPUs) per page of its sparse tables. Counted by a tracepoint
 * (tests/progs/fresh_pages.c). */
Test(fastpath, the_shims_fresh_pages_are_written_before_they_are_read, .timeout = 120)
{
	struct tu_proc p;
	tu_run_shim(&p, tu_tmpdir(), "fresh_pages", NULL);
	if (p.exited && p.code == 77)
		cr_skip_test("%s", p.out);
	cr_assert(p.exited && p.code == 0, "fresh_pages (exit %d, signal %d):\n%s%s", p.code, p.sig, p.out, p.err);
	cr_assert(strstr(p.out, "ok: ") == p.out, "%s", p.out);
}

/* A process's end writes its profile from the shim's tables, and a page
 * of them only read is a fault too (the kernel's zero page mapped): the
 * write read all 48 pages of the lock-order edge table, made at the first
 * nested acquisition (a child that took one mutex under another: 161
 * minor faults, 112 for one that took them in turn; python3 -c pass: 47
 * of its 97 more than native). Now at most 16 more than in turn (1 to 5
 * seen); that every edge is still written, a_hand_over_hand_walk_keeps_every_edge
 * says. Counts, not timings (tests/progs/exit_faults.c). */
Test(fastpath, a_profiles_write_does_not_fault_the_edge_table_in, .timeout = 60)
{
	struct tu_proc p;
	tu_run_shim(&p, tu_tmpdir(), "exit_faults", NULL);
	cr_assert(p.exited && p.code == 0, "exit_faults (exit %d, signal %d):\n%s%s", p.code, p.sig, p.out, p.err);
	cr_assert(strstr(p.out, "ok: ") == p.out, "%s", p.out);
}

/* The shim's memory grows by a record for each (object, thread) pair and
 * an object for each lock a program uses, and on the development VM a
 * page fault costs about 9 us: its chunks and tables are mapped in
 * batches (preload/alloc.c), so the faults of a program that makes and
 * uses many locks do not grow with them. Two threads taking 4,000 fresh
 * mutexes make 8,000 records and 4,000 objects, about 1,000 pages:
 * 3,440 faults when each page was faulted in on its own, 6 to 11 since.
 * A count, not a timing (tests/progs/object_pages.c). */
Test(fastpath, the_shims_memory_for_many_locks_comes_in_batches_not_a_fault_a_page, .timeout = 120)
{
	struct tu_proc native, shim;
	tu_run_native(&native, "object_pages", NULL);
	if (native.exited && native.code == 77)
		cr_skip_test("%s", native.out);
	tu_run_shim(&shim, tu_tmpdir(), "object_pages", NULL);
	long n = -1, s = -1;
	cr_assert(native.exited && native.code == 0 && sscanf(native.out, "faults %ld", &n) == 1,
		  "object_pages natively (exit %d, signal %d):\n%s%s", native.code, native.sig, native.out, native.err);
	cr_assert(shim.exited && shim.code == 0 && sscanf(shim.out, "faults %ld", &s) == 1,
		  "object_pages under the shim (exit %d, signal %d):\n%s%s", shim.code, shim.sig, shim.out, shim.err);
	cr_assert(s <= n + 256, "%ld page faults under the shim, %ld natively, while two threads took 4,000 fresh "
		  "mutexes: the shim's memory came a page at a time", s, n);
}

/* `convoy run --json` of the test program prog: its report. */
static json_object *run_json_env(const char *prog, const char *const *env)
{
	struct tu_proc p;
	struct tu_opts o = { .timeout_s = 60, .env = env };
	tu_run(&p, &o, (const char *[]){ tu_convoy(), "run", "--json", "-o", tu_tmpdir(), "--", tu_prog(prog), NULL });
	json_object *root = json_tokener_parse(p.out);
	cr_assert(root, "%s: no JSON report (exit %d):\n%s\n%s", prog, p.code, p.out, p.err);
	return root;
}

static json_object *run_json(const char *prog)
{
	return run_json_env(prog, NULL);
}

/* Whether a lock-order cycle over exactly the locks named a and b is among
 * the findings. */
static bool has_cycle(json_object *root, const char *a, const char *b)
{
	json_object *f = tu_array(root, "findings");
	for (size_t i = 0; i < json_object_array_length(f); i++) {
		json_object *x = json_object_array_get_idx(f, i);
		json_object *objs = tu_array(x, "objects");
		if (strcmp(tu_str(x, "kind"), "lock-order-cycle") || json_object_array_length(objs) != 2)
			continue;
		const char *p = json_object_get_string(json_object_array_get_idx(objs, 0));
		const char *q = json_object_get_string(json_object_array_get_idx(objs, 1));
		if ((!strcmp(p, a) && !strcmp(q, b)) || (!strcmp(p, b) && !strcmp(q, a)))
			return true;
	}
	return false;
}

/* Nested acquisitions stay on the fast path once their lock-order edges
 * were looked up for the same held set; a different set below the same
 * slot, or a set that lost a lock out of order, must be looked up again
 * (tests/progs/order_memo.c). */
Test(fastpath, a_nested_lock_taken_under_a_different_held_set_still_gives_its_edges, .timeout = 60)
{
	json_object *root = run_json("order_memo");
	const char *findings = json_object_to_json_string(tu_array(root, "findings"));
	cr_assert(has_cycle(root, "memo_b", "memo_c"), "no cycle memo_b, memo_c: %s", findings);
	cr_assert(has_cycle(root, "memo_d", "memo_e"), "no cycle memo_d, memo_e: %s", findings);
	cr_assert(has_cycle(root, "memo_f", "memo_h"), "no cycle memo_f, memo_h: %s", findings);
	cr_assert(has_cycle(root, "memo_j", "memo_s"), "no cycle memo_j, memo_s (a spinlock): %s", findings);
	cr_assert(has_cycle(root, "memo_l", "memo_r"), "no cycle memo_l, memo_r (an rwlock): %s", findings);
	const char *edges = json_object_to_json_string(tu_get(root, "lock_order"));
	cr_assert(tu_has_edge(root, "ooo_a1", "ooo_d1"), "no edge ooo_a1 -> ooo_d1 (a spinlock): %s", edges);
	cr_assert(tu_has_edge(root, "ooo_a2", "ooo_d2"), "no edge ooo_a2 -> ooo_d2 (a read lock): %s", edges);
	cr_assert(tu_has_edge(root, "ooo_a3", "ooo_d3"), "no edge ooo_a3 -> ooo_d3 (a mutex): %s", edges);
	cr_assert(tu_has_edge(root, "rec_x", "rec_r"), "no edge rec_x -> rec_r: %s", edges);
	json_object_put(root);
}

/* order_memo_signal's report (tests/progs/order_memo_signal.c): its
 * stdout on stderr, "ok: " in it; NULL when ptrace is not allowed here.
 * No CPU samples: the trials must take the same path each time, and the
 * sampler's watchpoints would trap in them. */
static json_object *memo_signal_report(const char *mode)
{
	struct tu_proc p;
	static const char *const env[] = { "CONVOY_HOLD_SAMPLE=1073741824", NULL };   /* no hold-time samples */
	struct tu_opts o = { .timeout_s = 240, .env = env };
	tu_run(&p, &o, (const char *[]){ tu_convoy(), "run", "--json", "--sample-hz", "0", "-o", tu_tmpdir(), "--",
					 tu_prog("order_memo_signal"), mode, NULL });
	if (strstr(p.err, "ptrace is not allowed here"))
		return NULL;
	json_object *root = json_tokener_parse(p.out);
	cr_assert(root && strstr(p.err, "ok: "), "order_memo_signal %s (exit %d):\n%s\n%s", mode ? mode : "",
		  p.code, p.out, p.err);
	return root;
}

/* A signal handler that returns holding a lock, at each instruction of a
 * lock-order lookup and its memo (tests/progs/order_memo_signal.c: 458
 * trials, 1 s idle): the memo is of the set the lookup read, or none.
 * Until this test it was of the set after the lookup, the handler's lock
 * in it: x -> o was never looked up, and the memo hid it from every later
 * acquisition of o under the same set (14 of 361 trials lost it). The
 * locks are picked by their cache entries, so that every run takes the
 * same path (16 of 64 runs diverged before: helper-78). */
Test(fastpath, a_handler_that_returns_holding_a_lock_leaves_no_memo_of_edges_not_looked_up, .timeout = 300)
{
	json_object *root = memo_signal_report(NULL);
	if (!root)
		cr_skip_test("ptrace is not allowed here");
	json_object *edges = tu_get(tu_get(root, "lock_order"), "edges");
	size_t n = json_object_array_length(edges), in_set = 0;
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(edges, i);
		const char *from = tu_str(e, "from"), *to = tu_str(e, "to");
		if (strncmp(from, "oms_x", 5) || strncmp(to, "oms_y", 5))
			continue;
		in_set++;   /* the handler's lock was in the held set when o was taken again */
		cr_assert(tu_has_edge(root, from, "oms_o"), "no edge %s -> oms_o: a memo hid it (%s -> %s is there)",
			  from, from, to);
	}
	cr_assert(in_set > 100, "only %zu trials left the handler's lock in the held set", in_set);
	json_object_put(root);
}

/* Two handlers in one lookup: the first releases L, the second takes it
 * back as the lookup returns. The set after is the set before, but the
 * lookup read it without L: a memo keyed by the set before or after
 * claimed L -> o (helper-77's case, older than the memo's first fix). */
Test(fastpath, a_lock_released_and_taken_back_during_a_lookup_leaves_no_memo_of_its_edges, .timeout = 120)
{
	json_object *root = memo_signal_report("aba");
	if (!root)
		cr_skip_test("ptrace is not allowed here");
	cr_assert(tu_has_edge(root, "aba_l", "aba_y"), "L was not in the held set: the case did not happen: %s",
		  json_object_to_json_string(tu_get(root, "lock_order")));
	cr_assert(tu_has_edge(root, "aba_l", "oms_o"), "no edge aba_l -> oms_o: a memo hid it: %s",
		  json_object_to_json_string(tu_get(root, "lock_order")));
	json_object_put(root);
}

/* A lock released right after a signal handler forked leaves the held
 * set (tests/progs/fork_in_handler.c): x -> each lock, and nothing from
 * them to x. */
Test(fastpath, locks_released_after_a_handler_forked_leave_the_held_set, .timeout = 60)
{
	json_object *root = run_json("fork_in_handler");
	const char *edges = json_object_to_json_string(tu_get(root, "lock_order"));
	static const char *const held[] = { "fih_a", "fih_r", "fih_s" };
	for (int i = 0; i < 3; i++) {
		cr_assert(tu_has_edge(root, "fih_x", held[i]), "no edge fih_x -> %s: %s", held[i], edges);
		cr_assert(!tu_has_edge(root, held[i], "fih_x"), "a false edge %s -> fih_x: %s", held[i], edges);
	}
	json_object_put(root);
}

/* A thread 20 mutexes deep (past the 16 its held set tracks), three times,
 * letting them go newest first, from the 16th, and oldest first, then x
 * and y under it (tests/progs/held_deep.c): an edge from each of the 16
 * tracked locks to every lock taken after it, none from the untracked
 * four or to an older lock (a slot left in the set by an unlock gave
 * those), and nothing stale in the set afterwards (x -> y the only edge
 * in or out of x and y); a mutex at an odd address released out of order
 * leaves the set as any other (no edge into a lock taken alone after). With every hold timed (CONVOY_HOLD_SAMPLE=1), every
 * unlock takes the paths past the fast one's single test. */
static void held_deep_edges(const char *const *env)
{
	json_object *root = run_json_env("held_deep", env);
	const char *edges = json_object_to_json_string(tu_get(root, "lock_order"));
	for (int i = 0; i < 20; i++) {   /* tests/progs/held_deep.c: DEEP */
		for (int j = 0; j < 20; j++) {
			char a[16], b[16];
			snprintf(a, sizeof a, "deep_%d", i);
			snprintf(b, sizeof b, "deep_%d", j);
			bool real = i < j && i < 16;
			cr_assert(i == j || tu_has_edge(root, a, b) == real, "edge %s -> %s %s: %s", a, b,
				  real ? "missing" : "false", edges);
		}
	}
	cr_assert(tu_has_edge(root, "deep_x", "deep_y"), "no edge deep_x -> deep_y: %s", edges);
	json_object *list = tu_array(tu_get(root, "lock_order"), "edges");
	size_t n = json_object_array_length(list), touching = 0;
	for (size_t k = 0; k < n; k++) {
		json_object *e = json_object_array_get_idx(list, k);
		touching += !strncmp(tu_str(e, "from"), "deep_x", 6) || !strncmp(tu_str(e, "to"), "deep_x", 6) ||
			    !strncmp(tu_str(e, "from"), "deep_y", 6) || !strncmp(tu_str(e, "to"), "deep_y", 6);
	}
	TU_EQ(touching, 1, "edges in or out of deep_x and deep_y: %s", edges);
	cr_assert(tu_has_edge(root, "odd_a", "odd_b"), "no edge odd_a -> odd_b: %s", edges);
	cr_assert(!tu_has_edge(root, "odd_a", "odd_c") && !tu_has_edge(root, "odd_b", "odd_c"),
		  "an edge into odd_c, taken alone: %s", edges);
	json_object_put(root);
}

Test(fastpath, a_thread_past_its_held_set_keeps_its_edges_and_ends_empty, .timeout = 60)
{
	held_deep_edges(NULL);
}

Test(fastpath, a_thread_past_its_held_set_with_every_hold_timed, .timeout = 60)
{
	held_deep_edges((const char *const[]){ "CONVOY_HOLD_SAMPLE=1", NULL });
}

/* A lock-order inversion whose two edges differ only in their callers
 * (tests/progs/order_two_callers.c: transfer() reached through pay_rent()
 * on one thread and refund() on another, the locks made at one site):
 * the cycle shows each edge in its own caller. */
Test(fastpath, an_inversion_reached_from_two_callers_shows_each_callers_path, .timeout = 60)
{
	json_object *root = run_json("order_two_callers");
	json_object *findings = tu_array(root, "findings"), *cycle = NULL;
	for (size_t i = 0; i < json_object_array_length(findings) && !cycle; i++) {
		json_object *x = json_object_array_get_idx(findings, i);
		if (!strcmp(tu_str(x, "kind"), "lock-order-cycle"))
			cycle = tu_array(x, "cycle");
	}
	cr_assert(cycle && json_object_array_length(cycle) == 2, "no two-edge lock-order cycle: %s",
		  json_object_to_json_string(findings));
	int pay_rent = 0, refund = 0;
	for (size_t i = 0; i < 2; i++) {
		json_object *e = json_object_array_get_idx(cycle, i);
		char both[8192];
		snprintf(both, sizeof both, "%s %s", json_object_to_json_string(tu_get(e, "holds_stack")),
			 json_object_to_json_string(tu_get(e, "wants_stack")));
		bool p = strstr(both, "pay_rent"), r = strstr(both, "refund");
		cr_assert(p != r, "edge %zu names %s: %s", i, p ? "both callers" : "neither caller", both);
		pay_rent += p;
		refund += r;
	}
	cr_assert(pay_rent == 1 && refund == 1, "the cycle's edges name pay_rent %d times and refund %d times: %s",
		  pay_rent, refund, json_object_to_json_string(cycle));
	json_object_put(root);
}

/* Hand-over-hand locking releases every lock out of order: the held set
 * stays two deep along a chain of 40, and every edge of the walk is kept
 * (tests/progs/hand_over_hand.c). */
Test(fastpath, a_hand_over_hand_walk_keeps_every_edge, .timeout = 60)
{
	json_object *root = run_json("hand_over_hand");
	for (int i = 0; i + 1 < 40; i++) {   /* tests/progs/hand_over_hand.c: CHAIN */
		char a[16], b[16];
		snprintf(a, sizeof a, "hoh_%d", i);
		snprintf(b, sizeof b, "hoh_%d", i + 1);
		cr_assert(tu_has_edge(root, a, b), "no edge %s -> %s: %s", a, b,
			  json_object_to_json_string(tu_get(root, "lock_order")));
		cr_assert(tu_has_edge(root, b, a), "no edge %s -> %s", b, a);
	}
	json_object_put(root);
}
