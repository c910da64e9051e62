/* convoy.h — the optional annotation API.
 *
 * A program that includes this header and calls these functions runs unchanged
 * without convoy: every function is a weak reference, and each macro checks it
 * before calling, so with no libconvoy.so loaded a call costs one predictable
 * branch. Under LD_PRELOAD=libconvoy.so the references resolve to the shim and the
 * values land in the profile.
 *
 * No linking against anything is needed; the header is self-contained.
 */
#ifndef CONVOY_H
#define CONVOY_H

#include <stdint.h>

/* Weak references for programs; the shim itself defines them strongly. */
#ifdef CONVOY_SHIM_BUILD
#define CONVOY_WEAK
#else
#define CONVOY_WEAK __attribute__((weak))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Count `units` of useful work at the progress point `name` (a string literal or
 * other string that lives as long as the program). When a program has progress
 * points, `convoy scale` uses their throughput instead of wall time. */
void convoy_progress(const char *name, uint64_t units) CONVOY_WEAK;

/* Give a synchronisation object (mutex, condvar, ...) a name for the report. */
void convoy_name_object(const void *object, const char *name) CONVOY_WEAK;

/* Per-thread named counters, reported per thread (e.g. a scheduler's steals).
 * `add` adds delta to the calling thread's counter; `set` overwrites it. */
void convoy_counter_add(const char *name, int64_t delta) CONVOY_WEAK;
void convoy_counter_set(const char *name, int64_t value) CONVOY_WEAK;

#define CONVOY_PROGRESS(name)                                                   \
	do { if (convoy_progress) convoy_progress((name), 1); } while (0)
#define CONVOY_PROGRESS_N(name, n)                                              \
	do { if (convoy_progress) convoy_progress((name), (n)); } while (0)
#define CONVOY_NAME(object, name)                                               \
	do { if (convoy_name_object) convoy_name_object((object), (name)); } while (0)
#define CONVOY_COUNTER_ADD(name, delta)                                         \
	do { if (convoy_counter_add) convoy_counter_add((name), (delta)); } while (0)
#define CONVOY_COUNTER_SET(name, value)                                         \
	do { if (convoy_counter_set) convoy_counter_set((name), (value)); } while (0)

/* Work queues, for pool-starvation: a scheduler adds 1 for each task it
 * queues and -1 for each task a worker takes (or drops), on whichever thread
 * does so. It is an ordinary per-thread counter (nothing shared is written);
 * the analyzer sums it over the process's threads into the tasks queued when
 * the profile was written. With it, a pool whose every worker is blocked is
 * starved exactly when tasks are queued (docs/findings.md). */
#define CONVOY_QUEUED_COUNTER "convoy.queued"
#define CONVOY_QUEUED(delta) CONVOY_COUNTER_ADD(CONVOY_QUEUED_COUNTER, (delta))

#ifdef __cplusplus
}
#endif
#endif /* CONVOY_H */
