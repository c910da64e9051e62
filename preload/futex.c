/* futex.c — libc's syscall(), for SYS_futex.
 *
 * Who is seen. Programs that make futex calls through the exported syscall()
 * function: Rust's std (Mutex, RwLock, Condvar, thread parking, Once),
 * libstdc++'s std::atomic<T>::wait / notify and what is built on it
 * (std::counting_semaphore, std::latch, std::barrier in GCC 11+), and C
 * programs that call syscall(SYS_futex, ...) themselves. glibc's own
 * pthread, semaphore and lowlevellock code makes inline system calls and
 * never passes through here (those primitives are interposed by name
 * instead); neither does a program that issues the syscall instruction
 * itself (Go, raw assembly), nor futex_waitv (SYS_futex_waitv), which
 * passes through uncounted.
 *
 * SYS_rt_sigaction first tells lock.c that a signal handler may come.
 * Every other system call number goes straight to the real syscall() with
 * the caller's six argument words (what glibc's own syscall() forwards on
 * x86-64; words the caller did not pass are forwarded as the garbage they
 * are, exactly as glibc does). Return value and errno are the real call's:
 * errno is saved right after it and restored after the bookkeeping, and
 * the bookkeeping before the call cannot leak a change either.
 *
 * Per futex address (an object of kind "futex", one per word):
 *   waits      FUTEX_WAIT / WAIT_BITSET / LOCK_PI(2) / WAIT_REQUEUE_PI calls
 *              that slept or tried to (timed: wait_ns, histogram); EAGAIN
 *              returns (the word had already changed) are counted apart;
 *   wakes      FUTEX_WAKE / WAKE_BITSET / WAKE_OP calls (signals), threads
 *              woken (futex_woken, the return values), calls that woke
 *              nobody (signals_unwaited);
 *   requeues   (CMP_)REQUEUE(_PI) calls and the waiters they woke or moved;
 *   PI ops     every priority-inheritance operation;
 *   handoffs   on a word used as a lock: woken waiters that take it from
 *              another thread (the waker, noted as its owner), so at most
 *              one per contended acquisition; fast-path ones are not seen.
 * Wake latency (park.c): a wake-type call stamps the word's object just
 * before the system call; a wait that returns 0 counts the latency from the
 * stamp. A waiter moved by a requeue is woken through the second word but
 * returns from a wait on the first: its latency is measured against the
 * first word's last stamp (the requeue itself), so it is an overestimate.
 *
 * The expected value of the waits is remembered per word as two flags: 2 is
 * the "locked and contended" value of glibc's lowlevellock and of Rust's
 * std Mutex, so a word whose waits all expected 2 is most likely a lock.
 */
#include <errno.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "shim.h"

#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2 13
#endif
#ifndef FUTEX_CMD_MASK
#define FUTEX_CMD_MASK ~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME)
#endif

#if defined(__x86_64__)
/* The system call itself, with glibc's error convention: the shim's own
 * calls (cv__sys), and the program's until real.c has resolved syscall()
 * (a call made before the shim's constructor ran). */
static long raw_syscall(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	if ((unsigned long)ret > -4096ul) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}
#endif

static long real_syscall(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
	long (*fn)(long, ...) = CV_LOAD(&cv__real.syscall);
	if (CV_LIKELY(fn != NULL))
		return fn(n, a1, a2, a3, a4, a5, a6);
#if defined(__x86_64__)
	return raw_syscall(n, a1, a2, a3, a4, a5, a6);
#else
	cv__resolve_real();
	return cv__real.syscall(n, a1, a2, a3, a4, a5, a6);
#endif
}

/* The shim's own system calls (shim.h says why): never through another
 * definition of syscall() either, which may take a lock that comes back
 * into the shim (libfaketime built to intercept syscall(): helper-128). */
long cv__sys6(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
#if defined(__x86_64__)
	return raw_syscall(n, a1, a2, a3, a4, a5, a6);
#else
	return real_syscall(n, a1, a2, a3, a4, a5, a6);
#endif
}

int cv__sigmask(int how, const sigset_t *set, sigset_t *old)
{
	/* Signal n is bit n - 1 of the kernel's mask, the first word of
	 * sigset_t's; glibc's sigdelset refuses these two. */
	const unsigned long internal = (1ul << (32 - 1)) | (1ul << (33 - 1));   /* SIGCANCEL, SIGSETXID */
	sigset_t mine;
	if (set && how != SIG_UNBLOCK && (set->__val[0] & internal)) {
		mine = *set;
		mine.__val[0] &= ~internal;
		set = &mine;
	}
	return (int)cv__sys(SYS_rt_sigprocmask, how, (long)set, (long)old, _NSIG / 8);
}

static void note_flag(struct cv_obj *o, uint32_t flag)
{
	if (!(CV_LOAD(&o->flags) & flag))
		__atomic_fetch_or(&o->flags, flag, __ATOMIC_RELAXED);
}

