/* atomic.h — named memory-order helpers for workpool.
 *
 * Every atomic access in the library goes through one of these, so the order
 * is in the name at the call site and a reviewer can grep for each kind. The
 * Chase-Lev deque (deque.c) cites Lê et al. (PPoPP 2013) next to each use.
 *
 * ThreadSanitizer does not model atomic_thread_fence (GCC warns -Wtsan):
 * a release fence followed by a relaxed store creates no happens-before edge
 * in its eyes, so every task payload handed over through the deque would be
 * reported as a race. Under TSan (__SANITIZE_THREAD__) the helpers that pair
 * a fence with an access are strengthened to the equivalent single access
 * (release store, acquire load), and seq_cst fences become a seq_cst RMW on
 * one process-wide word (a full barrier on every target TSan supports). The
 * production build uses the paper's fences unchanged.
 */
#ifndef WP_ATOMIC_H
#define WP_ATOMIC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#if defined(__SANITIZE_THREAD__)
#define WP_TSAN 1
#else
#define WP_TSAN 0
#endif

#define wp__load_relaxed(p)      atomic_load_explicit((p), memory_order_relaxed)
#define wp__load_acquire(p)      atomic_load_explicit((p), memory_order_acquire)
#define wp__load_seq_cst(p)      atomic_load_explicit((p), memory_order_seq_cst)
#define wp__store_relaxed(p, v)  atomic_store_explicit((p), (v), memory_order_relaxed)
#define wp__store_release(p, v)  atomic_store_explicit((p), (v), memory_order_release)
#define wp__store_seq_cst(p, v)  atomic_store_explicit((p), (v), memory_order_seq_cst)
#define wp__fetch_add_relaxed(p, v) atomic_fetch_add_explicit((p), (v), memory_order_relaxed)
#define wp__fetch_add_acq_rel(p, v) atomic_fetch_add_explicit((p), (v), memory_order_acq_rel)
#define wp__fetch_sub_acq_rel(p, v) atomic_fetch_sub_explicit((p), (v), memory_order_acq_rel)
#define wp__fetch_add_seq_cst(p, v) atomic_fetch_add_explicit((p), (v), memory_order_seq_cst)
#define wp__fetch_sub_seq_cst(p, v) atomic_fetch_sub_explicit((p), (v), memory_order_seq_cst)
#define wp__exchange_acq_rel(p, v)  atomic_exchange_explicit((p), (v), memory_order_acq_rel)

/* Strong CAS, seq_cst on success, relaxed on failure: the orders Lê et al.
 * give both CASes on `top`. */
#define wp__cas_seq_cst(p, expected, desired)                                  \
	atomic_compare_exchange_strong_explicit((p), (expected), (desired),     \
	                                        memory_order_seq_cst,           \
	                                        memory_order_relaxed)
#define wp__cas_acq_rel(p, expected, desired)                                  \
	atomic_compare_exchange_strong_explicit((p), (expected), (desired),     \
	                                        memory_order_acq_rel,           \
	                                        memory_order_acquire)

/* A full (store-load) barrier: the Dekker half of every "publish, then check
 * the other side" protocol in the library. */
#if WP_TSAN
/* One word for every fence in the process (error.c): RMWs on a single
 * location are totally ordered and acq_rel, so each pair of "fences" is
 * ordered both for the hardware and for TSan's happens-before — stronger
 * than SC fences, which can only hide races between two fence sites, never
 * invent one. */
extern _Atomic unsigned wp__tsan_fence_word;
#define wp__fence_seq_cst()                                                    \
	((void)atomic_fetch_add_explicit(&wp__tsan_fence_word, 0,               \
	                                 memory_order_seq_cst))
#else
#define wp__fence_seq_cst() atomic_thread_fence(memory_order_seq_cst)
#endif

/* "fence(release); store_relaxed(p, v)" — orders every earlier write before
 * the store to *p (and, in the fence form, before any later store). */
#if WP_TSAN
#define wp__fence_release_store_relaxed(p, v) wp__store_release((p), (v))
#else
#define wp__fence_release_store_relaxed(p, v)                                  \
	do {                                                                    \
		atomic_thread_fence(memory_order_release);                      \
		wp__store_relaxed((p), (v));                                    \
	} while (0)
#endif

/* Single-writer counters: only the owning thread writes, anyone may read.
 * A relaxed load + relaxed store (a plain add on x86), no locked RMW. */
#define wp__counter_add(p, v) wp__store_relaxed((p), wp__load_relaxed(p) + (v))
#define wp__counter_inc(p)    wp__counter_add((p), 1)

/* A polite spin-wait hint. */
static inline void wp__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

#endif /* WP_ATOMIC_H */
