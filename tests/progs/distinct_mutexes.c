/* Locks and unlocks N distinct mutexes (zeroed memory: initialised
 * statically), each once, from the main thread. */
#include "progs.h"

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 0;
	pthread_mutex_t *m = calloc((size_t)n, sizeof(*m));
	MUST(m ? 0 : ENOMEM);
	for (long i = 0; i < n; i++) {
		MUST(pthread_mutex_lock(&m[i]));
		MUST(pthread_mutex_unlock(&m[i]));
	}
	printf("locked %ld mutexes\n", n);
	free(m);
	return 0;
}
