/* callstacks.c — a profile's call stacks, per object, symbolized (callstacks.h). */
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "callstacks.h"
#include "symbols.h"
#include "textfit.h"
#include "util.h"

static int by_wait_desc(const void *a, const void *b)
{
	const struct stack_sum *x = a, *y = b;
	if (x->wait_ns != y->wait_ns)
		return x->wait_ns < y->wait_ns ? 1 : -1;
	if (x->waits != y->waits)
		return x->waits < y->waits ? 1 : -1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

size_t callstacks__object(const struct profile *p, uint32_t object, struct stack_sum **out)
{
	/* stack_waits are sorted by (object, thread, stack) (profile.c). */
	size_t lo = 0, hi = p->nstack_waits;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (p->stack_waits[mid].object < object)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t end = lo;
	while (end < p->nstack_waits && p->stack_waits[end].object == object)
		end++;
	struct stack_sum *sums = xcalloc(end > lo ? end - lo : 1, sizeof(*sums));
	size_t n = 0;
	for (size_t i = lo; i < end; i++) {
		const struct cv_stack_wait *w = &p->stack_waits[i];
		size_t k = 0;
		while (k < n && sums[k].stack != w->stack)
			k++;
		if (k == n)
			sums[n++].stack = w->stack;
		sums[k].samples += w->samples;
		sums[k].waits += w->waits;
		sums[k].wait_ns += w->wait_ns;
	}
	if (n)
		qsort(sums, n, sizeof(*sums), by_wait_desc);
	*out = sums;
	return n;
}

size_t callstacks__frames(struct syms *s, uint32_t stack, const struct sym_frame ***out)
{
	const struct profile *p = syms__profile(s);
	*out = NULL;
	if (!stack || stack > p->nstacks)
		return 0;
	const struct profile_stack *ps = &p->stacks[stack - 1];
	size_t n = 0, cap = ps->s.depth * 2 + 4;
	const struct sym_frame **f = xcalloc(cap, sizeof(*f));
	for (uint32_t i = 0; i < ps->s.depth; i++) {
		const struct sym_frame *fr;
		size_t k = syms__frames(s, ps->pcs[i], ps->s.map_gen, 1, &fr);
		for (size_t j = 0; j < k; j++) {
			if (fr[j].shim)
				continue;
			if (n == cap) {
				cap *= 2;
				f = realloc(f, cap * sizeof(*f));
				if (!f) {
					cv_error("out of memory");
					abort();
				}
			}
			f[n++] = &fr[j];
		}
	}
	/* The runtime's own root (clone, start_thread, __libc_start_main,
	 * _start) says nothing; keep at least one frame. */
	if (!(ps->s.flags & CV_STACK_TRUNCATED))
		while (n > 1 && f[n - 1]->runtime)
			n--;
	*out = f;
	return n;
}

const struct sym_frame *callstacks__site(struct syms *s, uint32_t stack)
{
	const struct sym_frame **f, *site = NULL;
	size_t n = callstacks__frames(s, stack, &f);
	for (size_t i = 0; i < n && !site; i++)
		if (!f[i]->runtime)
			site = f[i];
	free(f);
	return site;
}

static const char *site_label(const struct sym_frame *f, char *buf, size_t size)
{
	if (f->function && f->file && f->line)
		snprintf(buf, size, "%s (%s:%d)", f->function, f->file, f->line);
	else
		syms__frame_label(f, buf, size);
	return buf;
}

/* ---- object names ------------------------------------------------------- *
 *
 * Computed for every object of the profile at once, so that two objects
 * made at the same line of a helper (a mutex_init wrapper) but called from
 * different places can be told apart: such names get their callers added,
 * " from caller (file:line)", up to NAME_DEPTH frames, until they differ.
 * Objects made by one and the same call path keep one name: they are the
 * same kind of lock. */

#define NAME_DEPTH 4

struct obj_name {
	char *name;                  /* final, or NULL: no name from here */
	char *chain[NAME_DEPTH];     /* labels of the program's own frames, innermost first */
	int nchain, level;           /* level: frames the name uses */
	int from_stack;
};

struct names {
	size_t n;
	struct obj_name *v;
};

static void names_free(void *arg)
{
	struct names *nm = arg;
	for (size_t i = 0; i < nm->n; i++) {
		free(nm->v[i].name);
		for (int k = 0; k < nm->v[i].nchain; k++)
			free(nm->v[i].chain[k]);
	}
	free(nm->v);
	free(nm);
}

static const char *kind_label(uint32_t kind)
{
	static const char *const names[] = {
#define CV_X(sym, val, name) [val] = name,
		CV_OBJ_KINDS(CV_X)
#undef CV_X
	};
	return kind < sizeof(names) / sizeof(names[0]) && names[kind] ? names[kind] : "object";
}

static void stack_name(struct obj_name *n, uint32_t kind)
{
	char buf[1024];
	size_t len = (size_t)snprintf(buf, sizeof(buf), "%s@%s", kind_label(kind), n->chain[0]);
	for (int k = 1; k < n->level && len < sizeof(buf); k++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, " from %s", n->chain[k]);
	free(n->name);
	n->name = xstrndup(buf, strlen(buf));
}

/* The stack that made the object, else the one it was waited on from most,
 * whichever first has a frame of the program's own code. */
static uint32_t naming_stack(struct syms *s, const struct profile_object *o)
{
	uint32_t stack = o->o.first_stack;
	if (stack && callstacks__site(s, stack))
		return stack;
	struct stack_sum *sums;
	size_t n = callstacks__object(syms__profile(s), o->o.id, &sums);
	uint32_t found = 0;
	for (size_t i = 0; i < n && !found; i++)
		if (sums[i].stack && callstacks__site(s, sums[i].stack))
			found = sums[i].stack;
	free(sums);
	return found ? found : stack;
}

static struct names *sort_names;   /* for the qsort comparator */

static int by_name(const void *a, const void *b)
{
	const struct obj_name *x = &sort_names->v[*(const size_t *)a], *y = &sort_names->v[*(const size_t *)b];
	return strcmp(x->name, y->name);
}

static int same_chain(const struct obj_name *a, const struct obj_name *b)
{
	if (a->nchain != b->nchain)
		return 0;
	for (int k = 0; k < a->nchain; k++)
		if (strcmp(a->chain[k], b->chain[k]))
			return 0;
	return 1;
}

static struct names *names_build(struct syms *s)
{
	const struct profile *p = syms__profile(s);
	struct names *nm = xcalloc(1, sizeof(*nm));
	nm->n = p->nobjects;
	nm->v = xcalloc(p->nobjects ? p->nobjects : 1, sizeof(*nm->v));
	size_t *heap = xcalloc(p->nobjects ? p->nobjects : 1, sizeof(size_t)), nheap = 0;
	for (size_t i = 0; i < p->nobjects; i++) {
		const struct profile_object *o = &p->objects[i];
		struct obj_name *n = &nm->v[i];
		char buf[1024];
		if (syms__data_name(s, o->o.addr, o->o.map_gen, buf, sizeof(buf))) {
			n->name = xstrndup(buf, strlen(buf));
			continue;
		}
		uint32_t stack = naming_stack(s, o);
		const struct sym_frame **f;
		size_t nf = stack ? callstacks__frames(s, stack, &f) : 0;
		const struct sym_frame *site = NULL, *inner = nf ? f[0] : NULL;
		for (size_t k = 0; k < nf && n->nchain < NAME_DEPTH; k++) {
			if (f[k]->runtime)
				continue;
			if (!site)
				site = f[k];
			if (!site->function)
				break;
			site_label(f[k], buf, sizeof(buf));
			n->chain[n->nchain++] = xstrndup(buf, strlen(buf));
		}
		if (nf)
			free(f);
		if (n->nchain) {
			n->level = 1;
			n->from_stack = 1;
			stack_name(n, o->o.kind);
			heap[nheap++] = i;
			continue;
		}
		/* No function to name it by: a static object in a stripped module
		 * is still its module and offset ("mutex@prog+0x4040"); a heap
		 * object, whose address changes from run to run, is named by the
		 * code that used it, the runtime's when no frame of the program's
		 * own was unwound (a Rust Mutex's futex word:
		 * "futex@<std::sys::sync::mutex::futex::Mutex>::lock_contended
		 * (futex.rs:73)"), so runs of a sweep agree on its name. */
		uint64_t off;
		const char *mod = syms__module_of(s, o->o.addr, o->o.map_gen, &off);
		if (mod && *mod)
			snprintf(buf, sizeof(buf), "%s@%s+0x%llx", kind_label(o->o.kind), mod, (unsigned long long)off);
		else if (site || inner)
			snprintf(buf, sizeof(buf), "%s@%s", kind_label(o->o.kind),
				 site_label(site ? site : inner, (char[256]){0}, 256));
		else
			continue;
		n->name = xstrndup(buf, strlen(buf));
	}
	/* Same name, different call paths: add callers until they differ. */
	for (int round = 1; round < NAME_DEPTH; round++) {
		sort_names = nm;
		qsort(heap, nheap, sizeof(*heap), by_name);
		int changed = 0;
		for (size_t i = 0; i < nheap;) {
			size_t k = i + 1;
			while (k < nheap && !strcmp(nm->v[heap[k]].name, nm->v[heap[i]].name))
				k++;
			int differ = 0;
			for (size_t j = i + 1; j < k && !differ; j++)
				differ = !same_chain(&nm->v[heap[i]], &nm->v[heap[j]]);
			for (size_t j = i; differ && j < k; j++) {
				struct obj_name *n = &nm->v[heap[j]];
				if (n->level < n->nchain) {
					n->level++;
					stack_name(n, p->objects[heap[j]].o.kind);
					changed = 1;
				}
			}
			i = k;
		}
		if (!changed)
			break;
	}
	free(heap);
	return nm;
}

const char *callstacks__object_name(struct syms *s, const struct profile_object *o, const char *kind,
				char *buf, size_t size)
{
	(void)kind;
	struct names *nm = syms__aux(s);
	if (!nm) {
		nm = names_build(s);
		syms__set_aux(s, nm, names_free);
	}
	if (o->o.id >= nm->n || !nm->v[o->o.id].name)
		return NULL;
	snprintf(buf, size, "%s", nm->v[o->o.id].name);
	return buf;
}

/* ---- report -------------------------------------------------------------- */

void callstacks__text(FILE *out, struct syms *s, uint32_t object, uint64_t object_wait_ns, int n, int verbose,
		  const char *indent)
{
	const struct profile *p = syms__profile(s);
	if (n <= 0)
		return;
	struct stack_sum *sums;
	size_t count = callstacks__object(p, object, &sums);
	uint64_t total = 0;
	for (size_t i = 0; i < count; i++)
		total += sums[i].wait_ns;
	for (size_t i = 0; i < count && i < (size_t)n; i++) {
		char pct[32], w[32], ns[32], smp[32], label[512];
		double share = total ? (double)sums[i].wait_ns / (double)total : 0;
		fprintf(out, "%sstack %zu: %s of the sampled wait, ~%s waits, ~%s (%s samples)\n", indent, i + 1,
			fmt_pct(pct, sizeof(pct), share), fmt_count(w, sizeof(w), sums[i].waits),
			fmt_ns(ns, sizeof(ns), (double)sums[i].wait_ns), fmt_count(smp, sizeof(smp), sums[i].samples));
		const struct sym_frame **f;
		size_t nf = callstacks__frames(s, sums[i].stack, &f);
		if (!sums[i].stack)
			fprintf(out, "%s    (stack not captured)\n", indent);
		size_t shown = verbose || nf <= 14 ? nf : 12;
		for (size_t k = 0; k < shown; k++) {
			/* A frame per line, shortened to the terminal (-v: whole). */
			char line[600], fit[600];
			snprintf(line, sizeof(line), "%s%s", syms__frame_label(f[k], label, sizeof(label)),
				 f[k]->inlined ? " [inlined]" : "");
			fprintf(out, "%s    %s\n", indent, verbose ? line :
				textfit__fit(fit, sizeof(fit), line, textfit__width(out) - (int)strlen(indent) - 4));
		}
		if (shown < nf)
			fprintf(out, "%s    ... %zu more frames (-v shows them)\n", indent, nf - shown);
		free(f);
	}
	if (count > (size_t)n)
		fprintf(out, "%s... %zu more stacks (--stacks N)\n", indent, count - (size_t)n);
	(void)object_wait_ns;
	free(sums);
}

static json_object *jframe_site(const struct sym_frame *f)
{
	if (!f)
		return NULL;
	json_object *o = json_object_new_object();
	json_object_object_add(o, "function", f->function ? json_object_new_string(f->function) : NULL);
	json_object_object_add(o, "file", f->file ? json_object_new_string(f->file) : NULL);
	json_object_object_add(o, "line", f->line ? json_object_new_int(f->line) : NULL);
	return o;
}

static json_object *jframes(struct syms *s, uint32_t stack)
{
	json_object *a = json_object_new_array();
	const struct sym_frame **f;
	size_t n = callstacks__frames(s, stack, &f);
	for (size_t i = 0; i < n; i++) {
		char addr[32];
		json_object *o = jframe_site(f[i]);
		json_object_object_add(o, "path", f[i]->path ? json_object_new_string(f[i]->path) : NULL);
		json_object_object_add(o, "module", f[i]->module ? json_object_new_string(f[i]->module) : NULL);
		snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)f[i]->offset);
		json_object_object_add(o, "offset", json_object_new_string(addr));
		snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)f[i]->pc);
		json_object_object_add(o, "addr", json_object_new_string(addr));
		json_object_object_add(o, "inlined", json_object_new_boolean(f[i]->inlined));
		json_object_object_add(o, "runtime", json_object_new_boolean(f[i]->runtime));
		json_object_array_add(a, o);
	}
	free(f);
	return a;
}

