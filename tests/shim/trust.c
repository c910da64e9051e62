/* The shim never harms the program it runs inside: signal handlers, fork,
 * small stacks, file descriptors, pthread keys, errno and memory behave as
 * without it (issue 9). Each program runs natively and under the shim; the
 * two runs must agree on exit status and output. Nothing here depends on
 * timing: the programs do a fixed amount of work, and timeouts are generous
 * limits on completion only. */
#include <elf.h>
#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "convoy/profile.h"
#include "testutil.h"

#define SLOW_TIMEOUT_S 120   /* a hang shows as a timeout; a busy machine never does */

struct both { struct tu_proc native, shim; const char *dir; };

/* Runs argv natively and under the shim (CONVOY_QUIET=1, plus env) and
 * asserts both ended the same way with the same stdout. */
static void run_both(struct both *b, const char *const argv[], const char *const *env)
{
	b->dir = tu_tmpdir();
	struct tu_opts native = { .env = env, .timeout_s = SLOW_TIMEOUT_S };
	struct tu_opts shim = { .preload = true, .dir = b->dir, .quiet = true, .env = env,
				.timeout_s = SLOW_TIMEOUT_S };
	tu_run(&b->native, &native, argv);
	tu_run(&b->shim, &shim, argv);
	const char *name = argv[0];
	cr_assert(!b->shim.timed_out, "%s under the shim did not finish in %d s (a hang); stderr:\n%s",
		  name, SLOW_TIMEOUT_S, b->shim.err);
	cr_assert(b->native.exited == b->shim.exited && b->native.code == b->shim.code &&
		  b->native.sig == b->shim.sig,
		  "%s: natively %s %d, under the shim %s %d (%s); stderr:\n%s", name,
		  b->native.exited ? "exit" : "signal", b->native.exited ? b->native.code : b->native.sig,
		  b->shim.exited ? "exit" : "signal", b->shim.exited ? b->shim.code : b->shim.sig,
		  b->shim.exited ? "" : strsignal(b->shim.sig), b->shim.err);
	cr_assert(strcmp(b->native.out, b->shim.out) == 0,
		  "%s: stdout differs.\n--- native\n%s--- under the shim\n%s", name, b->native.out, b->shim.out);
}

/* run_both, then: the shim's run ended with code, and left `profiles`
 * profiles (a write the end cut short leaves none). */
static void ends_with(const char *const argv[], int code, size_t profiles, const char *what)
{
	struct both b;
	run_both(&b, argv, NULL);
	tu_assert_exit(&b.shim, code, what);
	size_t n;
	tu_profiles(b.dir, &n);
	TU_EQ(n, profiles, "profiles after %s", what);
}

static void same_prog(struct both *b, const char *prog, const char *const *env)
{
	const char *argv[] = { tu_prog(prog), NULL };
	run_both(b, argv, env);
	cr_assert(b->native.exited && b->native.code == 0, "%s natively: status %d; stderr:\n%s", prog,
		  b->native.code, b->native.err);
}

/* A program built with clang's AddressSanitizer: its runtime, linked
 * into the executable, defines __pthread_mutex_lock and the other
 * functions it intercepts ahead of glibc's, and its pointers to glibc's
 * are still null when the shim starts. The shim's start-up probe called
 * __pthread_mutex_lock by name, which bound there: a SIGSEGV before main
 * (helper-111). */
Test(trust, a_program_built_with_clangs_address_sanitizer_runs_and_is_counted)
{
	struct both b;
	same_prog(&b, "clang_asan", NULL);
	cr_assert(tu_has_line(b.shim.out, "total: 10000"), "%s", b.shim.out);
	json_object *locks = tu_array(tu_report_dir(b.dir), "locks");
	int64_t counted = -1;
	for (size_t i = 0; i < json_object_array_length(locks); i++)
		if (tu_int(json_object_array_get_idx(locks, i), "acquisitions") == 4000)
			counted = 4000;
	TU_EQ(counted, 4000, "acquisitions of the program's mutex (4 threads, 1,000 each)");
}

/* The shim links only the C library: zlib (for the profile's checksum) and
 * libgcc_s (for -fexceptions' cleanups) were DT_NEEDED, so a program that
 * looked found deflate and _Unwind_Backtrace in its global scope; later
 * libgcc_s was opened RTLD_LOCAL for the unwinder, and a program that
 * asked found it loaded. */
Test(trust, the_shim_adds_nothing_to_the_global_scope)
{
	struct both b;
	same_prog(&b, "global_scope", NULL);
	cr_assert(tu_has_line(b.native.out, "deflate in the global scope: no"), "%s", b.native.out);
	cr_assert(tu_has_line(b.native.out, "_Unwind_Backtrace in the global scope: no"), "%s", b.native.out);
	cr_assert(tu_has_line(b.native.out, "libgcc_s.so.1 loaded: no"), "%s", b.native.out);
}

/* The shim's memory is its own (alloc.c): a program that never calls
 * malloc has no heap natively, and had one under the shim, made at start-up
 * by the C library on the shim's behalf (a failed dlvsym, a dlopen of
 * libc.so.6 to ask dlvsym). */
Test(trust, the_shim_makes_no_heap_in_a_program_that_never_allocates)
{
	struct both b;
	same_prog(&b, "no_heap", NULL);
	cr_assert(tu_has_line(b.native.out, "heap bytes: 0"), "%s", b.native.out);
}

/* mutex.c takes normal, adaptive, recursive and errorcheck mutexes
 * itself in a process with threads: glibc's lock word, owner, user count
 * and recursive count must come out as glibc's own functions leave them,
 * with the same results, through a trylock from another thread, a condvar
 * wait, an owner's relock, an unlock by another thread, a destroy, a lock
 * after the shim saw the thread end (the owner was 0), a fork child, a
 * relock that would wrap the count, and a process-shared mutex that a
 * fork child waits for (which the shim leaves to glibc). */
Test(trust, a_mutex_the_shim_takes_itself_is_left_as_glibc_leaves_it)
{
	struct both b;
	same_prog(&b, "mutex_state", NULL);
	cr_assert(tu_has_line(b.native.out, "key destructor"), "%s", b.native.out);
}

/* An adaptive, recursive or errorcheck mutex the shim takes when free and
 * glibc's lock takes when held (an adaptive one spins, then sleeps), a
 * recursive one relocked inside each hold, released by the shim: every
 * acquisition counted (a relock is one), and the words left as glibc
 * leaves them. */
static void contended_type(const char *type, int kind, int64_t acquisitions)
{
	struct both b;
	const char *argv[] = { tu_prog("mutex_types_contended"), type, NULL };
	run_both(&b, argv, NULL);
	cr_assert(b.native.exited && b.native.code == 0, "%s natively: status %d; stderr:\n%s", type,
		  b.native.code, b.native.err);
	char line[128];
	snprintf(line, sizeof(line), "counter 200000 lock 0 owner 0 users 0 count 0 kind %d", kind);
	cr_assert(tu_has_line(b.native.out, line), "%s", b.native.out);
	size_t n;
	char **profiles = tu_profiles(b.dir, &n);
	TU_EQ(n, 1, "profiles in %s", b.dir);
	json_object *report = tu_report(profiles[0]), *m = tu_lock(report, "mutex");
	cr_assert(m, "no row for the %s mutex in %s", type, profiles[0]);
	TU_EQ(tu_int(m, "acquisitions"), acquisitions, "the %s mutex's acquisitions", type);
	json_object_put(report);
}

Test(trust, a_contended_adaptive_mutex_is_counted_and_left_as_glibc_leaves_it, .timeout = 120)
{
	contended_type("adaptive", PTHREAD_MUTEX_ADAPTIVE_NP, 200000);
}

Test(trust, a_contended_recursive_mutex_is_counted_and_left_as_glibc_leaves_it, .timeout = 120)
{
	contended_type("recursive", PTHREAD_MUTEX_RECURSIVE, 400000);
}

Test(trust, a_contended_errorcheck_mutex_is_counted_and_left_as_glibc_leaves_it, .timeout = 120)
{
	contended_type("errorcheck", PTHREAD_MUTEX_ERRORCHECK, 200000);
}

/* spin.c takes spinlocks itself on x86 (glibc's `lock decl` from 1, and
 * its store of 1): the word must come out as glibc's own functions leave
 * it, uncontended and after a thread waited. */
Test(trust, a_spinlock_the_shim_takes_itself_is_left_as_glibc_leaves_it)
{
	struct both b;
	same_prog(&b, "spin_state", NULL);
	cr_assert(tu_has_line(b.native.out, "trylock of the held lock: EBUSY"), "%s", b.native.out);
}

/* rwlock.c takes an uncontended rwlock itself (glibc's reader fast path,
 * and its writer's on a free write phase): every word of the lock must
 * come out as glibc's own functions leave it, for each kind, through the
 * caller's EDEADLKs, a phase change and threads that wait. */
Test(trust, a_rwlock_the_shim_takes_itself_is_left_as_glibc_leaves_it)
{
	struct both b;
	same_prog(&b, "rwlock_state", NULL);
	cr_assert(tu_has_line(b.native.out, "  rdlock, wrlock by the writer: EDEADLK EDEADLK"), "%s", b.native.out);
}

/* sem.c takes a semaphore's token itself (after sem_wait's cancellation
 * test): the word, every result and errno must come out as glibc's own
 * functions leave them, with a waiter and a pending cancellation. */
Test(trust, a_semaphore_the_shim_takes_itself_is_left_as_glibc_leaves_it)
{
	struct both b;
	same_prog(&b, "sem_state", NULL);
	cr_assert(tu_has_line(b.native.out, "  cancelled wait: cancelled"), "%s", b.native.out);
}

/* With lock elision asked for (in a spelling other than "=1"), glibc
 * marks each normal mutex for elision on its first lock and then keeps no
 * owner and no user count: the shim must leave such mutexes to glibc
 * (before, destroy said EBUSY after a condvar wait). On a CPU without
 * transactional memory glibc does not elide, and the two runs agree
 * trivially. */
Test(trust, a_mutex_glibc_elides_is_left_to_glibc)
{
	static const char *const env[] = { "GLIBC_TUNABLES=glibc.elision.enable=0x1", NULL };
	struct both b;
	same_prog(&b, "mutex_state", env);
}

