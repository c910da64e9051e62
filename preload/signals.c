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
 * table. Outside a section and the closed reentrancy guard (shim.h says
 * when it is closed) the trampoline calls the handler at once (a tail
 * call: no frame of the shim's stays under it), with the kernel's siginfo
 * and context. Inside one it defers the signal, as if it had been blocked
 * there: it blocks the signal in the context the kernel restores when the
 * trampoline returns, queues the same signal again to the thread with its
 * siginfo (rt_tgsigqueueinfo), and the end of the section or guard
 * unblocks it, where the kernel delivers it again, this time to the
 * handler (a real-time signal's copies queued already go back behind it:
 * queue_again; docs/lifecycle.md says what is not exact). Faults
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
#include <time.h>
#include <ucontext.h>
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
static struct handler handlers[_NSIG] CV_LARGE_BSS;
static sigset_t interrupting;   /* siginterrupt(sig, 1): signal() then sets no SA_RESTART */

/* One thread at a time changes a disposition through the shim, or re-arms
 * one (defer). Taken with the taker's tid (gettid(), not the TLS copy,
 * which a vfork child shares with its parent): defer, in a handler that
 * may have interrupted its own thread's holder, tells that case. */
static cv_spinlock_t handlers_lock;

/* The child of a fork: a thread that held the lock is not in it. */
void cv__signals_after_fork(void)
{
	cv__spin_reset(&handlers_lock);
}

static void trampoline(int sig, siginfo_t *si, void *context);

/* The signals this thread deferred in the section or guard it is in, one
 * bit each (shim.h). */
__thread uint64_t cv__deferred_signals;

/* A fault of the instruction the thread was running: it cannot wait (it
 * would come again). Not the kernel's asynchronous codes for the same
 * signals: a machine check found later (BUS_MCEERR_AO), a perf event's
 * trap (TRAP_PERF). */
static bool raised_by_an_instruction(int sig, const siginfo_t *si)
{
	if (si->si_code <= 0)
		return false;
	switch (sig) {
	case SIGSEGV: case SIGILL: case SIGFPE: case SIGSYS:
		return true;
	case SIGBUS:
		return si->si_code != BUS_MCEERR_AO;
	case SIGTRAP:
		return si->si_code != 6;   /* TRAP_PERF (Linux 5.13), not in every header */
	default:
		return false;
	}
}

/* The kernel reset sig's disposition to SIG_DFL as it delivered it
 * (SA_RESETHAND): the trampoline again, with the flags and mask the kernel
 * kept (siginterrupt may have changed them), unless the program has set
 * another disposition since. Under the lock, unless this thread holds it
 * (the signal interrupted its own change of a disposition, and no other
 * thread can be making one). */
static void rearm(int sig, pid_t tid)
{
	bool mine = __atomic_load_n(&handlers_lock.locked, __ATOMIC_RELAXED) == tid;
	if (!mine)
		cv__spin_lock_as(&handlers_lock, tid);
	struct sigaction now;
	const struct sigaction *last = &handlers[sig].installed;
	if (last->sa_sigaction == trampoline && (last->sa_flags & SA_RESETHAND) &&
	    cv__real.sigaction(sig, NULL, &now) == 0 && now.sa_handler == SIG_DFL &&
	    (now.sa_flags & (SA_RESETHAND | SA_SIGINFO)) == (SA_RESETHAND | SA_SIGINFO)) {
		now.sa_sigaction = trampoline;
		cv__real.sigaction(sig, &now, NULL);
	}
	if (!mine)
		cv__spin_unlock_deferring(&handlers_lock);
}

/* A real-time signal's copies taken off its queue, a block at a time. */
struct held_back {
	struct held_back *next;
	uint32_t n;
	siginfo_t si[31];
};

/* Queues si (sig) to this thread again; true if it was. A real-time
 * signal's copies that are queued already (to the thread or the process:
 * the signal is blocked, so they wait) would be delivered before it: up to
 * 4096 of them are taken off (rt_sigtimedwait, no wait) and queued again
 * after it, to this thread, in the order they came (docs/lifecycle.md says
 * what this misses). */
static bool queue_again(pid_t pid, pid_t tid, int sig, siginfo_t *si, const sigset_t *one)
{
	static const struct timespec now = { 0, 0 };
	struct held_back *first = NULL, *last = NULL;
	siginfo_t copy;
	for (uint32_t taken = 0; sig >= SIGRTMIN && taken < 4096; taken++) {
		if (cv__real.syscall(SYS_rt_sigtimedwait, one, &copy, &now, _NSIG / 8) != sig)
			break;
		if (!last || last->n == 31) {
			struct held_back *b = cv__alloc(sizeof(*b));
			if (!b) {   /* this copy goes back first: the order is lost */
				cv__real.syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, &copy);
				break;
			}
			*(last ? &last->next : &first) = b;
			last = b;
		}
		last->si[last->n++] = copy;
	}
	/* tgkill for a siginfo the kernel will not let a process send (it
	 * fails with the other when a real-time queue is full) */
	bool queued = cv__real.syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, si) == 0 ||
		      cv__real.syscall(SYS_tgkill, pid, tid, sig) == 0;
	for (struct held_back *b = first, *next; b; b = next) {
		for (uint32_t i = 0; i < b->n; i++)   /* their places were free a moment ago */
			cv__real.syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, &b->si[i]);
		next = b->next;
		cv__free(b, sizeof(*b));
	}
	return queued;
}

