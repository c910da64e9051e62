/* signals.c — the program's signal handlers run through the shim's
 * trampoline, which keeps them out of the shim's critical sections (lock.c)
 * without a system call per section.
 *
 * A handler of the program must not run while its thread is inside a
 * section: it may block in the program's own lock, held by a thread that
 * spins on the shim's lock the interrupted section holds (a deadlock the
 * program never had), or siglongjmp away with the shim's lock held. Sections
 * used to block every signal, two system calls each once the program had a
 * handler: about 2 us a section on this guest, 1.2 ms of `pigz -p 2`'s
 * 120 ms (a mutex and a condvar made per job, three sections each).
 *
 * Now the shim installs its trampoline for every handler the program installs
 * through the C library (sigaction, signal and the other old interfaces),
 * with the program's flags and mask, and keeps the program's handler in a
 * table. Outside a section the trampoline calls the handler at once (a tail
 * call: no frame of the shim's stays under it), with the kernel's siginfo
 * and context. Inside one it defers the signal, as if it had been blocked
 * for the section: it blocks the signal in the context the kernel restores
 * when the trampoline returns, queues the same signal again to the thread
 * with its siginfo (rt_tgsigqueueinfo), and the end of the section unblocks
 * it, where the kernel delivers it again, this time to the handler. Faults
 * (a SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP or SIGSYS the kernel raised
 * for an instruction) cannot wait: they go to the handler at once.
 *
 * The program sees its own dispositions: sigaction's old action and queries
 * give its handler and flags back whenever the kernel holds the trampoline
 * (after an SA_RESETHAND delivery it holds SIG_DFL, and says so); a raw
 * rt_sigaction system call that asks sees the trampoline. A handler
 * installed another way (a raw rt_sigaction system call, or before the shim
 * started) is not wrapped: lock.c's sections then block signals as before
 * (cv__program_handler_coming). A vfork child, which shares our memory but
 * not our dispositions, installs its handlers untouched.
 */
#include <errno.h>
#include <signal.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "shim.h"

/* Per signal, what the program set through sigaction: its handler and
 * whether it asked for SA_SIGINFO, written before the kernel gets the
 * trampoline and kept when the program sets SIG_DFL or SIG_IGN (a
 * trampoline may be on its way; what the kernel holds decides whether an
 * entry is used), and what the kernel was given for it. */
struct handler {
	void (*fn)(int, siginfo_t *, void *);
	bool siginfo;
	struct sigaction installed;
};
static struct handler handlers[_NSIG];
static cv_spinlock_t handlers_lock;   /* one installer at a time */
static sigset_t interrupting;         /* siginterrupt(sig, 1): signal() then sets no SA_RESTART */

static void trampoline(int sig, siginfo_t *si, void *context);

/* The signals this thread deferred in the section it is in, one bit each. */
static __thread uint64_t deferred;

static bool raised_by_an_instruction(int sig, const siginfo_t *si)
{
	return si->si_code > 0 && (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
				   sig == SIGTRAP || sig == SIGSYS);
}

/* In a section: the signal waits for its end (lock.c, cv__critical_leave).
 * False if it could not be queued again: the handler runs now, as without
 * the shim. */
static __attribute__((noinline)) bool defer(int sig, siginfo_t *si, ucontext_t *uc)
{
	int saved_errno = errno;
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	/* Blocked now (under SA_NODEFER it is not, and the signal queued
	 * below would come straight back), and after the return, by the
	 * context the kernel restores. */
	pthread_sigmask(SIG_BLOCK, &one, NULL);
	/* The kernel has just set SIG_DFL: the trampoline again, for the
	 * delivery to come. Read without the lock, which this thread may hold
	 * (a sigaction of the program's on another thread at this very moment
	 * may leave either disposition). */
	struct sigaction installed = handlers[sig].installed;
	if (installed.sa_sigaction == trampoline && (installed.sa_flags & SA_RESETHAND))
		cv__real.sigaction(sig, &installed, NULL);
	pid_t pid = (pid_t)cv__real.syscall(SYS_getpid), tid = (pid_t)cv__real.syscall(SYS_gettid);
	bool queued = cv__real.syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, si) == 0 ||
		      cv__real.syscall(SYS_tgkill, pid, tid, sig) == 0;   /* a siginfo the kernel keeps to itself */
	if (queued) {
		sigaddset(&uc->uc_sigmask, sig);
		__atomic_fetch_or(&deferred, 1ull << (sig - 1), __ATOMIC_RELAXED);
	} else {
		pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	}
	errno = saved_errno;
	return queued;
}

