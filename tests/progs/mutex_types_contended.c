/* mutex_types_contended adaptive|recursive|errorcheck: four threads take
 * one mutex of that type 50,000 times each around a shared counter (a
 * recursive one twice over: a relock inside each hold); every 1,000th
 * hold sleeps 200 µs, so that the others wait in glibc's lock (an adaptive
 * one spins first, then they sleep on its futex). The shim takes a free
 * mutex of these types itself, and a recursive one's relock, and leaves a
 * held one to the real lock (preload/mutex.c, type_taken_here). Prints the
 * counter and the mutex's words once every thread is done: the same
 * natively and under the shim whatever the interleaving; exit 1 when they
 * are not what glibc leaves. */
#include <string.h>
#include <time.h>

#include "progs.h"

#define THREADS 4
#define ROUNDS  50000

static pthread_mutex_t mutex;
static int relocks;   /* per hold: 1 for a recursive mutex */
static long counter;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		MUST(pthread_mutex_lock(&mutex));
		for (int k = 0; k < relocks; k++)
			MUST(pthread_mutex_lock(&mutex));
		counter++;
		if (i % 1000 == 0)
			nanosleep(&(struct timespec){ 0, 200000 }, NULL);
		for (int k = 0; k < relocks; k++)
			MUST(pthread_mutex_unlock(&mutex));
		MUST(pthread_mutex_unlock(&mutex));
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct { const char *name; int type; } types[] = {
		{ "adaptive", PTHREAD_MUTEX_ADAPTIVE_NP },
		{ "recursive", PTHREAD_MUTEX_RECURSIVE },
		{ "errorcheck", PTHREAD_MUTEX_ERRORCHECK },
	};
	int type = -1;
	for (size_t i = 0; argc == 2 && i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(argv[1], types[i].name))
			type = types[i].type;
	if (type < 0) {
		fprintf(stderr, "usage: mutex_types_contended adaptive|recursive|errorcheck\n");
		return 2;
	}
	relocks = type == PTHREAD_MUTEX_RECURSIVE;
	pthread_mutexattr_t a;
	MUST(pthread_mutexattr_init(&a));
	MUST(pthread_mutexattr_settype(&a, type));
	MUST(pthread_mutex_init(&mutex, &a));
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		MUST(pthread_create(&t[i], NULL, worker, NULL));
	for (int i = 0; i < THREADS; i++)
		MUST(pthread_join(t[i], NULL));
	printf("counter %ld lock %d owner %d users %u count %d kind %d\n", counter, mutex.__data.__lock,
	       mutex.__data.__owner, mutex.__data.__nusers, mutex.__data.__count, mutex.__data.__kind);
	return counter == (long)THREADS * ROUNDS && mutex.__data.__lock == 0 && mutex.__data.__owner == 0 &&
			       mutex.__data.__nusers == 0 && mutex.__data.__count == 0 ? 0 : 1;
}
