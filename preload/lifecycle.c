/* lifecycle.c — the ends of a process, each of which writes its profile.
 *
 * docs/lifecycle.md lists every path, and the ones that cannot write.
 *
 * Normal end: return from main, exit() from any thread, and the exit(0)
 * glibc makes when the last thread calls pthread_exit all run the C
 * runtime's exit handlers; ours is the shim's destructor, run by the loader's
 * exit handler. The C library flushes stdio only after every exit handler,
 * so on a nearly full filesystem the profile would take the space the
 * program's buffered output still needs: the destructor counts what stdout
 * and stderr hold for a file on the profile's filesystem, and the profile
 * is published only where that much room is left after it (output.c,
 * room_left). It never flushes them: output a later destructor writes to
 * the same file keeps its place.
 *
 * The other ends — exec, _exit/_Exit, quick_exit, a fatal signal — are
 * wrapped below. Each may run in a signal handler, so each uses only what is
 * async-signal-safe: system calls, the stack, and the writer's any-context
 * mode (output.c). None of them runs in a vfork child (or any process the
 * shim did not see start, such as a raw clone): its pid differs from the
 * one the shim noted at start or at fork, and it shares the parent's memory.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "shim.h"

extern char **environ;

/* Whether this process writes profiles: the shim started, is enabled, and
 * this is the process it started in (or a fork child it reset). */
bool cv__profiling_here(void)
{
	return __atomic_load_n(&cv__process.ready, __ATOMIC_ACQUIRE) && !cv__process.disabled &&
	       cv__getpid() == cv__process.pid;
}

/* Whether this thread was running the shim's own code (its reentrancy guard
 * raised) when it came here, from a signal handler say: the shim's state may
 * then be half changed, and the profile is not written from it. */
static bool inside_shim(void)
{
	return cv__busy != 0;
}

/* ---- normal end ------------------------------------------------------------ */

/* The bytes stdout and stderr still hold for a regular file on the
 * profile's filesystem: the C library writes them after the shim's
 * destructor, and the profile must leave them room (cv__write_profile
 * drops itself rather than take it). Only counted, never flushed: a flush
 * here would move them ahead of what a library's destructor, running
 * after the shim's, writes to the same file (helper-111). A wide stream's
 * characters may take up to MB_LEN_MAX bytes each. Read without the
 * streams' locks: a number, which a thread still writing may make stale. */
static uint64_t pending_output(void)
{
	struct stat dir, file;
	if (cv__stat(cv__config.dir, &dir) != 0)
		return 0;
	uint64_t bytes = 0;
	FILE *streams[] = { stdout, stderr };
	for (size_t i = 0; i < sizeof(streams) / sizeof(streams[0]); i++) {
		int fd = streams[i] ? fileno_unlocked(streams[i]) : -1;
		if (fd < 0 || cv__fstat(fd, &file) != 0 || !S_ISREG(file.st_mode) || file.st_dev != dir.st_dev)
			continue;
		/* Two pointers read apart may differ by nonsense: at most 1 GiB. */
		uint64_t chars = __fpending(streams[i]);
		bytes += (chars < (1u << 30) ? chars : (1u << 30)) * (fwide(streams[i], 0) > 0 ? MB_LEN_MAX : 1);
	}
	return bytes;
}

/* ---- what a profile would add ------------------------------------------------ */

/* Whether this image has anything to report: a second thread, or a record or
 * counter on any thread. An image that recorded nothing leaves its profile
 * to the next at an exec (exec_begins), and a fork child that recorded
 * nothing may write none at its end (nothing_to_add). */
static bool recorded_anything(void)
{
	if (cv__ended_threads())
		return true;
	for (struct cv_thread *t = cv__threads(); t; t = t->all_next)
		if (t->all_next || __atomic_load_n(&t->recs, __ATOMIC_ACQUIRE) ||
		    __atomic_load_n(&t->ncounters, __ATOMIC_ACQUIRE))
			return true;
	return false;
}

