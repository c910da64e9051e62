/* many_locks — COUNT mutexes made by one line (default 1,000), each locked
 * by every one of N threads: one site, many objects. Reports group them
 * ("1,000 × mutex@..."), and two profiles of it diff object by object.
 * With --threads-total T it also runs T short threads, 64 at a time (the
 * profile make bench reports: 100,000 objects, 10,000 threads). */
#include "data_progs.h"

static pthread_mutex_t *locks;
static long count = 1000;

static void *worker(void *arg)
{
	dp_name("locker");
	(void)arg;
	for (long i = 0; i < count; i++) {
		pthread_mutex_lock(&locks[i]);
		pthread_mutex_unlock(&locks[i]);
	}
	return NULL;
}

static void *brief(void *arg)
{
	dp_name("brief");
	(void)arg;
	pthread_mutex_lock(&locks[0]);
	pthread_mutex_unlock(&locks[0]);
	return NULL;
}

static void make_locks(void)
{
	locks = calloc((size_t)count, sizeof(*locks));
	for (long i = 0; i < count; i++)
		pthread_mutex_init(&locks[i], NULL);
}

int main(int argc, char **argv)
{
	int n = dp_workers(argc, argv);
	long total = 0;
	for (int i = 1; i + 1 < argc; i++) {
		if (!strcmp(argv[i], "--count"))
			count = atol(argv[i + 1]) > 0 ? atol(argv[i + 1]) : 1;
		if (!strcmp(argv[i], "--threads-total"))
			total = atol(argv[i + 1]);
	}
	make_locks();
	pthread_t t[64];
	dp_start(t, n, worker, t, 0);
	dp_join(t, n);
	for (long done = 0; done < total; done += 64) {
		dp_start(t, 64, brief, t, 0);
		dp_join(t, 64);
	}
	return 0;
}
