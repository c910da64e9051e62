/* statsfields.h — how each field of a profile's per-thread stats record
 * (struct cv_stats, convoy/profile.h) merges: summed, or the largest kept.
 * The analyzer merges threads' records so (model.c), the shim the records
 * of objects merged past its cap that a thread had not folded yet when the
 * profile was written (preload/output.c). One table, so a field added to
 * the record without a line here fails to compile (the size check below). */
#ifndef CONVOY_STATSFIELDS_H
#define CONVOY_STATSFIELDS_H

#include <stddef.h>

#include "convoy/profile.h"

/* X(field, merge): merge is SUM or MAX. Arrays merge element by element. */
#define CV_STATS_FIELDS(X)                                                    \
	X(acquisitions, SUM) X(contended, SUM) X(trylocks, SUM)                \
	X(trylock_failures, SUM) X(handoffs, SUM) X(hold_samples, SUM)         \
	X(hold_ns, SUM) X(max_hold_ns, MAX)                                    \
	X(waits, SUM) X(wait_ns, SUM) X(max_wait_ns, MAX) X(timeouts, SUM)     \
	X(signals, SUM) X(broadcasts, SUM) X(signals_unwaited, SUM)            \
	X(broadcasts_unwaited, SUM) X(wait_hist, SUM)                          \
	X(rd_acquisitions, SUM) X(rd_contended, SUM) X(rd_waits, SUM)          \
	X(rd_wait_ns, SUM) X(rd_max_wait_ns, MAX) X(wr_max_wait_ns, MAX)       \
	X(wr_behind_readers, SUM) X(wr_behind_readers_ns, SUM)                 \
	X(wakeups, SUM) X(wake_latency_ns, SUM) X(max_wake_latency_ns, MAX)    \
	X(futile_wakes, SUM) X(futile_after_broadcast, SUM)                    \
	X(broadcast_woken, SUM) X(interrupts, SUM)                             \
	X(futex_woken, SUM) X(futex_eagain, SUM) X(requeues, SUM)              \
	X(requeued, SUM) X(pi_ops, SUM) X(wake_ops, SUM)                       \
	X(rounds, SUM) X(imbalance_ns, SUM) X(max_imbalance_ns, MAX)

/* Every field after (object, thread) has its line in CV_STATS_FIELDS. */
#define CV_X(field, merge) + sizeof(((struct cv_stats *)0)->field)
_Static_assert(offsetof(struct cv_stats, acquisitions) CV_STATS_FIELDS(CV_X) == sizeof(struct cv_stats),
	       "a cv_stats field has no merge rule in statsfields.h");
#undef CV_X

/* s's counts into to's: sums, except the maxima. */
#define CV_STATS_MERGE_SUM(to, v) ((to) += (v))
#define CV_STATS_MERGE_MAX(to, v) ((to) = (to) > (v) ? (to) : (v))
static inline void cv_stats_merge(struct cv_stats *to, const struct cv_stats *s)
{
#define CV_X(field, merge)                                                            \
	for (size_t k = 0; k < sizeof(to->field) / sizeof(uint64_t); k++)             \
		CV_STATS_MERGE_##merge(((uint64_t *)&to->field)[k], ((const uint64_t *)&s->field)[k]);
	CV_STATS_FIELDS(CV_X)
#undef CV_X
}

#endif
