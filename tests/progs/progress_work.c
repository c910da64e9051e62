/* progress_work THREADS: each thread does fixed work in units and reports
 * each unit at a progress point (include/convoy.h). */
#include <convoy.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *work(void *arg)
{
	volatile unsigned long x = (unsigned long)arg;
	for (int unit = 0; unit < 2000; unit++) {
		for (int i = 0; i < 5000; i++)
			x = x * 6364136223846793005ul + 1442695040888963407ul;
		CONVOY_PROGRESS("units");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	if (n < 1 || n > 64) {
		fprintf(stderr, "usage: progress_work THREADS\n");
		return 2;
	}
	pthread_t t[64];
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, work, (void *)(unsigned long)i);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("%d threads done\n", n);
	return 0;
}
