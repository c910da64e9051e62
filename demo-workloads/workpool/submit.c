/* submit.c — admission (capacity, shutdown) and placement of new tasks.
 *
 * Order of a submission:  [outside the pool: inflight += 1, check closed]
 *                         admit (capacity) → count as submitted → place →
 *                         wake → [inflight -= 1]
 *
 * - `inflight` closes the race between a submitter that passed the `closed`
 *   check and a shutdown that would otherwise see the pool quiescent and
 *   join the workers before the task is queued: shutdown stores `closed`,
 *   fences, and waits for inflight to drain; a submitter increments inflight,
 *   fences, and reads `closed` (Dekker again), so one of them sees the other.
 * - A task is counted as submitted before it becomes visible to a worker, so
 *   a worker can never complete it before it is counted (pool.c's quiescence
 *   argument depends on it). A task that could not be placed (out of memory)
 *   is counted in `unplaced`, which quiescence treats as completed.
 * - Admission counts tasks accepted but not started (`queued`) only when the
 *   pool has a capacity; workers release a slot when a task leaves its queue.
 *   Submissions from the pool's own workers are admitted over capacity: a
 *   worker blocked on a full queue that only workers drain is seed 003's
 *   deadlock.
 */
#include <errno.h>

#include "convoy.h"
#include "internal.h"

/* ------------------------------------------------------------------------ */
/* Admission                                                                  */
/* ------------------------------------------------------------------------ */

static void wp__note_max(wp_pool *pool, size_t q)
{
	uint64_t max = wp__load_relaxed(&pool->admit.max_queued);
	while (q > max &&
	       !atomic_compare_exchange_weak_explicit(&pool->admit.max_queued, &max, q,
	                                              memory_order_relaxed,
	                                              memory_order_relaxed))
		;
}

/* Takes up to `want` slots without blocking; returns how many (0 if full). */
static size_t wp__admit_try(wp_pool *pool, size_t want)
{
	size_t cap = pool->cfg.capacity;
	size_t q = wp__load_relaxed(&pool->admit.queued);
	while (q < cap) {
		size_t k = cap - q < want ? cap - q : want;
		if (atomic_compare_exchange_weak_explicit(&pool->admit.queued, &q, q + k,
		                                          memory_order_acq_rel,
		                                          memory_order_relaxed)) {
			wp__note_max(pool, q + k);
			return k;
		}
	}
	return 0;
}

/* Admits between 1 and want tasks into *got, or fails. */
static int wp__admit(wp_pool *pool, struct wp__worker *self, size_t want,
                     size_t *got, wp_admit mode, const struct timespec *deadline,
                     bool *blocked)
{
	if (!pool->cfg.bounded) {
		*got = want;
		return 0;
	}
	if (self) {
		/* Internal: never refused, never blocked (see the top). */
		size_t q = wp__fetch_add_acq_rel(&pool->admit.queued, want) + want;
		wp__note_max(pool, q);
		*got = want;
		return 0;
	}
	if ((*got = wp__admit_try(pool, want)) > 0)
		return 0;
	if (mode == WP_ADMIT_TRY)
		return WP_EAGAIN;
	if (wp__load_acquire(&pool->state) == WP__PAUSED)
		return WP_EDEADLK; /* nobody would ever make room */
	if (!*blocked) {
		*blocked = true;
		wp__fetch_add_relaxed(&pool->ext.blocked, 1);
	}
	int rc = 0;
	wp__lock(&pool->admit.lock);
	wp__fetch_add_seq_cst(&pool->admit.waiters, 1);
	/* Orders our registration before the re-read of queued, against
	 * wp__admit_release's "queued -= 1; fence; read waiters". */
	wp__fence_seq_cst();
	for (;;) {
		if (wp__load_acquire(&pool->closed)) {
			rc = WP_ESHUTDOWN;
			break;
		}
		if ((*got = wp__admit_try(pool, want)) > 0)
			break;
		int err = mode == WP_ADMIT_TIMED
			? pthread_cond_timedwait(&pool->admit.cond, &pool->admit.lock, deadline)
			: pthread_cond_wait(&pool->admit.cond, &pool->admit.lock);
		if (err == ETIMEDOUT) {
			if ((*got = wp__admit_try(pool, want)) > 0)
				break;
			rc = WP_ETIMEDOUT;
			break;
		}
	}
	wp__fetch_sub_seq_cst(&pool->admit.waiters, 1);
	wp__unlock(&pool->admit.lock);
	return rc;
}

