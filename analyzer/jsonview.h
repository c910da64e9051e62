/* jsonview.h — one analysis's report as the JSON renderer builds it. */
#ifndef CONVOY_JSONVIEW_H
#define CONVOY_JSONVIEW_H

#include <json-c/json.h>

struct analysis;

/* `convoy report --json` of a diagnosed analysis as an object (the caller
 * puts it), with "trace" added when the profile has trace events. */
json_object *jsonview__report(const struct analysis *a);

#endif
