/* cancel.c — cooperative cancellation tokens.
 *
 * A token is a reference-counted flag. wp_token_cancel stores it with
 * release order and readers load it with acquire, so whatever the canceller
 * wrote before cancelling is visible to a task that observes the flag.
 * Nothing is interrupted: a queued task with a cancelled token completes as
 * cancelled when a worker dequeues it (future.c), a running one polls.
 */
#include "internal.h"

static __thread wp_token *wp__tls_token;

wp_token *wp_token_new(void)
{
	wp_token *t = malloc(sizeof *t);
	if (!t)
		return NULL;
	atomic_init(&t->cancelled, false);
	atomic_init(&t->refs, 1);
	return t;
}

wp_token *wp_token_retain(wp_token *token)
{
	if (token)
		wp__fetch_add_relaxed(&token->refs, 1);
	return token;
}

void wp_token_release(wp_token *token)
{
	/* acq_rel: every use of the token happens before the free. */
	if (token && wp__fetch_sub_acq_rel(&token->refs, 1) == 1)
		free(token);
}

bool wp_token_cancel(wp_token *token)
{
	if (!token)
		return false;
	bool expected = false;
	return wp__cas_acq_rel(&token->cancelled, &expected, true);
}

bool wp_token_cancelled(const wp_token *token)
{
	return token && wp__load_acquire(&((wp_token *)token)->cancelled);
}

wp_token *wp_current_token(void)
{
	return wp__tls_token;
}

wp_token *wp__token_swap_current(wp_token *token)
{
	wp_token *prev = wp__tls_token;
	wp__tls_token = token;
	return prev;
}
