/* deadlock.h — bugs of order and progress, found from the shim's lock-order
 * edges and the held locks and waits of a profile written while threads were
 * blocked (docs/findings.md, "Lock order and hangs"):
 *
 *   lock-order-cycle  locks taken in orders that form a cycle (A then B on
 *                     one thread, B then A on another), whether or not the
 *                     run hung: the deadlock waiting to happen;
 *   deadlock          threads blocked in a cycle of lock waits (and posts a
 *                     semaphore or futex word waits for) when the profile or
 *                     its hang snapshot was written (thread -> lock -> owner);
 *   pool-starvation   every worker of a pool blocked in a condvar, semaphore
 *                     or futex wait with no deadline, in a profile written
 *                     by --timeout or the watchdog (or its snapshot), while
 *                     tasks were queued (the scheduler's count) or, without
 *                     a count, another thread waited too.
 *
 * They are correctness findings: ranked before every cost finding. */
#ifndef CONVOY_DEADLOCK_H
#define CONVOY_DEADLOCK_H

#include <stdio.h>

struct findings;
struct finding;
struct model;
struct json_object;

/* Adds the cycles, deadlocks and starved pools of m's profile to out;
 * threads and wall_ns label them like the run's other findings. */
void deadlock__diagnose(struct findings *out, const struct model *m, int threads, double wall_ns);

/* The whole lock-order graph for the report and the page: {edges: [{from,
 * to, thread}], cycles: [[lock names]] (the lock-order-cycle findings of f),
 * edges_dropped}; NULL when the profile has no lock-order record. */
struct findings;
struct json_object *deadlock__graph_json(const struct model *m, const struct findings *f);

/* A finding's edges with their stacks, for the report. */
struct json_object *deadlock__edges_json(const struct finding *x);
void deadlock__edges_text(const struct finding *x, FILE *out);

#endif