static void trampoline(int sig, siginfo_t *si, void *context)
{
	if (CV_UNLIKELY(cv__sections != 0) && !raised_by_an_instruction(sig, si) && defer(sig, si, context))
		return;
	/* A handler that takes only the signal number is called the way the
	 * kernel calls it: the other two arguments are in registers it never
	 * reads. */
	__atomic_load_n(&handlers[sig].fn, __ATOMIC_ACQUIRE)(sig, si, context);
}

/* From cv__critical_leave, at the end of the outermost section, when a
 * signal was deferred: unblocking it delivers it. A handler that runs here
 * and enters a section of its own releases what that one defers. */
void cv__release_deferred(void)
{
	uint64_t bits = __atomic_exchange_n(&deferred, 0, __ATOMIC_RELAXED);
	sigset_t set;
	sigemptyset(&set);
	for (int sig = 1; bits; sig++, bits >>= 1)
		if (bits & 1)
			sigaddset(&set, sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

bool cv__deferred_signals(void)
{
	return __atomic_load_n(&deferred, __ATOMIC_RELAXED) != 0;
}

/* The program's view of what the kernel returned, given what the program
 * last set (h). After an SA_RESETHAND delivery the kernel holds SIG_DFL
 * with the flags it was given, SA_SIGINFO among them. */
static void as_the_program_set_it(struct sigaction *a, const struct handler *h)
{
	bool reset = a->sa_handler == SIG_DFL && h->installed.sa_sigaction == trampoline &&
		     (h->installed.sa_flags & SA_RESETHAND);
	if (a->sa_sigaction == trampoline)
		a->sa_sigaction = h->fn;
	else if (!reset)
		return;
	if (!h->siginfo)
		a->sa_flags &= ~SA_SIGINFO;
}

static bool is_handler(sighandler_t h)
{
	return h != SIG_DFL && h != SIG_IGN && h != SIG_ERR && h != SIG_HOLD;
}

/* sigaction for the program, past lifecycle.c's bookkeeping of the fatal
 * signals: a handler goes in behind the trampoline. */
int cv__program_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (!cv__real.sigaction)
		cv__resolve_real();
	bool handler = act && is_handler(act->sa_handler);
	if (sig <= 0 || sig >= _NSIG || !cv__profiling_here()) {
		if (handler)
			cv__program_handler_coming();   /* lock.c: sections block signals from now on */
		return cv__real.sigaction(sig, act, old);
	}
	struct sigaction given;
	if (act) {
		given = *act;
		if (handler) {
			given.sa_sigaction = trampoline;
			given.sa_flags |= SA_SIGINFO;
		}
	}
	cv__spin_lock(&handlers_lock);
	struct handler was = handlers[sig];
	if (act) {
		handlers[sig].installed = given;
		if (handler) {
			handlers[sig].siginfo = (act->sa_flags & SA_SIGINFO) != 0;
			__atomic_store_n(&handlers[sig].fn, act->sa_sigaction, __ATOMIC_RELEASE);
		}
	}
	int rc = cv__real.sigaction(sig, act ? &given : NULL, old);
	if (rc != 0 && act) {   /* SIGKILL, SIGSTOP, glibc's own signals (EINVAL): as it was */
		handlers[sig].installed = was.installed;
		handlers[sig].siginfo = was.siginfo;
		__atomic_store_n(&handlers[sig].fn, was.fn, __ATOMIC_RELEASE);
	}
	cv__spin_unlock(&handlers_lock);
	if (rc == 0 && old)
		as_the_program_set_it(old, &was);
	return rc;
}

/* ---- the old interfaces ------------------------------------------------------ *
 * glibc makes them of its internal sigaction, which the shim does not see:
 * the same here, of the program's (lifecycle.c's sigaction), with the flags
 * and masks glibc gives (sysdeps/posix/signal.c, sysv_signal.c, sigset.c). */

/* glibc refuses its own signals, SIGCANCEL and SIGSETXID (the first two
 * real-time ones), here too. */
static bool bad_signal(int sig, sighandler_t handler)
{
	if (handler != SIG_ERR && sig > 0 && sig < NSIG && sig != __SIGRTMIN && sig != __SIGRTMIN + 1)
		return false;
	errno = EINVAL;
	return true;
}

CV_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	if (bad_signal(sig, handler))
		return SIG_ERR;
	struct sigaction act = { .sa_handler = handler }, old;
	sigemptyset(&act.sa_mask);
	sigaddset(&act.sa_mask, sig);
	act.sa_flags = sigismember(&interrupting, sig) ? 0 : SA_RESTART;
	return sigaction(sig, &act, &old) < 0 ? SIG_ERR : old.sa_handler;
}

