/* textfit.h — text reports that fit the terminal: its width (80 when not
 * a terminal), prose wrapped to it, names shortened to their column. */
#ifndef CONVOY_TEXTFIT_H
#define CONVOY_TEXTFIT_H

#include <stddef.h>
#include <stdio.h>

/* Columns of out: the terminal's (TIOCGWINSZ, at least 40), else 80. */
int textfit__width(FILE *out);

/* Writes text wrapped at spaces to width columns, the first line after
 * first (already printed by the caller, counted in columns), the others
 * indented by indent spaces; ends with a newline. */
void textfit__wrap(FILE *out, int width, int indent, const char *first, const char *text);

/* A detail line under a table row: formatted, then wrapped to the terminal
 * under the row's indentation. */
void textfit__detail(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* s in at most cols columns (UTF-8 characters), ending in "…" when cut. */
const char *textfit__fit(char *buf, size_t size, const char *s, int cols);

/* Report tables' name column: a name that does not fit gets a line of its
 * own above its numbers (shortened only to the line's width). */
#define TEXTFIT_NAME_COLS 21
void textfit__name(FILE *out, const char *name);

#endif
