/* init.c — start-up and fork.
 *
 * cv__init runs from the constructor, or earlier: from the first wrapped call
 * if another library's constructor locks a mutex or creates a thread before
 * ours has run. The end of the process (every path that writes a profile) is
 * in lifecycle.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <valgrind/valgrind.h>

#include "shim.h"

struct cv_process_state cv__process CV_LARGE_BSS;

void cv__thread_init_main(void);

/* Who this process is: its pid, the parent its profile names
 * (cv__process.ppid), its name, and its executable's path at start or
 * where it is not known yet (a fork child keeps its parent's: a fork does
 * not change it, and the read of /proc/self/exe, a child's first look
 * into /proc, cost it about 50 us here). */
static void read_identity(pid_t parent, bool exe)
{
	cv__process.pid = cv__getpid();
	cv__process.ppid = parent;
	cv__thread_name(cv__process.comm);
	if (exe) {
		ssize_t n = cv__readlink("/proc/self/exe", cv__process.exe, sizeof(cv__process.exe) - 1);
		cv__process.exe[n > 0 ? n : 0] = '\0';
	}
}

/* The start in both clocks, the TSC's read on either side of
 * CLOCK_MONOTONIC's and taken at the midpoint (cv__clock_pair): the ticks
 * are converted to ns against this start (output.c, gomp.c). */
static void start_clocks(void)
{
	struct timespec ts;
	cv__clock_gettime(CLOCK_REALTIME, &ts);
	cv__process.start_realtime_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	for (int tries = 0; !cv__clock_pair(&cv__process.start_ns, &cv__process.start_ticks) && tries < 3; tries++)
		;
	cv__usage(RUSAGE_SELF, &cv__process.usage_before);
	cv__usage(RUSAGE_THREAD, &cv__process.thread_usage_before);
}

/* Says why convoy is off for this process, unless CONVOY_QUIET (the
 * configuration is not read yet). */
static void say_off(const char *line, size_t len)
{
	const char *quiet = getenv("CONVOY_QUIET");
	if (!quiet || !*quiet || strcmp(quiet, "0") == 0)
		cv__write(STDERR_FILENO, line, len);
}

/* Valgrind runs the program on its own CPU, and its thread checkers
 * (Helgrind, DRD) see a mutex held only through glibc's functions, which
 * they wrap: the shim's fast paths take glibc's mutexes themselves, so
 * every lock went unseen and both reported races in a clean program
 * (helper-129), and the shim's own lock-free words as races too. Timings
 * under Valgrind would say nothing of the program anyway: the shim stands
 * aside. The client request is a no-op sequence of instructions outside
 * Valgrind. */
static bool under_valgrind(void)
{
	if (!RUNNING_ON_VALGRIND)
		return false;
	static const char line[] = "convoy: this process runs under Valgrind, whose tools would see the shim "
				   "instead of the program; convoy is off for it (no profile)\n";
	say_off(line, sizeof(line) - 1);
	return true;
}

/* Whether the process runs under a seccomp filter already (set before the
 * exec, by a service manager or a sandbox): it may kill the process for a
 * system call the shim makes and the program does not (lifecycle.c,
 * "seccomp"), so the shim stays off. Read from /proc/self/status with
 * openat, read and close only: the loader made those to load the shim.
 * Said on stderr unless CONVOY_QUIET (the configuration is not read: that
 * makes other calls). */
static bool seccomp_filtered(void)
{
	static char status[8192] CV_LARGE_BSS;
	if (cv__read_small_file("/proc/self/status", status, sizeof(status)) <= 0)
		return false;
	const char *field = strstr(status, "\nSeccomp:");
	if (!field || strtol(field + strlen("\nSeccomp:"), NULL, 10) == 0)
		return false;
	static const char line[] = "convoy: this process runs under a seccomp filter, which may kill it for "
				   "a system call convoy makes; convoy is off for it (no profile)\n";
	say_off(line, sizeof(line) - 1);
	return true;
}

