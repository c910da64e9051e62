/* fresh_pages.c — run under libconvoy.so (tests/shim/fastpath.c): the shim
 * writes each fresh page of its memory before it reads it.
 *
 * A page of anonymous memory read first is mapped to the kernel's shared
 * zero page; the write that follows is a copy-on-write fault that replaces
 * the mapping and, in a program whose threads run on other CPUs, flushes
 * their TLBs with an interprocessor interrupt (shim.h, cv__touch_for_write).
 * Such a fault is a user-mode write to a present page: error code 7 of the
 * exceptions:page_fault_user tracepoint, counted here by perf_event_open
 * with that filter. Counts, not timings.
 *
 * The program first makes a few objects (the shim's tables exist after
 * that), then many more at new addresses: mutexes and condvars made, used,
 * nested in pairs (lock-order edges) and destroyed, each at its own
 * address, so that they fall all over the shim's sparse tables (object
 * registry, init stacks, lock-order edges) and the thread's own table.
 * The copy-on-write faults of the second phase must not grow with the
 * number of objects: fewer than LIMIT for the 4,000 mutexes and 4,000
 * condvars (the shim before this check made about one per page of those
 * tables: 509 here).
 *
 * Exit 0 and "ok ..." when they do not; 1 when they do; 77 when the
 * tracepoint cannot be opened (no tracefs, or not allowed).
 */
#include <fcntl.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>

#include "progs.h"

#define FEW   16
#define MANY  4000
#define LIMIT 32

static pthread_mutex_t mutexes[FEW + MANY + 1];
static pthread_cond_t conds[FEW + MANY];

static long tracepoint_id(void)
{
	static const char *const paths[] = { "/sys/kernel/tracing/events/exceptions/page_fault_user/id",
					     "/sys/kernel/debug/tracing/events/exceptions/page_fault_user/id" };
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		FILE *f = fopen(paths[i], "r");
		long id;
		if (!f)
			continue;
		int n = fscanf(f, "%ld", &id);
		fclose(f);
		if (n == 1)
			return id;
	}
	return -1;
}

static uint64_t count(int fd)
{
	uint64_t v = 0;
	if (read(fd, &v, sizeof(v)) != sizeof(v)) {
		perror("read counter");
		exit(1);
	}
	return v;
}

/* Objects [from, to): made, used (each mutex nested under the next one,
 * a condvar signalled with nobody waiting) and destroyed. */
static void objects(int from, int to)
{
	for (int i = from; i < to; i++) {
		MUST(pthread_mutex_init(&mutexes[i], NULL));
		MUST(pthread_cond_init(&conds[i], NULL));
	}
	for (int i = from; i < to; i++) {
		MUST(pthread_mutex_lock(&mutexes[i + 1]));
		MUST(pthread_mutex_lock(&mutexes[i]));
		MUST(pthread_cond_signal(&conds[i]));
		MUST(pthread_mutex_unlock(&mutexes[i]));
		MUST(pthread_mutex_unlock(&mutexes[i + 1]));
	}
	for (int i = from; i < to; i++) {
		MUST(pthread_mutex_destroy(&mutexes[i]));
		MUST(pthread_cond_destroy(&conds[i]));
	}
}

static void *idle(void *arg)
{
	return arg;
}

int main(void)
{
	/* The program's own arrays are written before anything reads them. */
	memset(mutexes, 0, sizeof(mutexes));
	memset(conds, 0, sizeof(conds));
	MUST(pthread_mutex_init(&mutexes[FEW + MANY], NULL));
	pthread_t th;   /* a multi-threaded process, as the shim sees most */
	MUST(pthread_create(&th, NULL, idle, NULL));
	MUST(pthread_join(th, NULL));

	long id = tracepoint_id();
	struct perf_event_attr attr = { .size = sizeof(attr), .type = PERF_TYPE_TRACEPOINT, .config = (uint64_t)id,
					.disabled = 1 };
	int fd = id < 0 ? -1 : (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_SET_FILTER, "error_code == 7") != 0) {
		printf("skip: cannot count exceptions:page_fault_user (%s)\n",
		       id < 0 ? "no tracefs" : strerror(errno));
		return 77;
	}

	objects(0, FEW);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	objects(FEW, FEW + MANY);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	uint64_t cow = count(fd);
	if (cow >= LIMIT) {
		printf("%llu copy-on-write faults while making %d objects (limit %d)\n", (unsigned long long)cow,
		       2 * MANY, LIMIT);
		return 1;
	}
	printf("ok: %llu copy-on-write faults while making %d objects\n", (unsigned long long)cow, 2 * MANY);
	return 0;
}
