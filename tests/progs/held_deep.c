/* held_deep: one thread takes 20 mutexes nested, more than the 16 its held
 * set tracks (the rest are counted, untracked), and lets them go newest
 * first; again, letting the 16th go first while the four above it are
 * held (the fast unlock pops it: it is the top tracked slot); again,
 * oldest first. Then x, and y under it. Then a mutex at an odd address
 * (as in a packed struct), b under it, the odd one let go first, b, and c
 * alone: the odd one's slot must be found and removed as any other's
 * (preload/shim.h, cv__held_key), so odd -> b is its only edge. Every lock is a normal mutex,
 * whose unlock is one test of the held set's top (preload/mutex.c,
 * mutex_unlock): each pass must leave the set empty, so that x -> y is
 * the only edge into y and none goes into x; a popped slot that stayed,
 * or one left behind, gives x edges it does not have. Under
 * CONVOY_HOLD_SAMPLE=1 every hold is timed and every unlock takes the
 * paths past the fast one (tests/shim/fastpath.c runs both). */
#include "progs.h"

#include <convoy.h>

#define DEEP 20   /* tests/shim/fastpath.c says the same */

static pthread_mutex_t deep[DEEP], x = PTHREAD_MUTEX_INITIALIZER, y = PTHREAD_MUTEX_INITIALIZER,
		       b = PTHREAD_MUTEX_INITIALIZER, c = PTHREAD_MUTEX_INITIALIZER;
static _Alignas(64) char odd_memory[1 + sizeof(pthread_mutex_t)];
#define ODD ((pthread_mutex_t *)(void *)(odd_memory + 1))   /* as in a packed struct */

static void take_all(void)
{
	for (int i = 0; i < DEEP; i++)
		MUST(pthread_mutex_lock(&deep[i]));
}

static void *walk(void *arg)
{
	(void)arg;
	take_all();
	for (int i = DEEP; i-- > 0;)
		MUST(pthread_mutex_unlock(&deep[i]));
	take_all();
	MUST(pthread_mutex_unlock(&deep[15]));
	for (int i = DEEP; i-- > 0;)
		if (i != 15)
			MUST(pthread_mutex_unlock(&deep[i]));
	take_all();
	for (int i = 0; i < DEEP; i++)
		MUST(pthread_mutex_unlock(&deep[i]));
	MUST(pthread_mutex_lock(&x));
	MUST(pthread_mutex_lock(&y));
	MUST(pthread_mutex_unlock(&y));
	MUST(pthread_mutex_unlock(&x));
	MUST(pthread_mutex_lock(ODD));
	MUST(pthread_mutex_lock(&b));
	MUST(pthread_mutex_unlock(ODD));
	MUST(pthread_mutex_unlock(&b));
	MUST(pthread_mutex_lock(&c));
	MUST(pthread_mutex_unlock(&c));
	return NULL;
}

int main(void)
{
	static char names[DEEP][16];
	for (int i = 0; i < DEEP; i++) {
		MUST(pthread_mutex_init(&deep[i], NULL));
		snprintf(names[i], sizeof names[i], "deep_%d", i);
		CONVOY_NAME(&deep[i], names[i]);
	}
	CONVOY_NAME(&x, "deep_x");
	CONVOY_NAME(&y, "deep_y");
	MUST(pthread_mutex_init(ODD, NULL));
	CONVOY_NAME(ODD, "odd_a");
	CONVOY_NAME(&b, "odd_b");
	CONVOY_NAME(&c, "odd_c");
	pthread_t th;
	MUST(pthread_create(&th, NULL, walk, NULL));
	MUST(pthread_join(th, NULL));
	puts("done");
	return 0;
}