/* ---- fork ------------------------------------------------------------------ *
 * The prepare handler takes none of the shim's locks. It cannot: handlers the
 * program's libraries registered before ours run after it, and one that
 * takes a mutex X would deadlock against a thread that holds X and waits for
 * a shim lock (first use of an object). Instead the child, which has one
 * thread, resets every shim lock and discards or repairs what those locks
 * guarded: the registry and the thread list start anew (the child writes a
 * profile of its own, named by its pid), the module map is re-read (the
 * allocator is lock-free and needs nothing). What must not be in flight is a
 * stack capture, whose module lookup takes the loader's lock
 * (cv__modules_refresh) and whose tables the child would inherit half
 * written: prepare closes that gate and waits for captures to finish (they
 * take microseconds and never wait for the program).
 *
 * Forks nest on one thread: a signal handler, or a prepare handler another
 * library registered before the shim's (it runs after the shim's), may call
 * _Fork or syscall(SYS_fork) between another fork's prepare and parent
 * steps.
 * So each fork's "shim was on" travels with that fork (cv__syscall_fork
 * keeps it in a local; pthread_atfork's handlers, which take no argument,
 * in TLS, which only a nested fork() could overwrite, with the same value),
 * no step installs a saved thread state (the slow path finds the thread's
 * own), and a child's count of forks in progress (cv__process.forking,
 * which closes the stack gate and the take switch) is the number its one
 * thread is still inside, to be lowered by their own parent steps. The
 * thread's and the process's counts change together in one critical
 * section, where no handler of the program runs, so a handler's fork finds
 * both raised or neither.
 * (Not covered: a handler that forks in a child before its child step,
 * from a library's child handler that runs before the shim's: the child's
 * inherited locks are not reset yet.) */
static __thread unsigned forks_here;   /* this thread's share of cv__process.forking */

/* What prepare_steps returns: whether the shim takes part in this fork
 * (it was on at prepare), and whether the guard was open before it (a fork
 * from a handler that ran in another fork's window), which the parent and
 * child steps put back. */
enum { FORK_WITHOUT_SHIM, FORK_WITH_SHIM, FORK_IN_OPEN_GUARD };

static int prepare_steps(void)
{
	if (cv__off())
		return FORK_WITHOUT_SHIM;
	cv__guard_enter();   /* left by the parent step (which puts the state back) or the child's (a new one) */
	/* Open (shim.h): the program's handlers run in the fork window as
	 * without the shim; glibc's fork waits there for stdio and malloc
	 * locks other threads hold, and libraries' atfork handlers run in it
	 * (helper-142: a handler deferred there deadlocked a thread that held
	 * stdout waiting for it). */
	int steps = cv__guard_open() ? FORK_IN_OPEN_GUARD : FORK_WITH_SHIM;
	cv__critical_enter();
	forks_here++;
	__atomic_fetch_add(&cv__process.forking, 1, __ATOMIC_SEQ_CST);
	cv__critical_leave();
	cv__take_update();
	cv__stacks_fork_wait();
	return steps;
}

static void parent_steps(int steps)
{
	if (steps == FORK_WITHOUT_SHIM)
		return;
	cv__critical_enter();
	forks_here--;
	__atomic_fetch_sub(&cv__process.forking, 1, __ATOMIC_SEQ_CST);
	cv__critical_leave();
	cv__take_update();
	cv__guard_close(steps == FORK_IN_OPEN_GUARD ? CV_GUARD_OPEN : 0);
	cv__guard_leave(NULL);
	cv__thread_resume();
}

void cv__output_after_fork(void);

static void child_steps(int steps)
{
	cv__signals_after_fork();   /* taken also while the shim is off (signals.c) */
	if (steps == FORK_WITHOUT_SHIM)
		return;
	cv__critical_after_fork();
	cv__critical_enter();   /* the counts and the inherited locks, all reset before a handler runs */
	forks_here--;
	__atomic_store_n(&cv__process.forking, forks_here, __ATOMIC_SEQ_CST);
	cv__stacks_after_fork();
	cv__objects_after_fork();
	cv__lockorder_after_fork();   /* its ids are the parent's objects' */
	read_identity(cv__process.pid, cv__process.exe[0] == '\0');   /* the pid the parent noted: its own */
	start_clocks();
	cv__process.forked = 1;
	cv__perf_after_fork();
	cv__output_after_fork();
	cv__own_stack_after_fork();
	/* A snapshot request that came during the fork was sent to the parent,
	 * whose fork_parent writes it; nobody asked the child for one. */
	cv__snapshot_pending = 0;
	cv__guard_close(steps == FORK_IN_OPEN_GUARD ? CV_GUARD_OPEN : 0);
	cv__guard_leave(NULL);   /* prepare's guard (errno, cancellation type); the child's state next */
	cv__threads_after_fork();
	cv__take_after_fork();   /* a process of one thread */
	cv__critical_leave();
}