/* A signal handler that siglongjmps out of pthread_cond_wait, then
 * pthread_exit or a cancellation; a cancelled wait whose cleanup handler
 * calls pthread_exit. The shim's own cleanup around the wait must leave
 * nothing registered behind it (SIGSEGV in all three before). */
Test(trust, leaving_a_condvar_wait_by_a_jump_or_a_cancellation, .timeout = 120)
{
	static const char *const modes[] = { "exit", "cancel", "cleanup" };
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		const char *argv[] = { tu_prog("cond_wait_jump"), modes[i], NULL };
		struct both b;
		run_both(&b, argv, NULL);
	}
}

/* The shim takes normal mutexes, spinlocks and semaphores' tokens and posts
 * itself, and skips glibc's call for a condvar signal nobody waits for,
 * only when the next definition is glibc's. A library preloaded after it
 * (a sanitizer's runtime, another tracer) must still get every call the
 * program makes: before, it saw none of the trylocks and unlocks made
 * once the program had a thread (and, for a while, two of 2,000 posts). */
Test(trust, an_interposer_after_the_shim_sees_every_call)
{
	static const char *const runs[][3] = {   /* the interposer, the program, what the interposer saw */
		{ "libnextcount.so", "count_trylock",
		  "next: lock 1, trylock 15, unlock 6, spin lock 0, spin unlock 0, sem wait 0, trywait 0, post 0" },
		{ "libnextcount.so", "spin_pairs",
		  "next: lock 0, trylock 0, unlock 0, spin lock 2000, spin unlock 2000, sem wait 0, trywait 0, post 0" },
		{ "libnextcount.so", "sem_pairs",
		  "next: lock 0, trylock 0, unlock 0, spin lock 0, spin unlock 0, sem wait 1000, trywait 1000, post 2000" },
		{ "libnextpost.so", "sem_pairs", "next: post 2000" },
	};
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		char rel[64];
		snprintf(rel, sizeof(rel), "tests/progs/%s", runs[i][0]);
		char *lib = tu_build_path(rel), *alone = NULL, *both = NULL;
		cr_assert(asprintf(&alone, "LD_PRELOAD=%s", lib) > 0 &&
			  asprintf(&both, "LD_PRELOAD=%s %s", tu_shim(), lib) > 0);
		const char *native_env[] = { alone, NULL }, *shim_env[] = { both, "CONVOY_QUIET=1", NULL };
		const char *argv[] = { tu_prog(runs[i][1]), NULL };
		struct tu_proc native, shim;
		struct tu_opts n = { .env = native_env }, sh = { .env = shim_env, .dir = tu_tmpdir() };
		tu_run(&native, &n, argv);
		tu_run(&shim, &sh, argv);
		tu_assert_exit(&native, 0, runs[i][1]);
		tu_assert_exit(&shim, 0, runs[i][1]);
		cr_assert(tu_has_line(native.out, runs[i][2]), "%s", native.out);
		cr_assert(strcmp(native.out, shim.out) == 0, "--- %s alone\n%s--- after the shim\n%s", runs[i][0],
			  native.out, shim.out);
	}
}

/* The shim reads its clocks around waits, at a thread's start and at the
 * end: through a clock_gettime that takes a lock (libfaketimeMT's, a
 * program's own virtual clock) that lock came back into the shim, whose
 * wait read the clock again: a crash with libfaketimeMT preloaded, a
 * hang in a program with its own (helper-127). The shim reads the C
 * library's clock, or makes the system call. */
Test(trust, a_clock_gettime_that_locks_is_never_called_by_the_shim, .timeout = 120)
{
	/* The program's own, whose lock a worker waits for. */
	const char *argv[] = { tu_prog("clock_locked"), NULL };
	char *alone = NULL;
	cr_assert(asprintf(&alone, "LD_PRELOAD=%s", tu_shim()) > 0);
	const char *shim_env[] = { alone, "CONVOY_QUIET=1", NULL };
	struct tu_proc native, shim;
	struct tu_opts n = { .timeout_s = 60 }, sh = { .env = shim_env, .dir = tu_tmpdir(), .timeout_s = 60 };
	tu_run(&native, &n, argv);
	tu_run(&shim, &sh, argv);
	tu_assert_exit(&native, 0, "clock_locked natively");
	tu_assert_exit(&shim, 0, "clock_locked under the shim");
	cr_assert(tu_has_line(native.out, "clock_locked: 2 calls"), "%s", native.out);
	cr_assert(strcmp(native.out, shim.out) == 0, "--- native\n%s--- under the shim\n%s", native.out, shim.out);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* libwrapcount.so's lines in out ("wrapcount: ...", one per process
 * that ended through exit), sorted: a fork's lines come in either order. */
static char *wrapcount_lines(const char *out)
{
	char *lines[64];
	size_t n = 0, len = 0;
	for (const char *at = out; (at = strstr(at, "wrapcount:")) && n < 64; at++) {
		size_t k = strcspn(at, "\n");
		lines[n++] = strndup(at, k);
		len += k + 1;
	}
	qsort(lines, n, sizeof(lines[0]), cmp_str);
	char *all = calloc(1, len + 1);
	for (size_t i = 0; i < n; i++) {
		strcat(strcat(all, lines[i]), "\n");
		free(lines[i]);
	}
	return all;
}

/* Every system call the shim makes for itself goes to the kernel, never
 * through a C library wrapper that the program or a library preloaded
 * after the shim may define (shim.h, cv__sys6): libwrapcount.so defines
 * them (its clock_gettime and syscall() take a lock, as libfaketimeMT's
 * do) and counts their calls, which must be the program's own, as
 * without the shim: through threads and waits, stacks read at a wait, a
 * fork in a signal handler and in a handler's child, forks, exits from
 * a thread, OpenMP, and the profile's write. */
Test(trust, the_shim_never_calls_a_wrapper_the_program_may_define, .timeout = 240)
{
	static const char *const progs[] = { "count_two_threads", "pending_waits", "fork_in_handler",
					     "handler_fork_child", "churn_fork",
					     "exit_from_thread", "count_omp" };
	const char *lib = tu_build_path("tests/progs/libwrapcount.so");
	char *alone = NULL, *both = NULL;
	cr_assert(asprintf(&alone, "LD_PRELOAD=%s", lib) > 0 && asprintf(&both, "LD_PRELOAD=%s %s", tu_shim(), lib) > 0);
	const char *native_env[] = { alone, NULL }, *shim_env[] = { both, "CONVOY_QUIET=1", NULL };
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		const char *argv[] = { tu_prog(progs[i]), NULL };
		struct tu_proc native, shim;
		struct tu_opts n = { .env = native_env, .timeout_s = 60 },
			       sh = { .env = shim_env, .dir = tu_tmpdir(), .timeout_s = 60 };
		tu_run(&native, &n, argv);
		tu_run(&shim, &sh, argv);
		cr_assert(native.exited, "%s", progs[i]);
		tu_assert_exit(&shim, native.code, progs[i]);   /* exit_from_thread's is 7 */
		char *calls = wrapcount_lines(native.out), *shim_calls = wrapcount_lines(shim.out);
		cr_assert(calls[0], "%s: no count\n%s", progs[i], native.out);
		cr_assert(strcmp(calls, shim_calls) == 0, "%s\n--- without the shim\n%s--- under it\n%s", progs[i], calls,
			  shim_calls);
		free(calls);
		free(shim_calls);
	}
}

/* Valgrind's thread checkers see a mutex held only through glibc's
 * functions, which they wrap; the shim's fast paths take glibc's mutexes
 * themselves, so under the shim Helgrind and DRD saw no lock held and
 * failed a clean program (helper-129). The shim stands aside under
 * Valgrind, says so once, and writes no profile. */
Test(trust, valgrind_checks_a_program_as_without_the_shim, .timeout = 120)
{
	static const char *const tools[] = { "--tool=helgrind", "--tool=drd" };
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		const char *argv[] = { "/usr/bin/valgrind", "-q", tools[i], "--error-exitcode=9", tu_prog("count_holds"),
				       NULL };
		char *dir = tu_tmpdir();
		struct tu_proc native, shim;
		struct tu_opts n = { .timeout_s = 60 }, sh = { .preload = true, .dir = dir, .timeout_s = 60 };
		tu_run(&native, &n, argv);
		tu_run(&shim, &sh, argv);
		tu_assert_exit(&native, 0, tools[i]);
		tu_assert_exit(&shim, 0, tools[i]);
		cr_assert(strcmp(native.out, shim.out) == 0, "%s\n--- without the shim\n%s--- with it\n%s", tools[i],
			  native.out, shim.out);
		cr_assert(strstr(shim.err, "convoy: this process runs under Valgrind") && !strstr(native.err, "convoy"),
			  "%s: %s", tools[i], shim.err);
		size_t nprofiles = 0;
		tu_profiles(dir, &nprofiles);
		TU_EQ(nprofiles, 0, "profiles written under Valgrind");
	}
}

Test(trust, a_key_destructor_may_call_pthread_exit, .timeout = 120)
{
	static const char *const how[] = { "return", "exit" };
	for (size_t i = 0; i < sizeof(how) / sizeof(how[0]); i++) {
		const char *argv[] = { tu_prog("key_dtor_exit"), how[i], NULL };
		struct both b;
		run_both(&b, argv, NULL);
		cr_assert(tu_has_line(b.native.out, "destructor rounds 3, thread's value 7"), "%s", b.native.out);
	}
}

/* Every wait captured, so handlers also land inside stack capture. */
static const char *const capture_all[] = { "CONVOY_STACK_FIRST=1000000", NULL };

Test(trust, a_signal_handler_may_lock_a_mutex_and_signal_a_condvar, .timeout = 300)
{
	struct both b;
	same_prog(&b, "signal_lock", capture_all);
	json_object_put(tu_report_dir(b.dir));   /* written whole, and it loads */
}

/* Two threads take 300 mutexes and 300 rwlocks in turn, more than their
 * caches hold: nearly every acquisition looks its record up in the
 * thread's table under the quiet guard (preload/objects.c,
 * cv__lookup_slow), while the handler's locks, new to the thread at first,
 * make records and grow that table. Every acquisition of the threads' own
 * locks is counted, once. */