/* A word used as a lock: every wait expected 2, the "locked, contended"
 * value of glibc's lowlevellock and Rust's std Mutex. */
static bool used_as_lock(const struct cv_obj *o)
{
	return (CV_LOAD(&o->flags) & (CV_FUTEX_WAIT_2 | CV_FUTEX_WAIT_OTHER)) == CV_FUTEX_WAIT_2;
}

/* A call that may sleep: the futex word's waits, and the thread's blocked
 * state while it sleeps (lockorder.c); pc: the program's call. */
static long futex_wait(struct cv_thread *t, struct cv_rec *r, int cmd, long a1, long a2, long a3, long a4, long a5,
		       long a6, const void *pc)
{
	if (cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET)
		note_flag(r->obj, (int)a3 == 2 ? CV_FUTEX_WAIT_2 : CV_FUTEX_WAIT_OTHER);
	else
		note_flag(r->obj, CV_FUTEX_PI);
	uint64_t t0 = cv__now_ns();
	cv__wait_begin(t, r->obj, NULL, a4 ? CV_WAIT_TIMED : 0, pc, &t0);   /* a4: the timeout, for every wait op */
	long ret = real_syscall(SYS_futex, a1, a2, a3, a4, a5, a6);
	int err = errno;
	cv__wait_end(t);
	uint64_t now = cv__now_ns();
	if (cmd != FUTEX_WAIT && cmd != FUTEX_WAIT_BITSET)
		CV_BUMP(&cv__rec_more(r)->pi_ops, 1);
	if (ret == -1 && err == EAGAIN && (cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET)) {
		CV_BUMP(&cv__rec_more(r)->futex_eagain, 1);   /* the word had changed: no sleep */
	} else {
		cv__record_wait(r, now - t0);
		cv__stack_on_wait(t, r, now - t0);   /* stacks.c: sampled */
		if (ret == 0) {
			/* Woken (or, for PI, acquired): a contended acquisition as far
			 * as the kernel can tell; uncontended ones never get here. */
			CV_BUMP(&cv__rec_more(r)->contended, 1);
			CV_BUMP(&r->acquisitions, 1);
			cv__woken(r, t0, now);
			/* it takes the lock next: a hand-off when another held it */
			if (used_as_lock(r->obj))
				cv__note_owner(t, r);   /* tracked: r is its record */
		} else if (err == ETIMEDOUT) {
			CV_BUMP(&cv__rec_more(r)->timeouts, 1);
		} else if (err == EINTR) {
			CV_BUMP(&cv__rec_more(r)->interrupts, 1);
		}
	}
	errno = err;
	return ret;
}

/* A call that wakes: stamped before, counted after. */
static long futex_wake(struct cv_thread *t, struct cv_rec *r, int cmd, long a1, long a2, long a3,
		       long a4, long a5, long a6)
{
	cv__wake_sent(r->obj, CV_WAKE_SIGNAL);
	/* The waker held it: its owner, without counting a hand-off (its
	 * acquisition never entered the kernel and is not counted either).
	 * Noted before the wake, so the waiter it wakes sees it. */
	if ((cmd == FUTEX_WAKE || cmd == FUTEX_WAKE_BITSET) && used_as_lock(r->obj) &&
	    CV_LOAD(&r->obj->last_owner) != t)
		CV_STORE(&r->obj->last_owner, t);
	if (cmd == FUTEX_WAKE_OP && a5 && (const void *)a5 != (const void *)a1) {
		struct cv_rec *r2 = cv__futex_rec(t, (const void *)a5);
		cv__wake_sent(r2->obj, CV_WAKE_SIGNAL);
		r = cv__futex_rec(t, (const void *)a1);   /* again: r2's lookup may have retired r */
	}
	long ret = real_syscall(SYS_futex, a1, a2, a3, a4, a5, a6);
	int err = errno;
	switch (cmd) {
	case FUTEX_WAKE_OP:
		CV_BUMP(&cv__rec_more(r)->wake_ops, 1);
		/* fallthrough */
	case FUTEX_WAKE:
	case FUTEX_WAKE_BITSET:
		if (ret == 0) {
			CV_BUMP(&r->signals_unwaited, 1);
		} else {
			CV_BUMP(&cv__rec_more(r)->signals, 1);
			if (ret > 0)
				CV_BUMP(&cv__rec_more(r)->futex_woken, (uint64_t)ret);
		}
		break;
	case FUTEX_CMP_REQUEUE_PI:
		CV_BUMP(&cv__rec_more(r)->pi_ops, 1);
		/* fallthrough */
	case FUTEX_REQUEUE:
	case FUTEX_CMP_REQUEUE:
		CV_BUMP(&cv__rec_more(r)->requeues, 1);
		if (ret > 0)
			CV_BUMP(&cv__rec_more(r)->requeued, (uint64_t)ret);
		break;
	case FUTEX_UNLOCK_PI:
		CV_BUMP(&cv__rec_more(r)->pi_ops, 1);
		break;
	}
	errno = err;
	return ret;
}

