/* future.c — futures, and the job record behind every task that has a
 * future or a cancellation token.
 *
 * A job is one allocation: the function, its argument, its token, and the
 * shared state of its future (outcome, waiters). It sits in a queue slot as
 * the task {wp__job_run, job}, so plain tasks pay nothing for futures.
 *
 * Every outcome makes the future ready, so every wait ends: a value, an
 * error, cancelled (token cancelled before the job ran, or the function
 * returned WP_ECANCELED), or broken (the job was dropped without running by
 * a discarding shutdown). Readiness is published by a release store of
 * `state` after value/error were written; readers acquire it.
 *
 * Waiting. A thread that is not one of the pool's workers (or a worker with
 * helping off) blocks on the future's condvar. A worker with helping on runs
 * other ready tasks instead (seed 003: "the operating-system thread never
 * becomes unavailable to the dependency that can release it"); with nothing
 * to run it parks in park.c like an idle worker, registered in `helpers`, and
 * completion wakes it. The Dekker pair is: the helper increments `helpers`
 * then (after a seq_cst fence) checks `state`; completion stores `state` then
 * (after a seq_cst fence) checks `helpers`. At least one sees the other.
 */
#include <time.h>

#include "internal.h"

struct wp_future *wp__job_new(wp_pool *pool, wp_call_fn call, wp_fn fn,
                              void *arg, wp_token *token, bool caller_ref)
{
	struct wp_future *f = malloc(sizeof *f);
	if (!f)
		return NULL;
	atomic_init(&f->state, WP_FUTURE_PENDING);
	atomic_init(&f->refs, caller_ref ? 2u : 1u);
	atomic_init(&f->helpers, 0);
	f->error = 0;
	f->value = 0;
	wp__mutex_init(&f->lock);
	wp__cond_init_monotonic(&f->cond);
	f->waiters = 0;
	f->pool = pool;
	f->call = call;
	f->fn = fn;
	f->arg = arg;
	f->token = wp_token_retain(token);
	return f;
}

static void wp__future_free(struct wp_future *f)
{
	pthread_cond_destroy(&f->cond);
	pthread_mutex_destroy(&f->lock);
	wp_token_release(f->token);
	free(f);
}

void wp_future_release(wp_future *f)
{
	/* acq_rel: the last owner sees everything the others did. */
	if (f && wp__fetch_sub_acq_rel(&f->refs, 1) == 1)
		wp__future_free(f);
}

/* Makes the future ready and drops the job's reference. */
static void wp__complete(struct wp_future *f, wp_future_state state, int error,
                         uint64_t value)
{
	wp_pool *pool = f->pool;
	wp__lock(&f->lock);
	f->error = error;
	f->value = value;
	/* Release: error and value before the state readers acquire. */
	wp__store_release(&f->state, (int)state);
	if (f->waiters)
		pthread_cond_broadcast(&f->cond);
	wp__unlock(&f->lock);
	/* Orders the state store before the helpers load (Dekker with the
	 * helper's park, see the top of this file). */
	wp__fence_seq_cst();
	if (wp__load_relaxed(&f->helpers) > 0)
		wp__wake_helpers(pool, f);
	wp_future_release(f);
}

void wp__job_run(void *job)
{
	/* Called directly only when someone runs a task outside a worker; the
	 * workers call wp__job_execute and count the outcome. */
	(void)wp__job_execute(job);
}

bool wp__job_execute(struct wp_future *f)
{
	if (wp_token_cancelled(f->token)) {
		wp__complete(f, WP_FUTURE_CANCELLED, WP_ECANCELED, 0);
		return false;
	}
	wp_token *prev = wp__token_swap_current(f->token);
	uint64_t value = 0;
	int rc = 0;
	if (f->call)
		rc = f->call(f->arg, &value);
	else
		f->fn(f->arg);
	wp__token_swap_current(prev);
	if (rc == 0)
		wp__complete(f, WP_FUTURE_VALUE, 0, value);
	else if (rc == WP_ECANCELED)
		wp__complete(f, WP_FUTURE_CANCELLED, WP_ECANCELED, 0);
	else
		wp__complete(f, WP_FUTURE_ERROR, rc < 0 ? rc : -rc, 0);
	return true;
}

void wp__job_drop(struct wp_future *f)
{
	wp__complete(f, WP_FUTURE_BROKEN, WP_EBROKEN, 0);
}

void wp__job_discard_unqueued(struct wp_future *f)
{
	/* Never visible to anyone else: free outright. */
	wp__future_free(f);
}