void wp__admit_release(wp_pool *pool)
{
	wp__fetch_sub_seq_cst(&pool->admit.queued, 1);
	/* Orders the release before the read of waiters (Dekker, above). */
	wp__fence_seq_cst();
	if (wp__load_relaxed(&pool->admit.waiters) == 0)
		return;
	wp__lock(&pool->admit.lock);
	pthread_cond_broadcast(&pool->admit.cond);
	wp__unlock(&pool->admit.lock);
}

/* Gives back admission slots for tasks that were admitted but not placed. */
static void wp__admit_return(wp_pool *pool, size_t n)
{
	if (!pool->cfg.bounded)
		return;
	while (n--)
		wp__admit_release(pool);
}

/* ------------------------------------------------------------------------ */
/* Placement                                                                  */
/* ------------------------------------------------------------------------ */

/* Puts t in self's LIFO slot; the task it displaces becomes stealable. */
static size_t wp__lifo_put(wp_pool *pool, struct wp__worker *self, wp_task t)
{
	if (self->own.lifo_full) {
		struct wp__src src = { &self->own.lifo, NULL, 0 };
		if (wp__push_own(self, &src, 0, 1, 1, wp__ctr_for(pool, self)) != 1)
			return 0; /* out of memory: t is not placed */
		wp__notify_stealable(pool, self, 1);
	}
	self->own.lifo = t;
	self->own.lifo_full = true;
	return 1;
}

/* Places tasks src[start + k * stride], k < count, on worker k's queue. */
static size_t wp__place_on(wp_pool *pool, struct wp__worker *self, bool paused,
                           unsigned k, const struct wp__src *src, size_t start,
                           size_t stride, size_t count)
{
	struct wp__worker *w = &pool->cfg.w[k];
	struct wp__ctr ctr = wp__ctr_for(pool, self);
	size_t placed;

	if (count == 0)
		return 0;
	if (self == w || paused) {
		/* As the owner: the worker itself, or anyone while no worker
		 * thread exists (the caller holds pool->lifecycle). */
		placed = wp__push_own(w, src, start, stride, count, ctr);
		if (self == w)
			wp__notify_stealable(pool, self, placed);
		return placed;
	}
	if (pool->cfg.policy == WP_POLICY_LOCKED)
		placed = wp__ldeque_push(&w->ld, src, start, stride, count, ctr) == 0 ? count : 0;
	else
		placed = wp__fifo_push(&w->mailbox, src, start, stride, count, ctr) == 0 ? count : 0;
	if (placed) {
		wp__wake_worker(pool, self, k);
		if (pool->cfg.stealing && placed > 1)
			wp__wake_some(pool, self, placed - 1);
	}
	return placed;
}

/* Places tasks src[start .. start + count) as `target` says; returns how
 * many were placed (fewer only when out of memory). `index0` is the index of
 * the first of them within the whole batch, for WP_DEAL. */