/* In a section or the guard: the signal waits for its end (lock.c,
 * cv__critical_leave; shim.h, cv__guard_leave_quiet). False if it could
 * not be queued again (a real-time signal, its queue full): the handler
 * runs now, inside. */
static __attribute__((noinline)) bool defer(int sig, siginfo_t *si, ucontext_t *uc)
{
	int saved_errno = errno;
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	/* Blocked now (under SA_NODEFER it is not, and the signal queued
	 * below would come straight back), and after the return, by the
	 * context the kernel restores. */
	cv__sigmask(SIG_BLOCK, &one, NULL);
	pid_t pid = (pid_t)cv__real.syscall(SYS_getpid), tid = (pid_t)cv__real.syscall(SYS_gettid);
	bool queued = queue_again(pid, tid, sig, si, &one);
	if (queued) {
		if (handlers[sig].installed.sa_flags & SA_RESETHAND)
			rearm(sig, tid);   /* the signal stays blocked until the section's or guard's end */
		sigaddset(&uc->uc_sigmask, sig);
		__atomic_fetch_or(&cv__deferred_signals, 1ull << (sig - 1), __ATOMIC_RELAXED);
	} else {
		cv__sigmask(SIG_UNBLOCK, &one, NULL);
	}
	errno = saved_errno;
	return queued;
}

/* The handler about to run is on an alternate stack set with
 * SS_AUTODISARM, which the kernel reports as none until the handler
 * returns (it saved it in uc_stack first): noted in the thread's state for
 * cv__stack_room (stacks.c, on_alt_stack), where it stays after the
 * handler. A nested signal's uc_stack is that disarmed state, and leaves
 * the outer handler's stack in place. */
static __attribute__((noinline)) void note_disarmed_stack(const ucontext_t *uc)
{
	struct cv_thread *t = cv__my_state;   /* also where the signal came inside the guard */
	uintptr_t lo = (uintptr_t)uc->uc_stack.ss_sp, hi = lo + uc->uc_stack.ss_size, sp = cv__sp();
	if (!t || sp <= lo || sp > hi)
		return;   /* no state to keep it in; a handler not on it (no SA_ONSTACK) */
	cv__pair_store(&t->disarmed, lo, hi);
}

/* A handler that cannot wait (a fault of an instruction, a real-time
 * signal whose queue is full) runs now, even inside a section or the
 * guard, and may siglongjmp away. A closed guard is opened for it, and the
 * signals deferred before it go first (their handlers too in the open
 * guard) and out of its context's mask, which would block them again at
 * its return: so neither a jump away nor a release inside it (a section's
 * end in its sigaction) leaves them blocked or deferred for good
 * (helper-144, helper-145); the thread is untracked after a jump, as
 * before. Inside a section they wait for its end. */
static CV_COLD void run_now(void (*fn)(int, siginfo_t *, void *), int sig, siginfo_t *si, ucontext_t *uc)
{
	unsigned was = cv__guard_open_quiet();
	uc->uc_sigmask.__val[0] &= ~cv__release_deferred();   /* the kernel's word: futex.c, cv__sigmask */
	if (CV_UNLIKELY(uc->uc_stack.ss_flags & SS_AUTODISARM))
		note_disarmed_stack(uc);
	fn(sig, si, uc);
	cv__guard_close(was);
}

/* Deferred inside a section or the closed reentrancy guard (shim.h says
 * when it is), and also while signals deferred there wait for their
 * release (after the depth's 0): a handler run there could enter a section
 * or the guard of its own, whose end would release them inside it. */
