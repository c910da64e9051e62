/* Two threads take one pthread spinlock 500,000 times each (CPU time for a
 * sampler to see, in a lock implementation), then main prints how many
 * file descriptors it has open and whether any is a perf event: a program
 * sampled from outside must have none of the sampler's. */
#include <dirent.h>
#include <string.h>
#include <unistd.h>

#include "progs.h"

#define ITERATIONS 500000

pthread_spinlock_t counter_spin;
long counter;

static void *count_worker(void *arg)
{
	for (int i = 0; i < ITERATIONS; i++) {
		pthread_spin_lock(&counter_spin);
		counter++;
		pthread_spin_unlock(&counter_spin);
	}
	return arg;
}

int main(void)
{
	MUST(pthread_spin_init(&counter_spin, PTHREAD_PROCESS_PRIVATE));
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		MUST(pthread_create(&t[i], NULL, count_worker, NULL));
	for (int i = 0; i < 2; i++)
		MUST(pthread_join(t[i], NULL));
	int fds = 0, perf = 0;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d))
			continue;
		char path[300], target[256];
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		ssize_t n = readlink(path, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		fds++;
		perf += strstr(target, "perf_event") != NULL;
	}
	if (d)
		closedir(d);
	printf("counter %ld fds %d perf_event %d\n", counter, fds, perf);
	return counter == 2L * ITERATIONS ? 0 : 1;
}
