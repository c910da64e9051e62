/* A file size limit: sets RLIMIT_FSIZE (soft) to the bytes given, locks a
 * mutex, prints a line and exits 3. */
#include <sys/resource.h>

#include "progs.h"

pthread_mutex_t fsize_lock = PTHREAD_MUTEX_INITIALIZER;

int main(int argc, char **argv)
{
	struct rlimit rl;
	if (argc != 2 || getrlimit(RLIMIT_FSIZE, &rl) != 0)
		return 2;
	rl.rlim_cur = (rlim_t)atol(argv[1]);
	MUST(setrlimit(RLIMIT_FSIZE, &rl) ? errno : 0);
	pthread_mutex_lock(&fsize_lock);
	pthread_mutex_unlock(&fsize_lock);
	printf("limited to %s bytes\n", argv[1]);
	return 3;
}