/* Whether this process may have had a child, made any way (fork,
 * posix_spawn, system(), popen(), vfork, clone), whose profile names it as
 * its parent: one the kernel still holds (running, stopped or not yet
 * waited for: waitid with WNOWAIT, which consumes nothing), one waited for
 * (RUSAGE_CHILDREN's largest resident set is 0 until then), or any while
 * SIGCHLD was ignored, which the kernel reaps itself (sigchld_ignored:
 * noted at the start and at each change the shim sees, and kept by a fork
 * child; not a change a raw system call of the program's own makes).
 * errno is kept. */
static bool had_a_child(void)
{
	if (__atomic_load_n(&cv__process.sigchld_ignored, __ATOMIC_RELAXED))
		return true;
	int saved_errno = errno;
	siginfo_t info;
	struct rusage ru;
	int any = WEXITED | WSTOPPED | WCONTINUED | WNOHANG | WNOWAIT | __WALL;
	bool had = !(cv__sys(SYS_waitid, P_ALL, 0, (long)&info, any) < 0 && errno == ECHILD) ||
		   cv__getrusage(RUSAGE_CHILDREN, &ru) != 0 || ru.ru_maxrss != 0;
	errno = saved_errno;
	return had;
}

/* Below this much CPU time a process that recorded nothing writes no
 * profile (about ten of `convoy run`'s CPU samples at its 1 kHz), when it
 * is not the command (nothing_to_add). At or above it, it writes: `convoy
 * run` picks the process that did the most work, and one that computed
 * without a lock may be it. One below it is no longer a candidate: among
 * processes that made no thread, `convoy run` then reports its parent or
 * another one. */
#define CV_CHILD_CPU_WORTH_NS 10000000ull   /* 10 ms */

/* Whether, under `convoy run` or `convoy scale`, this process's parent at
 * its start was not the launcher (its pid is CONVOY_LAUNCHER_PID): the
 * images of this process are not the command's. */
static bool launched_by_another(void)
{
	return cv__config.launcher_pid && cv__process.ppid != cv__config.launcher_pid;
}

/* Whether this process is not the command the user started but one it
 * started: a fork child, or one launched_by_another. Plain preloading
 * names no launcher, so every image that was not forked is taken for the
 * command. */
static bool started_by_the_command(void)
{
	return cv__process.forked || launched_by_another();
}

/* Whether this process's end writes no profile: one the command started
 * that recorded nothing (since the fork, for a fork child), used less than
 * CV_CHILD_CPU_WORTH_NS of CPU and had no child of its own (a shell's
 * subshell for $(...), a script's sed or true) adds nothing to the
 * command's profile but a file beside it, at some 0.4 ms a process here
 * (docs/performance.md). One that had a child writes: that child's
 * profile names it as the parent, and `convoy run` follows the chain of
 * parents (analyzer/analysis.c, mark_tree). A fatal signal always writes:
 * the profile says how the process died. */
static bool nothing_to_add(void)
{
	if (!started_by_the_command() || recorded_anything())
		return false;
	uint64_t cpu = cv__clock_ns(CLOCK_PROCESS_CPUTIME_ID), before = cv__process.usage_before.cpu_ns;
	return (cpu > before ? cpu - before : 0) < CV_CHILD_CPU_WORTH_NS && !had_a_child();   /* this image's own */
}

/* convoy_end has returned (its write done, failed or not made). */
static int end_done;

__attribute__((destructor)) static void convoy_end(void)
{
	if (!cv__process.ready || cv__process.disabled)
		return;
	struct cv_thread *main_thread = NULL;
	for (struct cv_thread *t = cv__threads(); t; t = t->all_next)
		if (t->flags & CV_THREAD_MAIN)
			main_thread = t;
	bool last_thread = main_thread && (main_thread->flags & CV_THREAD_PTHREAD_EXIT);
	if (!nothing_to_add()) {
		int saved_errno = errno;
		cv__profile_leave_room(pending_output());
		errno = saved_errno;
		cv__write_profile(last_thread ? CV_EXIT_LAST_THREAD : CV_EXIT_NORMAL);
	}
	__atomic_store_n(&end_done, 1, __ATOMIC_RELEASE);
}