Test(trust, a_signal_handler_may_lock_while_its_thread_looks_a_record_up, .timeout = 300)
{
	struct both b;
	same_prog(&b, "signal_many_locks", NULL);
	cr_assert(tu_has_line(b.native.out, "acquisitions 3600000"), "%s", b.native.out);
	json_object *report = tu_report_dir(b.dir), *locks = tu_array(report, "locks");
	size_t mutexes = 0, rwlocks = 0;
	for (size_t i = 0; i < json_object_array_length(locks); i++) {
		json_object *lock = json_object_array_get_idx(locks, i);
		const char *name = tu_str(lock, "name");
		bool mutex = strncmp(name, "many_mutexes[", 13) == 0, rwlock = strncmp(name, "many_rwlocks[", 13) == 0;
		if (mutex || rwlock)
			TU_EQ(tu_int(lock, "acquisitions"), 2 * 3000, "%s acquisitions", name);
		mutexes += mutex;
		rwlocks += rwlock;
	}
	TU_EQ((int64_t)mutexes, 300, "many_mutexes[] in the report");
	TU_EQ((int64_t)rwlocks, 300, "many_rwlocks[] in the report");
	json_object_put(report);
}

/* A handler forks, often while its thread is inside the shim's guard
 * (200 mutexes in turn: most acquisitions look their record up), and the
 * child takes child_lock 1,000 times: each child's profile has all of
 * them. The guard's leave put back the state its enter had seen, the
 * parent's, on no list of the child's: 28 of 60 children lost every lock
 * (helper-89); then a fork between the leave's load and its store, 1 in
 * 60, the child's first lock (shim.h, cv__install_own). */
Test(trust, a_child_forked_by_a_handler_inside_the_shim_counts_its_locks, .timeout = 300)
{
	struct both b;
	same_prog(&b, "handler_fork_child", NULL);
	cr_assert(tu_has_line(b.native.out, "children 60, failed 0"), "%s", b.native.out);
	size_t n, counted = 0;
	char **profiles = tu_profiles(b.dir, &n);
	TU_EQ(n, 61, "profiles in %s: the parent's and its children's", b.dir);
	for (size_t i = 0; i < n; i++) {
		json_object *report = tu_report(profiles[i]), *child = tu_lock(report, "child_lock");
		if (child) {
			TU_EQ(tu_int(child, "acquisitions"), 1000, "child_lock in %s", profiles[i]);
			counted++;
		}
		json_object_put(report);
	}
	TU_EQ((int64_t)counted, 60, "profiles with child_lock");
}

/* The handler's init and destroy meet the interrupted code's in the shim's
 * bookkeeping (a hang on the shim's init lock before). */
Test(trust, a_signal_handler_may_initialise_and_destroy_its_own_locks, .timeout = 300)
{
	struct both b;
	same_prog(&b, "signal_init", NULL);
	same_prog(&b, "signal_init", capture_all);
}

/* siglongjmp out of a handler that interrupted init or destroy (a shim
 * lock left held before, and the next destroy spun for ever), and the
 * thread is still counted after: its 1,000 later locks were lost before
 * the trampoline deferred signals that came inside the shim's reentrancy
 * guard (a jump out of the guard left it raised, the thread untracked). */
Test(trust, a_signal_handler_may_jump_out_of_init_and_destroy, .timeout = 300)
{
	struct both b;
	same_prog(&b, "signal_longjmp", NULL);
	json_object *r = tu_report_dir(b.dir);
	TU_EQ(tu_int(tu_lock(r, "main::after"), "acquisitions"), 1000, "the locks after the jumps");
	json_object_put(r);
}

/* A library's fork handler runs inside the shim's fork window, where the
 * program's signal handlers run as without the shim
 * (tests/progs/fork_handler_signals.c): a raise there runs its handler
 * before it returns, and a thread that holds the lock the handler waits
 * for sees the forking thread's handler run (the shim's guard deferred
 * both, and the second was a deadlock: helper-142); a handler's fork
 * there leaves the window open (it closed it: helper-143); a handler's
 * jump out of the window, then another fork, leaves the thread's signals
 * running (the second fork closed the guard the jump left: every later
 * signal deferred for good, helper-143). The same output as natively, and
 * natively what each mode is about. */
Test(trust, signal_handlers_run_in_the_fork_window_as_without_the_shim, .timeout = 120)
{
	static const struct { const char *mode, *line; } cases[] = {
		{ "lock", "holder: the forking thread's handler ran" },
		{ "nested", "prepare: a nested fork 1; raise(SIGUSR1) ran its handler 1 time(s); SIGUSR1 then blocked 0, "
			    "pending 0; blocked after the fork 1" },
		{ "jump", "after a second fork: raise(SIGUSR1) ran its handler 1 time(s); SIGUSR1 blocked 0" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *argv[] = { tu_prog("fork_handler_signals"), cases[i].mode, NULL };
		struct both b;
		run_both(&b, argv, NULL);
		tu_assert_exit(&b.native, 0, cases[i].mode);
		cr_assert(tu_has_line(b.native.out, cases[i].line), "%s natively: %s", cases[i].mode, b.native.out);
	}
}

/* A handler the trampoline does not wrap (a library's, installed before
 * the shim started) siglongjmps out of the shim's bookkeeping, and the
 * program's own handler still runs after (the guard, left raised,
 * deferred every later signal of the thread for good: helper-142;
 * tests/progs/jump_before_shim.c). */
Test(trust, a_jump_by_a_handler_the_shim_does_not_wrap_leaves_the_others_running, .timeout = 120)
{
	struct both b;
	same_prog(&b, "jump_before_shim", NULL);
	const char *want = "raise(SIGUSR1): its handler ran 1 time(s); SIGUSR1 blocked after: 0";
	cr_assert(tu_has_line(b.native.out, want), "natively: %s", b.native.out);
	cr_assert(tu_has_line(b.shim.out, want), "under the shim: %s", b.shim.out);
}

/* siglongjmp out of a semaphore's first post, the shim's guarded slow
 * path: the thread's cancellation state and type are the program's after
 * it (the guard's disable of cancellation was never undone before, and
 * the thread could not be cancelled). */
Test(trust, a_jump_out_of_the_shim_leaves_the_threads_cancellation_alone, .timeout = 300)
{
	struct both b;
	same_prog(&b, "longjmp_cancel", NULL);
	for (int i = 0; i < 2; i++) {
		char want[64];
		snprintf(want, sizeof(want), "thread %d: cancel state enable, type deferred", i);
		cr_assert(tu_has_line(b.shim.out, want), "%s", b.shim.out);
	}
	cr_assert(tu_has_line(b.shim.out, "cancelled: 2 of 2"), "%s", b.shim.out);
}

/* siglongjmp out of a blocked pthread_mutex_lock: the shim's wait never
 * reaches its end, and the thread goes on. Its frame no longer holds the
 * wait's start, so the profile has no wait of it in progress (helper-111:
 * 3.75 s of a 4 s run read as blocked, and the stack's unexplained share
 * went to -44 %). */
Test(trust, a_wait_left_by_a_jump_is_not_in_progress_at_exit, .timeout = 60)
{
	struct both b;
	same_prog(&b, "jump_out_of_wait", NULL);
	cr_assert(tu_has_line(b.shim.out, "jumped out of the wait"), "%s", b.shim.out);
	json_object *r = tu_report_dir(b.dir);
	TU_EQ(tu_int(tu_main_thread(r), "lock_wait_ns"), 0, "the main thread's lock wait (it never acquired the lock)");
	TU_LE(0, tu_int(tu_get(r, "stack"), "unexplained"), "the stack's unexplained time");
}

/* A deadlock whose SIGTERM handler calls exit() on a blocked thread: both
 * waits are live, and the profile keeps them (helper-113: a first fix that
 * cleared the exiting thread's wait lost this deadlock), also once the
 * main thread has called pthread_exit (helper-114: the frames read
 * through the process's id, which then names a thread gone, lost it). */
Test(trust, a_deadlocked_thread_whose_handler_exits_is_still_waiting, .timeout = 60)
{
	static const char *const modes[] = { "main", "workers" };
	for (size_t m = 0; m < 2; m++) {
		struct tu_proc p;
		char *dir = tu_tmpdir();
		tu_run_shim(&p, dir, "deadlock_term_exit", modes[m], NULL);
		tu_assert_exit(&p, 3, modes[m]);
		json_object *r = tu_report_dir(dir);
		TU_EQ(tu_int(tu_get(r, "process"), "inflight_waits"), 2, "%s: waits in progress at the write", modes[m]);
		json_object *findings = tu_array(r, "findings");
		bool deadlock = false;
		for (size_t i = 0; i < json_object_array_length(findings); i++)
			deadlock = deadlock ||
				   strcmp(tu_str(json_object_array_get_idx(findings, i), "kind"), "deadlock") == 0;
		cr_assert(deadlock, "%s: no deadlock finding: %s", modes[m], json_object_to_json_string(findings));
	}
}

/* The shim's guard leaves the program's cancellation state alone, so
 * nothing the shim calls may be a cancellation point: a pending cancel
 * would unwind the thread out of its bookkeeping (and out of _exit or
 * exec, whose profile it writes). glibc's cancellation points (its manual,
 * POSIX's list and glibc's additions), against what libconvoy.so imports. */
Test(trust, the_shim_calls_no_cancellation_point_of_glibcs, .timeout = 60)
{
	static const char *const points[] = {
		"accept", "accept4", "aio_suspend", "clock_nanosleep", "close", "connect", "copy_file_range",
		"creat", "creat64", "epoll_pwait", "epoll_pwait2", "epoll_wait", "fclose", "fcntl64_cancel",
		"fdatasync", "fflush", "fgets", "fopen", "fopen64", "fprintf", "fputc", "fputs", "fread",
		"fsync", "fwrite", "getc", "getline", "getrandom", "lockf", "lockf64", "mq_receive",
		"mq_send", "mq_timedreceive", "mq_timedsend", "msgrcv", "msgsnd", "msync", "nanosleep",
		"open", "open64", "openat", "openat64", "pause", "perror", "poll", "ppoll", "pread",
		"pread64", "preadv", "preadv2", "preadv64", "preadv64v2", "printf", "pselect", "putc",
		"putchar", "puts", "pwrite", "pwrite64", "pwritev", "pwritev2", "pwritev64", "pwritev64v2",
		"read", "readv", "recv", "recvfrom", "recvmmsg", "recvmsg", "select", "send", "sendmmsg",
		"sendmsg", "sendto", "sigpause", "sigsuspend", "sigtimedwait", "sigwait", "sigwaitinfo",
		"sleep", "sync_file_range", "syslog", "system", "tcdrain", "usleep", "vfprintf", "vprintf",
		"vsyslog", "wait", "wait3", "wait4", "waitid", "waitpid", "write", "writev",
		"pthread_cond_clockwait", "pthread_cond_timedwait", "pthread_cond_wait", "pthread_join",
		"pthread_clockjoin_np", "pthread_timedjoin_np", "pthread_testcancel", "sem_clockwait",
		"sem_timedwait", "sem_wait", "dprintf", "vdprintf", "fflush_unlocked", "fputs_unlocked",
		"fwrite_unlocked", "__fprintf_chk", "__printf_chk", "__vfprintf_chk", "__vprintf_chk",
		"__dprintf_chk", "__vdprintf_chk", "__read_chk", "__pread_chk", "__pread64_chk",
	};
	/* pthread_testcancel: the program's own cancellation point, where
	 * glibc's sem_wait makes it (first, before any bookkeeping: sem.c). */
	static const char *const allowed[] = { "pthread_testcancel" };
	const char *argv[] = { "/usr/bin/nm", "-D", "--undefined-only", tu_shim(), NULL };
	struct tu_proc nm;
	struct tu_opts opts = { .timeout_s = 60 };
	tu_run(&nm, &opts, argv);
	tu_assert_exit(&nm, 0, "nm -D --undefined-only libconvoy.so");
	int imports = 0;
	for (char *line = nm.out; line && *line; ) {
		char *next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		char *name = strrchr(line, ' ');
		name = name ? name + 1 : line;
		name[strcspn(name, "@")] = '\0';
		imports++;
		bool listed = false, allowed_here = false;
		for (size_t i = 0; i < sizeof(points) / sizeof(points[0]); i++)
			listed = listed || strcmp(name, points[i]) == 0;
		for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
			allowed_here = allowed_here || strcmp(name, allowed[i]) == 0;
		cr_expect(!listed || allowed_here,
			  "libconvoy.so imports %s, a cancellation point: make the system call (shim.h, cv__sys)", name);
		line = next;
	}
	cr_assert(imports > 50, "nm listed %d imports:\n%s", imports, nm.out);
}

/* A pending deferred cancel, then _exit or exec from that thread: the
 * profile is written on the way, and nothing the shim does there acts on
 * the cancel (before, getrandom in the profile's name unwound the thread
 * out of _exit and exec, and the process went on). */
Test(trust, a_pending_cancel_does_not_stop_exit_or_exec, .timeout = 120)
{
	static const struct { const char *how; int code; size_t profiles; } cases[] = {
		{ "_exit", 3, 1 }, { "exec", 4, 2 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *argv[] = { tu_prog("cancel_then_exit"), cases[i].how, NULL };
		ends_with(argv, cases[i].code, cases[i].profiles, cases[i].how);
	}
}

/* _exit from a handler on a small alternate stack: the profile is
 * written on a stack of the shim's own (it was written on the handler's
 * and overflowed it: SIGSEGV instead of exit 6). */
Test(trust, exit_from_a_handler_on_a_small_stack_still_exits, .timeout = 120)
{
	static const char *const where[] = { "main", "worker" };
	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		const char *argv[] = { tu_prog("exit_on_small_stack"), "8192", where[i], NULL };
		ends_with(argv, 6, 1, where[i]);
	}
}

/* exit from a handler on a 6 KiB alternate signal stack carved from a
 * frame on the main thread's stack: the destructor's write may run on the
 * caller's stack, but not on this one, whose end the thread's bounds do
 * not show (preload/alloc.c, room_here). Stopped at its exit, the child
 * has every byte below that stack as it left them. "raw": a stack set
 * with SS_AUTODISARM and a handler installed with a raw rt_sigaction,
 * where no trampoline of the shim's notes the stack: at cc78f1d the write
 * ran there and changed 116 to 665 of those bytes (helper-119). */
Test(trust, exit_from_a_handler_on_a_carved_signal_stack_writes_nothing_below_it, .timeout = 60)
{
	static const char *const modes[] = { "plain", "autodisarm", "raw" };
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		struct tu_proc p;
		struct tu_opts o = { .preload = true, .dir = tu_tmpdir(), .quiet = true };
		tu_run(&p, &o, (const char *[]){ tu_prog("exit_on_carved_altstack"), modes[i], NULL });
		if (p.exited && p.code == 77)
			cr_skip_test("%s", p.out);
		tu_assert_exit(&p, 0, modes[i]);
		TU_STREQ(p.out, "changed 0, exit 3\n", "%s", modes[i]);
	}
}