CV_EXPORT sighandler_t ssignal(int sig, sighandler_t handler)
{
	return signal(sig, handler);
}

CV_EXPORT sighandler_t bsd_signal(int sig, sighandler_t handler)
{
	return signal(sig, handler);
}

CV_EXPORT sighandler_t sysv_signal(int sig, sighandler_t handler)
{
	if (bad_signal(sig, handler))
		return SIG_ERR;
	struct sigaction act = { .sa_handler = handler, .sa_flags = SA_RESETHAND | SA_NODEFER }, old;
	sigemptyset(&act.sa_mask);
	return sigaction(sig, &act, &old) < 0 ? SIG_ERR : old.sa_handler;
}

CV_EXPORT sighandler_t __sysv_signal(int sig, sighandler_t handler)
{
	return sysv_signal(sig, handler);
}

CV_EXPORT sighandler_t sigset(int sig, sighandler_t disposition)
{
	if (disposition == SIG_ERR || sig < 1 || sig >= NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	sigset_t one, before;
	sigemptyset(&one);
	sigaddset(&one, sig);
	struct sigaction act = { .sa_handler = disposition }, old;
	if (disposition == SIG_HOLD) {
		if (sigprocmask(SIG_BLOCK, &one, &before) < 0)
			return SIG_ERR;
		if (sigismember(&before, sig))
			return SIG_HOLD;
		return sigaction(sig, NULL, &old) < 0 ? SIG_ERR : old.sa_handler;
	}
	sigemptyset(&act.sa_mask);
	if (sigaction(sig, &act, &old) < 0 || sigprocmask(SIG_UNBLOCK, &one, &before) < 0)
		return SIG_ERR;
	return sigismember(&before, sig) ? SIG_HOLD : old.sa_handler;
}

/* glibc's own siginterrupt changes the disposition in place (the trampoline
 * stays, with SA_RESTART set or cleared); what signal() sets next is kept
 * here too. */
CV_EXPORT int siginterrupt(int sig, int interrupt)
{
	if (!cv__real.siginterrupt)
		cv__resolve_real();
	int rc = cv__real.siginterrupt(sig, interrupt);
	if (rc == 0) {
		cv__spin_lock(&handlers_lock);
		if (interrupt)
			sigaddset(&interrupting, sig);
		else
			sigdelset(&interrupting, sig);
		cv__spin_unlock(&handlers_lock);
	}
	return rc;
}
