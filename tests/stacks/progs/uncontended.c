/* uncontended.c — one thread, one lock, many acquisitions: no wait, so no
 * wait stack; the lock still has its first-use stack. */
#include "stacks_progs.h"

static pthread_mutex_t quiet = PTHREAD_MUTEX_INITIALIZER;

int main(void)
{
	long n = 0;
	for (int i = 0; i < 100000; i++) {
		pthread_mutex_lock(&quiet);
		n++;
		pthread_mutex_unlock(&quiet);
	}
	printf("uncontended: %ld\n", n);
	return 0;
}
