/* reinit.c — the locks made at one address in turn, each named by the init
 * that made it. An init stack is kept until the object's first use
 * (preload/stacks.c, on_init); a destroy, or another init, drops one still
 * waiting (cv__object_end), so that the next object at the address is not
 * named by an init that made nothing the program used:
 *
 *   1. made in never_used, destroyed unused;
 *   2. made in first_made, used, destroyed: named by first_made;
 *   3. made in second_made, used (a new generation), destroyed;
 *   4. made in never_used again, made again in third_made without a destroy,
 *      used: named by third_made; destroyed;
 *   5. made in never_used again, destroyed unused, then its memory set to
 *      PTHREAD_MUTEX_INITIALIZER (no init call) and used in first_used:
 *      named by that first use.
 *
 * The memory is the heap's, kept across the five, so that no symbol names
 * the locks. */
#include "stacks_progs.h"

__attribute__((noinline)) static void never_used(pthread_mutex_t *m)
{
	pthread_mutex_init(m, NULL);   /* NEVER_USED_LINE */
}

__attribute__((noinline)) static void first_made(pthread_mutex_t *m)
{
	pthread_mutex_init(m, NULL);   /* FIRST_MADE_LINE */
}

__attribute__((noinline)) static void second_made(pthread_mutex_t *m)
{
	pthread_mutex_init(m, NULL);   /* SECOND_MADE_LINE */
}

__attribute__((noinline)) static void third_made(pthread_mutex_t *m)
{
	pthread_mutex_init(m, NULL);   /* THIRD_MADE_LINE */
}

__attribute__((noinline)) static void first_used(pthread_mutex_t *m)
{
	MUST(pthread_mutex_lock(m));   /* FIRST_USED_LINE */
	MUST(pthread_mutex_unlock(m));
}

static void use(pthread_mutex_t *m)
{
	MUST(pthread_mutex_lock(m));
	MUST(pthread_mutex_unlock(m));
}

int main(void)
{
	pthread_mutex_t *m = calloc(1, sizeof(*m));
	if (!m)
		exit(99);
	never_used(m);
	MUST(pthread_mutex_destroy(m));
	first_made(m);
	use(m);
	MUST(pthread_mutex_destroy(m));
	second_made(m);
	use(m);
	MUST(pthread_mutex_destroy(m));
	never_used(m);
	third_made(m);
	use(m);
	MUST(pthread_mutex_destroy(m));
	never_used(m);
	MUST(pthread_mutex_destroy(m));
	*m = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	first_used(m);
	return 0;
}