static void trampoline(int sig, siginfo_t *si, void *context)
{
	void (*fn)(int, siginfo_t *, void *) = __atomic_load_n(&handlers[sig].fn, __ATOMIC_ACQUIRE);
	bool in_guard = cv__guard_closed() && !cv__unwrapped_handlers();
	if (CV_UNLIKELY((cv__sections | (uint32_t)in_guard | (uint32_t)(cv__deferred_signals != 0)) != 0)) {
		if (!raised_by_an_instruction(sig, si) && defer(sig, si, context))
			return;
		run_now(fn, sig, si, context);
		return;
	}
	if (CV_UNLIKELY(((const ucontext_t *)context)->uc_stack.ss_flags & SS_AUTODISARM))
		note_disarmed_stack(context);
	/* A handler that takes only the signal number is called the way the
	 * kernel calls it: the other two arguments are in registers it never
	 * reads. */
	fn(sig, si, context);
}

/* At the end of the outermost section or guard (cv__critical_leave,
 * cv__guard_leave_quiet), or of the guard's closed stretch
 * (cv__guard_open), when a signal was deferred: unblocking it delivers
 * it. Not while the thread is still inside the other: its end releases
 * them. A handler that runs here and enters a section of its own releases
 * what that one defers. */
uint64_t cv__release_deferred(void)
{
	if (CV_LIKELY(__atomic_load_n(&cv__deferred_signals, __ATOMIC_RELAXED) == 0) || cv__sections ||
	    cv__guard_closed())
		return 0;
	sigset_t set = { .__val = { __atomic_exchange_n(&cv__deferred_signals, 0, __ATOMIC_RELAXED) } };
	cv__sigmask(SIG_UNBLOCK, &set, NULL);
	return set.__val[0];
}

void cv__deferred_run(void)
{
	cv__release_deferred();
	if (CV_UNLIKELY(cv__snapshot_pending) && !cv__sections && !cv__busy)
		cv__snapshot_deferred();
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

/* Whether SIGCHLD is ignored now (SIG_IGN, or SA_NOCLDWAIT unless
 * past_exec: an exec resets a handler and the flags): the kernel then reaps
 * the process's children itself (shim.h, sigchld_ignored). */
bool cv__sigchld_ignored(bool past_exec)
{
	struct sigaction now;
	int saved_errno = errno;
	bool ignored = cv__real.sigaction(SIGCHLD, NULL, &now) == 0 &&
		       (now.sa_handler == SIG_IGN || (!past_exec && (now.sa_flags & SA_NOCLDWAIT)));
	errno = saved_errno;
	return ignored;
}

/* sigaction for the program, past lifecycle.c's bookkeeping of the fatal
 * signals: a handler goes in behind the trampoline. */
int cv__program_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (!cv__real.sigaction)
		cv__resolve_real();
	bool handler = act && is_handler(act->sa_handler);
	if (sig == SIGCHLD && act && (act->sa_handler == SIG_IGN || (act->sa_flags & SA_NOCLDWAIT)))
		__atomic_store_n(&cv__process.sigchld_ignored, 1, __ATOMIC_RELAXED);
	if (sig <= 0 || sig >= _NSIG || !cv__profiling_here()) {
		/* Not in a child that shares the shim's memory but not its
		 * dispositions (vfork): its handlers are its own. */
		bool other_process = __atomic_load_n(&cv__process.ready, __ATOMIC_ACQUIRE) && cv__getpid() != cv__process.pid;
		if (handler && !other_process)
			cv__program_handler_coming();   /* lock.c: sections block signals from now on */
		int rc = cv__real.sigaction(sig, act, old);
		/* A vfork child has the parent's dispositions, trampolines
		 * included, until it changes them; the parent waits meanwhile. */
		if (rc == 0 && old && sig > 0 && sig < _NSIG)
			as_the_program_set_it(old, &handlers[sig]);
		return rc;
	}
	/* The program's action read once, and its old one written after the
	 * lock: nothing of the program's is read or written in the section
	 * (a bad pointer faults outside it, as without the shim). */
	struct sigaction want, given, kernel_old;
	if (act) {
		given = want = *act;
		handler = is_handler(want.sa_handler);
		if (handler) {
			given.sa_sigaction = trampoline;
			given.sa_flags |= SA_SIGINFO;
		}
	}
	void (*fn)(int, siginfo_t *, void *) = handler ? want.sa_sigaction : NULL;
	bool siginfo = handler && (want.sa_flags & SA_SIGINFO);
	cv__spin_lock_as(&handlers_lock, cv__gettid());
	struct handler was = handlers[sig];
	if (act) {
		handlers[sig].installed = given;
		if (handler) {
			handlers[sig].siginfo = siginfo;
			__atomic_store_n(&handlers[sig].fn, fn, __ATOMIC_RELEASE);
		}
	}
	int rc = cv__real.sigaction(sig, act ? &given : NULL, &kernel_old);
	if (rc != 0 && act) {   /* SIGKILL, SIGSTOP, glibc's own signals (EINVAL): as it was */
		handlers[sig].installed = was.installed;
		handlers[sig].siginfo = was.siginfo;
		__atomic_store_n(&handlers[sig].fn, was.fn, __ATOMIC_RELEASE);
	}
	cv__spin_unlock(&handlers_lock);
	if (rc == 0 && old) {
		as_the_program_set_it(&kernel_old, &was);
		*old = kernel_old;
	}
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
	return cv__sigaction(sig, &act, &old) < 0 ? SIG_ERR : old.sa_handler;
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
	struct sigaction act = { .sa_handler = handler, .sa_flags = SA_RESETHAND | SA_NODEFER | SA_INTERRUPT }, old;
	sigemptyset(&act.sa_mask);
	return cv__sigaction(sig, &act, &old) < 0 ? SIG_ERR : old.sa_handler;
}

