/* trace.h — trace-mode events (CV_REC_TRACE) as JSON for the page and the
 * Perfetto export. */
#ifndef CONVOY_TRACE_H
#define CONVOY_TRACE_H

#include <json-c/json.h>

struct profile;

/* {"threads": [{thread, tid, dropped, events: [...]}], "dropped", "capacity",
 * "hold_every", "flows": [...]} (docs/viewer.md), or NULL when the profile
 * has no trace.
 * report is the profile's JSON report, whose object rows name the objects. */
json_object *trace__json(const struct profile *p, json_object *report);

#endif
