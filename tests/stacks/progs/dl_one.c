/* dl_one.c — a library dlmain opens, contends on and closes before exit. */
#include <pthread.h>

pthread_mutex_t one_lock = PTHREAD_MUTEX_INITIALIZER;

pthread_mutex_t *one_get_lock(void)
{
	return &one_lock;
}

__attribute__((noinline)) void one_wait(void)
{
	pthread_mutex_lock(&one_lock);   /* ONE_WAIT_LINE */
	pthread_mutex_unlock(&one_lock);
}
