/* report.h — `convoy report`: one profile as text or JSON. */
#ifndef CONVOY_REPORT_H
#define CONVOY_REPORT_H

#include <stdio.h>

struct analysis;
struct json_object;

struct report_options {
	int json;
	int verbose;            /* -v: every thread of every lock, every object */
	int limit;              /* rows per table in text; 0 = all */
	int stacks;             /* --stacks N: call stacks per lock and condvar, when stacks_given; */
	int stacks_given;       /* else 3 in text, all in JSON */
};

/* The report of a diagnosed analysis as one JSON object (docs/report-json.md);
 * the caller puts it. The HTML viewer embeds it. */
struct json_object *report__json(const struct analysis *a, const struct report_options *o);
/* Writes the report; returns 0, or -1 after one error line (output failed). */
int report__write(const struct analysis *a, const struct report_options *o, FILE *out);

struct object_group;
/* How many of a table's n rows the text shows (--limit). */
size_t report__rows_to_show(size_t n, const struct report_options *o);
/* "  ... N more (use --limit 0)" after a table that showed `shown` of its
 * n rows, saying how many objects they hold where they are groups (g,
 * model__group; NULL: a row an object). */
void report__more(FILE *out, const struct object_group *g, size_t shown, size_t n);

int cmd_report(int argc, char **argv);

#endif
