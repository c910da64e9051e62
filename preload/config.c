/* config.c — the CONVOY_* settings, read once at start, and the shim's one
 * channel to the user.
 *
 * Everything that depends on the process's state at start is fixed here, so
 * that what the program does later cannot move it: the profile directory is
 * made absolute against the working directory of the start (a daemon that
 * chdirs still writes where it was asked to), and the identity of fd 2 is
 * noted. The shim writes to fd 2 only while it is still that file: a daemon
 * that closes 0-2 and opens a data file gets the data file as fd 2, and a
 * "convoy:" line appended to it would corrupt it.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "shim.h"

struct cv_config cv__config CV_LARGE_BSS;

static struct {
	bool   open;              /* fd 2 was open at start */
	dev_t  dev;
	ino_t  ino;
	mode_t type;
} start_stderr;

static void note_stderr(void)
{
	struct stat st;
	start_stderr.open = cv__fstat(STDERR_FILENO, &st) == 0;
	start_stderr.dev = st.st_dev;
	start_stderr.ino = st.st_ino;
	start_stderr.type = st.st_mode & S_IFMT;
}

/* Async-signal-safe (fstat and write): the fatal-signal path speaks too. */
void cv__say(const char *line, size_t len)
{
	struct stat st;
	if (cv__config.quiet || !start_stderr.open || cv__fstat(STDERR_FILENO, &st) != 0 ||
	    st.st_dev != start_stderr.dev || st.st_ino != start_stderr.ino ||
	    (st.st_mode & S_IFMT) != start_stderr.type)
		return;   /* not the stderr we were given: stay silent */
	if (cv__write(STDERR_FILENO, line, len) < 0) {
		/* nowhere left to say it */
	}
}

/* Whether fd 2 is a terminal: isatty's question (TCGETS), with room for
 * any libc's or kernel's struct termios. */
bool cv__stderr_is_terminal(void)
{
	unsigned char termios[256];
	return cv__sys(SYS_ioctl, STDERR_FILENO, TCGETS, (long)termios, 0) == 0;
}

void cv__warn(const char *fmt, ...)
{
	static unsigned warnings;
	if (__atomic_load_n(&warnings, __ATOMIC_RELAXED) >= 10 ||
	    __atomic_fetch_add(&warnings, 1, __ATOMIC_RELAXED) >= 10)
		return;   /* a broken environment must not flood the program's stderr (the count never wraps) */
	char buf[512];
	int saved_errno = errno;
	va_list ap;
	va_start(ap, fmt);
	int n = snprintf(buf, sizeof(buf) - 1, "convoy: ");
	n += vsnprintf(buf + n, sizeof(buf) - 1 - (size_t)n, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	cv__say(buf, (size_t)n);
	errno = saved_errno;
}

/* CONVOY_DIR (default: the working directory), as an absolute path; empty
 * when it cannot be made one, and then no profile is written. */
static void resolve_dir(const char *s)
{
	char *dir = cv__config.dir;
	size_t size = sizeof(cv__config.dir);
	dir[0] = '\0';
	if (!s || !*s)
		s = ".";
	if (s[0] == '/') {
		if (strlen(s) < size)
			strcpy(dir, s);
		else
			cv__warn("CONVOY_DIR is longer than %zu bytes; no profile will be written", size - 1);
		return;
	}
	if (!getcwd(dir, size)) {
		cv__warn("cannot resolve CONVOY_DIR=%s: the working directory is unknown (%s); "
			 "no profile will be written", s, strerrordesc_np(errno));
		dir[0] = '\0';
		return;
	}
	if (strcmp(s, ".") == 0)
		return;
	size_t len = strlen(dir);
	if (len + 1 + strlen(s) >= size) {
		cv__warn("CONVOY_DIR=%s is longer than %zu bytes from %s; no profile will be written",
			 s, size - 1, dir);
		dir[0] = '\0';
		return;
	}
	if (len > 1)
		dir[len++] = '/';
	strcpy(dir + len, s);
}

bool cv__env_flag(const char *name, bool dflt)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return dflt;
	if (strcmp(s, "0") == 0 || strcmp(s, "1") == 0)
		return s[0] == '1';
	cv__warn("%s=%s is not 0 or 1; using %d", name, s, dflt);
	return dflt;
}

/* CONVOY_QUIET first: it silences the warnings about the others. Any value
 * but 0 asks for quiet, so a misspelt "yes" is honoured, not answered. */
void cv__config_read(void)
{
	const char *s;
	int saved_errno = errno;
	note_stderr();
	cv__config.quiet = (s = getenv("CONVOY_QUIET")) && *s && strcmp(s, "0") != 0;
	/* Off unless asked for (convoy run and scale ask for hw): each
	 * counter is a file descriptor in the program, which a preloaded
	 * library must not add (a program that counts or closes its
	 * descriptors, or runs near RLIMIT_NOFILE, would see them: perf.c). */
	cv__config.perf = CV_PERF_OFF;
	if ((s = getenv("CONVOY_PERF")) && *s) {
		if (!strcmp(s, "hw"))
			cv__config.perf = CV_PERF_HW;
		else if (!strcmp(s, "all"))
			cv__config.perf = CV_PERF_ALL;
		else if (strcmp(s, "0") && strcmp(s, "off"))
			cv__warn("CONVOY_PERF=%s is not off, hw or all; using off", s);
	}
	cv__config.hold_period = 64;
	if ((s = getenv("CONVOY_HOLD_SAMPLE")) && *s) {
		char *end;
		unsigned long v = strtoul(s, &end, 10);
		if (*end || v == 0 || v > (1ul << 30) || (v & (v - 1)))
			cv__warn("CONVOY_HOLD_SAMPLE=%s is not a power of two from 1 to 2^30; using 64", s);
		else
			cv__config.hold_period = (uint32_t)v;
	}
	resolve_dir(getenv("CONVOY_DIR"));
	/* Set by convoy run and scale to their own pid: the command they
	 * started is the process whose parent that is (lifecycle.c,
	 * nothing_to_add). */
	cv__config.launcher_pid = 0;
	if ((s = getenv("CONVOY_LAUNCHER_PID")) && *s) {
		char *end;
		long v = strtol(s, &end, 10);
		if (*end || v <= 0 || v > INT_MAX)
			cv__warn("CONVOY_LAUNCHER_PID=%s is not a process id; ignored", s);
		else
			cv__config.launcher_pid = (pid_t)v;
	}
	errno = saved_errno;
}
