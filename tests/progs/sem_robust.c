/* Robust mutexes whose owner died holding them: EOWNERDEAD from lock,
 * trylock and timedlock; pthread_mutex_consistent makes one usable again;
 * unlocking without it makes the next lock ENOTRECOVERABLE. */
#include "progs.h"

static pthread_mutex_t fixed, abandoned, via_try, via_timed;

static void *die_holding(void *arg)
{
	pthread_mutex_lock(&fixed);
	pthread_mutex_lock(&abandoned);
	pthread_mutex_lock(&via_try);
	pthread_mutex_lock(&via_timed);
	return arg;   /* the thread ends with all four held */
}

int main(void)
{
	pthread_mutexattr_t a;
	MUST(pthread_mutexattr_init(&a));
	MUST(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST));
	MUST(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK));
	MUST(pthread_mutex_init(&fixed, &a));
	MUST(pthread_mutex_init(&abandoned, &a));
	MUST(pthread_mutex_init(&via_try, &a));
	MUST(pthread_mutex_init(&via_timed, &a));
	pthread_t t;
	MUST(pthread_create(&t, NULL, die_holding, NULL));
	MUST(pthread_join(t, NULL));

	SHOW("lock (owner died)", pthread_mutex_lock(&fixed));
	SHOW("consistent", pthread_mutex_consistent(&fixed));
	SHOW("unlock", pthread_mutex_unlock(&fixed));
	SHOW("lock again", pthread_mutex_lock(&fixed));
	SHOW("unlock again", pthread_mutex_unlock(&fixed));

	SHOW("lock abandoned (owner died)", pthread_mutex_lock(&abandoned));
	SHOW("unlock without consistent", pthread_mutex_unlock(&abandoned));
	SHOW("lock abandoned again", pthread_mutex_lock(&abandoned));
	SHOW("trylock abandoned", pthread_mutex_trylock(&abandoned));

	SHOW("trylock (owner died)", pthread_mutex_trylock(&via_try));
	SHOW("consistent", pthread_mutex_consistent(&via_try));
	SHOW("unlock", pthread_mutex_unlock(&via_try));

	struct timespec ts = deadline_ms(CLOCK_REALTIME, 1000);
	SHOW("timedlock (owner died)", pthread_mutex_timedlock(&via_timed, &ts));
	SHOW("consistent", pthread_mutex_consistent(&via_timed));
	SHOW("unlock", pthread_mutex_unlock(&via_timed));
	return 0;
}
