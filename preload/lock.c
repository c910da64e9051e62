/* lock.c — the shim's own spinlock. It guards only short, rare sections (first
 * use of an object by a thread, destroy, the thread table), never the
 * program's path, and it never calls a function the shim wraps. It is taken
 * only inside the reentrancy guard (shim.h), so a signal handler that
 * interrupts its holder on the same thread never tries it: the handler finds
 * the thread busy and calls the real function.
 *
 * Signals are also blocked while a thread holds one. Otherwise a handler that
 * interrupts the holder may block in the program's own lock, held by another
 * thread's handler that in turn spins here for the holder: a deadlock the
 * program never had (a timer handler that locks, on two threads). Blocked,
 * the holder always runs on to its unlock. The mask costs two system calls,
 * on these rare paths only.
 */
#include <sched.h>
#include <signal.h>

#include "shim.h"

static __thread unsigned spins_held;   /* shim spinlocks this thread holds */
static __thread sigset_t mask_before;  /* its signal mask before the first */

void cv__spin_lock(cv_spinlock_t *l)
{
	/* Blocked before the count goes up: a handler that runs first and
	 * siglongjmps away leaves nothing behind. */
	if (spins_held == 0) {
		sigset_t all;
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &mask_before);   /* keeps SIGCANCEL, SIGSETXID */
	}
	spins_held++;
	for (unsigned spins = 0;; spins++) {
		if (!__atomic_load_n(&l->locked, __ATOMIC_RELAXED) &&
		    !__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
			return;
		if (spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#endif
		} else
			sched_yield();   /* the holder may be preempted: give it the CPU */
	}
}

void cv__spin_unlock(cv_spinlock_t *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
	if (--spins_held == 0)
		pthread_sigmask(SIG_SETMASK, &mask_before, NULL);
}
