/* statsfields.h — how each field of a profile's per-thread stats record
 * (struct cv_stats, convoy/profile.h) merges across threads: summed, or the
 * largest kept. One table, so a field added to the record without a line
 * here fails to compile (the size check in model.c). */
#ifndef CONVOY_STATSFIELDS_H
#define CONVOY_STATSFIELDS_H

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

#endif
