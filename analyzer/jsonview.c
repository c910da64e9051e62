/* jsonview.c — the JSON renderer's output as a json-c object, for the
 * renderers that build on it (the HTML page, the Perfetto export), so they
 * show exactly what `convoy report --json` says and compute nothing of their
 * own; plus, when the profile was recorded in trace mode, its events
 * ("trace", analyzer/trace.c). */
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
