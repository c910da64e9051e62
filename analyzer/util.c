/* util.c — formatting, error, option and output helpers. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "util.h"

/* One write for the whole line: the command convoy runs may write to the
 * same stderr at the same moment (convoy run --json sends its output
 * there), and a line written in pieces could be cut by its output. */
void cv_error(const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL, *line = NULL;
	fflush(stdout);
	fflush(stderr);
	va_start(ap, fmt);
	int n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	int len = n < 0 ? -1 : asprintf(&line, "convoy: %s\n", msg);
	if (len < 0) {   /* out of memory: in pieces */
		fputs("convoy: ", stderr);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	} else {
		for (ssize_t off = 0; off < len;) {
			ssize_t w = write(STDERR_FILENO, line + off, (size_t)(len - off));
			if (w > 0)
				off += w;
			else if (w == 0 || errno != EINTR)
				break;
		}
	}
	free(msg);
	free(line);
}

const char *fmt_ns(char *buf, size_t size, double ns)
{
	static const struct { double scale; const char *unit; } units[] = {
		{ 1e9, "s" }, { 1e6, "ms" }, { 1e3, "µs" },
	};
	/* A negative time (an unexplained remainder) in the same units. */
	const char *sign = ns < 0 ? "-" : "";
	ns = fabs(ns);
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (ns >= units[i].scale) {
			double v = ns / units[i].scale;
			snprintf(buf, size, v >= 100 ? "%s%.0f %s" : v >= 10 ? "%s%.1f %s" : "%s%.2f %s", sign, v, units[i].unit);
			return buf;
		}
	}
	snprintf(buf, size, "%s%.0f ns", sign, ns);
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

void *xrealloc(void *p, size_t size)
{
	void *q = realloc(p, size ? size : 1);
	if (!q) {
		cv_error("out of memory");
		abort();
	}
	return q;
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xcalloc(1, n + 1);
	memcpy(p, s, n);
	return p;
}

/* ---- options ------------------------------------------------------------- */

int cv_getopt(const char *cmd, int argc, char **argv, const char *shortopts, const struct option *longopts)
{
	char opts[64];
	snprintf(opts, sizeof(opts), "+:%s", shortopts);
	opterr = 0;
	/* The element getopt looks at: optind stays on it while it walks a
	 * cluster ("-xv"), and argv[optind - 1] is then the one before. */
	int at = optind < 1 ? 1 : optind;
	int c = getopt_long(argc, argv, opts, longopts, NULL);
	if (c != '?' && c != ':')
		return c;
	char name[64];
	const char *arg = at < argc ? argv[at] : "";
	if (!strncmp(arg, "--", 2))
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(arg, "="), arg);
	else
		snprintf(name, sizeof(name), "-%c", optopt);
	if (c == ':')
		cv_error("%s: option '%s' needs a value (try 'convoy %s --help')", cmd, name, cmd);
	else
		cv_error("%s: unknown option '%s' (try 'convoy %s --help')", cmd, name, cmd);
	return '?';
}

/* ---- output that cannot forge or break what it is printed into ---------- */

struct safe_stream {
	int fd;
	unsigned char pending[4];    /* a multibyte character split between two writes */
	size_t npending;
};

