/* lock.c — the shim's own spinlock, and the critical sections it is held in.
 * It guards only short, rare sections (first use of an object by a thread,
 * init and destroy, the thread table), never the program's path, and it
 * never calls a function the shim wraps. It is taken only inside the
 * reentrancy guard (shim.h), so a signal handler that interrupts its holder
 * on the same thread never tries it: the handler finds the thread busy and
 * calls the real function.
 *
 * A program's signal handler must not run while its thread is inside such a
 * section. Otherwise a handler that interrupts the holder may block in the
 * program's own lock, held by another thread that in turn spins here for the
 * holder: a deadlock the program never had (a timer handler that locks, on
 * two threads); or it may siglongjmp away and leave the lock held for ever.
 * The handlers the program installs through the C library run behind the
 * shim's trampoline (signals.c), which defers a signal that comes in a
 * section to the section's end: a section costs no system call (a
 * short-lived object goes through three). A handler installed another way
 * (a raw rt_sigaction system call, or before the shim started) is not
 * wrapped: from then on a section blocks every signal instead (two system
 * calls, once per section however many locks it takes; glibc keeps its
 * cancellation and setxid signals deliverable).
 *
 * That switch is made safe by the installer (cv__program_handler_coming,
 * called before the real call): it raises the flag, then waits for every
 * section entered without the mask to end. A section counts itself, then
 * reads the flag, both sequentially consistent: either it sees the flag and
 * blocks signals, or the installer sees it counted and waits (microseconds:
 * sections never wait for the program). A handler installed without libc
 * at all (an rt_sigaction instruction of the program's own) is not seen.
 */
#include <sched.h>
#include <signal.h>

#include "shim.h"

static int program_handlers;        /* the program installed a handler the trampoline does not wrap */
static unsigned unmasked_sections;  /* threads in a section entered without the mask */
__thread unsigned cv__sections;     /* sections this thread is in (nested) */
static __thread bool masked;        /* the outermost one blocked signals */
/* The thread's signal mask before it, as the kernel keeps it: eight bytes
 * where glibc's sigset_t is 128, and static TLS is carved from every
 * thread's stack (a PTHREAD_STACK_MIN thread has 16 KiB in all). */
static __thread uint64_t mask_before;
#define KERNEL_SIGSET sizeof(mask_before)
_Static_assert(NSIG - 1 <= 8 * KERNEL_SIGSET, "the kernel's signal set is one word");

/* Every signal but glibc's own two, as pthread_sigmask leaves them
 * (SIGCANCEL, SIGSETXID: __SIGRTMIN and the one after; SIGKILL and
 * SIGSTOP the kernel never blocks). A raw system call: a wrapper of
 * pthread_sigmask preloaded after the shim is not called from inside it. */
static void block_all(void)
{
	uint64_t all = ~(3ull << (__SIGRTMIN - 1));
	cv__sys(SYS_rt_sigprocmask, SIG_BLOCK, (long)&all, (long)&mask_before, KERNEL_SIGSET);
}

/* The order of each step matters to a handler that runs in between and
 * siglongjmps away. Unmasked, the depth goes up before the count, and the
 * count down before the depth: the program's handlers (behind the
 * trampoline) are deferred while the count is up, so none can leave it
 * counted for ever (cv__program_handler_coming would wait for it). Masked,
 * the mask goes up before the depth and down after it: a handler not
 * behind the trampoline, the reason for the mask, leaves no depth behind
 * (the trampoline would defer the thread's signals for ever). */
void cv__critical_enter(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (cv__sections != 0) {
		cv__sections++;
	} else if ((masked = __atomic_load_n(&program_handlers, __ATOMIC_RELAXED))) {
		block_all();
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		cv__sections = 1;
	} else {
		cv__sections = 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		__atomic_fetch_add(&unmasked_sections, 1, __ATOMIC_SEQ_CST);
		if (CV_UNLIKELY(__atomic_load_n(&program_handlers, __ATOMIC_SEQ_CST))) {
			__atomic_fetch_sub(&unmasked_sections, 1, __ATOMIC_RELEASE);
			masked = true;
			block_all();
		}
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);   /* the trampoline sees it before the section's first lock */
}

void cv__critical_leave(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);   /* the section's last unlock before it */
	if (cv__sections > 1) {
		cv__sections--;
		return;
	}
	if (masked) {
		cv__sections = 0;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		cv__sys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&mask_before, 0, KERNEL_SIGSET);
	} else {
		__atomic_fetch_sub(&unmasked_sections, 1, __ATOMIC_RELEASE);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		cv__sections = 0;
	}
	/* A signal deferred in the section; the trampoline defers one that
	 * comes between the depth's 0 and this release too (signals.c). */
	cv__release_deferred();
}

void cv__program_handler_coming(void)
{
	if (__atomic_load_n(&program_handlers, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&program_handlers, 1, __ATOMIC_SEQ_CST);
	/* This thread's own section, if a handler installed without libc
	 * interrupted one to call sigaction, can only end after we return. */
	unsigned own = cv__sections && !masked;
	while (__atomic_load_n(&unmasked_sections, __ATOMIC_SEQ_CST) > own)
		sched_yield();
}

/* The child of a fork has one thread, which forked outside any section. */
void cv__critical_after_fork(void)
{
	__atomic_store_n(&unmasked_sections, 0, __ATOMIC_RELAXED);
}

void cv__spin_lock_as(cv_spinlock_t *l, int owner)
{
	cv__critical_enter();
	for (unsigned spins = 0;; spins++) {
		int free_word = 0;
		if (!__atomic_load_n(&l->locked, __ATOMIC_RELAXED) &&
		    __atomic_compare_exchange_n(&l->locked, &free_word, owner, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
		/* After 64 spins the holder may be preempted: give it the CPU
		 * (unless cv__off: no system call of ours). */
		if (spins >= 64 && !cv__off())
			sched_yield();
#if defined(__x86_64__) || defined(__i386__)
		else
			__builtin_ia32_pause();
#endif
	}
}

void cv__spin_lock(cv_spinlock_t *l)
{
	cv__spin_lock_as(l, 1);
}

void cv__spin_unlock(cv_spinlock_t *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
	cv__critical_leave();
}