wp_future_state wp_future_state_of(const wp_future *f)
{
	return (wp_future_state)wp__load_acquire(&((wp_future *)f)->state);
}

static bool wp__ready(wp_future *f)
{
	return wp__load_acquire(&f->state) != WP_FUTURE_PENDING;
}

/* Blocks on the future's own condvar (non-workers, or helping off). */
static int wp__block(wp_future *f, const struct timespec *deadline)
{
	int rc = 0;
	wp__lock(&f->lock);
	f->waiters++;
	while (!wp__ready(f)) {
		int err = deadline
			? pthread_cond_timedwait(&f->cond, &f->lock, deadline)
			: pthread_cond_wait(&f->cond, &f->lock);
		if (err == ETIMEDOUT && !wp__ready(f)) {
			rc = WP_ETIMEDOUT;
			break;
		}
	}
	f->waiters--;
	wp__unlock(&f->lock);
	return rc;
}

/* A worker waiting on a future: run other tasks while it is pending. */
static int wp__help(struct wp__worker *w, wp_future *f,
                    const struct timespec *deadline)
{
	wp_pool *pool = w->pool;
	while (!wp__ready(f)) {
		wp_task t;
		if (wp__find_task(w, &t)) {
			wp__counter_inc(&w->own.st.tasks_helped);
			wp__run_task(w, t);
			continue;
		}
		/* Nothing to run: poll for the idle-spin budget, then park. */
		uint64_t budget = pool->cfg.idle_spin_ns;
		if (budget) {
			uint64_t start = wp__now_ns();
			do {
				for (int i = 0; i < 32; i++)
					wp__cpu_relax();
				wp__counter_inc(&w->own.st.idle_spins);
				if (wp__ready(f) || wp__work_visible(w))
					break;
			} while (wp__now_ns() - start < budget);
			if (wp__ready(f) || wp__work_visible(w))
				continue;
		}
		if (!wp__park(w, f, deadline) && !wp__ready(f))
			return WP_ETIMEDOUT;
	}
	return 0;
}

/* Before a worker blocks without helping, its LIFO slot and its deque's
 * private zone (neither stealable) must go where others can take them, or a
 * child waiting there would never run. */
static void wp__flush_lifo(struct wp__worker *w)
{
	if (w->pool->cfg.policy == WP_POLICY_CHASE_LEV) {
		size_t n = wp__deque_share_owner(&w->cl);
		if (n)
			wp__notify_stealable(w->pool, w, n);
	}
	if (!w->own.lifo_full)
		return;
	struct wp__src src = { &w->own.lifo, NULL, 0 };
	w->own.lifo_full = false;
	if (wp__push_own(w, &src, 0, 1, 1, wp__ctr_for(w->pool, w)) == 1) {
		wp__notify_stealable(w->pool, w, 1);
	} else {
		/* Out of memory: run it here rather than lose it. */
		wp__run_task(w, w->own.lifo);
	}
}

static int wp__wait(wp_future *f, const uint64_t *timeout_ns)
{
	if (!f)
		return WP_EINVAL;
	if (wp__ready(f))
		return 0;
	struct timespec dl, *deadline = NULL;
	if (timeout_ns) {
		dl = wp__deadline(*timeout_ns);
		deadline = &dl;
	}
	struct wp__worker *w = wp__self_in(f->pool);
	if (w && w->pool->cfg.helping)
		return wp__help(w, f, deadline);
	if (w)
		wp__flush_lifo(w);
	return wp__block(f, deadline);
}

int wp_future_wait(wp_future *f)
{
	return wp__wait(f, NULL);
}

int wp_future_timedwait(wp_future *f, uint64_t timeout_ns)
{
	return wp__wait(f, &timeout_ns);
}

static int wp__outcome(wp_future *f, uint64_t *value)
{
	switch (wp_future_state_of(f)) {
	case WP_FUTURE_PENDING:
		return WP_EBUSY;
	case WP_FUTURE_VALUE:
		if (value)
			*value = f->value;
		return 0;
	case WP_FUTURE_CANCELLED:
		return WP_ECANCELED;
	case WP_FUTURE_BROKEN:
		return WP_EBROKEN;
	case WP_FUTURE_ERROR:
	default:
		return f->error;
	}
}

int wp_future_get(wp_future *f, uint64_t *value)
{
	int rc = wp_future_wait(f);
	if (rc)
		return rc;
	return wp__outcome(f, value);
}

int wp_future_try_get(wp_future *f, uint64_t *value)
{
	if (!f)
		return WP_EINVAL;
	return wp__outcome(f, value);
}
