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

#include "analysis.h"
#include "diff.h"
#include "html.h"
#include "profile.h"
#include "sweep.h"
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

/* ---- what two analyses have in common --------------------------------------- */

static int by_identity(const void *x, const void *y)
{
	return model__cmp_identity(*(struct object_row *const *)x, *(struct object_row *const *)y);
}

/* The rows lock waits are compared over: m's locks, then its futex words
 * parked on. A futex word's class comes from how its waits were made in
 * that run (model.c, wait_class_of_obj), so one word may be a lock on one
 * side and parked on on the other: compared, it is one row with both
 * waits, not a lock whose wait dropped to 0. *n: how many. */
static struct object_row **lock_candidates(const struct model *m, size_t *n)
{
	struct object_row **v = xcalloc(m->nlocks + m->nfutexes + 1, sizeof(*v));
	memcpy(v, m->locks, m->nlocks * sizeof(*v));
	*n = m->nlocks;
	for (size_t i = 0; i < m->nfutexes; i++)
		if (model__futex_parked_on(m->futexes[i]))
			v[(*n)++] = m->futexes[i];
	qsort(v, *n, sizeof(*v), by_identity);
	return v;
}

/* Each lock's wait on both sides, matched by identity (name, creating site,
 * generation, ordinal: model.h), in one pass over both sorted; a lock on one
 * side only counts as 0 on the other, and a futex word that is a lock on
 * one side only and parked on on the other is marked a park there. */
static void lock_rows(struct rows *r, const char *prefix, const struct model *a, const struct model *b)
{
	size_t na, nb;
	struct object_row **x = lock_candidates(a, &na), **y = lock_candidates(b, &nb);
	size_t i = 0, k = 0;
	while (i < na || k < nb) {
		int c = i == na ? 1 : k == nb ? -1 : model__cmp_identity(x[i], y[k]);
		const struct object_row *in_a = c <= 0 ? x[i] : NULL, *in_b = c >= 0 ? y[k] : NULL;
		i += c <= 0;
		k += c >= 0;
		if (in_a && in_b && in_a->obj->o.kind != in_b->obj->o.kind) {
			/* one name on two kinds (a mutex the program named as a futex
			 * word it parks on): only the lock is compared */
			if (!model__lock_like(in_a))
				in_a = NULL;
			else if (!model__lock_like(in_b))
				in_b = NULL;
		}
		bool lock_a = in_a && model__lock_like(in_a), lock_b = in_b && model__lock_like(in_b);
		if (!lock_a && !lock_b)
			continue;   /* parked on wherever it is */
		const struct object_row *row = in_a ? in_a : in_b;
		char name[400], nth[32] = "";
		if (row->ordinal)   /* the second and later objects of one name */
			snprintf(nth, sizeof(nth), " #%u", row->ordinal + 1);
		/* before the name, which the text table may cut */
		const char *parked = in_a && in_b && !lock_a ? "(a park in A) " :
				     in_a && in_b && !lock_b ? "(a park in B) " : "";
		snprintf(name, sizeof(name), "%slock %s%s%s wait", prefix, parked, row->name, nth);
		row_add(r, name, in_a ? (double)in_a->total.wait_ns : 0, in_b ? (double)in_b->total.wait_ns : 0);
	}
	free(x);
	free(y);
}

static void stack_rows(struct rows *r, const char *prefix, const struct speedup *a, const struct speedup *b,
		       int with_inflation)
{
	for (int k = 0; k < STACK_N; k++) {
		if (k == STACK_INFLATION && !with_inflation)
			continue;   /* single runs have no reference */
		char name[64];
		snprintf(name, sizeof(name), "%sworker time: %s", prefix, stack_keys[k]);
		row_add(r, name, a->c[k], b->c[k]);
	}
}

static void print_findings(const char *label, const struct findings *f, FILE *out)
{
	fprintf(out, "  %s:", label);
	if (!f->n)
		fputs(" none", out);
	for (size_t i = 0; i < f->n && i < 4; i++)
		fprintf(out, "%s %s %s (%.0f%%)", i ? "," : "", severity_name(f->v[i].severity),
			finding_kind_name(f->v[i].kind), f->v[i].share * 100);
	fputc('\n', out);
}