/* Two threads in exit() at once: glibc's exit handlers are one list, each
 * thread takes the next, and the one that finds it empty ends the process
 * (its _exit is glibc's own call, which the shim never sees), natively
 * cutting short whatever the other is still running. The other may be in
 * the loader's exit handler, running the destructors, the shim's write
 * among them, which was lost so (tests/progs/exit_together: a profile in
 * 13 of 60 runs). This handler is registered at start-up, before the C
 * library registers the loader's (handlers run last in, first out), so it
 * comes after it: a thread that takes it while another is still in the
 * destructors writes the profile itself, or, the write under way, waits
 * for it (cv__profile_settle: bounded by the write's progress). It never
 * waits for the program's destructors, which may wait for a lock this
 * thread holds. A thread that ran the destructors itself passes through. */
static void exit_after_destructors(void)
{
	if (!__atomic_load_n(&end_done, __ATOMIC_ACQUIRE))
		convoy_end();
}

/* ---- seccomp ----------------------------------------------------------------- *
 * A seccomp filter may kill the process for a system call the program never
 * makes and the shim does (gettid, getrusage and /proc at a thread's end,
 * openat, getrandom and renameat2 for the profile, perf_event_open after a
 * fork...). A process already filtered when the shim starts (a service
 * manager's filter, set before exec) gets no shim at all (init.c). One that
 * installs a filter itself gets its profile written just before, covering
 * the run up to there, and the shim records nothing after: its wrappers
 * call the real functions, threads end and forks happen without it, and
 * there is nothing left to write at exit. If the install fails, the profile
 * is taken back and the shim goes on, as after a failed exec. */

long cv__seccomp_call(long (*sys)(long, long, long, long, long, long, long), long n, long a1, long a2, long a3,
		      long a4, long a5, long a6)
{
	bool began = cv__profiling_here() && !inside_shim(), wrote = false;
	if (began) {
		cv__warn("the program installs a seccomp filter: its profile covers the run up to here");
		wrote = cv__write_profile(CV_EXIT_SECCOMP);
		__atomic_store_n(&cv__process.disabled, 1, __ATOMIC_SEQ_CST);
		cv__take_update();
	}
	long rc = sys(n, a1, a2, a3, a4, a5, a6);
	/* seccomp() gives a descriptor for SECCOMP_FILTER_FLAG_NEW_LISTENER and,
	 * for TSYNC without it, the id of a thread it could not filter. */
	bool listener = n == SYS_seccomp && (a2 & SECCOMP_FILTER_FLAG_NEW_LISTENER);
	if (began && (rc < 0 || (rc > 0 && !listener))) {   /* it failed: as after a failed exec */
		int saved_errno = errno;
		__atomic_store_n(&cv__process.disabled, 0, __ATOMIC_SEQ_CST);
		cv__take_update();
		if (wrote)
			cv__profile_retract();
		errno = saved_errno;
	}
	return rc;
}

static long real_prctl(long n, long option, long a2, long a3, long a4, long a5, long unused)
{
	(void)n, (void)unused;
	return cv__real.prctl((int)option, a2, a3, a4, a5);
}

CV_EXPORT int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long);
	unsigned long a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
	va_end(ap);
	if (!cv__real.prctl)
		cv__resolve_real();   /* called before the shim started */
	if (option != PR_SET_SECCOMP)
		return cv__real.prctl(option, a2, a3, a4, a5);
	return (int)cv__seccomp_call(real_prctl, SYS_prctl, option, (long)a2, (long)a3, (long)a4, (long)a5, 0);
}

/* ---- _exit, _Exit, quick_exit ------------------------------------------------ *
 * _exit runs no exit handlers, so the destructor never runs: write here.
 * (exit() itself ends in glibc's internal _exit, which does not come here;
 * by then the destructor has written.) quick_exit runs the at_quick_exit
 * handlers in reverse order of registration: ours, registered at start,
 * runs after the program's. */

