/* diff.c — `convoy diff A B`: two profiles, or two sweeps, side by side.
 *
 * The differences that matter come first: every time quantity the two sides
 * have in common (speedup-stack components, each lock's wait) is ranked by
 * how much it changed, in nanoseconds of worker time.
 */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "diff.h"
#include "findings.h"
#include "html.h"
#include "model.h"
#include "profile.h"
#include "stack.h"
#include "symbols.h"
#include "util.h"

struct row {
	char name[300];
	double a, b;
};

struct rows {
	struct row *v;
	size_t n, cap;
};

static void row_add(struct rows *r, const char *name, double a, double b)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 32;
		r->v = realloc(r->v, r->cap * sizeof(*r->v));
		if (!r->v)
			abort();
	}
	snprintf(r->v[r->n].name, sizeof(r->v[0].name), "%s", name);
	r->v[r->n].a = a;
	r->v[r->n++].b = b;
}

static int by_change(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	double da = fabs(a->b - a->a), db = fabs(b->b - b->a);
	return da < db ? 1 : da > db ? -1 : 0;
}

static void print_rows(struct rows *r, const char *title, FILE *out)
{
	qsort(r->v, r->n, sizeof(*r->v), by_change);
	fprintf(out, "%s, biggest change first\n  %-44s %12s %12s %12s\n", title, "", "A", "B", "B − A");
	for (size_t i = 0; i < r->n; i++) {
		if (r->v[i].a == 0 && r->v[i].b == 0)
			continue;
		char a[32], b[32], d[32];
		double delta = r->v[i].b - r->v[i].a;
		fprintf(out, "  %-44.44s %12s %12s %s%11s\n", r->v[i].name, fmt_ns(a, sizeof(a), r->v[i].a),
			fmt_ns(b, sizeof(b), r->v[i].b), delta < 0 ? "-" : "+", fmt_ns(d, sizeof(d), fabs(delta)));
	}
	fputc('\n', out);
}

static json_object *rows_json(struct rows *r)
{
	qsort(r->v, r->n, sizeof(*r->v), by_change);
	json_object *arr = json_object_new_array();
	for (size_t i = 0; i < r->n; i++) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(r->v[i].name));
		json_object_object_add(o, "a_ns", json_object_new_int64((int64_t)r->v[i].a));
		json_object_object_add(o, "b_ns", json_object_new_int64((int64_t)r->v[i].b));
		json_object_array_add(arr, o);
	}
	return arr;
}

/* ---- profiles ------------------------------------------------------------ */

struct side {
	struct profile *p;
	struct syms *syms;
	struct model m;
	struct run_stack s;
	struct findings f;
};

static int side_load(struct side *x, const char *path)
{
	memset(x, 0, sizeof(*x));
	if (!(x->p = profile__load(path)))
		return -1;
	x->syms = syms__load(x->p);
	model__build(&x->m, x->p, x->syms);
	stack__compute(&x->s, &x->m, stack__busy_threads(&x->m), 0, -1);
	struct run_view v = { &x->m, &x->s };
	findings__diagnose(&x->f, NULL, &v);
	findings__sort(&x->f);
	return 0;
}

static void side_free(struct side *x)
{
	if (!x->p)
		return;
	findings__free(&x->f);
	stack__free(&x->s);
	model__free(&x->m);
	syms__free(x->syms);
	profile__free(x->p);
}

static void print_findings(const char *label, const struct findings *f, FILE *out)
{
	fprintf(out, "  %s:", label);
	if (!f->n)
		fputs(" none", out);
	for (size_t i = 0; i < f->n && i < 4; i++)
		fprintf(out, "%s %s %s (%.0f%%)%s", i ? "," : "", f->v[i].severity, f->v[i].kind, f->v[i].share * 100,
			f->v[i].nobjects ? "" : "");
	fputc('\n', out);
}

