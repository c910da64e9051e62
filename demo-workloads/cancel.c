/* cancel — seed 003, "A stop request could not stop a thread".
 *
 * Cancellation is cooperative: a running task polls its token where its
 * invariants allow stopping. The demo submits spinning tasks that share one
 * token, sleeps 5 ms, cancels, and checks that every task observed the
 * request and returned its round count (a positive count and a ready future
 * prove the cooperative path completed). It also shows the queued case: a
 * task whose token is already cancelled when a worker would pop it completes
 * as cancelled without running.
 */
#include "demo_common.h"
#include "workpool.h"

#include <sched.h>
#include <stdlib.h>

static _Atomic unsigned started;

static int spin_until_cancelled(void *arg, uint64_t *value)
{
	const wp_token *token = wp_current_token();
	uint64_t rounds = 0;
	atomic_fetch_add(&started, 1);
	while (!wp_token_cancelled(token)) {
		++rounds;
		if ((rounds & 0xffff) == 0)
			sched_yield();
	}
	*value = rounds;
	return 0; /* observed the request; returns what it did so far */
}

static _Atomic bool queued_ran;

static int never_needed(void *arg, uint64_t *value)
{
	atomic_store(&queued_ran, true);
	*value = 1;
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t workers = 1, delay_ms = 5;
	struct dc_opt opts[] = {
		DC_OPT_WORKERS(&workers, 256),
		DC_OPT_UINT("delay-ms", &delay_ms, "ms before the stop request", 0, 60000),
		DC_OPT_END,
	};
	struct dc_prog prog = {
		.name = "cancel",
		.summary = "Cooperative cancellation: running tasks observe a shared token; queued ones never start.",
		.seed = "seed 003, \"A stop request could not stop a thread\"",
		.examples = "  cancel                   # one worker, the seed's line\n"
			    "  cancel --workers 2       # two spinning tasks share the token\n",
		.opts = opts,
	};
	dc_parse(&prog, argc, argv);
	unsigned n = (unsigned)workers;

	wp_config cfg = wp_config_default();
	cfg.workers = n;
	cfg.name = "cancel";
	wp_pool *pool;
	dc_check("cancel", wp_pool_create(&pool, &cfg), "wp_pool_create");
	wp_token *token = wp_token_new();
	if (!token)
		dc_die(prog.name, "out of memory");
	wp_future **f = calloc(n, sizeof *f);
	if (!f)
		dc_die(prog.name, "out of memory");
	wp_submit_opts so = WP_SUBMIT_OPTS_INIT;
	so.token = token;
	for (unsigned i = 0; i < n; i++)
		dc_check("cancel", wp_submit_ex(pool, spin_until_cancelled, NULL, &so, &f[i]), "wp_submit_ex");
	while (atomic_load(&started) < n) /* every task is running, not queued */
		sched_yield();
	dc_sleep_ns(delay_ms * 1000000ull);
	bool requested = wp_token_cancel(token);
	bool again = wp_token_cancel(token);

	/* The queued case: submitted behind the spinners with the token already
	 * cancelled; when a worker pops it, it completes as cancelled. */
	wp_future *queued;
	dc_check("cancel", wp_submit_ex(pool, never_needed, NULL, &so, &queued), "wp_submit_ex");

	unsigned observed = 0;
	uint64_t min_rounds = UINT64_MAX;
	uint64_t t0 = dc_now_ns();
	for (unsigned i = 0; i < n; i++) {
		uint64_t rounds;
		dc_check("cancel", wp_future_get(f[i], &rounds), "wp_future_get");
		observed += rounds > 0;
		min_rounds = rounds < min_rounds ? rounds : min_rounds;
		wp_future_release(f[i]);
	}
	double latency_ms = dc_ms(dc_now_ns() - t0);
	int qerr = wp_future_get(queued, NULL);
	wp_future_release(queued);
	wp_pool_destroy(pool);
	wp_token_release(token);
	free(f);

	if (!requested || again || observed != n || qerr != WP_ECANCELED || atomic_load(&queued_ran))
		dc_die(prog.name, "cancellation did not behave: requested=%d again=%d observed=%u/%u "
		       "queued=%s ran=%d", requested, again, observed, n, wp_strerror(qerr),
		       atomic_load(&queued_ran));
	if (dc_given(&prog, "workers")) {
		printf("cancel workers=%u cancel-requested=yes second-request=no task-observed=%u/%u "
		       "min-rounds=%llu stop-latency-ms=%.2f queued-task=cancelled-unrun\n",
		       n, observed, n, (unsigned long long)min_rounds, latency_ms);
		return 0;
	}
	printf("cancel-requested=yes task-observed=yes\n");
	printf("\nsecond request changed nothing: %s\n", again ? "no" : "yes");
	printf("rounds before the stop was observed: %llu; futures ready %.2f ms after the request\n",
	       (unsigned long long)min_rounds, latency_ms);
	printf("queued task with the cancelled token: %s, never ran\n", wp_strerror(qerr));
	return 0;
}
