/* config.c — the CONVOY_* settings, read once at start.
 *
 * Everything that depends on the process's state at start is fixed here, so
 * that what the program does later cannot move it: the profile directory is
 * made absolute against the working directory of the start (a daemon that
 * chdirs still writes where it was asked to).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

struct cv_config cv__config;
uint64_t cv__hold_mask;   /* hold_period - 1, for mutex.c's fast path */

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

void cv__config_read(void)
{
	const char *s;
	cv__config.quiet = (s = getenv("CONVOY_QUIET")) && *s && strcmp(s, "0") != 0;
	cv__config.perf = CV_PERF_HW;
	if ((s = getenv("CONVOY_PERF")) && *s) {
		if (!strcmp(s, "0") || !strcmp(s, "off"))
			cv__config.perf = CV_PERF_OFF;
		else if (!strcmp(s, "all"))
			cv__config.perf = CV_PERF_ALL;
		else if (strcmp(s, "hw"))
			cv__warn("CONVOY_PERF=%s is not off, hw or all; using hw", s);
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
	cv__hold_mask = cv__config.hold_period - 1;
	resolve_dir(getenv("CONVOY_DIR"));
}
