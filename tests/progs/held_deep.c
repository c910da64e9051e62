/* held_deep: one thread takes 20 mutexes nested, more than the 16 its held
 * set tracks (the rest are counted, untracked), and lets them go newest
 * first; again, letting the 16th go first while the four above it are
 * held (the fast unlock pops it: it is the top tracked slot); again,
 * oldest first. Then x, and y under it. Every lock is a normal mutex,
 * whose unlock is one test of the held set's top (preload/mutex.c,
 * mutex_unlock): each pass must leave the set empty, so that x -> y is
 * the only edge into y and none goes into x; a popped slot that stayed,
 * or one left behind, gives x edges it does not have. Under
 * CONVOY_HOLD_SAMPLE=1 every hold is timed and every unlock takes the
 * paths past the fast one (tests/shim/fastpath.c runs both). */
#include "progs.h"

#include <convoy.h>

#define DEEP 20   /* tests/shim/fastpath.c says the same */

static pthread_mutex_t deep[DEEP], x = PTHREAD_MUTEX_INITIALIZER, y = PTHREAD_MUTEX_INITIALIZER;

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
	pthread_t th;
	MUST(pthread_create(&th, NULL, walk, NULL));
	MUST(pthread_join(th, NULL));
	puts("done");
	return 0;
}
