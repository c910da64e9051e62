/* park.c — parking idle workers without lost wake-ups, and without a
 * signal when nobody is parked.
 *
 * Each worker parks on its own pthread condition variable; all of them share
 * one mutex, park.lock, which also guards the stack of parked workers.
 * pthread mutexes and condvars rather than raw futexes on purpose: convoy's
 * shim interposes them, so a profile of a workpool program shows every park
 * (condvar wait, wait time, signals) by name, which is what the demos are
 * for. `sleeping` counts workers between "decided to park" and "woken".
 *
 * Parker (wp__park):                     Waker (after making work visible):
 *   lock(park.lock)                        publish the task (queue op)
 *   sleeping += 1        (seq_cst RMW)     fence(seq_cst)
 *   fence(seq_cst)                         if sleeping == 0: return  ← no signal
 *   recheck every queue, shutdown,         lock(park.lock)
 *     the awaited future: if anything,     pop a parked worker, parked = false,
 *     sleeping -= 1, unlock, return          sleeping -= 1, signal its condvar
 *   push self on the parked stack          unlock
 *   while parked: cond_wait
 *
 * Why no wake-up is lost: the parker's increment and the waker's publish are
 * each followed by a seq_cst fence before reading the other's variable
 * (Dekker). So either the waker sees sleeping > 0, or the parker's recheck
 * sees the task. In the first case the waker takes park.lock, which the
 * parker holds from its increment until cond_wait releases it atomically,
 * so the waker finds the parker either already on the stack (and signals
 * it) or already gone (it found work and decremented). `parked` is the
 * durable fact, read and written under the lock, so spurious wake-ups loop.
 *
 * Why there is no signal without a sleeper: the waker reads `sleeping` before
 * touching the lock, and pops a worker only if one is on the stack. The cost
 * when all workers are busy is one fence and one read of a line that is
 * written only when someone parks.
 */
#include <errno.h>

#include "internal.h"

static void wp__count_wake(wp_pool *pool, struct wp__worker *self)
{
	if (self)
		wp__counter_inc(&self->own.st.wakes);
	else
		wp__fetch_add_relaxed(&pool->ext.wakes, 1);
}

/* Under park.lock: take worker at stack position i off the stack. */
static void wp__unpark_at(wp_pool *pool, unsigned i)
{
	struct wp__worker *w = &pool->cfg.w[pool->park.stack[i]];
	pool->park.stack[i] = pool->park.stack[--pool->park.n_parked];
	w->parked = false;
	w->waiting_on = NULL;
	wp__fetch_sub_seq_cst(&pool->park.sleeping, 1);
	pthread_cond_signal(&w->park_cond);
}

bool wp__park(struct wp__worker *w, struct wp_future *fut,
              const struct timespec *deadline)
{
	wp_pool *pool = w->pool;
	bool in_time = true;

	wp__lock(&pool->park.lock);
	wp__fetch_add_seq_cst(&pool->park.sleeping, 1);
	if (fut)
		wp__fetch_add_seq_cst(&fut->helpers, 1);
	/* Orders the increments above before the rechecks below, against
	 * the wakers' "publish; fence; read sleeping/helpers". */
	wp__fence_seq_cst();
	bool done = wp__load_acquire(&pool->state) >= WP__CLOSING &&
	            wp__quiescent(pool);
	if (wp__work_visible(w) || done ||
	    (fut && wp__load_acquire(&fut->state) != WP_FUTURE_PENDING)) {
		wp__fetch_sub_seq_cst(&pool->park.sleeping, 1);
	} else {
		WP_ASSERT(pool->park.n_parked < pool->cfg.n && !w->parked);
		w->parked = true;
		w->waiting_on = fut;
		pool->park.stack[pool->park.n_parked++] = w->index;
		wp__counter_inc(&w->own.st.parks);
		while (w->parked) {
			int err = deadline
				? pthread_cond_timedwait(&w->park_cond, &pool->park.lock, deadline)
				: pthread_cond_wait(&w->park_cond, &pool->park.lock);
			if (err == ETIMEDOUT && w->parked) {
				/* Take ourselves off the stack. */
				for (unsigned i = 0; i < pool->park.n_parked; i++) {
					if (pool->park.stack[i] == w->index) {
						pool->park.stack[i] =
							pool->park.stack[--pool->park.n_parked];
						break;
					}
				}
				w->parked = false;
				w->waiting_on = NULL;
				wp__fetch_sub_seq_cst(&pool->park.sleeping, 1);
				in_time = false;
			}
		}
	}
	if (fut)
		wp__fetch_sub_seq_cst(&fut->helpers, 1);
	wp__unlock(&pool->park.lock);
	return in_time;
}