/* exit deep in the main thread's stack after the program lowered
 * RLIMIT_STACK to what the stack has mapped: the profile's write takes
 * none of the program's stack (the main thread's bounds, taken at
 * start-up, no longer say where it may grow: the write on the caller's
 * stack asks the limit of now), and the program exits as natively. */
Test(trust, exit_deep_under_a_lowered_stack_limit_still_exits, .timeout = 60)
{
	const char *argv[] = { tu_prog("exit_at_stack_limit"), NULL };
	ends_with(argv, 7, 1, "exit_at_stack_limit");
}

/* A seccomp filter that kills the process for any call the program does
 * not make itself: installed by the program mid-run (the profile is
 * written just before, and covers the run up to it), or set before an
 * exec (the shim stays off in the new image). Both were killed by SIGSYS
 * under the shim: gettid at a thread's start, perf_event_open at load. */
Test(trust, a_seccomp_filter_never_kills_the_program_for_a_call_of_the_shims, .timeout = 120)
{
	static const char *const modes[] = { "later", "exec" }, *const counts[] = { "count: 600000", "count: 400000" };
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		const char *argv[] = { tu_prog("seccomp_filter"), modes[i], NULL };
		struct both b;
		run_both(&b, argv, NULL);
		if (b.native.exited && b.native.code == 2)
			cr_skip_test("no seccomp filters here: %s", b.native.err);
		tu_assert_exit(&b.shim, 0, modes[i]);
		cr_assert(tu_has_line(b.shim.out, counts[i]), "%s: %s", modes[i], b.shim.out);
		json_object *r = tu_report_dir(b.dir);
		const char *exit = tu_str(tu_get(r, "process"), "exit");
		cr_assert(strstr(exit, "seccomp filter"), "%s: the profile ends \"%s\"", modes[i], exit);
		json_object_put(r);
	}
}

/* The process ends while signals keep arriving: it still exits 3, and the
 * profile is written whole: tests/progs/exit_under_signals.c says what
 * each once did. */
Test(trust, the_end_of_the_process_is_its_own_while_signals_keep_coming, .timeout = 300)
{
	static const char *const modes[] = { "altstack", "bighandler" };
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		for (int round = 0; round < 3; round++) {
			const char *argv[] = { tu_prog("exit_under_signals"), modes[i], NULL };
			ends_with(argv, 3, 1, modes[i]);
		}
}

/* Coroutines on 4 KiB stacks of their own, 2,500 and 3,300 bytes deep
 * when they lock, migrating between four threads: the shim takes no stack
 * on a stack that is not the thread's (it unwound there and overflowed
 * them), nor reads the module map there at an object's first use, and the
 * registry's growth keeps no list on the stack (3,300 overflowed until
 * 2026-12-03; natively they run to 3,900 here, under the shim to 3,500). */
Test(trust, green_threads_on_small_stacks_of_their_own, .timeout = 120)
{
	static const char *const depths[] = { "2500", "3300" };
	for (size_t i = 0; i < sizeof(depths) / sizeof(depths[0]); i++) {
		const char *argv[] = { tu_prog("green_threads"), "64", "4096", "4", depths[i], NULL };
		struct both b;
		run_both(&b, argv, NULL);
		cr_assert(tu_has_line(b.shim.out, "counter 192000"), "%s deep: %s", depths[i], b.shim.out);
	}
}

/* A coroutine on a 4 KiB stack mapped above a thread's given stack
 * (pthread_attr_setstack), locking fresh mutexes 2,500 bytes deep: the
 * shim knew only the bottom of a given stack and took the coroutine's for
 * it, and a first use's stack capture overflowed it (found by a review,
 * 2026-12-03). */
Test(trust, a_coroutine_above_a_given_stack_is_not_taken_for_it, .timeout = 120)
{
	const char *argv[] = { tu_prog("setstack_coroutine"), "2500", NULL };
	struct both b;
	run_both(&b, argv, NULL);
	tu_assert_exit(&b.native, 0, "setstack_coroutine natively");
}

/* A condvar destroyed while its woken waiter retakes the mutex inside the
 * wait, past the cap of retired objects, and a signal handler on the
 * waiter whose semaphores grow its table: the wait is the condvar's, and
 * no semaphore waited (tests/progs/cond_destroyed_in_wait.c; before
 * the wait pinned its record, the condvar's record was folded and freed
 * under the wait, and a semaphore's record that took its memory got the
 * wait: helper-139); also after two barrier waits left by a handler's
 * siglongjmp (whose pins a jump left taken: helper-140). */
Test(trust, a_condvar_destroyed_under_its_woken_waiter_keeps_the_wait, .timeout = 120)
{
	static const char *const modes[] = { "plain", "after-jumps" };
	for (size_t k = 0; k < sizeof(modes) / sizeof(modes[0]); k++) {
		const char *argv[] = { tu_prog("cond_destroyed_in_wait"), modes[k], NULL };
		struct both b;
		run_both(&b, argv, NULL);
		tu_assert_exit(&b.native, 0, modes[k]);
		cr_assert(tu_has_line(b.native.out, "posted 64"), "%s: %s", modes[k], b.native.out);
		json_object *r = tu_report_dir(b.dir);
		TU_EQ(tu_sum(r, "condvars", "waits"), 1, "%s: condvar waits", modes[k]);
		TU_EQ(tu_sum(r, "semaphores", "waits"), 0, "%s: semaphore waits (the handler only posts)", modes[k]);
		json_object_put(r);
	}
}

