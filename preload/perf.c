/* perf.c — perf_event_open counters, one set for the whole process.
 *
 * Why not one set per thread: on the development VM perf_event_open costs
 * about 18 µs per event, and closing a thread's last event can stall for
 * milliseconds (docs/performance.md), so per-thread counters would make thread
 * creation the bottleneck they are meant to measure. Per-thread CPU time,
 * context switches, page faults and run-queue delay come from cheaper exact
 * sources instead (thread.c), and the process totals of the software events
 * from getrusage (output.c).
 *
 * Even inherited counters cost every thread creation a copy of each event
 * (about 35 µs per thread for the four software events here), so
 * CONVOY_PERF=hw opens only the hardware events — on a machine with a
 * PMU, where they are the only source of cycles, instructions and cache
 * misses. CONVOY_PERF=all adds the software events as a cross-check;
 * CONVOY_PERF=0, the default, opens nothing: each counter is a descriptor
 * in the program, so only convoy run and convoy scale ask for them
 * (helper-111: five descriptors at 1024 and up, or at half a low
 * RLIMIT_NOFILE, inside the program's own range).
 *
 * The counters are inherited by threads only (inherit_thread), so a forked
 * child does not fold its counts into the parent's; the child opens its own.
 * Descriptors are moved high, above the range a program normally uses, and
 * are checked by event id before every read and close, so a program that
 * closes descriptors it does not own loses us our counters, never its files.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim.h"

static const struct { uint32_t type; uint64_t config; int hw; } events[CV_PERF_COUNT] = {
#define CV_X(sym, name, type, config, hw) [sym] = { type, config, hw },
	CV_PERF_EVENTS(CV_X)
#undef CV_X
};

static int fds[CV_PERF_COUNT];
static uint64_t ids[CV_PERF_COUNT];
static uint32_t opened;     /* bit e: fds[e] is ours */
static int hw_error;

static int first_high_fd(void)
{
	struct rlimit rl;
	if (cv__getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return 512;
	return rl.rlim_cur > 2048 ? 1024 : (int)(rl.rlim_cur / 2);
}

static int open_event(uint32_t e, int base)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = events[e].type;
	attr.config = events[e].config;
	attr.inherit = 1;
	attr.inherit_thread = 1;
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	int fd = (int)cv__sys6(SYS_perf_event_open, (long)&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC, 0);
	if (fd < 0 && (errno == EACCES || errno == EPERM)) {
		/* perf_event_paranoid >= 2 without CAP_PERFMON: user space only. */
		attr.exclude_kernel = 1;
		attr.exclude_hv = 1;
		fd = (int)cv__sys6(SYS_perf_event_open, (long)&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC, 0);
	}
	if (fd < 0)
		return -errno;
	int high = (int)cv__sys(SYS_fcntl, fd, F_DUPFD_CLOEXEC, base, 0);
	if (high >= 0) {
		cv__close(fd);
		fd = high;
	}
	return fd;
}

void cv__perf_open(void)
{
	int saved_errno = errno, base = first_high_fd();
	opened = 0;
	hw_error = 0;
	for (uint32_t e = 0; e < CV_PERF_COUNT; e++) {
		if (cv__config.perf == CV_PERF_OFF || (!events[e].hw && cv__config.perf != CV_PERF_ALL))
			continue;
		int fd = open_event(e, base);
		if (fd < 0) {
			if (events[e].hw && !hw_error)
				hw_error = -fd;
			continue;
		}
		if (cv__sys(SYS_ioctl, fd, PERF_EVENT_IOC_ID, (long)&ids[e], 0) != 0) {
			cv__close(fd);
			continue;
		}
		fds[e] = fd;
		opened |= 1u << e;
	}
	errno = saved_errno;
}

static bool still_ours(uint32_t e)
{
	uint64_t id;
	return (opened & (1u << e)) && cv__sys(SYS_ioctl, fds[e], PERF_EVENT_IOC_ID, (long)&id, 0) == 0 && id == ids[e];
}

/* Totals so far, scaled when the kernel multiplexed a counter. */
uint32_t cv__perf_read(uint64_t values[CV_PERF_MAX], int *error)
{
	int saved_errno = errno;
	uint32_t valid = 0;
	for (uint32_t e = 0; e < CV_PERF_COUNT; e++) {
		struct { uint64_t value, enabled, running; } v;
		if (!still_ours(e) || cv__read(fds[e], &v, sizeof(v)) != sizeof(v) || !v.running)
			continue;
		values[e] = v.running < v.enabled ? (uint64_t)((double)v.value * v.enabled / v.running) : v.value;
		valid |= 1u << e;
	}
	*error = hw_error;
	errno = saved_errno;
	return valid;
}

/* A fork child holds the parent's descriptors: close them and count anew. */
void cv__perf_after_fork(void)
{
	for (uint32_t e = 0; e < CV_PERF_COUNT; e++)
		if (still_ours(e))
			cv__close(fds[e]);
	cv__perf_open();
}