static size_t wp__place(wp_pool *pool, struct wp__worker *self, bool paused,
                        int target, const struct wp__src *src, size_t start,
                        size_t count)
{
	unsigned n = pool->cfg.n;

	if (pool->cfg.policy == WP_POLICY_GLOBAL ||
	    (target == WP_ANY && !self)) {
		struct wp__ctr ctr = wp__ctr_for(pool, self);
		if (wp__fifo_push(&pool->injector, src, start, 1, count, ctr))
			return 0;
		if (!paused)
			wp__wake_some(pool, self, count);
		return count;
	}
	if (target == WP_ANY) {
		/* From one of our workers: its LIFO slot or its own deque. */
		if (count == 1 && pool->cfg.lifo)
			return wp__lifo_put(pool, self, wp__src_get(src, start));
		return wp__place_on(pool, self, paused, self->index, src, start, 1, count);
	}
	if (target == WP_DEAL) {
		if (count == 1) {
			unsigned k = wp__fetch_add_relaxed(&pool->ext.deal_next, 1) % n;
			return wp__place_on(pool, self, paused, k, src, start, 1, 1);
		}
		/* Task start + i goes to worker (start + i) % n, so a batch split
		 * into admission chunks still deals like the seed. */
		size_t placed = 0;
		for (unsigned k = 0; k < n; k++) {
			size_t i0 = ((size_t)k + n - start % n) % n;
			if (i0 >= count)
				continue;
			size_t ck = (count - i0 + n - 1) / n;
			placed += wp__place_on(pool, self, paused, k, src, start + i0, n, ck);
		}
		return placed;
	}
	return wp__place_on(pool, self, paused, (unsigned)target, src, start, 1, count);
}

/* ------------------------------------------------------------------------ */
/* The one submission path                                                    */
/* ------------------------------------------------------------------------ */

static int wp__submit_tasks(wp_pool *pool, int target, const struct wp__src *src,
                            size_t count, wp_admit mode, uint64_t timeout_ns)
{
	if (!pool || !src)
		return WP_EINVAL;
	if (target < WP_DEAL || (target >= 0 && (unsigned)target >= pool->cfg.n))
		return WP_ERANGE;
	if (mode != WP_ADMIT_BLOCK && mode != WP_ADMIT_TRY && mode != WP_ADMIT_TIMED)
		return WP_EINVAL;

	struct wp__worker *self = wp__self_in(pool);
	struct timespec dl, *deadline = NULL;
	if (mode == WP_ADMIT_TIMED) {
		dl = wp__deadline(timeout_ns);
		deadline = &dl;
	}
	if (!self) {
		wp__fetch_add_seq_cst(&pool->ext.inflight, 1);
		/* Orders inflight before the read of closed (Dekker with
		 * wp_shutdown; see the top). */
		wp__fence_seq_cst();
		if (wp__load_relaxed(&pool->closed)) {
			wp__fetch_sub_acq_rel(&pool->ext.inflight, 1);
			wp__fetch_add_relaxed(&pool->ext.rejected, 1);
			return WP_ESHUTDOWN;
		}
	}

	int rc = 0;
	bool blocked = false;
	size_t done = 0;
	while (done < count) {
		size_t got;
		rc = wp__admit(pool, self, count - done, &got, mode, deadline, &blocked);
		if (rc) {
			wp__fetch_add_relaxed(&pool->ext.rejected, 1);
			break;
		}
		/* Counted before visible (see the top). */
		if (self)
			wp__store_release(&self->own.submitted,
			                  wp__load_relaxed(&self->own.submitted) + got);
		else
			wp__fetch_add_acq_rel(&pool->ext.submitted, got);

		bool paused = false;
		if (!self && wp__load_acquire(&pool->state) == WP__PAUSED) {
			wp__lock(&pool->lifecycle);
			paused = wp__load_relaxed(&pool->state) == WP__PAUSED;
			if (!paused)
				wp__unlock(&pool->lifecycle);
		}
		size_t placed = wp__place(pool, self, paused, target, src, done, got);
		CONVOY_QUEUED((int64_t)placed);   /* taken back in wp__run_task and wp__sweep_task */
		if (paused)
			wp__unlock(&pool->lifecycle);
		if (placed < got) {
			wp__fetch_add_acq_rel(&pool->ext.unplaced, got - placed);
			wp__admit_return(pool, got - placed);
			rc = WP_ENOMEM;
			break;
		}
		done += got;
	}
	if (!self)
		wp__fetch_sub_acq_rel(&pool->ext.inflight, 1);
	return rc;
}

