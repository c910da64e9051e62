/* snapshot_deep_stack: a thread with a 64 KiB stack uses all of it but
 * about 6 KiB (a large local array), then waits on a semaphore; main sends
 * it convoy's snapshot request (only ever under the shim with
 * CONVOY_SNAPSHOT_SIGNAL set to SIGRTMAX: natively the signal would end the
 * program), waits until the thread has taken the signal and sleeps again,
 * then posts. Prints that it went on. Every wait is on state (/proc),
 * never on time. */
#include <signal.h>
#include <sys/syscall.h>

#include "progs.h"

#define CV_SNAPSHOT_MAGIC 0x636f6e76   /* include/convoy/profile.h */
#define STACK_SIZE (64 << 10)
#define LEFT       (6 << 10)            /* stack left below the array */

static sem_t wake;
static pid_t tid;

/* The line's hex mask in /proc/self/task/TID/status ("SigPnd:"). */
static unsigned long long status_mask(pid_t t, const char *key)
{
	char path[64], line[256];
	unsigned long long mask = 0;
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)t);
	FILE *f = fopen(path, "re");
	size_t len = strlen(key);
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len))
			sscanf(line + len, "%llx", &mask);
	if (f)
		fclose(f);
	return mask;
}


static void *deep(void *arg)
{
	pthread_attr_t attr;
	void *lo;
	size_t size;
	MUST(pthread_getattr_np(pthread_self(), &attr));
	MUST(pthread_attr_getstack(&attr, &lo, &size));
	MUST(pthread_attr_destroy(&attr));
	char here;
	size_t used = (size_t)(&here - (char *)lo) - LEFT;
	volatile char *fill = __builtin_alloca(used);
	for (size_t i = 0; i < used; i += 512)
		fill[i] = 1;
	__atomic_store_n(&tid, gettid(), __ATOMIC_RELEASE);
	while (sem_wait(&wake) != 0)
		MUST(errno == EINTR ? 0 : errno);
	fill[0] = 2;   /* the array stays in use across the wait */
	return NULL;
}

int main(void)
{
	MUST(sem_init(&wake, 0, 0));
	pthread_attr_t attr;
	MUST(pthread_attr_init(&attr));
	MUST(pthread_attr_setstacksize(&attr, STACK_SIZE));
	pthread_t t;
	MUST(pthread_create(&t, &attr, deep, NULL));
	while (!__atomic_load_n(&tid, __ATOMIC_ACQUIRE) || !sleeps_in_futex(tid))
		nap();
	union sigval mark = { .sival_int = CV_SNAPSHOT_MAGIC };
	MUST(pthread_sigqueue(t, SIGRTMAX, mark));
	unsigned long long bit = 1ull << (SIGRTMAX - 1);
	while (status_mask(tid, "SigPnd:") & bit)   /* taken: the handler runs, or ran */
		nap();
	while (!sleeps_in_futex(tid))   /* and asleep again */
		nap();
	MUST(sem_post(&wake));
	MUST(pthread_join(t, NULL));
	printf("went on\n");
	return 0;
}
