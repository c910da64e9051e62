/* util.c — formatting and error helpers. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void cv_error(const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fputs("convoy: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

const char *fmt_ns(char *buf, size_t size, double ns)
{
	static const struct { double scale; const char *unit; } units[] = {
		{ 1e9, "s" }, { 1e6, "ms" }, { 1e3, "µs" },
	};
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (ns >= units[i].scale) {
			double v = ns / units[i].scale;
			snprintf(buf, size, v >= 100 ? "%.0f %s" : v >= 10 ? "%.1f %s" : "%.2f %s", v, units[i].unit);
			return buf;
		}
	}
	snprintf(buf, size, "%.0f ns", ns);
	return buf;
}

const char *fmt_count(char *buf, size_t size, uint64_t n)
{
	char digits[32];
	int len = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)n);
	size_t o = 0;
	for (int i = 0; i < len && o + 2 < size; i++) {
		if (i && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

const char *fmt_pct(char *buf, size_t size, double fraction)
{
	double p = fraction * 100.0;
	snprintf(buf, size, p > 0 && p < 0.1 ? "<0.1%%" : "%.1f%%", p);
	return buf;
}

long long parse_count(const char *s)
{
	char *end;
	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end)
		return -1;
	return v;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p) {
		cv_error("out of memory");
		abort();
	}
	return p;
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xcalloc(1, n + 1);
	memcpy(p, s, n);
	return p;
}
