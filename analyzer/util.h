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

/* getopt_long for a subcommand's options (shortopts without the leading
 * "+:", which it adds: stop at the first operand, report missing values).
 * On an unknown option or a missing value it prints one line naming the
 * option as the user wrote it ("-x", "--limit") and returns '?'. */
struct option;
int cv_getopt(const char *cmd, int argc, char **argv, const char *shortopts, const struct option *longopts);

/* A stream writing to fd whatever is printed to it as valid UTF-8 (each
 * invalid sequence replaced by U+FFFD) with control characters other than
 * newline and tab written as \u00XX, so a name from a profile can neither
 * forge lines on a terminal nor make the JSON invalid (and json-c's own
 * escapes pass through unchanged). main() makes stdout one, so every
 * renderer's output goes through it; NULL if it cannot be made. */
FILE *cv_safe_stream(int fd);

/* fopen(path, "r") for an input the user or a profile names: opened
 * without blocking and refused (NULL, errno EINVAL) unless a regular file,
 * so a FIFO or device planted there cannot hang the analyzer. */
FILE *cv_fopen_regular(const char *path);

void *xcalloc(size_t n, size_t size);   /* aborts on out of memory */
void *xrealloc(void *p, size_t size);   /* aborts on out of memory */
char *xstrndup(const char *s, size_t n);

#endif
