/* jsonview.h — one profile's report as the JSON renderer builds it. */
#ifndef CONVOY_JSONVIEW_H
#define CONVOY_JSONVIEW_H

#include <json-c/json.h>
#include <stdio.h>

struct profile;

/* `convoy report --json PROFILE` as an object, with "trace" added when the
 * profile has trace events; NULL after one error line. */
json_object *jsonview__report(const struct profile *p);

/* Writes JSON text json-c made, as valid UTF-8: names are the program's
 * bytes, and a byte that starts no well-formed sequence becomes the escape
 * \ufffd (only strings hold such bytes, and there the escape is valid). With
 * html, also '<', '>', '&', U+2028 and U+2029 as \u escapes, which keeps the
 * text inside a <script type="application/json"> block (analyzer/html.c). */
void jsonview__put(const char *text, int html, FILE *out);

#endif
