/* export.c — `convoy export`: a profile in other tools' formats.
 *
 * --folded: the folded-stack format flame-graph tools read (Brendan Gregg's
 * flamegraph.pl, inferno, speedscope): one line per distinct stack,
 * "root;caller;...;leaf WEIGHT", weighted here by the time threads waited
 * there, in nanoseconds. The leaf is the object waited for, "[mutex NAME]", so
 * a flame graph splits each call path by lock; inlined frames carry
 * flamegraph.pl's "_[i]" suffix. Waits are sampled, so the weights are the
 * estimates of docs/profile-format.md ("Stack sampling"); their sum per
 * object is its estimated wait time.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "export.h"
#include "perfetto.h"
#include "model.h"
#include "profile.h"
#include "callstacks.h"
#include "symbols.h"
#include "util.h"

struct line {
	char *text;
	uint64_t weight;
};

struct lines {
	struct line *v;
	size_t n, cap;
};

/* A frame as flame-graph tools want it: no ';' (the separator), no newline,
 * and no trailing " <digits>" ambiguity (the last space-separated field is
 * the weight, so spaces inside names are fine). */
static void append_frame(char **buf, size_t *len, size_t *cap, const char *text, const char *suffix)
{
	size_t need = strlen(text) + strlen(suffix) + 2;
	if (*len + need >= *cap) {
		*cap = (*len + need) * 2;
		*buf = realloc(*buf, *cap);
		if (!*buf) {
			cv_error("out of memory");
			abort();
		}
	}
	if (*len)
		(*buf)[(*len)++] = ';';
	for (const char *c = text; *c; c++)
		(*buf)[(*len)++] = *c == ';' ? ':' : *c == '\n' ? ' ' : *c;
	for (const char *c = suffix; *c; c++)
		(*buf)[(*len)++] = *c;
	(*buf)[*len] = '\0';
}

static void add_line(struct lines *l, char *text, uint64_t weight)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v) {
			cv_error("out of memory");
			abort();
		}
	}
	l->v[l->n].text = text;
	l->v[l->n].weight = weight;
	l->n++;
}

static int by_text(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

static void folded_object(struct lines *out, const struct model *m, struct syms *s, const struct object_row *row)
{
	struct stack_sum *sums;
	size_t n = callstacks__object(m->p, row->obj->o.id, &sums);
	for (size_t i = 0; i < n; i++) {
		if (!sums[i].wait_ns)
			continue;
		char *buf = NULL, label[512], leaf[320];
		size_t len = 0, cap = 0;
		const struct sym_frame **f;
		size_t nf = callstacks__frames(s, sums[i].stack, &f);
		const struct profile_stack *ps = sums[i].stack ? &m->p->stacks[sums[i].stack - 1] : NULL;
		if (!nf)
			append_frame(&buf, &len, &cap, "[unknown stack]", "");
		else if (ps && (ps->s.flags & CV_STACK_TRUNCATED))
			append_frame(&buf, &len, &cap, "[truncated]", "");
		for (size_t k = nf; k-- > 0;) {   /* root first */
			const struct sym_frame *fr = f[k];
			if (fr->function)
				snprintf(label, sizeof(label), "%s", fr->function);
			else
				syms__frame_label(fr, label, sizeof(label));
			append_frame(&buf, &len, &cap, label, fr->inlined ? "_[i]" : "");
		}
		free(f);
		snprintf(leaf, sizeof(leaf), "[%s %s]", kind_name(row->obj->o.kind), row->name);
		append_frame(&buf, &len, &cap, leaf, "");
		add_line(out, buf, sums[i].wait_ns);
	}
	free(sums);
}

static int write_folded(const struct analysis *a, FILE *out)
{
	struct lines l = { 0 };
	for (size_t i = 0; i < a->p->nobjects; i++)
		folded_object(&l, &a->m, a->syms, &a->m.rows[i]);
	if (l.n)
		qsort(l.v, l.n, sizeof(*l.v), by_text);
	/* Identical paths (two objects with one name, two stacks that
	 * symbolize alike) become one line. */
	for (size_t i = 0; i < l.n;) {
		size_t k = i + 1;
		uint64_t w = l.v[i].weight;
		while (k < l.n && !strcmp(l.v[k].text, l.v[i].text))
			w += l.v[k++].weight;
		fprintf(out, "%s %llu\n", l.v[i].text, (unsigned long long)w);
		i = k;
	}
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i].text);
	free(l.v);
	if (fflush(out) != 0 || ferror(out)) {
		cv_error("export: cannot write the output");
		return -1;
	}
	return 0;
}

static void export_usage(FILE *f)
{
	fputs("usage: convoy export --folded|--perfetto [-o FILE] PROFILE\n"
	      "\n"
	      "Writes a profile in another tool's format.\n"
	      "\n"
	      "  --folded     folded stacks for flame graphs: one line per call stack that\n"
	      "               waited, \"root;...;leaf;[mutex NAME] WAIT_NS\", weighted by the\n"
	      "               (estimated) nanoseconds threads waited there\n"
	      "  --perfetto   Chrome trace-event JSON for ui.perfetto.dev and chrome://tracing:\n"
	      "               a track per thread, its lifetime and waits, thread creations\n"
	      "               as flow arrows, a counter of live threads\n"
	      "  -o FILE      write to FILE instead of standard output\n"
	      "\n"
	      "example:\n"
	      "  convoy export --folded convoy-myprog-1234.convoy | flamegraph.pl > waits.svg\n"
	      "  convoy export --perfetto convoy-myprog-1234.convoy > trace.json\n", f);
}

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "folded", no_argument, NULL, 'f' },
		{ "perfetto", no_argument, NULL, 'p' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int folded = 0, perfetto = 0, c;
	const char *output = NULL;
	optind = 1;
	while ((c = cv_getopt("export", argc, argv, "o:h", longopts)) != -1) {
		switch (c) {
		case 'f': folded = 1; break;
		case 'p': perfetto = 1; break;
		case 'o': output = optarg; break;
		case 'h': export_usage(stdout); return 0;
		default:
			return 2;   /* cv_getopt said why */
		}
	}
	if (folded + perfetto != 1) {
		cv_error("export: say which one format (--folded or --perfetto; try 'convoy export --help')");
		return 2;
	}
	if (optind != argc - 1) {
		cv_error("export: expected one PROFILE, got %d (try 'convoy export --help')", argc - optind);
		return 2;
	}
	struct analysis a;
	if (analysis__load(&a, argv[optind]) != 0)
		return 1;
	FILE *out = stdout;
	if (output && !(out = fopen(output, "w"))) {
		cv_error("export: cannot write %s", output);
		analysis__free(&a);
		return 1;
	}
	int rc = perfetto ? perfetto__write(&a, out) : write_folded(&a, out);
	if (out != stdout && fclose(out) != 0 && !rc) {
		cv_error("export: cannot write %s", output);
		rc = -1;
	}
	analysis__free(&a);
	return rc ? 1 : 0;
}