/* A barrier wait left by a handler's setcontext, then pthread_exit: the
 * shim registers nothing on glibc's cleanup list there, as glibc does not
 * (tests/progs/barrier_left_by_setcontext.c; a pin's cleanup left in the
 * dead frame made pthread_exit crash: helper-141). */
Test(trust, a_barrier_wait_left_by_setcontext_leaves_pthread_exit_alone, .timeout = 60)
{
	const char *argv[] = { tu_prog("barrier_left_by_setcontext"), NULL };
	struct both b;
	run_both(&b, argv, NULL);
	tu_assert_exit(&b.native, 0, "barrier_left_by_setcontext natively");
	cr_assert(tu_has_line(b.native.out, "joined"), "%s", b.native.out);
}

/* Handlers that lock a mutex other threads hold while they init, use and
 * destroy objects (the shim's critical sections), installed before the
 * threads start and while their sections are in flight. */
Test(trust, a_signal_handler_may_lock_while_other_threads_churn_objects, .timeout = 600)
{
	static const char *const when[] = { "early", "late" };
	for (size_t i = 0; i < sizeof(when) / sizeof(when[0]); i++) {
		const char *argv[] = { tu_prog("signal_churn"), when[i], NULL };
		struct both b;
		run_both(&b, argv, capture_all);
		char want[128];
		snprintf(want, sizeof(want), "handler installed %s; rounds 18000, under the shared lock 18000", when[i]);
		cr_assert(tu_has_line(b.shim.out, want), "%s", b.shim.out);
		json_object_put(tu_report_dir(b.dir));
	}
}

/* Signals sent one at a time while two threads churn objects: one that
 * lands in a critical section of the shim's waits for its end, behind
 * the trampoline (preload/signals.c), and still reaches its handler once,
 * with its siginfo (a queued real-time signal's value, code and sender),
 * or, under SA_RESETHAND, still finds the handler the kernel has just
 * taken away. The same output natively; a lost signal exits 3. */
Test(trust, a_signal_that_lands_in_a_section_reaches_its_handler_once, .timeout = 300)
{
	static const struct { const char *mode, *line; } cases[] = {
		{ "queue", "queue: 2000 of 2000 handled, values 2001000, 0 wrong" },
		{ "sysv", "sysv: 2000 of 2000 handled, values 0, 0 wrong" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *argv[] = { tu_prog("signal_values"), cases[i].mode, NULL };
		struct both b;
		run_both(&b, argv, capture_all);
		cr_assert(tu_has_line(b.shim.out, cases[i].line), "%s: %s", cases[i].mode, b.shim.out);
	}
}

Test(trust, a_signal_handler_may_fork, .timeout = 300)
{
	struct both b;
	same_prog(&b, "signal_fork", capture_all);
	cr_assert(tu_has_line(b.shim.out, "children 100 of 100 exited cleanly"), "%s", b.shim.out);
}

/* glibc runs no atfork handler for a fork made with syscall(); the shim's
 * syscall() runs its own (before the fix, about half the runs had a child
 * that waited forever for a registry lock a parent thread held). */
Test(trust, a_fork_made_with_syscall_inherits_no_held_lock_of_the_shims, .timeout = 120)
{
	struct tu_proc native, shim;
	char *dir = tu_tmpdir();
	tu_run_native(&native, "raw_fork", NULL);
	tu_run_shim(&shim, dir, "raw_fork", NULL);
	tu_assert_exit(&native, 0, "raw_fork natively");
	tu_assert_exit(&shim, 0, "raw_fork under the shim");
	TU_STREQ(shim.out, native.out, "stdout");
	cr_assert(tu_has_line(native.out, "children that exited with 7: 300 of 300"), "%s", native.out);
	cr_assert(tu_has_line(native.out, "last child: exit 0"), "%s", native.out);
	/* The last child's profile is its own (before the fix it took the
	 * parent's pid, and one of the two files replaced the other). */
	size_t n;
	char **files = tu_profiles(dir, &n);
	TU_EQ(n, 2, "profiles: the parent's and the last child's");
	int with_child_lock = 0;
	for (size_t i = 0; i < n; i++) {
		json_object *r = tu_report(files[i]);
		json_object *l = tu_find(tu_array(r, "locks"), "name", "child_lock");
		if (l) {
			with_child_lock++;
			TU_EQ(tu_int(l, "acquisitions"), 5, "child_lock in %s", files[i]);
		}
		json_object_put(r);
	}
	TU_EQ(with_child_lock, 1, "profiles with the child's lock");
}

/* libctorlock's constructor sets errno, locks before the shim's own
 * constructor ran (so the lock initialises the shim), and checks errno. */
Test(trust, errno_survives_initialisation_from_a_library_constructor, .timeout = 60)
{
	static const char *const envs[][2] = { { "CONVOY_STACK_PERIOD=100", NULL },
					       { "CONVOY_STACK_PERIOD=99999999999999999999", NULL },
					       { "CONVOY_HOLD_SAMPLE=3", NULL } };
	for (size_t i = 0; i < sizeof(envs) / sizeof(envs[0]); i++) {
		struct both b;
		same_prog(&b, "ctor_main", envs[i]);
		cr_assert(tu_has_line(b.shim.out, "constructor errno kept: yes"), "with %s:\n%s", envs[i][0],
			  b.shim.out);
	}
}

Test(trust, a_detached_thread_may_free_the_memory_holding_its_handle, .timeout = 300)
{
	struct both b;
	same_prog(&b, "detached_frees_handle", NULL);
	free(tu_only_profile(b.dir));
}

/* fd_daemon closes every descriptor from 3, opens its input and a log (3
 * and 4), takes contended locks (every wait captured, some under a frame
 * without unwind info), and copies the input to the log. */
Test(trust, the_shim_holds_no_file_descriptor, .timeout = 300)
{
	char *dir = tu_tmpdir(), in[4096], log_native[4096], log_shim[4096];
	snprintf(in, sizeof(in), "%s/input", dir);
	snprintf(log_native, sizeof(log_native), "%s/log-native", dir);
	snprintf(log_shim, sizeof(log_shim), "%s/log-shim", dir);
	unsigned char data[65536];
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 131 + (i >> 8));
	tu_write_file(in, data, sizeof(data));

	struct tu_proc native, shim;
	const char *argv_native[] = { tu_prog("fd_daemon"), in, log_native, NULL };
	const char *argv_shim[] = { tu_prog("fd_daemon"), in, log_shim, NULL };
	struct tu_opts on = { .timeout_s = SLOW_TIMEOUT_S };
	struct tu_opts os = { .preload = true, .dir = tu_tmpdir(), .quiet = true, .env = capture_all,
			      .timeout_s = SLOW_TIMEOUT_S };
	tu_run(&native, &on, argv_native);
	tu_run(&shim, &os, argv_shim);
	tu_assert_exit(&native, 0, "fd_daemon natively");
	tu_assert_exit(&shim, 0, "fd_daemon under the shim");
	cr_assert(strcmp(native.out, shim.out) == 0, "descriptors differ.\n--- native\n%s--- under the shim\n%s",
		  native.out, shim.out);
	size_t len;
	unsigned char *got = tu_read_file(log_shim, &len);
	TU_EQ(len, sizeof(data), "bytes in the log written under the shim");
	cr_assert(memcmp(got, data, len) == 0, "the log written under the shim differs from the input");
}

Test(trust, a_program_gets_every_pthread_key, .timeout = 120)
{
	struct both b;
	same_prog(&b, "keys_all", capture_all);
	cr_assert(tu_has_line(b.shim.out, "keys created: 1024 (then EAGAIN)"), "%s", b.shim.out);
	json_object *threads = tu_array(tu_report_dir(b.dir), "threads");
	TU_EQ(json_object_array_length(threads), 3, "threads[] (main and two workers)");
	int exited = 0;
	for (size_t i = 0; i < json_object_array_length(threads); i++)
		exited += tu_bool(json_object_array_get_idx(threads, i), "exited");
	TU_EQ(exited, 2, "threads whose end the shim saw (the two workers)");
}

/* Perl with ithreads: main exits while a thread still runs ("Perl exited
 * with active threads"). Perl deletes its interpreter key before exit; the
 * exit status and message must be its own, and the profile complete. */
Test(trust, perl_exiting_with_running_threads_keeps_its_status, .timeout = 300)
{
	const char *argv[] = { "/usr/bin/perl", "-Mthreads", "-e",
			       "threads->create(sub { sleep 5 }) for 1 .. 4; exit 3", NULL };
	for (int i = 0; i < 5; i++) {
		struct both b;
		run_both(&b, argv, NULL);
		tu_assert_exit(&b.native, 3, "perl natively");
		cr_assert(strcmp(b.native.err, b.shim.err) == 0, "stderr differs.\n--- native\n%s--- under the shim\n%s",
			  b.native.err, b.shim.err);
		free(tu_only_profile(b.dir));   /* written and renamed, not left as .tmp */
	}
}

/* small_stack: a PTHREAD_STACK_MIN thread takes a contended lock (every wait
 * captured) 6 and 10 KiB deep; natively it runs to 11 KiB. */
Test(trust, a_thread_on_a_small_stack_may_take_a_contended_lock_deep_down, .timeout = 120)
{
	static const char *const depths[] = { "6", "10" };
	for (size_t i = 0; i < sizeof(depths) / sizeof(depths[0]); i++) {
		struct both b;
		const char *argv[] = { tu_prog("small_stack"), depths[i], NULL };
		run_both(&b, argv, capture_all);
		tu_assert_exit(&b.native, 0, "small_stack natively");
	}
}

/* handler_lock_small_altstack: a handler on an alternate stack cut from
 * main's stack, a kernel signal frame and 1 KiB, takes a contended lock.
 * The capture of the wait's stack ran past that stack's end (SIGSEGV, 3
 * of 3): its room was measured against the thread's bounds, which the
 * alternate stack lies inside. Then the same with the stack set with
 * SS_AUTODISARM (3 of 3), which the kernel reports as none while the
 * handler runs on it; and set through syscall(). The wait goes without a
 * stack now. */
Test(trust, a_handler_on_a_small_alternate_stack_may_take_a_contended_lock, .timeout = 120)
{
	static const char *const hows[][2] = { { "none", "plain" }, { "none", "autodisarm" }, { "syscall", "plain" } };
	for (size_t i = 0; i < sizeof(hows) / sizeof(hows[0]); i++) {
		struct both b;
		const char *argv[] = { tu_prog("handler_lock_small_altstack"), hows[i][0], hows[i][1], NULL };
		run_both(&b, argv, capture_all);
		tu_assert_exit(&b.native, 0, hows[i][0]);
		TU_STREQ(b.shim.out, "changed 0\n", "%s %s: stdout", hows[i][0], hows[i][1]);
	}
}

