/* html.c — the self-contained HTML page (see html.h).
 *
 * The page's data is the analysis exactly as the JSON renderers write it, so
 * the page can never disagree with `--json`. It sits in a
 * <script type="application/json"> block, which the browser does not parse as
 * HTML until "</script" or "<!--": every '<', '>' and '&' is written as a JSON
 * \u escape (they only occur inside strings, where the escape means the same
 * character), and so are U+2028 and U+2029 for any reader that evaluates the
 * block as script. The page goes through cv_safe_stream (util.h), so bytes
 * from the program that are not UTF-8 arrive as U+FFFD. The script reads the
 * data with JSON.parse and sets only textContent from it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis.h"
#include "convoy/profile.h"
#include "html.h"
#include "jsonview.h"
#include "sweep.h"
#include "profile.h"
#include "util.h"

/* viewer/assets.S: the files of viewer/, each NUL-terminated. */
extern const char cv__viewer_page[], cv__viewer_css[], cv__viewer_js[];

#define PAGE_VERSION 1

static json_object *page_new(const char *kind)
{
	json_object *page = json_object_new_object();
	json_object_object_add(page, "convoy_page_version", json_object_new_int(PAGE_VERSION));
	json_object_object_add(page, "kind", json_object_new_string(kind));
	return page;
}

json_object *html__report_page(const struct analysis *a)
{
	json_object *page = page_new("report");
	json_object_object_add(page, "report", jsonview__report(a));
	return page;
}

/* The sweep and, for each thread count, the report of the run it chose (the
 * median), so the page's tables can show any count. */
json_object *html__sweep_page(const struct sweep *w)
{
	json_object *reports = json_object_new_array();
	for (int i = 0; i < w->nruns; i++) {
		json_object *entry = json_object_new_object();
		json_object_object_add(entry, "threads", json_object_new_int(w->runs[i].threads));
		json_object_object_add(entry, "report", jsonview__report(&w->runs[i].a));
		json_object_array_add(reports, entry);
	}
	json_object *page = page_new("sweep");
	json_object_object_add(page, "sweep", sweep__json(w));
	json_object_object_add(page, "reports", reports);
	return page;
}

json_object *html__path_page(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		cv_error("cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {   /* a FIFO would block the read */
		cv_error("%s: not a regular file or a directory", path);
		return NULL;
	}
	json_object *page = NULL;
	if (!S_ISDIR(st.st_mode) && profile__has_magic(path)) {
		struct analysis a;
		if (analysis__load(&a, path) != 0)
			return NULL;
		analysis__diagnose(&a);
		page = html__report_page(&a);
		analysis__free(&a);
	} else {
		struct sweep w;
		if (sweep__load(&w, path) == 0)
			page = html__sweep_page(&w);
		sweep__free(&w);
	}
	return page;
}

json_object *html__diff_page(const char *diff_json, const char *a, const char *b)
{
	json_object *diff = json_tokener_parse(diff_json);
	if (!diff) {
		cv_error("html: the JSON diff did not parse");
		return NULL;
	}
	json_object *pa = html__path_page(a), *pb = pa ? html__path_page(b) : NULL;
	if (!pb) {
		json_object_put(diff);
		json_object_put(pa);
		return NULL;
	}
	json_object *page = page_new("diff");
	json_object_object_add(page, "diff", diff);
	json_object_object_add(page, "a", pa);
	json_object_object_add(page, "b", pb);
	return page;
}

/* JSON text made safe inside <script type="application/json"> (see the top). */
static void put_json_escaped(const char *text, FILE *out)
{
	for (const unsigned char *s = (const unsigned char *)text; *s; s++) {
		if (*s == '<' || *s == '>' || *s == '&')
			fprintf(out, "\\u%04x", *s);
		else if (s[0] == 0xe2 && s[1] == 0x80 && (s[2] == 0xa8 || s[2] == 0xa9)) {
			fprintf(out, "\\u%04x", s[2] == 0xa8 ? 0x2028 : 0x2029);
			s += 2;
		} else
			fputc(*s, out);
	}
}

/* The template with each "<!--convoy:NAME-->" replaced by its part. */
static void put_page(const char *data, FILE *out)
{
	static const char mark[] = "<!--convoy:";
	const char *t = cv__viewer_page;
	for (const char *m; (m = strstr(t, mark)); ) {
		fwrite(t, 1, (size_t)(m - t), out);
		const char *name = m + sizeof(mark) - 1, *end = strstr(name, "-->");
		size_t n = end ? (size_t)(end - name) : 0;
		if (n == 5 && !memcmp(name, "style", 5))
			fputs(cv__viewer_css, out);
		else if (n == 6 && !memcmp(name, "script", 6))
			fputs(cv__viewer_js, out);
		else if (n == 4 && !memcmp(name, "data", 4))
			put_json_escaped(data, out);
		else
			abort();   /* viewer/page.html names a part this file does not have */
		t = end + 3;
	}
	fputs(t, out);
}

int html__write(const char *path, json_object *page)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	FILE *out = fd < 0 ? NULL : cv_safe_stream(fd);
	if (!out) {
		cv_error("cannot write %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	put_page(json_object_to_json_string_ext(page, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE), out);
	int failed = ferror(out);
	failed |= fclose(out) != 0;   /* the stream leaves fd open */
	failed |= close(fd) != 0;
	if (failed) {
		cv_error("cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int html__write_sweep(const struct sweep *w, const char *path, int beside)
{
	json_object *page = html__sweep_page(w);
	int rc = html__write(path, page);
	if (!rc && beside) {
		char next_to[4200];
		snprintf(next_to, sizeof(next_to), "%s/report.html", w->dir);
		rc = html__write(next_to, page);
	}
	json_object_put(page);
	return rc;
}
