/* dl_two.c — the second library dlmain opens after closing the first: as
 * large as the first, so the loader usually maps it where the first one was
 * and its code reuses the first one's addresses (its lock does not: the
 * array moves it). */
#include <pthread.h>

char two_filler[64] = { 1 };
pthread_mutex_t two_lock = PTHREAD_MUTEX_INITIALIZER;

pthread_mutex_t *two_get_lock(void)
{
	return &two_lock;
}

/* Padding so that two_wait's lock call sits at another offset than one_wait's. */
__attribute__((noinline)) int two_filler_fn(int x)
{
	return x * 3 + two_filler[x & 7];
}

__attribute__((noinline)) void two_wait(void)
{
	pthread_mutex_lock(&two_lock);   /* TWO_WAIT_LINE */
	pthread_mutex_unlock(&two_lock);
}
