/* lock.c — the shim's own spinlock. It guards only short, rare sections (first
 * use of an object by a thread, destroy, allocation), never the program's path,
 * and it never calls a function the shim wraps.
 */
#include <sched.h>

#include "shim.h"

/* How many of the shim's locks the calling thread holds: a signal handler
 * that runs shim code (sem_post, syscall(SYS_futex) are async-signal-safe)
 * must not try to take one of them again (cv__lookup_safe). */
__thread unsigned cv__spin_depth __attribute__((tls_model("initial-exec")));

void cv__spin_lock(cv_spinlock_t *l)
{
	/* Counted before trying, so no instruction between taking the lock and
	 * counting it can be interrupted by a handler that believes it free. */
	cv__spin_depth++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
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
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	cv__spin_depth--;
}