static long futex_call(long a1, long a2, long a3, long a4, long a5, long a6, const void *pc)
{
	int saved = errno;
	struct cv_thread *t = cv__current();
	if (CV_UNLIKELY(!t) && !(t = cv__thread_slow()))
		goto untracked;   /* e.g. a signal handler inside the shim's bookkeeping */
	int cmd = (int)a2 & FUTEX_CMD_MASK;
	switch (cmd) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET:
	case FUTEX_LOCK_PI:
	case FUTEX_LOCK_PI2:
	case FUTEX_WAIT_REQUEUE_PI: {
		struct cv_rec *r = cv__futex_rec(t, (const void *)a1);
		errno = saved;
		return futex_wait(t, r, cmd, a1, a2, a3, a4, a5, a6, pc);
	}
	case FUTEX_WAKE:
	case FUTEX_WAKE_BITSET:
	case FUTEX_WAKE_OP:
	case FUTEX_REQUEUE:
	case FUTEX_CMP_REQUEUE:
	case FUTEX_CMP_REQUEUE_PI:
	case FUTEX_UNLOCK_PI: {
		struct cv_rec *r = cv__futex_rec(t, (const void *)a1);
		if (cmd == FUTEX_UNLOCK_PI)
			note_flag(r->obj, CV_FUTEX_PI);
		errno = saved;
		return futex_wake(t, r, cmd, a1, a2, a3, a4, a5, a6);
	}
	case FUTEX_TRYLOCK_PI: {
		struct cv_rec *r = cv__futex_rec(t, (const void *)a1);
		note_flag(r->obj, CV_FUTEX_PI);
		CV_BUMP(&cv__rec_more(r)->pi_ops, 1);
		break;
	}
	default:
		break;
	}
untracked:
	errno = saved;
	return real_syscall(SYS_futex, a1, a2, a3, a4, a5, a6);
}

/* A new process that comes back from the call on this stack and TLS, with
 * a descriptor table of its own: SYS_fork, or SYS_clone (x86-64's order:
 * flags, child stack, ..., tls) without CLONE_VM, CLONE_SETTLS or
 * CLONE_FILES and with no stack of its own. Any other child would never
 * return here to run the child's step, or would close the parent's
 * descriptors in it: those pass through as before. */
static inline bool forks_here(long number, long flags, long stack)
{
#ifdef SYS_fork
	if (number == SYS_fork)
		return true;
#endif
	return number == SYS_clone && !(flags & (CLONE_VM | CLONE_SETTLS | CLONE_FILES)) && stack == 0;
}

/* A seccomp filter (or strict mode) being installed (lifecycle.c says why it matters). */
static inline bool installs_seccomp(long number, long op)
{
	return (number == SYS_seccomp && (op == SECCOMP_SET_MODE_STRICT || op == SECCOMP_SET_MODE_FILTER)) ||
	       (number == SYS_prctl && op == PR_SET_SECCOMP);
}

CV_EXPORT long syscall(long number, ...)
{
	va_list ap;
	va_start(ap, number);
	long a1 = va_arg(ap, long), a2 = va_arg(ap, long), a3 = va_arg(ap, long);
	long a4 = va_arg(ap, long), a5 = va_arg(ap, long), a6 = va_arg(ap, long);
	va_end(ap);
	/* A new disposition may be a handler, a new alternate stack one a
	 * handler runs on, maybe with SS_AUTODISARM (neither struct is read:
	 * it may be a bad pointer, the kernel's to refuse). */
	if (number == SYS_rt_sigaction && a2 != 0) {
		cv__program_handler_coming();
		if (a1 == SIGCHLD)   /* maybe ignored now (shim.h, sigchld_ignored) */
			__atomic_store_n(&cv__process.sigchld_ignored, 1, __ATOMIC_RELAXED);
	}
	if (number == SYS_sigaltstack && a1 != 0) {
		cv__altstack_coming();
		cv__altstack_autodisarm();
	}
	if (forks_here(number, a1, a2))
		return cv__syscall_fork(real_syscall, number, a1, a2, a3, a4, a5, a6);
	if (installs_seccomp(number, a1))
		return cv__seccomp_call(real_syscall, number, a1, a2, a3, a4, a5, a6);
	/* A futex call on address 0 (EFAULT for waits, a no-op wake) is passed
	 * through: 0 is the empty key of the shim's per-thread tables. */
	if (CV_LIKELY(number != SYS_futex) || a1 == 0)
		return real_syscall(number, a1, a2, a3, a4, a5, a6);
	return futex_call(a1, a2, a3, a4, a5, a6, __builtin_return_address(0));
}