static int wp__spawn_one(wp_pool *pool, int target, wp_fn fn, void *arg,
                         wp_admit mode, uint64_t timeout_ns)
{
	if (!fn)
		return WP_EINVAL;
	wp_task t = { fn, arg };
	struct wp__src src = { &t, NULL, 0 };
	return wp__submit_tasks(pool, target, &src, 1, mode, timeout_ns);
}

int wp_spawn(wp_pool *pool, wp_fn fn, void *arg)
{
	return wp__spawn_one(pool, WP_ANY, fn, arg, WP_ADMIT_BLOCK, 0);
}

int wp_try_spawn(wp_pool *pool, wp_fn fn, void *arg)
{
	return wp__spawn_one(pool, WP_ANY, fn, arg, WP_ADMIT_TRY, 0);
}

int wp_spawn_timed(wp_pool *pool, wp_fn fn, void *arg, uint64_t timeout_ns)
{
	return wp__spawn_one(pool, WP_ANY, fn, arg, WP_ADMIT_TIMED, timeout_ns);
}

int wp_spawn_to(wp_pool *pool, int worker, wp_fn fn, void *arg)
{
	return wp__spawn_one(pool, worker, fn, arg, WP_ADMIT_BLOCK, 0);
}

int wp_spawn_batch(wp_pool *pool, int worker, const wp_task *tasks, size_t n)
{
	if (n == 0)
		return 0;
	if (!tasks)
		return WP_EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!tasks[i].fn)
			return WP_EINVAL;
	struct wp__src src = { tasks, NULL, 0 };
	return wp__submit_tasks(pool, worker, &src, n, WP_ADMIT_BLOCK, 0);
}

int wp_spawn_range(wp_pool *pool, int worker, wp_fn fn, uintptr_t first,
                   size_t count)
{
	if (count == 0)
		return 0;
	if (!fn)
		return WP_EINVAL;
	struct wp__src src = { NULL, fn, first };
	return wp__submit_tasks(pool, worker, &src, count, WP_ADMIT_BLOCK, 0);
}

static int wp__submit_job(wp_pool *pool, wp_call_fn call, wp_fn fn, void *arg,
                          const wp_submit_opts *opts, wp_future **out)
{
	static const wp_submit_opts defaults = WP_SUBMIT_OPTS_INIT;
	if (!opts)
		opts = &defaults;
	if (!pool || (!call && !fn))
		return WP_EINVAL;
	struct wp_future *job = wp__job_new(pool, call, fn, arg, opts->token, out != NULL);
	if (!job)
		return WP_ENOMEM;
	wp_task t = { wp__job_run, job };
	struct wp__src src = { &t, NULL, 0 };
	int rc = wp__submit_tasks(pool, opts->worker, &src, 1, opts->admit,
	                          opts->timeout_ns);
	if (rc) {
		wp__job_discard_unqueued(job);
		return rc;
	}
	if (out)
		*out = job;
	return 0;
}

int wp_submit(wp_pool *pool, wp_call_fn fn, void *arg, wp_future **out)
{
	return wp__submit_job(pool, fn, NULL, arg, NULL, out);
}

int wp_submit_to(wp_pool *pool, int worker, wp_call_fn fn, void *arg,
                 wp_future **out)
{
	wp_submit_opts opts = WP_SUBMIT_OPTS_INIT;
	opts.worker = worker;
	return wp__submit_job(pool, fn, NULL, arg, &opts, out);
}

int wp_submit_ex(wp_pool *pool, wp_call_fn fn, void *arg,
                 const wp_submit_opts *opts, wp_future **out)
{
	if (!fn)
		return WP_EINVAL;
	return wp__submit_job(pool, fn, NULL, arg, opts, out);
}

int wp_spawn_ex(wp_pool *pool, wp_fn fn, void *arg, const wp_submit_opts *opts)
{
	static const wp_submit_opts defaults = WP_SUBMIT_OPTS_INIT;
	if (!opts)
		opts = &defaults;
	if (!fn)
		return WP_EINVAL;
	if (opts->token)
		return wp__submit_job(pool, NULL, fn, arg, opts, NULL);
	return wp__spawn_one(pool, opts->worker, fn, arg, opts->admit, opts->timeout_ns);
}
