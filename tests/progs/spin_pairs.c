/* Two threads take one spinlock 1000 times each (lock, unlock); prints the
 * pairs made. Fixed work (trust::an_interposer_after_the_shim_sees_every_call). */
#include "progs.h"

#define PAIRS 1000

static pthread_spinlock_t spin;
static long pairs;

static void *work(void *arg)
{
	for (int i = 0; i < PAIRS; i++) {
		MUST(pthread_spin_lock(&spin));
		pairs++;
		MUST(pthread_spin_unlock(&spin));
	}
	return arg;
}

int main(void)
{
	MUST(pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE));
	pthread_t t;
	MUST(pthread_create(&t, NULL, work, NULL));
	work(NULL);
	MUST(pthread_join(t, NULL));
	printf("spin pairs %ld\n", pairs);
	return 0;
}