static int diff_profiles(const char *pa, const char *pb, int json, FILE *out)
{
	struct side a, b;
	if (side_load(&a, pa)) {
		return 1;
	}
	if (side_load(&b, pb)) {
		side_free(&a);
		return 1;
	}
	struct rows r = { 0 };
	row_add(&r, "wall time", a.s.wall_ns, b.s.wall_ns);
	for (int k = 0; k < STACK_N; k++) {
		if (k == STACK_INFLATION)
			continue;   /* single runs have no reference */
		char name[64];
		snprintf(name, sizeof(name), "worker time: %s", stack_keys[k]);
		row_add(&r, name, a.s.c[k], b.s.c[k]);
	}
	/* Locks by name; a lock on one side only counts as 0 on the other. */
	for (size_t i = 0; i < a.m.nlocks; i++) {
		char name[300];
		snprintf(name, sizeof(name), "lock %s wait", a.m.locks[i]->name);
		double other = 0;
		for (size_t k = 0; k < b.m.nlocks; k++)
			if (!strcmp(b.m.locks[k]->name, a.m.locks[i]->name))
				other = (double)b.m.locks[k]->total.wait_ns;
		row_add(&r, name, (double)a.m.locks[i]->total.wait_ns, other);
	}
	for (size_t k = 0; k < b.m.nlocks; k++) {
		int seen = 0;
		for (size_t i = 0; i < a.m.nlocks; i++)
			seen |= !strcmp(b.m.locks[k]->name, a.m.locks[i]->name);
		if (!seen) {
			char name[300];
			snprintf(name, sizeof(name), "lock %s wait", b.m.locks[k]->name);
			row_add(&r, name, 0, (double)b.m.locks[k]->total.wait_ns);
		}
	}
	if (json) {
		json_object *root = json_object_new_object();
		json_object_object_add(root, "a", json_object_new_string(pa));
		json_object_object_add(root, "b", json_object_new_string(pb));
		json_object_object_add(root, "differences", rows_json(&r));
		json_object_object_add(root, "findings_a", findings__json(&a.f));
		json_object_object_add(root, "findings_b", findings__json(&b.f));
		fprintf(out, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(root);
	} else {
		char w1[32], w2[32];
		fprintf(out, "convoy diff\n  A: %s (%d busy threads, %s)\n  B: %s (%d busy threads, %s)\n  B takes %.2f× A's wall time.\n\n",
			a.p->cmdline, a.s.threads, fmt_ns(w1, sizeof(w1), a.s.wall_ns), b.p->cmdline, b.s.threads,
			fmt_ns(w2, sizeof(w2), b.s.wall_ns), a.s.wall_ns > 0 ? b.s.wall_ns / a.s.wall_ns : 0);
		print_rows(&r, "Differences", out);
		fputs("Findings\n", out);
		print_findings("A", &a.f, out);
		print_findings("B", &b.f, out);
	}
	free(r.v);
	side_free(&a);
	side_free(&b);
	return 0;
}

/* ---- sweeps -------------------------------------------------------------- */

static json_object *load_sweep(const char *path)
{
	char file[4200];
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		snprintf(file, sizeof(file), "%s/sweep.json", path);
	else
		snprintf(file, sizeof(file), "%s", path);
	json_object *root = json_object_from_file(file);
	json_object *runs;
	if (!root || !json_object_object_get_ex(root, "runs", &runs) || !json_object_is_type(runs, json_type_array)) {
		cv_error("%s: not a convoy sweep (no runs[] in %s)", path, file);
		json_object_put(root);
		return NULL;
	}
	return root;
}

static json_object *run_at(json_object *sweep, int threads)
{
	json_object *runs, *t;
	json_object_object_get_ex(sweep, "runs", &runs);
	for (size_t i = 0; i < json_object_array_length(runs); i++) {
		json_object *r = json_object_array_get_idx(runs, i);
		if (json_object_object_get_ex(r, "threads", &t) && json_object_get_int(t) == threads)
			return r;
	}
	return NULL;
}

static double num(json_object *o, const char *key)
{
	json_object *v;
	return o && json_object_object_get_ex(o, key, &v) ? json_object_get_double(v) : 0;
}

static int diff_sweeps(const char *pa, const char *pb, int json, FILE *out)
{
	json_object *a = load_sweep(pa), *b = a ? load_sweep(pb) : NULL;
	if (!a || !b) {
		json_object_put(a);
		return 1;
	}
	json_object *runs, *result = json_object_new_array();
	json_object_object_get_ex(a, "runs", &runs);
	if (!json)
		fprintf(out, "convoy diff (sweeps)\n  A: %s\n  B: %s\n\n%7s %10s %10s %8s %9s %9s\n", pa, pb,
			"threads", "wall A", "wall B", "B/A", "speedup A", "speedup B");
	struct rows r = { 0 };
	int common = 0;
	for (size_t i = 0; i < json_object_array_length(runs); i++) {
		json_object *ra = json_object_array_get_idx(runs, i);
		int n = (int)num(ra, "threads");
		json_object *rb = run_at(b, n);
		if (!rb)
			continue;
		common++;
		double wa = num(ra, "wall_ns"), wb = num(rb, "wall_ns");
		json_object *sa = NULL, *sb = NULL;
		json_object_object_get_ex(ra, "stack", &sa);
		json_object_object_get_ex(rb, "stack", &sb);
		for (int k = 0; k < STACK_N; k++) {
			char name[64];
			snprintf(name, sizeof(name), "%d threads: %s", n, stack_keys[k]);
			row_add(&r, name, num(sa, stack_keys[k]), num(sb, stack_keys[k]));
		}
		if (json) {
			json_object *o = json_object_new_object();
			json_object_object_add(o, "threads", json_object_new_int(n));
			json_object_object_add(o, "wall_ns_a", json_object_new_int64((int64_t)wa));
			json_object_object_add(o, "wall_ns_b", json_object_new_int64((int64_t)wb));
			json_object_object_add(o, "speedup_a", json_object_new_double(num(ra, "speedup")));
			json_object_object_add(o, "speedup_b", json_object_new_double(num(rb, "speedup")));
			json_object_array_add(result, o);
		} else {
			char x[32], y[32];
			fprintf(out, "%7d %10s %10s %7.2fx %8.2fx %8.2fx\n", n, fmt_ns(x, sizeof(x), wa),
				fmt_ns(y, sizeof(y), wb), wa > 0 ? wb / wa : 0, num(ra, "speedup"), num(rb, "speedup"));
		}
	}
	if (!common) {
		cv_error("diff: the sweeps have no thread count in common");
		json_object_put(result);
		json_object_put(a);
		json_object_put(b);
		free(r.v);
		return 1;
	}
	json_object *fa, *fb;
	if (!json_object_object_get_ex(a, "findings", &fa) || !json_object_is_type(fa, json_type_array))
		fa = NULL;
	if (!json_object_object_get_ex(b, "findings", &fb) || !json_object_is_type(fb, json_type_array))
		fb = NULL;
	if (json) {
		json_object *root = json_object_new_object();
		json_object_object_add(root, "a", json_object_new_string(pa));
		json_object_object_add(root, "b", json_object_new_string(pb));
		json_object_object_add(root, "runs", result);
		json_object_object_add(root, "differences", rows_json(&r));
		json_object_object_add(root, "findings_a", json_object_get(fa));
		json_object_object_add(root, "findings_b", json_object_get(fb));
		fprintf(out, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(root);
	} else {
		json_object_put(result);
		fputc('\n', out);
		print_rows(&r, "Worker time by component", out);
		fputs("Findings\n", out);
		for (int side = 0; side < 2; side++) {
			json_object *f = side ? fb : fa;
			fprintf(out, "  %s:", side ? "B" : "A");
			size_t n = f ? json_object_array_length(f) : 0;
			if (!n)
				fputs(" none", out);
			for (size_t i = 0; i < n && i < 4; i++) {
				json_object *x = json_object_array_get_idx(f, i), *k = NULL, *sev = NULL;
				json_object_object_get_ex(x, "kind", &k);
				json_object_object_get_ex(x, "severity", &sev);
				const char *sv = json_object_get_string(sev), *kd = json_object_get_string(k);
				fprintf(out, "%s %s %s (%.0f%%)", i ? "," : "", sv ? sv : "?", kd ? kd : "?",
					num(x, "share") * 100);
			}
			fputc('\n', out);
		}
	}
	free(r.v);
	json_object_put(a);
	json_object_put(b);
	return 0;
}

/* A profile starts with the magic; anything else is taken for a sweep. */
static int is_profile(const char *path)
{
	FILE *f = fopen(path, "rb");
	char magic[8] = { 0 };
	if (!f)
		return 0;
	size_t n = fread(magic, 1, sizeof(magic), f);
	fclose(f);
	return n == sizeof(magic) && !memcmp(magic, CV_PROFILE_MAGIC, sizeof(magic));
}

static void diff_usage(FILE *f)
{
	fputs("usage: convoy diff [--json | --html FILE] A B\n"
	      "\n"
	      "Compares two profiles, or two sweeps (a convoy scale directory or its\n"
	      "sweep.json), side by side: wall time, where the worker time went, each\n"
	      "lock's wait, and the findings — biggest change first.\n"
	      "\n"
	      "examples:\n"
	      "  convoy diff gq/convoy-global_queue-1.convoy ws/convoy-work_stealing-2.convoy\n"
	      "  convoy diff convoy-scale-gq convoy-scale-ws\n", f);
}

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "html", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int json = 0, c;
	const char *html = NULL;
	optind = 1;
	while ((c = cv_getopt("diff", argc, argv, "h", longopts)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'H': html = optarg; break;
		case 'h': diff_usage(stdout); return 0;
		default:
			return 2;   /* cv_getopt said why */
		}
	}
	if (argc - optind != 2) {
		cv_error("diff: expected two profiles or two sweeps, got %d (try 'convoy diff --help')", argc - optind);
		return 2;
	}
	const char *a = argv[optind], *b = argv[optind + 1];
	struct stat st;
	for (int i = 0; i < 2; i++)
		if (stat(argv[optind + i], &st) != 0) {
			cv_error("diff: cannot read %s: %s", argv[optind + i], strerror(errno));
			return 1;
		}
	int pa = is_profile(a), pb = is_profile(b);
	if (pa != pb) {
		cv_error("diff: cannot compare a profile with a sweep (%s, %s)", a, b);
		return 2;
	}
	if (html) {   /* the page embeds the JSON diff */
		char *text = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&text, &len);
		if (!mem) {
			cv_error("diff: %s", strerror(errno));
			return 1;
		}
		int rc = pa ? diff_profiles(a, b, 1, mem) : diff_sweeps(a, b, 1, mem);
		fclose(mem);
		json_object *page = rc ? NULL : html__diff_page(text, a, b);
		free(text);
		rc = !page || html__write(html, page);
		json_object_put(page);
		return rc;
	}
	int rc = pa ? diff_profiles(a, b, json, stdout) : diff_sweeps(a, b, json, stdout);
	if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout))) {
		cv_error("cannot write the diff: %s", strerror(errno));
		return 1;
	}
	return rc;
}
