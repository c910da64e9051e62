/* A program built with clang's AddressSanitizer, whose runtime is linked
 * into the executable and defines the pthread functions it intercepts
 * (__pthread_mutex_lock among them) before glibc's: threads that take one
 * mutex, and the total. */
#include "progs.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long total;

static void *add(void *arg)
{
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&lock);
		total += (long)(intptr_t)arg;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[4];
	for (intptr_t i = 0; i < 4; i++)
		MUST(pthread_create(&t[i], NULL, add, (void *)(i + 1)));
	for (int i = 0; i < 4; i++)
		MUST(pthread_join(t[i], NULL));
	printf("total: %ld\n", total);
	return 0;
}
