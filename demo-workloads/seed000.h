/* seed000.h — seed 000's two schedulers, shared by global_queue,
 * work_stealing and scheduler_compare.
 *
 * Both run the same tasks (dc_task in demo_common.h) over the same worker
 * counts. The global queue exists twice: the seed's appendix ported directly
 * (gq_port_run, in global_queue.c, so convoy's report names the file a user
 * would open) and workpool's WP_POLICY_GLOBAL, which has the same shape (one
 * mutex around a FIFO, trylock first, a failure counted). Work stealing is
 * workpool's per-worker deques, locked or Chase-Lev (seed000.c).
 */
#ifndef SEED000_H
#define SEED000_H

#include <stdint.h>

#include "workpool.h"

/* What a run produced: wall time from the first worker's start to the last
 * join (the serial fill is outside it, as in the seed), how many tasks ran,
 * the seed's last column, and the wrapping sum of every task's result. */
struct s0_run {
	uint64_t elapsed_ns;
	uint64_t tasks;
	uint64_t executed;
	uint64_t contended; /* global queue: failed try_locks; stealing: steals */
	uint64_t stolen;    /* stealing: tasks moved by those steals */
	uint64_t checksum;
};

static inline double s0_throughput(const struct s0_run *r)
{
	return (double)r->tasks / ((double)r->elapsed_ns / 1e9);
}

/* Which global queue: the direct port or workpool's. */
enum gq_impl { GQ_IMPL_WORKPOOL, GQ_IMPL_PORT };
extern const char *const gq_impl_names[]; /* "workpool", "port", NULL */

/* The global queue (global_queue.c). */
struct s0_run gq_run(enum gq_impl impl, unsigned workers, uint64_t tasks, uint64_t weight);

/* Seed 000's tasks on a workpool pool of `policy` (seed000.c): filled while
 * the pool is paused (WP_DEAL for the per-worker policies: task i to worker
 * i mod N, the seed's deal; one queue for WP_POLICY_GLOBAL), then started
 * and drained. */
struct s0_run s0_pool_run(wp_policy policy, unsigned workers, uint64_t tasks, uint64_t weight);

/* The serial sum every run must match: sum of dc_task(weight, i), i < tasks. */
uint64_t s0_serial_checksum(uint64_t tasks, uint64_t weight);

/* Dies with one line unless the run executed every task and matches `expect`. */
void s0_verify(const char *name, const struct s0_run *r, uint64_t expect);

#endif /* SEED000_H */
