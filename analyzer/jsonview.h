/* jsonview.h — one profile's report as the JSON renderer builds it. */
#ifndef CONVOY_JSONVIEW_H
#define CONVOY_JSONVIEW_H

#include <json-c/json.h>

struct profile;

/* `convoy report --json PROFILE` as an object, with "trace" added when the
 * profile has trace events; NULL after one error line. */
json_object *jsonview__report(const struct profile *p);

#endif
