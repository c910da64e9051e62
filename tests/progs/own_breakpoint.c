/* Sets a hardware write breakpoint on one of its own variables
 * (perf_event_open, PERF_TYPE_BREAKPOINT, as a debugger or a self-checking
 * program would), writes the variable 100 times and prints what the
 * breakpoint counted, or why it was refused. */
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "progs.h"

static volatile long watched;

int main(void)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_BREAKPOINT;
	a.bp_type = HW_BREAKPOINT_W;
	a.bp_addr = (unsigned long)&watched;
	a.bp_len = HW_BREAKPOINT_LEN_8;
	a.exclude_kernel = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		printf("breakpoint refused: %s\n", strerror(errno));
		return 0;
	}
	for (int i = 0; i < 100; i++)
		watched = i;
	long long count = 0;
	if (read(fd, &count, sizeof(count)) != (ssize_t)sizeof(count))
		count = -1;
	printf("breakpoint counted %lld writes\n", count);
	return 0;
}