/* The same after changes of the alternate stack that the kernel undoes
 * or that hide it (helper-74's and helper-75's reviews): a handler on the
 * normal stack that turns it off (the kernel puts it back at the
 * handler's return), a vfork child that turns its own off, a handler on
 * an SS_AUTODISARM stack that turns it off or sets it again before it
 * locks, a nested signal's handler on that stack, a fork in the handler.
 * Each crashed (SIGSEGV) under a build of the shim before this test, with
 * SS_AUTODISARM or without. */
Test(trust, a_handler_on_a_small_alternate_stack_may_lock_after_the_stack_changed, .timeout = 120)
{
	static const char *const hows[] = { "revert", "vfork", "disable-in", "rearm-in", "nested", "fork" };
	static const char *const kinds[] = { "plain", "autodisarm" };
	for (size_t i = 0; i < sizeof(hows) / sizeof(hows[0]); i++)
		for (size_t k = 0; k < 2; k++) {
			struct both b;
			const char *argv[] = { tu_prog("handler_lock_small_altstack"), hows[i], kinds[k], NULL };
			run_both(&b, argv, capture_all);
			tu_assert_exit(&b.native, 0, hows[i]);
			cr_assert(strstr(b.shim.out, "changed 0\n"), "%s %s: %s", hows[i], kinds[k], b.shim.out);
		}
}

/* coroutine_on_a_former_altstack: the memory a handler ran on as an
 * SS_AUTODISARM alternate stack becomes a coroutine's one-page stack with
 * nothing mapped below. The shim's note of the handler's stack outlives
 * the handler; taken as the room of the stack at that address, it made
 * the coroutine's first-use stack captures run into the unmapped pages
 * (SIGSEGV, 4 of 4 variants; helper-75). */
Test(trust, a_coroutine_on_memory_that_was_an_alternate_stack_keeps_its_own_room, .timeout = 60)
{
	static const char *const leaves[] = { "disable", "jump" };
	static const char *const makes[] = { "reuse", "remap" };
	for (size_t i = 0; i < 2; i++)
		for (size_t k = 0; k < 2; k++) {
			struct both b;
			const char *argv[] = { tu_prog("coroutine_on_a_former_altstack"), leaves[i], makes[k], NULL };
			run_both(&b, argv, capture_all);
			tu_assert_exit(&b.native, 0, leaves[i]);
			TU_STREQ(b.shim.out, "ok\n", "%s %s: stdout", leaves[i], makes[k]);
		}
}

/* The shim allocates as it records (a record's wait histogram at its
 * first wait), and past an address-space limit its mmap fails: a lock call
 * must still leave errno as the program set it (preload/alloc.c, map).
 * 18,969 of 20,000 timed-out locks came back with ENOMEM before (2,907 of
 * the 4,000 the program times out on now: a limit 64 KiB above what the
 * process used leaves room for about a thousand records). */
/* ... and what the shim could not count for want of memory, the report
 * says: each of the 4,000 timeouts, one use of its own lock and record,
 * is in the locks' counts or among the uses counted without memory
 * (before process.uses_without_memory, the records made before the limit
 * lost 19,830 of their timeouts silently: helper-138; before it counted
 * uses, not calls, it said 58,404 for 19,468: helper-139). */
Test(trust, errno_survives_the_shim_running_out_of_memory, .timeout = 120)
{
	static const char *const modes[] = { "new-records", "used-first" };
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		const char *argv[] = { tu_prog("errno_out_of_memory"), modes[i], NULL };
		struct both b;
		run_both(&b, argv, NULL);
		tu_assert_exit(&b.native, 0, modes[i]);
		cr_assert(strstr(b.native.out, "errno changed by 0 of 4000"), "%s natively: %s", modes[i],
			  b.native.out);
		json_object *r = tu_report_dir(b.dir);
		long long timeouts = tu_sum(r, "locks", "timeouts");
		long long without = tu_int(tu_get(r, "process"), "uses_without_memory");
		cr_assert(without > 0 && timeouts + without == 4000,
			  "%s: %lld timeouts counted, %lld uses without memory: not the 4,000 timeouts",
			  modes[i], timeouts, without);
		json_object_put(r);
	}
}

/* A section of the shim's blocks signals when the program has a handler
 * the shim cannot wrap (preload/lock.c) and puts the mask back after:
 * exactly as it was (glibc's pthread_sigmask, restoring, dropped its own
 * two signals where the program had blocked them by a raw system call: all
 * 20,000 masks changed), and errno untouched when the call fails under a
 * filter the shim did not see (sigaction's section changed it 3 of 3). */
Test(trust, a_masked_section_leaves_the_mask_and_errno_as_they_were, .timeout = 120)
{
	static const char *const modes[] = { "mask", "errno" };
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		const char *argv[] = { tu_prog("masked_sections"), modes[i], NULL };
		struct both b;
		run_both(&b, argv, NULL);
		tu_assert_exit(&b.native, 0, modes[i]);
	}
}

/* A signal at every instruction the shim executes while a program takes
 * its mutexes (lock, trylock, a trylock under another lock, recursive,
 * error-checking and adaptive kinds, three in turn that miss the thread's
 * cache and are found in its second cache), a spinlock, an rwlock (and
 * three that miss in turn, read alone and under another mutex, then
 * written), two semaphores and a condvar, and a mutex, the spinlock and
 * the rwlock both ways under another mutex, by a tracer that single-steps
 * it; the handler tries them all, locks and forks, and each fork child
 * carries on from the interrupted instruction
 * (tests/progs/signal_every_step.c: about 10,000 signals). A handler's
 * fork that left the interrupted lock-order lookup with no thread state
 * crashed the program (a capture of a NULL thread, lockorder.c) until
 * this test. The forks are most of its cost (each child's end writes a
 * profile): the handler forks at every 16th signal here, at every one
 * under TEST_DEEP=1 (make test-deep). On a guest under PVM, whose forks
 * cost more: 4.1 s idle (11.8 s at every 4th, 35 s beside a CPU hog),
 * 34 s deep. */
Test(trust, a_handler_that_locks_and_forks_may_run_at_any_instruction_of_the_shim, .timeout = 300)
{
	struct tu_proc p;
	struct tu_opts o = { .preload = true, .dir = tu_tmpdir(), .quiet = true, .timeout_s = 240 };
	const char *fork_every = getenv("TEST_DEEP") ? "1" : "16";
	tu_run(&p, &o, (const char *const[]){ tu_prog("signal_every_step"), fork_every, NULL });   /* a step is a system call */
	if (p.exited && p.code == 77)
		cr_skip_test("%s", p.out);
	cr_assert(p.exited && p.code == 0, "signal_every_step (exit %d, signal %d):\n%s%s", p.code, p.sig, p.out,
		  p.err);
	const char *ok = strstr(p.out, "ok: ");
	long signals = 0;
	cr_assert(ok && sscanf(ok, "ok: %ld", &signals) == 1, "%s", p.out);
	/* About 10,000: far fewer is a tracer that ran past the rounds (a
	 * breakpoint that never fired), not a smaller shim. */
	cr_assert(signals >= 2000, "only %ld signals: %s", signals, p.out);
}

/* glibc carves static TLS from the top of every thread's stack, a
 * PTHREAD_STACK_MIN thread's 16 KiB included, and the shim's is in every
 * thread of the program (tests/hostile/README.md: pthread_exit and
 * pthread_create deep in a small stack). 228 bytes until the saved signal
 * mask became the kernel's eight-byte set (preload/lock.c); 128 is the
 * budget. Read from libconvoy.so's PT_TLS program header. */
Test(trust, the_shims_static_tls_stays_small, .timeout = 30)
{
	size_t len;
	unsigned char *so = tu_read_file(tu_shim(), &len);
	Elf64_Ehdr eh;
	cr_assert(len >= sizeof(eh), "%s: not an ELF file", tu_shim());
	memcpy(&eh, so, sizeof(eh));
	cr_assert(!memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_ident[EI_CLASS] == ELFCLASS64, "%s: not ELF64", tu_shim());
	uint64_t tls = 0;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		cr_assert(eh.e_phoff + (i + 1) * sizeof(ph) <= len, "%s: program headers past its end", tu_shim());
		memcpy(&ph, so + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_TLS)
			tls = ph.p_memsz;
	}
	cr_assert(tls > 0 && tls <= 128, "libconvoy.so's static TLS is %llu bytes (budget 128): every thread's stack "
		  "pays it", (unsigned long long)tls);
	free(so);
}

/* A library constructor, under dlopen's lock, waits for a thread that
 * creates a thread on a small stack: the shim takes no loader lock of its
 * own there (loading glibc's unwinder in pthread_create, tried for
 * tests/hostile/README.md's pthread_exit row, did, and hung). */
Test(trust, a_constructor_may_wait_for_threads_that_create_small_stack_threads, .timeout = 120)
{
	const char *argv[] = { tu_prog("dlopen_ctor_waits"), tu_prog("libctorwait.so"), NULL };
	struct both b;
	run_both(&b, argv, NULL);
	cr_assert(tu_has_line(b.shim.out, "loaded"), "%s", b.shim.out);
}

/* ---- bounded memory ------------------------------------------------------ */

/* Max RSS (KiB) of prog run with args, natively or under the shim
 * (CONVOY_QUIET=1, CONVOY_DIR=dir); asserts it exited 0. */
static long max_rss_kb(const char *const argv[], const char *dir)
{
	pid_t pid = fork();
	cr_assert(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		unsetenv("LD_PRELOAD");
		if (dir) {
			setenv("LD_PRELOAD", tu_shim(), 1);
			setenv("CONVOY_DIR", dir, 1);
			setenv("CONVOY_QUIET", "1", 1);
		}
		freopen("/dev/null", "w", stdout);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	int status;
	struct rusage ru;
	cr_assert(wait4(pid, &status, 0, &ru) == pid, "wait4: %s", strerror(errno));
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s %s %s (%s): status %#x", argv[0], argv[1],
		  argv[2] ? argv[2] : "", dir ? "under the shim" : "natively", status);
	return ru.ru_maxrss;
}

