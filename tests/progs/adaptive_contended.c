/* adaptive_contended: four threads take one adaptive mutex
 * (PTHREAD_MUTEX_ADAPTIVE_NP) 50,000 times each around a shared counter;
 * every 1,000th hold sleeps 200 µs, so that the others spin in glibc's
 * lock and then sleep on its futex (the shim takes a free adaptive mutex
 * itself and leaves a held one to the real lock: preload/mutex.c,
 * adaptive_taken_here). Prints the counter and the mutex's words once
 * every thread is done: the same natively and under the shim whatever
 * the interleaving; exit 1 when they are not what glibc leaves. */
#include <time.h>

#include "progs.h"

#define THREADS 4
#define ROUNDS  50000

static pthread_mutex_t adaptive;
static long counter;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		MUST(pthread_mutex_lock(&adaptive));
		counter++;
		if (i % 1000 == 0)
			nanosleep(&(struct timespec){ 0, 200000 }, NULL);
		MUST(pthread_mutex_unlock(&adaptive));
	}
	return NULL;
}

int main(void)
{
	pthread_mutexattr_t a;
	MUST(pthread_mutexattr_init(&a));
	MUST(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP));
	MUST(pthread_mutex_init(&adaptive, &a));
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		MUST(pthread_create(&t[i], NULL, worker, NULL));
	for (int i = 0; i < THREADS; i++)
		MUST(pthread_join(t[i], NULL));
	printf("counter %ld lock %d owner %d users %u count %d kind %d\n", counter, adaptive.__data.__lock,
	       adaptive.__data.__owner, adaptive.__data.__nusers, adaptive.__data.__count, adaptive.__data.__kind);
	return counter == (long)THREADS * ROUNDS && adaptive.__data.__lock == 0 && adaptive.__data.__owner == 0 &&
			       adaptive.__data.__nusers == 0 ? 0 : 1;
}
