/* lock.c — the shim's own spinlock. It guards only short, rare sections (first
 * use of an object by a thread, destroy, the thread table), never the
 * program's path, and it never calls a function the shim wraps. It is taken
 * only inside the reentrancy guard (shim.h), so a signal handler that
 * interrupts its holder on the same thread never tries it: the handler finds
 * the thread busy and calls the real function.
 */
#include <sched.h>

#include "shim.h"

void cv__spin_lock(cv_spinlock_t *l)
{
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
}
