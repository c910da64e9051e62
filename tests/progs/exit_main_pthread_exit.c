/* The main thread calls pthread_exit; the last other thread, after it saw
 * main gone, locks late_lock 1,000 times and returns: glibc then exits the
 * process with status 0 and the profile's exit reason is "last thread". */
#include "progs.h"

pthread_mutex_t late_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t main_thread;

static void *last_thread(void *arg)
{
	/* Wait until the main thread has exited (joining it is allowed). */
	pthread_join(main_thread, NULL);
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&late_lock);
		pthread_mutex_unlock(&late_lock);
	}
	printf("last thread done\n");
	return arg;
}

int main(void)
{
	pthread_t t;
	main_thread = pthread_self();
	MUST(pthread_create(&t, NULL, last_thread, NULL));
	printf("main calls pthread_exit\n");
	fflush(stdout);
	pthread_exit(NULL);
}