static int write_all(int fd, const unsigned char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Bytes of the UTF-8 sequence that lead byte b starts (0: b cannot start
 * one), and the range its second byte must be in (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF). */
static size_t utf8_len(unsigned char b, unsigned char *lo, unsigned char *hi)
{
	*lo = 0x80;
	*hi = 0xbf;
	if (b >= 0xc2 && b <= 0xdf)
		return 2;
	if (b >= 0xe0 && b <= 0xef) {
		if (b == 0xe0)
			*lo = 0xa0;
		if (b == 0xed)
			*hi = 0x9f;
		return 3;
	}
	if (b >= 0xf0 && b <= 0xf4) {
		if (b == 0xf0)
			*lo = 0x90;
		if (b == 0xf4)
			*hi = 0x8f;
		return 4;
	}
	return 0;
}

static const unsigned char replacement[] = { 0xef, 0xbf, 0xbd };   /* U+FFFD */

/* Copies in[0..n) to out as valid UTF-8 with controls escaped; returns the
 * bytes written to out (at most 6 per byte of in). A sequence cut short by
 * the end of in is left for the next call unless final: *used says how much
 * of in was taken. */
static size_t make_safe(const unsigned char *in, size_t n, int final, unsigned char *out, size_t *used)
{
	size_t i = 0, o = 0;
	while (i < n) {
		/* A run copied as it is: most of any report is printable ASCII. */
		size_t run = i;
		while (run < n && ((in[run] >= 0x20 && in[run] < 0x7f) || in[run] == '\n' || in[run] == '\t'))
			run++;
		if (run > i) {
			memcpy(out + o, in + i, run - i);
			o += run - i;
			i = run;
			continue;
		}
		unsigned char b = in[i], lo, hi;
		if (b < 0x80) {
			if ((b < 0x20 && b != '\n' && b != '\t') || b == 0x7f)
				o += (size_t)sprintf((char *)out + o, "\\u%04x", b);
			else
				out[o++] = b;
			i++;
			continue;
		}
		size_t len = utf8_len(b, &lo, &hi), k = 1;
		while (len && k < len && i + k < n && in[i + k] >= (k == 1 ? lo : 0x80) &&
		       in[i + k] <= (k == 1 ? hi : 0xbf))
			k++;
		if (len && k < len && i + k == n && !final)
			break;   /* valid so far: the rest is in the next write */
		if (!len || k < len) {
			memcpy(out + o, replacement, sizeof(replacement));   /* one for the invalid part */
			o += sizeof(replacement);
			i += k;
			continue;
		}
		if (b == 0xc2 && in[i + 1] < 0xa0)   /* C1 controls, U+0080..U+009F */
			o += (size_t)sprintf((char *)out + o, "\\u%04x", in[i + 1]);
		else {
			memcpy(out + o, in + i, len);
			o += len;
		}
		i += len;
	}
	*used = i;
	return o;
}

static ssize_t safe_write(void *cookie, const char *buf, size_t size)
{
	struct safe_stream *s = cookie;
	unsigned char in[4 + 4096], out[6 * sizeof(in)];
	size_t done = 0;
	while (done < size) {
		size_t take = size - done < 4096 ? size - done : 4096, used;
		memcpy(in, s->pending, s->npending);
		memcpy(in + s->npending, buf + done, take);
		size_t n = s->npending + take, o = make_safe(in, n, 0, out, &used);
		s->npending = n - used;
		memcpy(s->pending, in + used, s->npending);
		if (write_all(s->fd, out, o) != 0)
			return done ? (ssize_t)done : -1;
		done += take;
	}
	return (ssize_t)size;
}

static int safe_close(void *cookie)
{
	struct safe_stream *s = cookie;
	unsigned char out[6 * sizeof(s->pending)];
	size_t used, o = make_safe(s->pending, s->npending, 1, out, &used);
	s->npending = 0;
	int rc = write_all(s->fd, out, o);
	free(s);
	return rc;
}

FILE *cv_safe_stream(int fd)
{
	struct safe_stream *s = xcalloc(1, sizeof(*s));
	s->fd = fd;
	FILE *f = fopencookie(s, "w", (cookie_io_functions_t){ .write = safe_write, .close = safe_close });
	if (!f) {
		free(s);
		return NULL;
	}
	setvbuf(f, NULL, isatty(fd) ? _IOLBF : _IOFBF, BUFSIZ);
	return f;
}

FILE *cv_fopen_regular(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return NULL;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	FILE *f = fdopen(fd, "r");
	if (!f)
		close(fd);
	return f;
}
