/* Locks exit_lock 100 times, prints a line, and exits with the status given
 * as its argument (default 0). */
#include "progs.h"

pthread_mutex_t exit_lock = PTHREAD_MUTEX_INITIALIZER;

int main(int argc, char **argv)
{
	for (int i = 0; i < 100; i++) {
		pthread_mutex_lock(&exit_lock);
		pthread_mutex_unlock(&exit_lock);
	}
	printf("hello from exit_status\n");
	return argc > 1 ? atoi(argv[1]) : 0;
}
