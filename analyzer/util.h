/* util.h — small helpers shared by the analyzer's commands. */
#ifndef CONVOY_UTIL_H
#define CONVOY_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One line on stderr, prefixed "convoy: ". */
void cv_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Formatting into caller buffers (at least 32 bytes). */
const char *fmt_ns(char *buf, size_t size, double ns);     /* "312 ns", "4.51 ms", "1.20 s" */
const char *fmt_count(char *buf, size_t size, uint64_t n); /* "1,000,000" */
const char *fmt_pct(char *buf, size_t size, double fraction);

/* Parse a non-negative integer option value; -1 on error (caller names it). */
long long parse_count(const char *s);

void *xcalloc(size_t n, size_t size);   /* aborts on out of memory */
char *xstrndup(const char *s, size_t n);

#endif