/* The shim's own, whatever the program does: here at most 6 MiB (1,000 live
 * threads that waited; 20,000 short threads 5.3, 300,000 objects 4), so a
 * leak of 550 bytes a short thread or 32 a barrier goes past it. */
#define RSS_ALLOWANCE_KB (16 * 1024)
#define PROFILE_ALLOWANCE (8 << 20)

/* Returns the directory of the run under the shim, its profile there. */
static char *memory_is_bounded(const char *prog, const char *what, const char *n)
{
	const char *argv[] = { tu_prog(prog), what, n, NULL };
	char *dir = tu_tmpdir();
	long native = max_rss_kb(argv, NULL), shim = max_rss_kb(argv, dir);
	cr_assert(shim <= native + RSS_ALLOWANCE_KB, "%s %s %s: max RSS %ld KiB under the shim, %ld natively",
		  prog, what, n, shim, native);
	size_t len;
	char *profile = tu_only_profile(dir);
	free(tu_read_file(profile, &len));
	cr_assert(len <= PROFILE_ALLOWANCE, "%s %s %s: a %zu-byte profile", prog, what, n, len);
	return dir;
}

/* Past the cap of (object, thread) records (262,144) the uses of objects
 * left without one are counted in the process record, which the report
 * states (helper-111: a million distinct mutexes, "262,144 locks" and
 * nothing said of the rest). Read from the file itself: the report of a
 * quarter of a million locks takes seconds. */
Test(trust, uses_past_the_records_cap_are_counted_not_dropped_silently, .timeout = 300)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "distinct_mutexes", "270000", NULL);
	tu_assert_exit(&p, 0, "distinct_mutexes 270000");
	size_t len;
	unsigned char *file = tu_read_file(tu_only_profile(dir), &len);
	struct cv_file_header fh;
	struct cv_rec_header h;
	struct cv_process proc;
	cr_assert(len >= sizeof(fh) + sizeof(h) + sizeof(proc), "a %zu-byte profile", len);
	memcpy(&fh, file, sizeof(fh));
	memcpy(&h, file + fh.header_size, sizeof(h));
	TU_EQ(h.type, CV_REC_PROCESS, "the first record's type");
	memcpy(&proc, file + fh.header_size + sizeof(h), sizeof(proc));
	/* The main thread's 270,000 mutexes, and nothing else of its own: the
	 * cap is process-wide, and the C library takes none here. */
	TU_EQ(proc.uses_unrecorded, 270000 - 262144, "uses not recorded");
	free(file);
}

Test(trust, memory_is_bounded_for_half_a_million_barriers, .timeout = 600)
{
	memory_is_bounded("churn_objects", "barrier", "500000");
}

Test(trust, memory_is_bounded_for_a_million_reinits_at_one_address, .timeout = 600)
{
	memory_is_bounded("churn_objects", "mutex", "1000000");
}

Test(trust, memory_is_bounded_for_twenty_thousand_short_threads, .timeout = 600)
{
	memory_is_bounded("churn_threads", "short", "20000");
}

Test(trust, memory_is_bounded_for_a_thousand_live_threads_that_waited, .timeout = 600)
{
	memory_is_bounded("churn_threads", "waited", "1000");
}

/* Threads that end leave a row of what they did, and their 4 KiB states
 * serve the threads made after them (thread.c, thread_retire): under the
 * shim, 1,000 short threads, 8 at a time, each taking a lock once, take
 * about 0.8 MiB more than 8 do here (a row and a record each); keeping
 * each thread's state took 4 MiB more. Against the shim's own run of 8,
 * not native: what the shim maps whatever the program does (its chunks,
 * transparent huge pages where they are on) is in both. */
Test(trust, ended_threads_leave_a_row_not_their_state, .timeout = 120)
{
	const char *few[] = { tu_prog("churn_threads"), "short", "8", NULL };
	const char *many[] = { tu_prog("churn_threads"), "short", "1000", NULL };
	long base = max_rss_kb(few, tu_tmpdir()), shim = max_rss_kb(many, tu_tmpdir());
	cr_assert(shim <= base + 2 * 1024, "under the shim, churn_threads short 1000: max RSS %ld KiB; short 8: %ld",
		  shim, base);
}

/* What the merged rows add up to: every lock of every short thread. */
Test(trust, merged_threads_keep_their_counts, .timeout = 300)
{
	const char *argv[] = { tu_prog("churn_threads"), "short", "4000", NULL };
	struct both b;
	run_both(&b, argv, NULL);
	json_object *r = tu_report_dir(b.dir);
	json_object *threads = tu_array(r, "threads");
	TU_EQ(json_object_array_length(threads), 1024 + 2, "threads[]: main, 1024 kept, one merged row");
	cr_assert(tu_thread_named(r, "merged threads"), "no \"merged threads\" row");
	json_object *lock = NULL, *locks = tu_array(r, "locks");
	for (size_t i = 0; i < json_object_array_length(locks); i++)
		if (tu_int(json_object_array_get_idx(locks, i), "acquisitions") == 4000)
			lock = json_object_array_get_idx(locks, i);
	cr_assert(lock, "no lock with all 4000 acquisitions: %s", json_object_to_json_string(locks));
}

/* Merging what ended (threads, generations at one address, destroyed
 * objects) keeps every count, so it is not worth a line on the program's
 * stderr: common, correct code (a mutex on the stack of a function called
 * often, thousands of short threads) reaches those caps. Only the one cap
 * that drops data warns. */
Test(trust, merging_what_ended_adds_nothing_to_stderr, .timeout = 300)
{
	static const char *const progs[][3] = { { "churn_threads", "short", "3000" },
						 { "churn_objects", "fresh", "20000" },
						 { "signal_init", NULL, NULL } };
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		const char *argv[] = { tu_prog(progs[i][0]), progs[i][1], progs[i][2], NULL };
		struct both b;
		run_both(&b, argv, NULL);
		cr_assert(strcmp(b.native.err, b.shim.err) == 0, "%s: stderr differs:\n--- native\n%s--- shim\n%s",
			  progs[i][0], b.native.err, b.shim.err);
	}
}

Test(trust, memory_is_bounded_for_objects_destroyed_at_distinct_addresses, .timeout = 600)
{
	memory_is_bounded("churn_objects", "fresh", "300000");
}

/* A report's locks[] added up: every lock's acquisitions, the "destroyed
 * objects merged" aggregate's (-1: none) and its row, and how many others
 * there are, each of which must have apart_each acquisitions (-1: any). */
struct merged_tally {
	int64_t total, merged, apart;
	json_object *aggregate;
};

static struct merged_tally tally_merged(json_object *locks, int64_t apart_each, const char *what)
{
	struct merged_tally t = { .merged = -1 };
	for (size_t i = 0; i < json_object_array_length(locks); i++) {
		json_object *l = json_object_array_get_idx(locks, i);
		t.total += tu_int(l, "acquisitions");
		json_object *name = json_object_object_get(l, "name");
		if (name && strstr(json_object_get_string(name), "destroyed objects merged")) {
			t.merged = tu_int(l, "acquisitions");
			t.aggregate = l;
		} else {
			t.apart++;
			if (apart_each >= 0)
				TU_EQ(tu_int(l, "acquisitions"), apart_each, "acquisitions of a mutex kept apart (%s)", what);
		}
	}
	return t;
}

/* Runs churn_objects (argv) and adds up the report's acquisitions: over
 * all locks, and of the "destroyed objects merged" aggregate (-1: none). */
static void merged_counts(const char *const *argv, int64_t *total, int64_t *merged)
{
	struct both b;
	run_both(&b, argv, NULL);
	struct merged_tally t = tally_merged(tu_array(tu_report_dir(b.dir), "locks"), -1, argv[1]);
	*total = t.total;
	*merged = t.merged;
}

/* What the aggregate adds up to: every acquisition of every destroyed mutex. */
Test(trust, destroyed_objects_merged_keep_their_counts, .timeout = 300)
{
	const char *argv[] = { tu_prog("churn_objects"), "fresh", "20000", NULL };
	int64_t total, merged;
	merged_counts(argv, &total, &merged);
	TU_EQ(total, 20000, "acquisitions over all locks");
	TU_EQ(merged, 20000 - 4096, "acquisitions of the aggregate (all past the first 4,096 destroyed)");
}

/* Objects another thread used once and never looked at again, destroyed
 * past the cap: that thread's counts join the aggregate too (preload/
 * output.c writes its records of merged objects under the aggregate, as
 * its own fold would have), so the profile keeps 4,096 destroyed objects
 * apart, not one for each, and the aggregate has one row a thread.
 * tests/progs/churn_objects.c: "shared", the thread ended, main destroying
 * without locking (the aggregate made at the merge, no fold having made
 * it); "shared-live", main locking too, the thread parked at the write
 * with its own record of the aggregate (100 mutexes it destroyed itself)
 * besides; "ended", an ended thread's row of 8 records. */
Test(trust, another_threads_counts_of_objects_merged_past_the_cap_join_the_aggregate, .timeout = 300)
{
	static const struct {
		const char *mode, *n;
		int64_t total, apart_each, merged, merged_threads;
	} cases[] = {
		{ "shared", "10000", 10000, 1, 10000 - 4096, 1 },
		{ "shared-live", "10000", 2 * 10000 + 100, 2, 2 * (10000 - 4096) + 100, 2 },
		{ "ended", "8", 4200 + 8, 1, 4200 - 4096 + 8, 2 },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const char *argv[] = { tu_prog("churn_objects"), cases[c].mode, cases[c].n, NULL };
		struct both b;
		run_both(&b, argv, NULL);
		struct merged_tally t =
			tally_merged(tu_array(tu_report_dir(b.dir), "locks"), cases[c].apart_each, cases[c].mode);
		TU_EQ(t.total, cases[c].total, "acquisitions over all locks (%s)", cases[c].mode);
		TU_EQ(t.apart, 4096, "destroyed mutexes kept apart (%s)", cases[c].mode);
		TU_EQ(t.merged, cases[c].merged, "acquisitions of the aggregate (%s)", cases[c].mode);
		TU_EQ((int64_t)json_object_array_length(tu_array(t.aggregate, "threads")), cases[c].merged_threads,
		      "threads of the aggregate (%s)", cases[c].mode);
	}
}

