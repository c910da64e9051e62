/* object_pages.c — run natively and under libconvoy.so (tests/shim/
 * fastpath.c): the page faults a program takes while two threads each
 * take 4,000 mutexes it made, once each (a lock per bucket of a table).
 *
 * Under the shim each (mutex, thread) pair is a record and each mutex an
 * object (preload/alloc.c carves them from its chunks), and a page fault
 * costs microseconds (about 9 us on the development VM): the shim maps
 * its chunks' pages in batches, one system call for many pages, so its
 * faults must not grow with the number of records. Prints the page faults
 * (exceptions: perf's software event, inherited by the threads; getrusage
 * would count pages populated in a batch too) of that phase, a count, not
 * a timing; the profile is written after it.
 *
 * Exit 77 where the kernel cannot populate pages in a batch
 * (MADV_POPULATE_WRITE, Linux 5.14: the shim then faults them one by one)
 * or perf_event_open is not allowed.
 */
#include <stdint.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "progs.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define FEW   16
#define MANY  4000

static pthread_mutex_t mutexes[FEW + MANY];

static void *take(void *arg)
{
	const int *range = arg;
	for (int i = range[0]; i < range[1]; i++) {
		MUST(pthread_mutex_lock(&mutexes[i]));
		MUST(pthread_mutex_unlock(&mutexes[i]));
	}
	return NULL;
}

/* Two threads each take mutexes [from, to). */
static void both_take(int from, int to)
{
	int range[2] = { from, to };
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		MUST(pthread_create(&th[i], NULL, take, range));
	for (int i = 0; i < 2; i++)
		MUST(pthread_join(th[i], NULL));
}

int main(void)
{
	void *probe = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (probe == MAP_FAILED || madvise(probe, 4096, MADV_POPULATE_WRITE) != 0) {
		printf("skip: this kernel cannot populate pages in a batch (MADV_POPULATE_WRITE: %s)\n",
		       strerror(errno));
		return 77;
	}
	struct perf_event_attr attr = { .size = sizeof(attr), .type = PERF_TYPE_SOFTWARE,
					.config = PERF_COUNT_SW_PAGE_FAULTS, .disabled = 1, .inherit = 1 };
	int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		printf("skip: cannot count page faults (perf_event_open: %s)\n", strerror(errno));
		return 77;
	}
	memset(mutexes, 0, sizeof(mutexes));   /* the program's own pages, written before the count */
	for (int i = 0; i < FEW + MANY; i++)
		MUST(pthread_mutex_init(&mutexes[i], NULL));
	both_take(0, FEW);   /* the threads' stacks, the shim's first chunk and tables */
	MUST(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	both_take(FEW, FEW + MANY);
	MUST(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0));
	uint64_t faults = 0;
	if (read(fd, &faults, sizeof(faults)) != sizeof(faults)) {
		perror("read the fault count");
		return 1;
	}
	printf("faults %llu while two threads took %d mutexes\n", (unsigned long long)faults, MANY);
	return 0;
}