static void write_at(uint32_t reason)
{
	if (cv__profiling_here() && !inside_shim() && !nothing_to_add())
		cv__write_profile(reason);
}

CV_EXPORT void _exit(int status)
{
	write_at(CV_EXIT_UNDERSCORE);
	if (!cv__real._exit)
		cv__resolve_real();   /* called before the shim started */
	cv__real._exit(status);
	__builtin_unreachable();
}

CV_EXPORT void _Exit(int status)
{
	_exit(status);
}

static void at_quick_exit_handler(void)
{
	write_at(CV_EXIT_QUICK);
}

/* ---- exec ---------------------------------------------------------------------- *
 * The profile is written before the image is replaced, if the image recorded
 * anything. If the exec fails the program goes on, so the profile is taken
 * back and the process's later end writes one covering the whole run.
 *
 * CONVOY_FOLLOW=0: the child's environment loses the shim's entries from
 * LD_PRELOAD (the others stay, in order; the variable goes if nothing is
 * left). An entry is the shim when it has the base name of the libconvoy.so
 * this process loaded (a relative path may no longer resolve after a chdir),
 * or is the same file (device and inode) under another name. The new environment is
 * built on the stack: a vfork child must not leave memory behind in the
 * parent it shares memory with. */

static struct {
	bool  no_follow;              /* CONVOY_FOLLOW=0 */
	dev_t dev;
	ino_t ino;
	char  base[256];              /* our file's base name */
} self;

static bool names_the_shim(const char *entry, size_t len)
{
	char path[4096];
	if (!len || len >= sizeof(path))
		return false;
	memcpy(path, entry, len);
	path[len] = '\0';
	const char *slash = strrchr(path, '/');
	if (strcmp(slash ? slash + 1 : path, self.base) == 0)
		return true;
	struct stat st;
	return slash && cv__stat(path, &st) == 0 && st.st_dev == self.dev && st.st_ino == self.ino;
}

static bool preload_sep(char c)
{
	return c == ' ' || c == ':';
}

/* LD_PRELOAD's value in envp, and how many entries name the shim. */
static const char *find_preload(char *const envp[], size_t *index, size_t *ours)
{
	*ours = 0;
	for (size_t i = 0; envp && envp[i]; i++) {
		if (strncmp(envp[i], "LD_PRELOAD=", 11) != 0)
			continue;
		const char *v = envp[i] + 11;
		for (const char *p = v; *p;) {
			size_t len = strcspn(p, ": ");
			if (names_the_shim(p, len))
				(*ours)++;
			p += len;
			while (preload_sep(*p))
				p++;
		}
		*index = i;
		return v;
	}
	return NULL;
}

/* LD_PRELOAD=<value without the shim> into buf, joined by the separator the
 * value used first; false if nothing is left. */
static bool preload_without_shim(const char *v, char *buf)
{
	char *o = buf + strlen(strcpy(buf, "LD_PRELOAD="));
	const char *first_sep = v + strcspn(v, ": ");
	char sep = *first_sep ? *first_sep : ':';
	bool any = false;
	for (const char *p = v; *p;) {
		size_t len = strcspn(p, ": ");
		if (len && !names_the_shim(p, len)) {
			if (any)
				*o++ = sep;
			memcpy(o, p, len);
			o += len;
			any = true;
		}
		p += len;
		while (preload_sep(*p))
			p++;
	}
	*o = '\0';
	return any;
}

static size_t env_count(char *const envp[])
{
	size_t n = 0;
	while (envp && envp[n])
		n++;
	return n;
}

/* Declares env, the environment for the child: envp itself, or (with
 * CONVOY_FOLLOW=0 and the shim in its LD_PRELOAD) a copy without it, in
 * arrays on the caller's stack. */
