/* errno_out_of_memory.c — a lock call that waited leaves errno as it was,
 * even when the shim's memory runs out (tests/shim/trust.c).
 *
 * A helper holds 4,000 mutexes; the main thread lowers RLIMIT_AS to what
 * it uses now, then times out on each of them (a deadline already past),
 * errno set to 4242 before every call. Each is a wait the shim records in
 * a new record, whose counters of waits it allocates at the first wait:
 * past the limit its mmap fails with ENOMEM, which must not reach the
 * program. With "used-first", the main thread has locked and unlocked
 * each mutex before the limit (its records exist; their counters of waits
 * do not). Prints how many calls changed errno (0 natively). */
#include <sys/resource.h>

#include "progs.h"

#define LOCKS 4000

static pthread_mutex_t locks[LOCKS];
static pthread_barrier_t held, done;
static sem_t going;
static pid_t holder_tid;

static void *holder(void *arg)
{
	holder_tid = (pid_t)syscall(SYS_gettid);
	for (int i = 0; i < LOCKS; i++)
		MUST(pthread_mutex_lock(&locks[i]));
	pthread_barrier_wait(&held);
	MUST(sem_post(&going));
	pthread_barrier_wait(&done);
	for (int i = 0; i < LOCKS; i++)
		MUST(pthread_mutex_unlock(&locks[i]));
	return arg;
}

int main(int argc, char **argv)
{
	int used_first = argc > 1 && strcmp(argv[1], "used-first") == 0;
	for (int i = 0; i < LOCKS; i++) {
		MUST(pthread_mutex_init(&locks[i], NULL));
		if (used_first) {
			MUST(pthread_mutex_lock(&locks[i]));
			MUST(pthread_mutex_unlock(&locks[i]));
		}
	}
	MUST(pthread_barrier_init(&held, NULL, 2));
	MUST(pthread_barrier_init(&done, NULL, 2));
	pthread_t t;
	MUST(sem_init(&going, 0, 0));
	MUST(pthread_create(&t, NULL, holder, NULL));
	pthread_barrier_wait(&held);
	/* The holder asleep in its last wait before the limit: its records
	 * made (a wait counted under the limit would be one of the uses
	 * without memory too, and the test's sum one more than the timeouts). */
	sem_wait_all(&going);
	while (!sleeps_in_futex(holder_tid))
		nap();

	long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f || fscanf(f, "%ld", &pages) != 1) {
		perror("/proc/self/statm");
		return 99;
	}
	fclose(f);
	struct rlimit limit = { (rlim_t)pages * 4096 + (64 << 10), RLIM_INFINITY };
	MUST(setrlimit(RLIMIT_AS, &limit) ? errno : 0);
	struct timespec past = { 0, 0 };
	int changed = 0;
	for (int i = 0; i < LOCKS; i++) {
		errno = 4242;
		int rc = pthread_mutex_timedlock(&locks[i], &past);
		changed += errno != 4242;
		if (rc != ETIMEDOUT) {
			printf("timedlock %d: %d %s\n", i, rc, rc_name(rc));
			return 1;
		}
	}
	limit.rlim_cur = RLIM_INFINITY;
	MUST(setrlimit(RLIMIT_AS, &limit) ? errno : 0);
	pthread_barrier_wait(&done);
	MUST(pthread_join(t, NULL));
	printf("errno changed by %d of %d timed-out locks\n", changed, LOCKS);
	return 0;
}
