/* html.h — the HTML page: one more renderer of the analysis.
 *
 * The page is viewer/page.html with viewer/convoy.css and viewer/convoy.js
 * inlined (embedded in the binary by the build) and the analysis embedded as
 * the JSON the JSON renderers already write (`report --json`, sweep.json,
 * `diff --json`); the page's script draws it. Nothing is fetched at view time.
 * The data document is described in docs/viewer.md.
 */
#ifndef CONVOY_HTML_H
#define CONVOY_HTML_H

#include <json-c/json.h>

struct analysis;
struct sweep;

/* Page data ({"kind": "report"|"sweep"|"diff", ...}); NULL after one error line. */
json_object *html__report_page(const struct analysis *a);      /* a diagnosed analysis */
json_object *html__sweep_page(const struct sweep *w);          /* an analysed sweep */
json_object *html__path_page(const char *path);                 /* a profile, a sweep dir or sweep.json */
json_object *html__diff_page(const char *diff_json, const char *a, const char *b);

/* Writes the self-contained page to path. 0, or -1 after one error line. */
int html__write(const char *path, json_object *page);

/* `scale --html PATH`: the sweep's page at path and, with beside, also at
 * DIR/report.html next to its sweep.json. */
int html__write_sweep(const struct sweep *w, const char *path, int beside);

#endif