#define CV_CHILD_ENV(env, envp)                                                                \
	size_t env##_at = 0, env##_ours = 0;                                                   \
	const char *env##_pre = self.no_follow ? find_preload((envp), &env##_at, &env##_ours) : NULL; \
	bool env##_copy = env##_pre && env##_ours;                                             \
	size_t env##_n = env##_copy ? env_count(envp) : 0;                                     \
	char *env##_vec[env##_n + 1];                                                          \
	char env##_buf[env##_copy ? strlen(env##_pre) + 12 : 1];                               \
	char *const *env = env##_copy ? child_env((envp), env##_n, env##_at, env##_pre, env##_vec, env##_buf) : (envp)

static char *const *child_env(char *const envp[], size_t n, size_t at, const char *preload, char **vec,
			      char *buf)
{
	size_t k = 0;
	bool keep = preload_without_shim(preload, buf);
	for (size_t i = 0; i < n; i++) {
		if (i != at)
			vec[k++] = envp[i];
		else if (keep)
			vec[k++] = buf;
	}
	vec[k] = NULL;
	return vec;
}

/* Whether this process had children the kernel reaped itself (SIGCHLD
 * ignored at some time) that the next image will not know of, under a
 * launcher that lets it skip its profile (nothing_to_add): it notes SIGCHLD
 * ignored only if it still is at its start, and an exec keeps SIG_IGN but
 * resets a handler and SA_NOCLDWAIT. Without a profile under this pid, one
 * of those children's would name a parent that has none, and `convoy run`'s
 * chain of parents would break there (helper-123). */
static bool children_unseen_after_exec(void)
{
	return __atomic_load_n(&cv__process.sigchld_ignored, __ATOMIC_RELAXED) && launched_by_another() &&
	       !cv__sigchld_ignored(true);
}

/* Before an exec: write the profile of the image being replaced, when it
 * recorded anything or the next could not tell of its children. Returns
 * whether to take it back. */
static bool exec_begins(void)
{
	if (!cv__real.execve)
		cv__resolve_real();
	return cv__profiling_here() && !inside_shim() && (recorded_anything() || children_unseen_after_exec()) &&
	       cv__write_profile(CV_EXIT_EXEC);
}

static int exec_failed(bool wrote, int rc)
{
	if (wrote)
		cv__profile_retract();   /* keeps errno */
	return rc;
}

CV_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	bool wrote = exec_begins();
	CV_CHILD_ENV(env, envp);
	return exec_failed(wrote, cv__real.execve(path, argv, env));
}

CV_EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

CV_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	bool wrote = exec_begins();
	CV_CHILD_ENV(env, envp);
	return exec_failed(wrote, cv__real.execvpe(file, argv, env));
}

CV_EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

CV_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	bool wrote = exec_begins();
	CV_CHILD_ENV(env, envp);
	return exec_failed(wrote, cv__real.fexecve(fd, argv, env));
}

CV_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
	bool wrote = exec_begins();
	CV_CHILD_ENV(env, envp);
	return exec_failed(wrote, cv__real.execveat(dirfd, path, argv, env, flags));
}

/* The execl family: the arguments into an array on the stack, as glibc does. */
#define CV_COLLECT_ARGS(argv, arg0, ap, last)                      \
	size_t argv##_n = 1;                                       \
	va_start(ap, last);                                        \
	while (va_arg(ap, char *))                                 \
		argv##_n++;                                        \
	va_end(ap);                                                \
	char *argv[argv##_n + 1];                                  \
	argv[0] = (char *)(arg0);                                  \
	va_start(ap, last);                                        \
	for (size_t i_ = 1; i_ <= argv##_n; i_++)                  \
		argv[i_] = va_arg(ap, char *)

CV_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	CV_COLLECT_ARGS(argv, arg, ap, arg);
	va_end(ap);
	return execve(path, argv, environ);
}

CV_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	CV_COLLECT_ARGS(argv, arg, ap, arg);
	va_end(ap);
	return execvpe(file, argv, environ);
}