void wp__wake_one(wp_pool *pool, struct wp__worker *self)
{
	/* Orders the caller's publish of work before the read of sleeping. */
	wp__fence_seq_cst();
	if (wp__load_relaxed(&pool->park.sleeping) == 0)
		return;
	wp__lock(&pool->park.lock);
	if (pool->park.n_parked > 0) {
		/* The most recently parked: its cache is the warmest. */
		wp__unpark_at(pool, pool->park.n_parked - 1);
		wp__count_wake(pool, self);
	}
	wp__unlock(&pool->park.lock);
}

void wp__wake_some(wp_pool *pool, struct wp__worker *self, size_t n)
{
	if (n > pool->cfg.n)
		n = pool->cfg.n;
	wp__fence_seq_cst();
	if (wp__load_relaxed(&pool->park.sleeping) == 0)
		return;
	wp__lock(&pool->park.lock);
	while (n-- > 0 && pool->park.n_parked > 0) {
		wp__unpark_at(pool, pool->park.n_parked - 1);
		wp__count_wake(pool, self);
	}
	wp__unlock(&pool->park.lock);
}

void wp__wake_worker(wp_pool *pool, struct wp__worker *self, unsigned k)
{
	wp__fence_seq_cst();
	if (wp__load_relaxed(&pool->park.sleeping) == 0)
		return;
	wp__lock(&pool->park.lock);
	for (unsigned i = 0; i < pool->park.n_parked; i++) {
		if (pool->park.stack[i] == k) {
			wp__unpark_at(pool, i);
			wp__count_wake(pool, self);
			break;
		}
	}
	wp__unlock(&pool->park.lock);
}

void wp__wake_all(wp_pool *pool, struct wp__worker *self)
{
	wp__fence_seq_cst();
	if (wp__load_relaxed(&pool->park.sleeping) == 0)
		return;
	wp__lock(&pool->park.lock);
	while (pool->park.n_parked > 0) {
		wp__unpark_at(pool, pool->park.n_parked - 1);
		wp__count_wake(pool, self);
	}
	wp__unlock(&pool->park.lock);
}

void wp__wake_helpers(wp_pool *pool, struct wp_future *fut)
{
	/* The caller already fenced and saw helpers > 0. */
	struct wp__worker *self = wp__self_in(pool);
	wp__lock(&pool->park.lock);
	for (unsigned i = 0; i < pool->park.n_parked;) {
		if (pool->cfg.w[pool->park.stack[i]].waiting_on == fut) {
			wp__unpark_at(pool, i);
			wp__count_wake(pool, self);
		} else {
			i++;
		}
	}
	wp__unlock(&pool->park.lock);
}

void wp__notify_stealable(wp_pool *pool, struct wp__worker *self, size_t n)
{
	/* Without stealing nobody else can take the owner's work. */
	if (!pool->cfg.stealing || pool->cfg.n < 2)
		return;
	wp__wake_some(pool, self, n);
}

void wp__notify_idle(wp_pool *pool)
{
	/* Orders this worker's completed-count stores before the read of
	 * waiters (Dekker with wp_wait_idle). */
	wp__fence_seq_cst();
	if (wp__load_relaxed(&pool->idle.waiters) == 0)
		return;
	if (!wp__quiescent(pool))
		return;
	wp__lock(&pool->idle.lock);
	pthread_cond_broadcast(&pool->idle.cond);
	wp__unlock(&pool->idle.lock);
}
