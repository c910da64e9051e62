/* jsonview.c — the report of an analysis as the JSON renderer builds it
 * (report__json), for the renderers that build on it (the HTML page, the
 * Perfetto export), so they show exactly what `convoy report --json` says and
 * compute nothing of their own; plus, when the profile was recorded in trace
 * mode, its events ("trace", analyzer/trace.c). */
#include "analysis.h"
#include "jsonview.h"
#include "report.h"
#include "trace.h"

json_object *jsonview__report(const struct analysis *a)
{
	struct report_options o = { .json = 1 };
	json_object *report = report__json(a, &o);
	json_object *trace = trace__json(a->p, report);
	if (trace)
		json_object_object_add(report, "trace", trace);
	return report;
}
