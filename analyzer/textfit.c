/* textfit.c — text that fits the terminal (textfit.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "textfit.h"

int textfit__width(FILE *out)
{
	/* stdout is main()'s safe stream (util.h), which has no descriptor of
	 * its own: it writes to standard output's. */
	int fd = fileno(out) >= 0 ? fileno(out) : out == stdout ? STDOUT_FILENO : -1;
	struct winsize ws;
	if (fd >= 0 && isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
		return ws.ws_col;
	return 80;
}

/* Columns of s[0..n): one per UTF-8 character (continuation bytes are free). */
static int columns(const char *s, size_t n)
{
	int c = 0;
	for (size_t i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xC0) != 0x80;
	return c;
}

void textfit__wrap(FILE *out, int width, int indent, const char *first, const char *text)
{
	int col = columns(first, strlen(first)), line_start = 1;   /* nothing of text on this line yet */
	fputs(first, out);
	for (const char *p = text; *p;) {
		if (*p == ' ') {
			p++;
			continue;
		}
		size_t word = strcspn(p, " ");
		int wcols = columns(p, word);
		if (!line_start && col + 1 + wcols > width) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
			line_start = 1;
		}
		if (!line_start) {
			fputc(' ', out);
			col++;
		}
		fwrite(p, 1, word, out);
		col += wcols;
		line_start = 0;
		p += word;
	}
	fputc('\n', out);
}

const char *textfit__fit(char *buf, size_t size, const char *s, int cols)
{
	size_t n = strlen(s);
	if (columns(s, n) <= cols) {
		snprintf(buf, size, "%s", s);
		return buf;
	}
	/* Keep cols - 1 characters, then the ellipsis. */
	size_t i = 0;
	for (int c = 0; i < n; i++) {
		if (((unsigned char)s[i] & 0xC0) != 0x80 && c++ == cols - 1)
			break;
	}
	snprintf(buf, size, "%.*s…", (int)i, s);
	return buf;
}

void textfit__name(FILE *out, const char *name)
{
	char buf[512];
	if (columns(name, strlen(name)) <= TEXTFIT_NAME_COLS) {
		fprintf(out, "  %s%*s", name, TEXTFIT_NAME_COLS - columns(name, strlen(name)), "");
		return;
	}
	fprintf(out, "  %s\n  %*s", textfit__fit(buf, sizeof(buf), name, textfit__width(out) - 2), TEXTFIT_NAME_COLS, "");
}

void textfit__detail(FILE *out, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	textfit__wrap(out, textfit__width(out), 8, "      ", line);
}
