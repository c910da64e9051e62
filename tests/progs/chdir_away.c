/* A daemon's start: locks a mutex, changes to the directory given, locks
 * again, prints where it is and exits 0. */
#include "progs.h"

pthread_mutex_t away_lock = PTHREAD_MUTEX_INITIALIZER;

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	pthread_mutex_lock(&away_lock);
	pthread_mutex_unlock(&away_lock);
	MUST(chdir(argv[1]) ? errno : 0);
	pthread_mutex_lock(&away_lock);
	pthread_mutex_unlock(&away_lock);
	printf("moved\n");
	return 0;
}
