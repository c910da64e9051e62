/* cold_start — a program whose first run is I/O-bound: it "reads its
 * input" from disk on the first run (a 300 ms off-CPU sleep stands for the
 * reads, so the recording does not depend on the machine's disk) and from
 * the page cache afterwards (a marker file in --state DIR says the cache is
 * warm), then splits CPU work over N workers. Swept 1,2 without --warmup,
 * the 1-thread run is the cold one: the step is superlinear, and the sweep
 * must say so and why, never that the threads paid for themselves. */
#include <fcntl.h>
#include <unistd.h>

#include "data_progs.h"

#define WORK_NS 100000000   /* CPU in all, split over the workers */

static int workers;

static void *worker(void *arg)
{
	(void)arg;
	dp_name("worker");
	dp_spin(WORK_NS / (uint64_t)workers);
	return NULL;
}

int main(int argc, char **argv)
{
	workers = dp_workers(argc, argv);
	const char *state = NULL;
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--state"))
			state = argv[i + 1];
	if (!state) {
		fprintf(stderr, "usage: cold_start --workers N --state DIR\n");
		return 2;
	}
	char marker[4096];
	snprintf(marker, sizeof(marker), "%s/cold_start.warm", state);
	if (access(marker, F_OK) != 0) {
		dp_sleep_ns(300000000);   /* the cold read */
		int fd = open(marker, O_CREAT | O_WRONLY, 0644);
		if (fd >= 0)
			close(fd);
	}
	pthread_t t[64];
	dp_start(t, workers, worker, t, 0);
	dp_join(t, workers);
	return 0;
}