CV_EXPORT sighandler_t __sysv_signal(int sig, sighandler_t handler)
{
	return sysv_signal(sig, handler);
}

CV_EXPORT sighandler_t sigset(int sig, sighandler_t disposition)
{
	if (sig < 1 || sig >= NSIG) {   /* SIG_ERR goes to the kernel, as glibc's does */
		errno = EINVAL;
		return SIG_ERR;
	}
	sigset_t one, before;
	sigemptyset(&one);
	sigaddset(&one, sig);
	struct sigaction act = { .sa_handler = disposition }, old;
	if (disposition == SIG_HOLD) {
		if (cv__sigmask(SIG_BLOCK, &one, &before) < 0)
			return SIG_ERR;
		if (sigismember(&before, sig))
			return SIG_HOLD;
		return cv__sigaction(sig, NULL, &old) < 0 ? SIG_ERR : old.sa_handler;
	}
	sigemptyset(&act.sa_mask);
	if (cv__sigaction(sig, &act, &old) < 0 || cv__sigmask(SIG_UNBLOCK, &one, &before) < 0)
		return SIG_ERR;
	return sigismember(&before, sig) ? SIG_HOLD : old.sa_handler;
}

/* glibc's sigignore (sysdeps/posix/sigignore.c): SIG_IGN, an empty mask,
 * no flags. Its own would set the disposition past the program's sigaction
 * view and SIGCHLD's note (shim.h, sigchld_ignored). */
CV_EXPORT int sigignore(int sig)
{
	struct sigaction act = { .sa_handler = SIG_IGN };
	sigemptyset(&act.sa_mask);
	return cv__sigaction(sig, &act, NULL);
}

/* Whether the program has asked for an alternate signal stack, on any
 * thread, through sigaltstack or syscall() (futex.c): until it has, no
 * thread runs on one and cv__stack_room need not ask the kernel (a system
 * call, 0.9 us on the development VM, at each stack capture). Raised for
 * any call that passes a stack, whether it sets one, disables one or
 * fails: the program's struct is not read before the call (it may be a bad
 * pointer, the kernel's to refuse); after one that succeeded, its flags,
 * for cv__altstacks_autodisarm (shim.h). Not seen: a stack set by a system
 * call instruction of the program's own (the Go runtime's), or before the
 * shim was loaded (an exec clears a process's alternate stack). */
int cv__altstacks, cv__altstacks_autodisarm;

CV_EXPORT int sigaltstack(const stack_t *ss, stack_t *old)
{
	if (!cv__real.sigaltstack)
		cv__resolve_real();
	if (ss)
		cv__altstack_coming();
	int rc = cv__real.sigaltstack(ss, old);
	if (rc == 0 && ss && (ss->ss_flags & SS_AUTODISARM))   /* read once the kernel has */
		cv__altstack_autodisarm();
	return rc;
}

/* glibc's own siginterrupt changes the disposition in place (the trampoline
 * stays, with SA_RESTART set or cleared); what signal() sets next is kept
 * here too. */
CV_EXPORT int siginterrupt(int sig, int interrupt)
{
	if (!cv__real.siginterrupt)
		cv__resolve_real();
	/* Under the lock: glibc rewrites the disposition it reads, and a
	 * re-arm (rearm) in between would be undone. */
	cv__spin_lock_as(&handlers_lock, cv__gettid());
	int rc = cv__real.siginterrupt(sig, interrupt);
	if (rc == 0) {
		if (interrupt)
			sigaddset(&interrupting, sig);
		else
			sigdelset(&interrupting, sig);
	}
	cv__spin_unlock(&handlers_lock);
	return rc;
}