static __thread unsigned char atfork_steps;
static void fork_prepare(void) { atfork_steps = (unsigned char)prepare_steps(); }
static void fork_parent(void) { parent_steps(atfork_steps); }
static void fork_child(void) { child_steps(atfork_steps); }

/* A fork the program makes with syscall() (SYS_fork, or SYS_clone of a new
 * process on the caller's stack and TLS, futex.c), which runs no atfork
 * handler: the same three steps around it, or a child forked while another
 * thread held one of the shim's locks would wait for that lock forever. */
long cv__syscall_fork(long (*sys)(long, long, long, long, long, long, long), long n, long a1, long a2,
		      long a3, long a4, long a5, long a6)
{
	/* Ready and not disabled: the handlers were registered (cv__init). */
	if (!__atomic_load_n(&cv__process.ready, __ATOMIC_ACQUIRE) || cv__process.disabled)
		return sys(n, a1, a2, a3, a4, a5, a6);
	int steps = prepare_steps();
	long ret = sys(n, a1, a2, a3, a4, a5, a6);
	int err = errno;
	if (ret == 0)
		child_steps(steps);
	else
		parent_steps(steps);
	errno = err;
	return ret;
}

/* _Fork (glibc 2.34): a fork that runs no atfork handler, async-signal-safe.
 * The shim's own three steps go around it as around syscall(SYS_fork):
 * without them the child would keep the parent's thread states, tids and
 * whatever lock of the shim's another thread held. */
static long call_fork(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
	(void)n, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5, (void)a6;
	pid_t (*real)(void) = CV_LOAD(&cv__real._Fork);
	if (!real) {   /* before the shim's constructor */
		cv__resolve_real();
		real = cv__real._Fork;
	}
	return real();
}

CV_EXPORT pid_t _Fork(void)
{
	return (pid_t)cv__syscall_fork(call_fork, 0, 0, 0, 0, 0, 0, 0);
}

void cv__init(void)
{
	static cv_spinlock_t init_lock;
	if (__atomic_load_n(&cv__process.ready, __ATOMIC_ACQUIRE))
		return;
	/* Guarded: wrapped calls made from here (dlsym, ...) go straight to
	 * libc, and errno comes out as it went in (getenv, strtoull, dlopen
	 * set it; a library constructor that locks first must not see that). */
	struct cv_thread *saved = cv__guard_enter();
	cv__spin_lock(&init_lock);
	if (!cv__process.ready) {
		cv__resolve_real();
		if (getauxval(AT_SECURE)) {
			/* setuid/setgid: never write files on the program's behalf. */
			cv__process.disabled = 1;
		} else if (under_valgrind() || seccomp_filtered()) {
			cv__process.disabled = 1;
		} else {
			cv__config_read();
			read_identity(cv__getppid(), true);
			cv__process.sigchld_ignored = cv__sigchld_ignored(false);   /* a fork child keeps its parent's note */
			start_clocks();
			if (pthread_atfork(fork_prepare, fork_parent, fork_child) != 0) {
				cv__warn("cannot register fork handlers; convoy is off for this process");
				cv__process.disabled = 1;
			} else {
				cv__perf_open();
				cv__stacks_init();
				cv__trace_init();
				cv__thread_init_main();
				cv__lifecycle_init();
				cv__take_init();
			}
		}
		__atomic_store_n(&cv__process.ready, 1, __ATOMIC_RELEASE);
	}
	cv__spin_unlock(&init_lock);
	cv__guard_leave(saved);
}

__attribute__((constructor)) static void convoy_start(void)
{
	/* cv__init reads cv__process first (ready): written first instead,
	 * one fault, not a zero-page read and then a copy (shim.h,
	 * cv__touch_for_write). */
	cv__touch_for_write(&cv__process);
	cv__init();
}