CV_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	CV_COLLECT_ARGS(argv, arg, ap, arg);
	char *const *envp = va_arg(ap, char *const *);   /* after the NULL that ends the arguments */
	va_end(ap);
	return execve(path, argv, envp);
}

/* posix_spawn starts a new process without replacing this one: nothing to
 * write, but CONVOY_FOLLOW=0 applies to its child too. */
CV_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
			  const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	if (!cv__real.posix_spawn)
		cv__resolve_real();
	CV_CHILD_ENV(env, envp);
	return cv__real.posix_spawn(pid, path, actions, attr, argv, env);
}

CV_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	if (!cv__real.posix_spawnp)
		cv__resolve_real();
	CV_CHILD_ENV(env, envp);
	return cv__real.posix_spawnp(pid, file, actions, attr, argv, env);
}

/* ---- fatal signals ------------------------------------------------------------ *
 * For SIGSEGV, SIGBUS, SIGABRT, SIGFPE and SIGILL whose disposition is SIG_DFL
 * (at start, or when the program sets SIG_DFL again), the shim installs its
 * handler, and keeps what the kernel reported for SIG_DFL as the program's
 * view: sigaction queries get that view, so the program sees no change. The
 * moment the program sets anything else (sigaction, signal, sigset,
 * sysv_signal, bsd_signal), the program's view goes back to the kernel first
 * and the call then goes through untouched: its handler runs exactly as
 * without the shim, and the old disposition it gets back is SIG_DFL.
 *
 * The handler writes the profile (unless the thread was inside the shim,
 * whose state it would then read half-changed; or another thread is writing
 * it: the handler lets that write finish before the process dies), puts
 * SIG_DFL back and lets the signal take its default action: a
 * signal that was sent (kill, raise, abort) is sent again to this thread,
 * with its siginfo where the kernel allows it; a fault is left to recur when
 * the handler returns to the faulting instruction. Exit status and core dump
 * are the program's own. */

static struct { int sig; uint32_t reason; } fatal[] = {
	{ SIGSEGV, CV_EXIT_SIGSEGV }, { SIGBUS, CV_EXIT_SIGBUS }, { SIGABRT, CV_EXIT_SIGABRT },
	{ SIGFPE, CV_EXIT_SIGFPE },   { SIGILL, CV_EXIT_SIGILL },
	/* CONVOY_DUMP_SIGNAL=N, set by convoy run and scale (never by plain
	 * preloading): the signal their --timeout sends, handled like the
	 * fatal ones so that a hung program still leaves its profile. 0: none. */
	{ 0, CV_EXIT_DUMP_SIGNAL },
	/* CONVOY_SNAPSHOT_SIGNAL=N, also set only by convoy run and scale: sent
	 * by sigqueue with the value CV_SNAPSHOT_MAGIC, it asks for a snapshot
	 * profile at a hang and the program goes on (--on-hang auto, continue); sent
	 * any other way it is handled like the fatal ones. 0: none. */
	{ 0, CV_EXIT_SNAPSHOT_SIGNAL },
};
#define CV_NFATAL (sizeof(fatal) / sizeof(fatal[0]))
#define CV_DUMP_SLOT (CV_NFATAL - 2)
#define CV_SNAPSHOT_SLOT (CV_NFATAL - 1)

static int ours[CV_NFATAL];                     /* our handler is installed */
static struct sigaction program_view[CV_NFATAL];

static int fatal_index(int sig)
{
	for (size_t i = 0; i < CV_NFATAL; i++)
		if (fatal[i].sig == sig && sig != 0)
			return (int)i;
	return -1;
}

/* Hands the disposition back to the program: the kernel holds its view
 * again. True when this call did (another may have, meanwhile). */
static bool release(int i)
{
	if (!__atomic_exchange_n(&ours[i], 0, __ATOMIC_ACQ_REL))
		return false;
	cv__real.sigaction(fatal[i].sig, &program_view[i], NULL);
	return true;
}

