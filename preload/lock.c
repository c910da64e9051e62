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
 * So once the program has installed a handler, a section blocks every
 * signal (two system calls, once per section however many locks it takes;
 * glibc keeps its cancellation and setxid signals deliverable). Before
 * that, no handler of the program exists that could run there, and a
 * section costs no system call: most programs never install one, and a
 * short-lived object (init, first use, destroy) goes through three sections.
 *
 * The switch is made safe by the installer (cv__program_handler_coming,
 * called by the sigaction, signal, sigset and syscall wrappers before the
 * real call): it raises the flag, then waits for every section entered
 * without the mask to end. A section counts itself, then reads the flag,
 * both sequentially consistent: either it sees the flag and blocks signals,
 * or the installer sees it counted and waits (microseconds: sections never
 * wait for the program). A handler installed without libc (a raw rt_sigaction
 * system call) is not seen; docs/performance.md says so.
 */
#include <sched.h>
#include <signal.h>

#include "shim.h"

static int program_handlers;        /* the program installed a signal handler */
static unsigned unmasked_sections;  /* threads in a section entered without the mask */
static __thread unsigned depth;     /* sections this thread is in (nested) */
static __thread bool masked;        /* the outermost one blocked signals */
static __thread sigset_t mask_before;  /* the thread's signal mask before it */

void cv__critical_enter(void)
{
	/* The mask (or the count) goes up before the depth: a handler that
	 * runs first and siglongjmps away leaves nothing behind. */
	if (depth == 0) {
		masked = __atomic_load_n(&program_handlers, __ATOMIC_RELAXED);
		if (!masked) {
			__atomic_fetch_add(&unmasked_sections, 1, __ATOMIC_SEQ_CST);
			if (CV_UNLIKELY(__atomic_load_n(&program_handlers, __ATOMIC_SEQ_CST))) {
				__atomic_fetch_sub(&unmasked_sections, 1, __ATOMIC_RELEASE);
				masked = true;
			}
		}
		if (masked) {
			sigset_t all;
			sigfillset(&all);
			pthread_sigmask(SIG_BLOCK, &all, &mask_before);   /* keeps SIGCANCEL, SIGSETXID */
		}
	}
	depth++;
}

void cv__critical_leave(void)
{
	if (--depth == 0) {
		if (masked)
			pthread_sigmask(SIG_SETMASK, &mask_before, NULL);
		else
			__atomic_fetch_sub(&unmasked_sections, 1, __ATOMIC_RELEASE);
	}
}

void cv__program_handler_coming(void)
{
	if (__atomic_load_n(&program_handlers, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&program_handlers, 1, __ATOMIC_SEQ_CST);
	/* This thread's own section, if a handler installed without libc
	 * interrupted one to call sigaction, can only end after we return. */
	unsigned own = depth && !masked;
	while (__atomic_load_n(&unmasked_sections, __ATOMIC_SEQ_CST) > own)
		sched_yield();
}

/* The child of a fork has one thread, which forked outside any section. */
void cv__critical_after_fork(void)
{
	__atomic_store_n(&unmasked_sections, 0, __ATOMIC_RELAXED);
}

void cv__spin_lock(cv_spinlock_t *l)
{
	cv__critical_enter();
	for (unsigned spins = 0;; spins++) {
		if (!__atomic_load_n(&l->locked, __ATOMIC_RELAXED) &&
		    !__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
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

void cv__spin_unlock(cv_spinlock_t *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
	cv__critical_leave();
}