static void print_json(json_object *root, const char *pa, const char *pb, struct rows *r,
		       const struct findings *fa, const struct findings *fb, FILE *out)
{
	json_object_object_add(root, "a", json_object_new_string(pa));
	json_object_object_add(root, "b", json_object_new_string(pb));
	json_object_object_add(root, "differences", rows_json(r));
	json_object_object_add(root, "findings_a", findings__json(fa));
	json_object_object_add(root, "findings_b", findings__json(fb));
	fprintf(out, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
}

/* ---- profiles ------------------------------------------------------------ */

static int diff_profiles(const char *pa, const char *pb, int json, FILE *out)
{
	struct analysis a, b;
	if (analysis__load(&a, pa))
		return 1;
	if (analysis__load(&b, pb)) {
		analysis__free(&a);
		return 1;
	}
	analysis__diagnose(&a);
	analysis__diagnose(&b);
	struct rows r = { 0 };
	row_add(&r, "wall time", a.s.wall_ns, b.s.wall_ns);
	stack_rows(&r, "", &a.s, &b.s, 0);
	lock_rows(&r, "", &a.m, &b.m);
	if (json) {
		print_json(json_object_new_object(), pa, pb, &r, &a.f, &b.f, out);
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
	analysis__free(&a);
	analysis__free(&b);
	return 0;
}

/* ---- sweeps: each count's analysis, as for profiles -------------------------- */

static const struct sweep_run *run_at(const struct sweep *w, int threads)
{
	for (int i = 0; i < w->nruns; i++)
		if (w->runs[i].threads == threads)
			return &w->runs[i];
	return NULL;
}

static int diff_sweeps(const char *pa, const char *pb, int json, FILE *out)
{
	static struct sweep a, b;   /* large: off the stack */
	if (sweep__load(&a, pa))
		return 1;
	if (sweep__load(&b, pb)) {
		sweep__free(&a);
		return 1;
	}
	json_object *runs = json_object_new_array();
	if (!json)
		fprintf(out, "convoy diff (sweeps)\n  A: %s\n  B: %s\n\n%7s %10s %10s %8s %9s %9s\n", pa, pb,
			"threads", "wall A", "wall B", "B/A", "speedup A", "speedup B");
	struct rows r = { 0 };
	int common = 0;
	for (int i = 0; i < a.nruns; i++) {
		const struct sweep_run *ra = &a.runs[i], *rb = run_at(&b, ra->threads);
		if (!rb)
			continue;
		common++;
		char prefix[32];
		snprintf(prefix, sizeof(prefix), "%d threads: ", ra->threads);
		stack_rows(&r, prefix, &ra->a.s, &rb->a.s, 1);
		lock_rows(&r, prefix, &ra->a.m, &rb->a.m);
		double wa = ra->a.s.wall_ns, wb = rb->a.s.wall_ns;
		if (json) {
			json_object *o = json_object_new_object();
			json_object_object_add(o, "threads", json_object_new_int(ra->threads));
			json_object_object_add(o, "wall_ns_a", json_object_new_int64((int64_t)wa));
			json_object_object_add(o, "wall_ns_b", json_object_new_int64((int64_t)wb));
			json_object_object_add(o, "speedup_a", json_object_new_double(round(ra->speedup * 1000) / 1000));
			json_object_object_add(o, "speedup_b", json_object_new_double(round(rb->speedup * 1000) / 1000));
			json_object_array_add(runs, o);
		} else {
			char x[32], y[32];
			fprintf(out, "%7d %10s %10s %7.2fx %8.2fx %8.2fx\n", ra->threads, fmt_ns(x, sizeof(x), wa),
				fmt_ns(y, sizeof(y), wb), wa > 0 ? wb / wa : 0, ra->speedup, rb->speedup);
		}
	}
	int rc = 0;
	if (!common) {
		cv_error("diff: the sweeps have no thread count in common");
		json_object_put(runs);
		rc = 1;
	} else if (json) {
		json_object *root = json_object_new_object();
		json_object_object_add(root, "runs", runs);
		print_json(root, pa, pb, &r, &a.f, &b.f, out);
	} else {
		json_object_put(runs);
		fputc('\n', out);
		print_rows(&r, "Worker time by component", out);
		fputs("Findings\n", out);
		print_findings("A", &a.f, out);
		print_findings("B", &b.f, out);
	}
	free(r.v);
	sweep__free(&a);
	sweep__free(&b);
	return rc;
}

static void diff_usage(FILE *f)
{
	fputs("usage: convoy diff [--json | --html FILE] A B\n"
	      "\n"
	      "Compares two profiles, or two sweeps (a convoy scale directory or its\n"
	      "sweep.json), side by side: wall time, where the worker time went, each\n"
	      "lock's wait, and the findings — biggest change first. A futex word that\n"
	      "is a lock in one run and parked on in the other is marked \"(a park in A)\"\n"
	      "or \"(a park in B)\".\n"
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
	int pa = profile__has_magic(a), pb = profile__has_magic(b);
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
