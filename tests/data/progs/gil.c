/* gil — a global interpreter lock as CPython builds it: a mutex, a flag,
 * and condvars waited under the mutex. A thread that wants the lock waits
 * on `gil_cond` with a 5 ms timeout (the switch interval); when it expires
 * the waiter asks the holder to drop it, and the holder waits on
 * `switch_cond` until another thread has taken it. Threads run one at a
 * time: the finding must be lock-contention on the monitor (gil_mutex with
 * its condvars), not two unrelated findings and not "none".
 *
 * --refcounts: each unit of work also writes one word every thread writes,
 * in its turn, under the lock (CPython's reference counts of the objects
 * all threads use), about 3% of the accesses, and --inflate: a unit costs
 * half as much CPU again at two threads (as on a host whose other guests
 * slow its cores). The shared line explains at most the time sampled on
 * it, not the growth: the monitor ranks first, and no sharing finding
 * claims the rest (a starved host's Python sweep had a reference count
 * claim a quarter of the lost time, above the GIL). */
#include <errno.h>

#include "data_progs.h"

#define UNITS 1000           /* units of work in all, split over the threads */
#define UNIT_NS 100000       /* CPU per unit */
#define INTERVAL_NS 5000000  /* the switch interval */

static pthread_mutex_t gil_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gil_cond = PTHREAD_COND_INITIALIZER, switch_cond = PTHREAD_COND_INITIALIZER;
static int locked, drop_request;
static unsigned long switches;
static pthread_t holder;

static void take_gil(void)
{
	pthread_mutex_lock(&gil_mutex);
	while (locked) {
		unsigned long seen = switches;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += INTERVAL_NS;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (pthread_cond_timedwait(&gil_cond, &gil_mutex, &ts) == ETIMEDOUT && locked && switches == seen)
			drop_request = 1;   /* the interval passed with no switch: ask the holder */
	}
	locked = 1;
	holder = pthread_self();
	switches++;
	drop_request = 0;
	pthread_cond_signal(&switch_cond);
	pthread_mutex_unlock(&gil_mutex);
}

static void drop_gil(void)
{
	pthread_mutex_lock(&gil_mutex);
	int forced = drop_request;
	locked = 0;
	pthread_cond_signal(&gil_cond);
	/* Forced switching: wait until another thread took it. */
	while (forced && pthread_equal(holder, pthread_self()))
		pthread_cond_wait(&switch_cond, &gil_mutex);
	pthread_mutex_unlock(&gil_mutex);
}

static int workers, units = UNITS, refcounts, inflate;
static volatile uint64_t refcount;   /* written by every thread, under the lock */

static void unit(void)
{
	uint64_t ns = inflate ? UNIT_NS + UNIT_NS * (uint64_t)(workers - 1) / 2 : UNIT_NS;
	if (!refcounts) {
		dp_spin(ns);
		return;
	}
	volatile uint64_t x = 0;
	uint64_t end = dp_cpu_ns() + ns;
	while (dp_cpu_ns() < end)   /* a system call: seldom */
		for (int k = 0; k < 256; k++) {
			for (int i = 0; i < 32; i++)
				x += (uint64_t)i;
			refcount++;
		}
}

static void *worker(void *arg)
{
	(void)arg;
	dp_name("pythread");
	take_gil();
	for (int i = 0; i < units / workers; i++) {
		unit();
		if (__atomic_load_n(&drop_request, __ATOMIC_RELAXED)) {
			drop_gil();
			take_gil();
		}
	}
	drop_gil();
	return NULL;
}

int main(int argc, char **argv)
{
	workers = dp_workers(argc, argv);
	for (int i = 1; i < argc; i++) {
		refcounts |= !strcmp(argv[i], "--refcounts");
		inflate |= !strcmp(argv[i], "--inflate");
	}
	if (refcounts)
		units = 3 * UNITS;   /* samples enough on the shared line */
	pthread_t t[64];
	CONVOY_NAME(&gil_mutex, "gil_mutex");
	CONVOY_NAME(&gil_cond, "gil_cond");
	CONVOY_NAME(&switch_cond, "switch_cond");
	dp_start(t, workers, worker, t, 0);
	dp_join(t, workers);
	return 0;
}
