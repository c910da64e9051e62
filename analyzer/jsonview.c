/* jsonview.c — the JSON renderer's output as a json-c object, for the
 * renderers that build on it (the HTML page, the Perfetto export), so they
 * show exactly what `convoy report --json` says and compute nothing of their
 * own; plus, when the profile was recorded in trace mode, its events
 * ("trace", analyzer/trace.c); and the writer both use for json-c's text. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jsonview.h"
#include "profile.h"
#include "report.h"
#include "trace.h"
#include "util.h"

json_object *jsonview__report(const struct profile *p)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	if (!mem) {
		cv_error("%s", strerror(errno));
		return NULL;
	}
	struct report_options o = { .json = 1 };
	int rc = report__write(p, &o, mem);
	fclose(mem);
	json_object *report = rc ? NULL : json_tokener_parse(text);
	free(text);
	if (!rc && !report)
		cv_error("the JSON report of %s did not parse", p->path);
	json_object *trace = report ? trace__json(p, report) : NULL;
	if (trace)
		json_object_object_add(report, "trace", trace);
	return report;
}

/* The length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong
 * forms, no surrogates, nothing past U+10FFFF), or 0. */
static int utf8_len(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	int n = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f))
		return 0;
	return n;
}

void jsonview__put(const char *text, int html, FILE *out)
{
	for (const unsigned char *s = (const unsigned char *)text; *s;) {
		int n = utf8_len(s);
		if (html && (*s == '<' || *s == '>' || *s == '&'))
			fprintf(out, "\\u%04x", *s);
		else if (html && n == 3 && s[0] == 0xe2 && s[1] == 0x80 && (s[2] == 0xa8 || s[2] == 0xa9))
			fprintf(out, "\\u%04x", s[2] == 0xa8 ? 0x2028 : 0x2029);
		else if (n == 0)
			fputs("\\ufffd", out);
		else
			fwrite(s, 1, (size_t)n, out);
		s += n ? n : 1;
	}
}