/* convoy's request for a snapshot: the snapshot signal, queued with its mark.
 * Only a process can queue it (the kernel never does), and only one that
 * may signal this process. */
static bool snapshot_request(int i, const siginfo_t *si)
{
	return i == (int)CV_SNAPSHOT_SLOT && si->si_code == SI_QUEUE && si->si_value.sival_int == CV_SNAPSHOT_MAGIC;
}

/* Why fatal[i]'s signal ends the process: the dump signal is convoy's stop
 * only when its launcher sent it (convoy run and scale name themselves:
 * CONVOY_LAUNCHER_PID); a SIGTERM from anyone else, or from the program
 * itself, is not. A sender outside the process's PID namespace reads as
 * pid 0 (the launcher of a command that made one: unshare -p, a
 * container): taken for the launcher where there is one (helper-128). */
static uint32_t fatal_reason(int i, const siginfo_t *si)
{
	if (i != (int)CV_DUMP_SLOT)
		return fatal[i].reason;
	pid_t launcher = cv__config.launcher_pid;
	bool convoys = si->si_code == SI_USER && launcher != 0 && (si->si_pid == launcher || si->si_pid == 0);
	return convoys ? CV_EXIT_DUMP_SIGNAL : CV_EXIT_DUMP_SIGNAL_SENT;
}

static void on_fatal_signal(int sig, siginfo_t *si, void *context)
{
	int saved_errno = errno;
	int i = fatal_index(sig);
	if (snapshot_request(i, si)) {
		/* Installed with SA_RESTART: the futex waits of a hung program go
		 * on as if nothing happened (signal(7)). A thread inside the shim
		 * (whose state may be half changed) writes it when it leaves; one
		 * whose deferred signals wait for their release, once they went
		 * (the write's own release, inside this handler, would unblock
		 * them in a mask its return puts back: helper-143). */
		cv__snapshot_pending = 1;
		if (cv__profiling_here() && !inside_shim() && !__atomic_load_n(&cv__deferred_signals, __ATOMIC_RELAXED))
			cv__write_snapshot();
		errno = saved_errno;
		return;
	}
	if (cv__profiling_here() && (inside_shim() || !cv__write_profile(fatal_reason(i, si))))
		cv__profile_settle();
	release(i);
	bool sent = si->si_code <= 0 || (sig == SIGBUS && si->si_code == BUS_MCEERR_AO);
	if (sent) {
		pid_t pid = cv__getpid(), tid = cv__gettid();
		if (cv__real.syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, si) != 0)
			cv__real.syscall(SYS_tgkill, pid, tid, sig);   /* the kernel keeps a kill()'s siginfo to itself */
	}
	errno = saved_errno;
}

/* A snapshot request that found this thread inside the shim, now that it
 * has left (cv__guard_leave): the shim's state is whole again, and errno
 * is the program's (its cancellation type comes back after this). */
void cv__snapshot_deferred(void)
{
	if (cv__profiling_here())
		cv__write_snapshot();
	else
		cv__snapshot_pending = 0;
}

/* Installs our handler if sig (fatal[i]) is at SIG_DFL. On the program's
 * alternate signal stack (SA_ONSTACK), where one is set, for a fault that
 * may come from a stack overflow; but not for a snapshot, which goes on:
 * that stack is sized for the program's own handlers, and a snapshot needs
 * about 8 KiB (a 4 KiB one overflowed and killed the program). */
static void claim(int i)
{
	int onstack = i == (int)CV_SNAPSHOT_SLOT ? 0 : SA_ONSTACK;
	struct sigaction now, mine = { .sa_sigaction = on_fatal_signal, .sa_flags = SA_SIGINFO | onstack | SA_RESTART };
	sigemptyset(&mine.sa_mask);
	if (fatal[i].sig == 0 || __atomic_load_n(&ours[i], __ATOMIC_ACQUIRE) ||
	    cv__real.sigaction(fatal[i].sig, NULL, &now) != 0 || now.sa_handler != SIG_DFL)
		return;
	program_view[i] = now;
	if (cv__real.sigaction(fatal[i].sig, &mine, NULL) == 0)
		__atomic_store_n(&ours[i], 1, __ATOMIC_RELEASE);
}

