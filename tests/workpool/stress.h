/* stress.h — deterministic randomized stress tests for workpool, shared by
 * the Criterion binary (full size) and the ThreadSanitizer program
 * (WP_TEST_TSAN: reduced size). Validation, not benchmarks: nothing here
 * measures or asserts time.
 *
 * Each function returns 0 on success, or 1 after writing what went wrong
 * into err (both operands of the failed comparison).
 */
#ifndef WP_STRESS_H
#define WP_STRESS_H

#include <stddef.h>
#include <stdint.h>

#include "workpool.h"

#ifdef WP_TEST_TSAN
#define STRESS_SCALE(full, tsan) (tsan)
#else
#define STRESS_SCALE(full, tsan) (full)
#endif

/* One owner pushing and popping, `thieves` threads stealing, `items` ids,
 * indices starting at `start` (near SIZE_MAX to cross wrap-around), initial
 * capacity 16 so the buffer grows. Every id must be taken exactly once. */
int stress_deque(unsigned thieves, size_t items, size_t start, uint64_t seed,
                 char *err, size_t errlen);

/* Every thread an owner: thread 0 fills its deque (pushes and batch pushes)
 * and pops; the others pop their own deques (batch takes, private zones,
 * `wanted`) and batch-steal from random others, `threads` in all (2..16).
 * Every id must be taken exactly once. */
int stress_deque_batch(unsigned threads, size_t items, size_t start, uint64_t seed,
                       char *err, size_t errlen);

/* A random task forest (seeded): roots submitted from outside with every
 * placement API, children spawned from inside with a random mix of spawn,
 * spawn_to, batch, and futures waited on (helping). Every task must run
 * exactly once; the counters must add up. */
int stress_pool(wp_policy policy, unsigned workers, size_t tasks,
                uint64_t seed, uint64_t idle_spin_ns, char *err, size_t errlen);

/* Several outside threads submitting at once to a bounded pool while it
 * runs, then shutdown: every accepted task runs exactly once, every refused
 * one never does. */
int stress_submitters(wp_policy policy, unsigned workers, unsigned submitters,
                      size_t per_submitter, size_t capacity, uint64_t seed,
                      char *err, size_t errlen);

/* Tasks cancelled (by token) and futures completing while other threads
 * wait on them, with a discarding shutdown at a random point: every future
 * ends ready with a consistent state. */
int stress_futures(wp_policy policy, unsigned workers, size_t tasks,
                   uint64_t seed, char *err, size_t errlen);

/* fib(n) where every call is a task that submits its two halves and waits
 * on their futures (helping), from inside the pool. */
int stress_nested(wp_policy policy, unsigned workers, unsigned n,
                  uint64_t idle_spin_ns, char *err, size_t errlen);

/* xorshift64*: the tests' deterministic RNG. */
static inline uint64_t stress_rng(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1Du;
}

#endif
