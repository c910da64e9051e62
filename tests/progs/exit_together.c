/* Two threads call exit(3) at the same moment (released together by a
 * barrier), after the main thread took exit_lock 100 times. One of them
 * runs the exit handlers and the shim's destructor; the other finds glibc's
 * list empty and ends the process, often while the profile is being
 * written. */
#include "progs.h"

pthread_mutex_t exit_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t together;

static void *exiter(void *arg)
{
	pthread_barrier_wait(&together);
	exit(3);
	return arg;
}

int main(void)
{
	for (int i = 0; i < 100; i++) {
		MUST(pthread_mutex_lock(&exit_lock));
		MUST(pthread_mutex_unlock(&exit_lock));
	}
	MUST(pthread_barrier_init(&together, NULL, 2));
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		MUST(pthread_create(&t[i], NULL, exiter, NULL));
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;   /* not reached */
}