/* A thread that goes on to new objects, never looking again at the ones
 * other threads destroyed after it used them (tests/progs/churn_objects.c
 * rounds: 64 fresh mutexes a round, 5,000 rounds): its records of those
 * merged past the cap all fold as its table grows, so it never reaches the
 * cap on records (262,144), no use goes unrecorded, and its table stays the
 * size of what it still holds: about 19 MiB of peak RSS against 14
 * natively. Before, a growth folded 64 of them and doubled the table:
 * 57,540 of the 320,000 uses unrecorded, 88 MiB; doubled at each growth
 * whatever it folded, some 56 (helper-153's build). */
Test(trust, a_thread_that_never_looks_back_at_destroyed_objects_keeps_every_count_in_bounded_memory, .timeout = 300)
{
	json_object *r = tu_report_dir(memory_is_bounded("churn_objects", "rounds", "5000"));
	TU_EQ(tu_int(tu_get(r, "process"), "uses_unrecorded"), 0, "uses unrecorded");
	TU_EQ(tally_merged(tu_array(r, "locks"), 1, "rounds").total, 5000 * 64, "acquisitions over all locks");
}

/* The first destroyed object merged past the cap, at the moment the
 * destroying thread's table of records must grow (which folds the records
 * of merged objects it finds, the one being merged among them: it was
 * used after being freed before). */
Test(trust, a_destroy_may_merge_an_object_while_the_thread_table_grows, .timeout = 300)
{
	const char *argv[] = { tu_prog("churn_objects"), "growth", "4095", NULL };
	int64_t total, merged;
	merged_counts(argv, &total, &merged);
	TU_EQ(total, 4095 + 4097, "acquisitions over all locks");
	TU_EQ(merged, 1, "acquisitions of the aggregate (the one destroyed past the first 4,096)");
}

/* The json first_use.site.line of a lock. */
static int64_t first_use_line(json_object *lock)
{
	json_object *fu = tu_get(lock, "first_use");
	return json_object_is_type(fu, json_type_null) ? -1 : tu_int(tu_get(fu, "site"), "line");
}

/* Several threads re-initialising a mutex at one address each: per address,
 * generations 0 to 62 apart with their own counts, and generation 63
 * standing for all later ones; every object has its init stack. With and
 * without a signal handler installed (the shim's sections then block
 * signals). */
Test(trust, generations_keep_their_counts_when_threads_churn, .timeout = 300)
{
	static const char *const modes[] = { "none", "handler" };
	for (size_t m = 0; m < 2; m++) {
		const char *argv[] = { tu_prog("churn_counts"), "generations", modes[m], NULL };
		struct both b;
		run_both(&b, argv, NULL);
		const char *line = tu_line_value(b.shim.out, "init line");
		cr_assert(line, "no init line in:\n%s", b.shim.out);
		int64_t init_line = atoll(line);
		json_object *r = tu_report_dir(b.dir), *locks = tu_array(r, "locks");
		size_t n = json_object_array_length(locks), merged = 0;
		TU_EQ(n, 4 * 64, "locks[] (%s): 4 threads' addresses, 64 generations each", modes[m]);
		for (size_t i = 0; i < n; i++) {
			json_object *l = json_object_array_get_idx(locks, i);
			int64_t g = tu_int(l, "generation");
			cr_assert(g >= 0 && g < 64, "generation %lld", (long long)g);
			TU_EQ(tu_int(l, "acquisitions"), g < 63 ? 2 : 2 * (500 - 63),
			      "acquisitions of generation %lld (%s)", (long long)g, modes[m]);
			TU_EQ(first_use_line(l), init_line, "the init stack's line, generation %lld (%s)", (long long)g,
			      modes[m]);
			if (g == 63) {
				merged++;
				cr_assert(strstr(tu_str(l, "name"), "later generations merged"), "%s", tu_str(l, "name"));
			}
		}
		TU_EQ(merged, 4, "generation 63 objects (%s)", modes[m]);
	}
}

/* Several threads destroying objects at distinct addresses past the cap:
 * the first 4,096 apart, every later one in the aggregate, no count lost. */
Test(trust, destroyed_objects_keep_their_counts_when_threads_churn, .timeout = 300)
{
	static const char *const modes[] = { "none", "handler" };
	for (size_t m = 0; m < 2; m++) {
		const char *argv[] = { tu_prog("churn_counts"), "distinct", modes[m], NULL };
		struct both b;
		run_both(&b, argv, NULL);
		struct merged_tally t = tally_merged(tu_array(tu_report_dir(b.dir), "locks"), 2, modes[m]);
		TU_EQ(t.total, 4 * 1500 * 2, "acquisitions over all locks (%s)", modes[m]);
		TU_EQ(t.apart, 4096, "destroyed mutexes kept apart (%s)", modes[m]);
		TU_EQ(t.merged, (4 * 1500 - 4096) * 2, "acquisitions of the aggregate (%s)", modes[m]);
	}
}

/* Addresses re-initialised again and again past the cap still reach the
 * 64 generations after which the last stands for every later one. Each
 * thread's first mutex has generations 0 to 9 kept apart, then, past the
 * cap (its distinct mutexes), 10 to 62 in the aggregate and 63 for its
 * last 147 lives; its second mutex, first made past the cap, 0 to 62 in
 * the aggregate and 63 for its last 137: the shard remembers the
 * generations folded past the cap (preload/objects.c, past_cap_keep).
 * Until then each such life was the same generation again, a new object
 * and record merged at its destroy (lockpair churn-many: 358 ns a life,
 * 53 since). */
Test(trust, an_address_reinitialised_past_the_cap_reaches_its_last_generation, .timeout = 300)
{
	/* tests/progs/churn_counts.c: 4 threads, EARLY 10, PAST_CAP 1100, LATE 200 */
	enum { THREADS = 4, EARLY = 10, PAST_CAP = 1100, LATE = 200, KEPT_APART = 4096 };
	static const char *const modes[] = { "none", "handler" };
	for (size_t m = 0; m < 2; m++) {
		const char *argv[] = { tu_prog("churn_counts"), "past_cap", modes[m], NULL };
		struct both b;
		run_both(&b, argv, NULL);
		json_object *r = tu_report_dir(b.dir), *locks = tu_array(r, "locks");
		int64_t total = 0, merged = -1, first = 0, second = 0;
		for (size_t i = 0; i < json_object_array_length(locks); i++) {
			json_object *l = json_object_array_get_idx(locks, i);
			total += tu_int(l, "acquisitions");
			json_object *name = json_object_object_get(l, "name");
			if (name && strstr(json_object_get_string(name), "destroyed objects merged")) {
				merged = tu_int(l, "acquisitions");
			} else if (name && strstr(json_object_get_string(name), "later generations merged")) {
				TU_EQ(tu_int(l, "generation"), 63, "the last generation kept (%s)", modes[m]);
				int64_t a = tu_int(l, "acquisitions");
				first += a == (LATE - (63 - EARLY)) * 2;
				second += a == (LATE - 63) * 2;
			}
		}
		TU_EQ(total, THREADS * (EARLY + PAST_CAP + 2 * LATE) * 2, "acquisitions over all locks (%s)", modes[m]);
		TU_EQ(first, THREADS, "first mutexes standing for their later generations (%s)", modes[m]);
		TU_EQ(second, THREADS, "second mutexes standing for their later generations (%s)", modes[m]);
		TU_EQ(merged, (THREADS * (EARLY + PAST_CAP) - KEPT_APART + THREADS * ((63 - EARLY) + 63)) * 2,
		      "acquisitions of the aggregate (%s)", modes[m]);
	}
}

/* Four threads churn 4,000 mutexes picked at random past the cap, more
 * addresses than the generations remembered past it have ways for
 * (preload/objects.c, past_cap_keep: an address whose way another took
 * starts again at generation 0): no acquisition is lost, and addresses
 * churned often enough still come to stand for their later generations. */
Test(trust, mutexes_churned_at_random_past_the_cap_keep_their_counts, .timeout = 300)
{
	/* tests/progs/churn_counts.c: 4 threads, CROWDED_LIVES 100000, 2 acquisitions a life */
	const char *argv[] = { tu_prog("churn_counts"), "crowded", NULL };
	struct both b;
	run_both(&b, argv, NULL);
	json_object *locks = tu_array(tu_report_dir(b.dir), "locks");
	int64_t total = 0, last = 0;
	for (size_t i = 0; i < json_object_array_length(locks); i++) {
		json_object *l = json_object_array_get_idx(locks, i), *name = json_object_object_get(l, "name");
		total += tu_int(l, "acquisitions");
		last += name && strstr(json_object_get_string(name), "later generations merged");
	}
	TU_EQ(total, 4 * 100000 * 2, "acquisitions over all locks");
	cr_assert(last > 0, "no address stands for its later generations");
}

/* A fork child's generations past its cap are its own: the parent's
 * remembered count is not (tests/progs/churn_fork.c). */
Test(trust, a_fork_child_counts_generations_past_the_cap_from_its_start, .timeout = 120)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "churn_fork", NULL);
	tu_assert_exit(&p, 0, "churn_fork");
	json_object *reports[2];
	tu_fork_reports(dir, &reports[0], &reports[1]);
	for (size_t f = 0; f < 2; f++) {
		json_object *locks = tu_array(reports[f], "locks");
		bool child = f == 1;
		for (size_t i = 0; i < json_object_array_length(locks); i++) {
			json_object *name = json_object_object_get(json_object_array_get_idx(locks, i), "name");
			cr_assert(!name || !strstr(json_object_get_string(name), "later generations merged"),
				  "the %s's mutex reached its 64th generation: %s", child ? "child" : "parent",
				  json_object_get_string(name));
		}
	}
}

/* An asynchronous cancel that lands while the thread is inside the shim's
 * bookkeeping still ends it as cancelled (tests/progs/cancel_async_in_shim.c;
 * NPTL's tst-cancel30 failed so once in CI). */
Test(trust, an_asynchronous_cancel_inside_the_shim_still_joins_as_cancelled, .timeout = 120)
{
	struct both b;
	const char *argv[] = { tu_prog("cancel_async_in_shim"), NULL };
	run_both(&b, argv, NULL);
}