/* Whether the shim keeps signal bookkeeping for this call: only in the
 * process it started in or a fork child (a vfork child shares our memory
 * but not our dispositions). */
static int managed_index(int sig)
{
	if (!cv__real.sigaction)
		cv__resolve_real();
	int i = fatal_index(sig);
	return i >= 0 && cv__profiling_here() ? i : -1;
}

/* signals.c makes the old interfaces (signal, sysv_signal, sigset) of this
 * (cv__sigaction: the same, called without the PLT). */
int cv__sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int i = managed_index(sig);
	bool to_default = act && act->sa_handler == SIG_DFL;   /* before *old is written: act may be old */
	bool released = false;
	struct sigaction view;
	if (i >= 0 && __atomic_load_n(&ours[i], __ATOMIC_ACQUIRE)) {
		view = program_view[i];
		if (!act) {
			if (old)
				*old = view;
			return 0;
		}
		released = release(i);
	}
	int rc = cv__program_sigaction(sig, act, old);
	/* The program's view, not the kernel's copy of it that our release
	 * wrote through glibc, which adds SA_RESTORER and its restorer; unless
	 * another call (a handler's, another thread's) installed its own
	 * disposition in between, which is then the old one. */
	if (rc == 0 && released && old && old->sa_handler == view.sa_handler)
		*old = view;
	if (rc == 0 && i >= 0 && to_default)
		claim(i);
	return rc;
}

CV_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return cv__sigaction(sig, act, old);
}

CV_EXPORT int __sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return cv__sigaction(sig, act, old);
}


/* ---- start ------------------------------------------------------------------ */

/* CONVOY_DUMP_SIGNAL, CONVOY_SNAPSHOT_SIGNAL: a signal number whose default
 * action ends the process and that the shim does not handle already;
 * anything else gets one warning and none. SIGKILL and SIGSTOP cannot be
 * caught. */
static int signal_from_env(const char *name)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return 0;
	char *end;
	long v = strtol(s, &end, 10);
	bool ends_process = v == SIGTERM || v == SIGINT || v == SIGHUP || v == SIGQUIT || v == SIGALRM ||
			    v == SIGUSR1 || v == SIGUSR2 || (v >= SIGRTMIN && v <= SIGRTMAX);
	if (*end || !ends_process || fatal_index((int)v) >= 0) {
		cv__warn("%s=%s is not the number of a signal that ends the process "
			 "(TERM, INT, HUP, QUIT, ALRM, USR1, USR2 or a real-time one) and that the shim does "
			 "not handle already; ignored", name, s);
		return 0;
	}
	return (int)v;
}

/* From cv__init, after the configuration is read. */
void cv__lifecycle_init(void)
{
	self.no_follow = !cv__env_flag("CONVOY_FOLLOW", true);
	Dl_info info;
	struct stat st;
	if (dladdr((void *)&cv__lifecycle_init, &info) && info.dli_fname && cv__stat(info.dli_fname, &st) == 0) {
		self.dev = st.st_dev;
		self.ino = st.st_ino;
		const char *slash = strrchr(info.dli_fname, '/'), *base = slash ? slash + 1 : info.dli_fname;
		size_t n = strnlen(base, sizeof(self.base) - 1);   /* not snprintf: its code is pages to touch */
		memcpy(self.base, base, n);
		self.base[n] = '\0';
	}
	fatal[CV_DUMP_SLOT].sig = signal_from_env("CONVOY_DUMP_SIGNAL");
	fatal[CV_SNAPSHOT_SLOT].sig = signal_from_env("CONVOY_SNAPSHOT_SIGNAL");
	for (size_t i = 0; i < CV_NFATAL; i++)
		claim((int)i);
	at_quick_exit(at_quick_exit_handler);
	atexit(exit_after_destructors);
}