void callstacks__json(json_object *obj, struct syms *s, uint32_t object, int n)
{
	const struct profile *p = syms__profile(s);
	struct stack_sum *sums;
	size_t count = callstacks__object(p, object, &sums);
	uint64_t total = 0;
	for (size_t i = 0; i < count; i++)
		total += sums[i].wait_ns;
	json_object_object_add(obj, "site", count ? jframe_site(callstacks__site(s, sums[0].stack)) : NULL);
	uint32_t first = object < p->nobjects ? p->objects[object].o.first_stack : 0;
	json_object *fu = NULL;
	if (first) {
		fu = json_object_new_object();
		json_object_object_add(fu, "site", jframe_site(callstacks__site(s, first)));
		json_object_object_add(fu, "frames", jframes(s, first));
	}
	json_object_object_add(obj, "first_use", fu);
	json_object *a = json_object_new_array();
	for (size_t i = 0; i < count && (n < 0 || i < (size_t)n); i++) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "stack", json_object_new_int64(sums[i].stack));
		json_object_object_add(o, "waits", json_object_new_int64((int64_t)sums[i].waits));
		json_object_object_add(o, "wait_ns", json_object_new_int64((int64_t)sums[i].wait_ns));
		json_object_object_add(o, "samples", json_object_new_int64((int64_t)sums[i].samples));
		json_object_object_add(o, "share", json_object_new_double(total ? (double)sums[i].wait_ns / (double)total : 0));
		json_object_object_add(o, "site", sums[i].stack ? jframe_site(callstacks__site(s, sums[i].stack)) : NULL);
		json_object_object_add(o, "frames", jframes(s, sums[i].stack));
		json_object_array_add(a, o);
	}
	json_object_object_add(obj, "stacks", a);
	free(sums);
}
