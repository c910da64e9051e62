/* lock.c — the shim's own spinlock, and the critical sections it is held in.
 * It guards only short, rare sections (first use of an object by a thread,
 * init and destroy, the thread table), never the program's path, and it
 * never calls a function the shim wraps. It is held only inside a
 * critical section (below), where none of the program's signal handlers
 * runs, so no handler ever tries it on its holder's thread; most holders
 * are inside the reentrancy guard (shim.h) too, not all (the first thread's
 * take_lock after pthread_create, the signals lock in sigaction, a fork
 * child's steps).
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
#include <errno.h>
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
_Static_assert(NSIG - 1 <= 8 * KERNEL_SIGSET && (sizeof(long) == 8 || __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__),
	       "the kernel's signal set is one 64-bit word");

/* rt_sigprocmask on the kernel's set. errno is the caller's again: it can
 * fail only under a filter or tracer the shim did not see, and some
 * sections are entered outside the reentrancy guard (above). */
static void set_mask(int how, const uint64_t *set, uint64_t *old)
{
	int saved_errno = errno;
	cv__sys(SYS_rt_sigprocmask, how, (long)set, (long)old, KERNEL_SIGSET);
	errno = saved_errno;
}

/* Every signal but glibc's own two, as pthread_sigmask leaves them
 * (SIGCANCEL, SIGSETXID: __SIGRTMIN and the one after; SIGKILL and
 * SIGSTOP the kernel never blocks). The restore puts back the mask as it
 * was, glibc's two included where the program had blocked them by a raw
 * system call (pthread_sigmask's SIG_SETMASK would have dropped them). */
static void block_all(void)
{
	uint64_t all = ~(3ull << (__SIGRTMIN - 1));
	set_mask(SIG_BLOCK, &all, &mask_before);
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

/* The end of a section; true at the outermost's. */
static bool section_leave(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);   /* the section's last unlock before it */
	if (cv__sections > 1) {
		cv__sections--;
		return false;
	}
	if (masked) {
		cv__sections = 0;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		set_mask(SIG_SETMASK, &mask_before, NULL);
	} else {
		__atomic_fetch_sub(&unmasked_sections, 1, __ATOMIC_RELEASE);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		cv__sections = 0;
	}
	return true;
}

void cv__critical_leave(void)
{
	/* A signal deferred in the section; the trampoline defers one that
	 * comes between the depth's 0 and this release too (signals.c). */
	if (section_leave() && CV_UNLIKELY(cv__deferred_signals | (uint64_t)cv__snapshot_pending))
		cv__deferred_run();
}

void cv__spin_unlock_deferring(cv_spinlock_t *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
	section_leave();
}

bool cv__unwrapped_handlers(void)
{
	return __atomic_load_n(&program_handlers, __ATOMIC_RELAXED) != 0;
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
		cv__yield();
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
			cv__yield();
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
