/* Hold sampling by count: one acquisition in CONVOY_HOLD_SAMPLE per
 * (lock, thread) record has its hold timed, the record's 1st, 65th, 129th
 * (default 64), whichever path took it: lock, trylock, trylock with
 * another lock held. Two threads in turn (no contention), each:
 * hold_lock 300 times (100 lock, 100 trylock, 100 trylock inside
 * outer_lock), outer_lock 100 times. Expected, default period: hold_lock
 * 5 samples a thread (acquisitions 0, 64, 128, 192, 256), outer_lock 2
 * (0, 64), neither while the nested trylock's hold is timed; with
 * CONVOY_HOLD_SAMPLE=1, every acquisition of hold_lock, and none of
 * outer_lock's survives the nested one's (one hold is timed at a time). */
#include "progs.h"

pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t outer_lock = PTHREAD_MUTEX_INITIALIZER;

static void *take_both(void *arg)
{
	for (int i = 0; i < 100; i++) {
		MUST(pthread_mutex_lock(&hold_lock));
		MUST(pthread_mutex_unlock(&hold_lock));
		MUST(pthread_mutex_trylock(&hold_lock));
		MUST(pthread_mutex_unlock(&hold_lock));
		MUST(pthread_mutex_lock(&outer_lock));
		MUST(pthread_mutex_trylock(&hold_lock));
		MUST(pthread_mutex_unlock(&hold_lock));
		MUST(pthread_mutex_unlock(&outer_lock));
	}
	return arg;
}

int main(void)
{
	pthread_t t;
	MUST(pthread_create(&t, NULL, take_both, NULL));
	MUST(pthread_join(t, NULL));
	take_both(NULL);
	puts("done");
	return 0;
}
