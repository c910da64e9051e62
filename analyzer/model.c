/* model.c — one profile summed per object, named, and ranked.
 *
 * The profile holds per-thread records; the model sums them per object (each
 * object is one generation of one address), names objects (the program's own
 * name, else the ELF symbol that contains the address, else the kind and
 * address), and ranks locks by the time threads lost waiting for them. The
 * report, the speedup stack and the findings all read it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "callstacks.h"
#include "profile.h"
#include "convoy/statsfields.h"
#include "symbols.h"
#include "util.h"

static const char *const kind_names[] = {
#define CV_X(sym, val, name) [val] = name,
	CV_OBJ_KINDS(CV_X)
#undef CV_X
};

static const char *const exit_texts[] = {
#define CV_X(sym, val, text) [val] = text,
	CV_EXIT_REASONS(CV_X)
#undef CV_X
};

const char *exit_text(uint32_t reason)
{
	return reason < sizeof(exit_texts) / sizeof(exit_texts[0]) && exit_texts[reason] ? exit_texts[reason] : "unknown";
}

const char *kind_name(uint32_t kind)
{
	return kind < sizeof(kind_names) / sizeof(kind_names[0]) && kind_names[kind] ? kind_names[kind] : "unknown";
}

static void mutex_type(uint32_t flags, char *buf, size_t size)
{
	static const char *const types[] = { "normal", "recursive", "errorcheck", "adaptive" };
	snprintf(buf, size, "%s%s%s%s%s%s", types[flags & CV_MUTEX_TYPE_MASK],
		 flags & CV_MUTEX_ROBUST ? " robust" : "", flags & CV_MUTEX_PI ? " pi" : "",
		 flags & CV_MUTEX_PP ? " pp" : "", flags & CV_MUTEX_PSHARED ? " pshared" : "",
		 flags & CV_MUTEX_C11 ? " c11" : "");
}

static void name_object(struct object_row *row, struct syms *syms)
{
	const struct cv_object *o = &row->obj->o;
	char sym[256];
	const char *base = row->obj->name;
	if (!base)   /* callstacks.c: variable and member path, else the code that made it */
		base = callstacks__object_name(syms, row->obj, kind_name(o->kind), sym, sizeof(sym));
	if (base)
		snprintf(row->name, sizeof(row->name), "%s", base);
	else
		snprintf(row->name, sizeof(row->name), "%s@0x%llx", kind_name(o->kind), (unsigned long long)o->addr);
	row->site_len = strlen(row->name);
	if (o->generation)
		snprintf(row->name + row->site_len, sizeof(row->name) - row->site_len, " (generation %u)",
			 o->generation);
	row->inside = syms ? syms__data_note(syms, o->addr, o->map_gen) : NULL;
}

static int by_wait(const void *a, const void *b)
{
	const struct object_row *x = *(struct object_row *const *)a, *y = *(struct object_row *const *)b;
	if (x->total.wait_ns != y->total.wait_ns)
		return x->total.wait_ns < y->total.wait_ns ? 1 : -1;
	if (x->total.acquisitions != y->total.acquisitions)
		return x->total.acquisitions < y->total.acquisitions ? 1 : -1;
	if (x->total.signals + x->total.broadcasts != y->total.signals + y->total.broadcasts)
		return x->total.signals + x->total.broadcasts < y->total.signals + y->total.broadcasts ? 1 : -1;
	return x->obj->o.id < y->obj->o.id ? -1 : 1;
}

enum wait_class wait_class_of(uint32_t kind)
{
	switch (kind) {
	case CV_OBJ_MUTEX:   return WAIT_LOCK;
	case CV_OBJ_RWLOCK:  return WAIT_LOCK;
	case CV_OBJ_FUTEX:   return WAIT_LOCK;      /* see wait_class_of_obj */
	case CV_OBJ_COND:    return WAIT_PARK;
	case CV_OBJ_SEM:     return WAIT_PARK;
	case CV_OBJ_BARRIER: return WAIT_BARRIER;
	case CV_OBJ_SPIN:    return WAIT_NONE;      /* spinning is on-CPU time */
	default:             return WAIT_NONE;
	}
}

int model__acquisitions_seen(const struct profile_object *o)
{
	return o->o.kind != CV_OBJ_FUTEX;
}

/* A futex word is a lock when its waits expected the "locked, contended"
 * value 2 (glibc's lowlevellock, Rust's std Mutex) or it took PI operations;
 * otherwise (sequence counters, park words) its waits are parks. */
enum wait_class wait_class_of_obj(const struct profile_object *o)
{
	if (o->o.kind == CV_OBJ_FUTEX)
		return (o->o.flags & CV_FUTEX_PI) ||
		       ((o->o.flags & CV_FUTEX_WAIT_2) && !(o->o.flags & CV_FUTEX_WAIT_OTHER)) ?
		       WAIT_LOCK : WAIT_PARK;
	return wait_class_of(o->o.kind);
}

bool model__futex_parked_on(const struct object_row *row)
{
	return row->obj->o.kind == CV_OBJ_FUTEX && row->total.waits && wait_class_of_obj(row->obj) == WAIT_PARK;
}

bool model__lock_like(const struct object_row *row)
{
	switch (row->obj->o.kind) {
	case CV_OBJ_MUTEX:
	case CV_OBJ_RWLOCK:
	case CV_OBJ_SPIN:
		return true;
	case CV_OBJ_FUTEX:   /* a futex word threads waited on as a lock; one used to park is a park */
		return row->total.waits != 0 && wait_class_of_obj(row->obj) == WAIT_LOCK;
	default:
		return false;
	}
}

static void object_type(const struct profile_object *o, char *buf, size_t size)
{
	static const char *const rw[] = { "prefer-reader", "prefer-writer", "prefer-writer-nonrecursive", "?" };
	switch (o->o.kind) {
	case CV_OBJ_MUTEX:
		mutex_type(o->o.flags, buf, size);
		break;
	case CV_OBJ_RWLOCK:
		snprintf(buf, size, "%s", rw[o->o.flags & CV_RWLOCK_KIND_MASK]);
		break;
	case CV_OBJ_FUTEX:
		snprintf(buf, size, "%s", wait_class_of_obj(o) == WAIT_LOCK ? "lock" : "park");
		break;
	default:
		buf[0] = '\0';
	}
}

/* A lock's hold time per acquisition, each thread's sampled average weighted
 * by its acquisitions: one thread's single long hold (filling a queue before
 * the workers start) does not stand for the millions of short ones. */
static void typical_holds(struct model *m)
{
	const struct profile *p = m->p;
	double *held = xcalloc(p->nobjects, sizeof(double)), *acquisitions = xcalloc(p->nobjects, sizeof(double));
	for (size_t i = 0; i < p->nstats; i++) {   /* one pass: profiles can hold millions */
		const struct cv_stats *s = &p->stats[i];
		if (!s->hold_samples)
			continue;
		held[s->object] += (double)s->hold_ns / (double)s->hold_samples * (double)s->acquisitions;
		acquisitions[s->object] += (double)s->acquisitions;
		m->rows[s->object].hold_samples += s->hold_samples;
	}
	for (size_t i = 0; i < p->nobjects; i++)
		m->rows[i].typical_hold_ns = acquisitions[i] ? held[i] / acquisitions[i] : 0;
	free(held);
	free(acquisitions);
}

/* ---- park and wake ------------------------------------------------------- */

static bool park_kind(uint32_t kind)
{
	return kind == CV_OBJ_COND || kind == CV_OBJ_SEM || kind == CV_OBJ_BARRIER || kind == CV_OBJ_FUTEX;
}

void model__park_add(struct park_totals *t, uint32_t kind, const struct cv_stats *s)
{
	uint64_t parks = s->waits;
	if (kind == CV_OBJ_BARRIER)   /* the last arrival of a round does not park */
		parks = s->waits > s->rounds ? s->waits - s->rounds : 0;
	t->parks += parks;
	t->park_ns += s->wait_ns;
	t->wakeups += s->wakeups;
	t->wake_latency_ns += s->wake_latency_ns;
	CV_STATS_MERGE_MAX(t->max_wake_latency_ns, s->max_wake_latency_ns);
	t->futile_wakes += s->futile_wakes;
	t->broadcast_woken += s->broadcast_woken;
	t->broadcast_back_to_sleep += s->futile_after_broadcast;
	switch (kind) {
	case CV_OBJ_COND:
		t->wakes_sent += s->signals + s->broadcasts;
		t->wakes_unwaited += s->signals_unwaited + s->broadcasts_unwaited;
		t->broadcasts += s->broadcasts - s->broadcasts_unwaited;
		break;
	case CV_OBJ_SEM:
	case CV_OBJ_FUTEX:
		t->wakes_sent += s->signals;
		t->wakes_unwaited += s->signals_unwaited;
		break;
	case CV_OBJ_BARRIER:
		t->wakes_sent += s->rounds;   /* one release per round */
		break;
	}
}

/* ---- identity ------------------------------------------------------------ */

int model__cmp_identity(const struct object_row *a, const struct object_row *b)
{
	int c = strcmp(a->name, b->name);
	if (c)
		return c;
	return a->ordinal < b->ordinal ? -1 : a->ordinal > b->ordinal;
}

int model__same_object(const struct object_row *a, const struct object_row *b)
{
	return a->obj->o.kind == b->obj->o.kind && !model__cmp_identity(a, b);
}

static int by_name_then_id(const void *x, const void *y)
{
	const struct object_row *a = *(struct object_row *const *)x, *b = *(struct object_row *const *)y;
	int c = strcmp(a->name, b->name);
	return c ? c : a->obj->o.id < b->obj->o.id ? -1 : 1;
}

/* Objects of one name (made at one site) numbered in creation order. */
static void number_objects(struct model *m)
{
	size_t n = m->p->nobjects;
	struct object_row **v = xcalloc(n ? n : 1, sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = &m->rows[i];
	qsort(v, n, sizeof(*v), by_name_then_id);
	for (size_t i = 1; i < n; i++)
		if (!strcmp(v[i]->name, v[i - 1]->name))
			v[i]->ordinal = v[i - 1]->ordinal + 1;
	free(v);
}

static int group_by_wait(const void *a, const void *b)
{
	const struct object_group *x = a, *y = b;
	if (x->total.wait_ns != y->total.wait_ns)
		return x->total.wait_ns < y->total.wait_ns ? 1 : -1;
	return by_wait(&x->first, &y->first);
}

/* The key objects share a text row by: kind, the name without its
 * generation, and what a cell shows of the object itself (a mutex's
 * type, a futex word's role, a barrier's count), so that a row of many
 * says of each what it says of all. */
static int cmp_site(const struct object_row *a, const struct object_row *b)
{
	if (a->obj->o.kind != b->obj->o.kind)
		return a->obj->o.kind < b->obj->o.kind ? -1 : 1;
	int c = memcmp(a->name, b->name, a->site_len < b->site_len ? a->site_len : b->site_len);
	if (c || a->site_len != b->site_len)
		return c ? c : a->site_len < b->site_len ? -1 : 1;
	if ((c = strcmp(a->type, b->type)) != 0)
		return c;
	if (a->obj->o.kind == CV_OBJ_BARRIER && a->obj->o.flags != b->obj->o.flags)
		return a->obj->o.flags < b->obj->o.flags ? -1 : 1;
	return 0;
}

static int by_site_then_id(const void *x, const void *y)
{
	const struct object_row *a = *(struct object_row *const *)x, *b = *(struct object_row *const *)y;
	int c = cmp_site(a, b);
	return c ? c : a->obj->o.id < b->obj->o.id ? -1 : 1;
}

/* Whether a row keeps its own line: it holds a tenth of its table's wait
 * (pigz's job queues, two of its 225 condvars made at one site, 90 % of
 * their wait), or more than half of its site's (one busy object among
 * idle ones: an encoder's lock among its pool's), so that no wait that
 * matters is read as spread over a crowd. */
static bool stands_apart(const struct object_row *r, uint64_t table_wait, uint64_t site_wait, size_t site_count)
{
	uint64_t w = r->total.wait_ns;
	return w && (w >= (table_wait + 9) / 10 || (site_count > 1 && w > site_wait / 2));
}

static void group_add(struct object_group *x, const struct object_row *r)
{
	uint32_t gen = r->obj->o.generation;
	if (!x->count++) {
		x->first = r;
		x->generation_min = x->generation_max = gen;
	} else if (by_wait(&r, &x->first) < 0) {
		x->first = r;
	}
	if (gen < x->generation_min)
		x->generation_min = gen;
	if (gen > x->generation_max)
		x->generation_max = gen;
	x->nthreads += r->nthreads;
	cv_stats_merge(&x->total, &r->total);
}

size_t model__group(struct object_row *const *rows, size_t n, struct object_group **out)
{
	uint64_t table_wait = 0;
	for (size_t i = 0; i < n; i++)
		table_wait += rows[i]->total.wait_ns;
	struct object_row **v = xcalloc(n ? n : 1, sizeof(*v));
	memcpy(v, rows, n * sizeof(*v));
	qsort(v, n, sizeof(*v), by_site_then_id);
	struct object_group *g = xcalloc(n ? n : 1, sizeof(*g));
	size_t ng = 0;
	for (size_t i = 0, end; i < n; i = end) {   /* a site's rows, [i, end) */
		uint64_t site_wait = 0;
		for (end = i; end < n && !cmp_site(v[end], v[i]); end++)
			site_wait += v[end]->total.wait_ns;
		struct object_group *rest = NULL;
		for (size_t k = i; k < end; k++) {
			struct object_group *x = stands_apart(v[k], table_wait, site_wait, end - i) ? &g[ng++] :
						 rest ? rest : (rest = &g[ng++]);
			group_add(x, v[k]);
			x->site_count = end - i;
		}
	}
	free(v);
	qsort(g, ng, sizeof(*g), group_by_wait);
	*out = g;
	return ng;
}

bool model__group_row(const struct object_group *g, struct object_row *sum, char *note, size_t note_size)
{
	if (g->count < 2)
		return false;
	char c[32], gens[64] = "";
	*sum = *g->first;
	sum->total = g->total;
	sum->nthreads = g->nthreads;
	fmt_count(c, sizeof(c), g->count);
	snprintf(sum->name, sizeof(sum->name), "%s × %.*s", c, (int)g->first->site_len, g->first->name);
	if (g->generation_min != g->generation_max)   /* remade at the same addresses */
		snprintf(gens, sizeof(gens), ", generations %u to %u", g->generation_min, g->generation_max);
	else if (g->generation_min)
		snprintf(gens, sizeof(gens), ", generation %u", g->generation_min);
	snprintf(note, note_size, "%s %sobjects made at %s site%s; -v shows each", c,
		 g->count < g->site_count ? "more " : "", g->count < g->site_count ? "this" : "one", gens);
	return true;
}

size_t model__group_objects(const struct object_group *g, size_t from, size_t to)
{
	size_t n = 0;
	for (size_t i = from; i < to; i++)
		n += g[i].count;
	return n;
}

/* ---- the model ----------------------------------------------------------- */

/* Counting sort of the stats records by object: one pass to count, one to place. */
static void index_stats(struct model *m)
{
	const struct profile *p = m->p;
	m->stats_start = xcalloc(p->nobjects + 1, sizeof(size_t));
	m->stats_of = xcalloc(p->nstats ? p->nstats : 1, sizeof(size_t));
	for (size_t i = 0; i < p->nstats; i++)
		m->stats_start[p->stats[i].object + 1]++;
	for (size_t i = 0; i < p->nobjects; i++)
		m->stats_start[i + 1] += m->stats_start[i];
	size_t *next = xcalloc(p->nobjects ? p->nobjects : 1, sizeof(size_t));
	for (size_t i = 0; i < p->nstats; i++) {
		uint32_t o = p->stats[i].object;
		m->stats_of[m->stats_start[o] + next[o]++] = i;
	}
	free(next);
}

static struct object_row **rows_where(const struct model *m, bool (*keep)(const struct object_row *), size_t *n)
{
	struct object_row **v = xcalloc(m->p->nobjects ? m->p->nobjects : 1, sizeof(*v));
	*n = 0;
	for (size_t i = 0; i < m->p->nobjects; i++)
		if (m->rows[i].nthreads && keep(&m->rows[i]))   /* unused: named or initialised only */
			v[(*n)++] = &m->rows[i];
	qsort(v, *n, sizeof(*v), by_wait);
	return v;
}

static bool is_cond(const struct object_row *r) { return r->obj->o.kind == CV_OBJ_COND; }
static bool is_sem(const struct object_row *r) { return r->obj->o.kind == CV_OBJ_SEM; }
static bool is_barrier(const struct object_row *r) { return r->obj->o.kind == CV_OBJ_BARRIER; }
static bool is_futex(const struct object_row *r) { return r->obj->o.kind == CV_OBJ_FUTEX; }
static bool is_park(const struct object_row *r) { return park_kind(r->obj->o.kind); }

/* Did the main thread meet other threads at a barrier (an OpenMP master,
 * a thread of a team)? Then it is one of the workers, not waiting for them. */
static void main_in_team(struct model *m)
{
	const struct profile *p = m->p;
	for (size_t id = 0; id < p->nobjects && !m->main_in_team; id++) {
		if (wait_class_of_obj(&p->objects[id]) != WAIT_BARRIER)
			continue;
		int main = 0, others = 0;
		for (size_t j = m->stats_start[id]; j < m->stats_start[id + 1]; j++) {
			const struct cv_stats *s = &p->stats[m->stats_of[j]];
			if (!s->waits)
				continue;
			if (p->threads[s->thread].flags & CV_THREAD_MAIN)
				main = 1;
			else
				others = 1;
		}
		m->main_in_team = main && others;
	}
}

void model__build(struct model *m, const struct profile *p, struct syms *syms)
{
	memset(m, 0, sizeof(*m));
	m->p = p;
	m->syms = syms;
	m->rows = xcalloc(p->nobjects ? p->nobjects : 1, sizeof(*m->rows));
	size_t nt = p->nthreads ? p->nthreads : 1;
	m->thread_lock_wait = xcalloc(nt, sizeof(uint64_t));
	m->thread_cond_wait = xcalloc(nt, sizeof(uint64_t));
	m->thread_barrier_wait = xcalloc(nt, sizeof(uint64_t));
	m->thread_park = xcalloc(nt, sizeof(*m->thread_park));
	m->thread_spin_ns = xcalloc(nt, sizeof(uint64_t));
	m->thread_progress = xcalloc(nt, sizeof(uint64_t));
	m->thread_kind_wait = xcalloc(nt * CV_OBJ_KIND_COUNT, sizeof(uint64_t));
	for (size_t i = 0; i < p->nobjects; i++) {
		m->rows[i].obj = &p->objects[i];
		name_object(&m->rows[i], syms);
		object_type(&p->objects[i], m->rows[i].type, sizeof(m->rows[i].type));
	}
	number_objects(m);
	index_stats(m);
	for (size_t i = 0; i < p->nobjects; i++)   /* profile.c checked it names a mutex */
		if (p->objects[i].o.monitor)
			m->rows[i].monitor = &m->rows[p->objects[i].o.monitor - 1];
	for (size_t i = 0; i < p->nstats; i++) {
		const struct cv_stats *s = &p->stats[i];
		struct object_row *row = &m->rows[s->object];
		uint32_t kind = row->obj->o.kind;
		cv_stats_merge(&row->total, s);
		row->nthreads++;
		switch (wait_class_of_obj(row->obj)) {
		case WAIT_LOCK:    m->thread_lock_wait[s->thread] += s->wait_ns; break;
		case WAIT_PARK:    m->thread_cond_wait[s->thread] += s->wait_ns; break;
		case WAIT_BARRIER: m->thread_barrier_wait[s->thread] += s->wait_ns; break;
		case WAIT_NONE:    break;
		}
		if (kind < CV_OBJ_KIND_COUNT)
			m->thread_kind_wait[s->thread * CV_OBJ_KIND_COUNT + kind] += s->wait_ns;
		if (kind == CV_OBJ_SPIN)
			m->thread_spin_ns[s->thread] += s->wait_ns;
		if (park_kind(kind))
			model__park_add(&m->thread_park[s->thread], kind, s);
	}
	main_in_team(m);
	typical_holds(m);
	m->locks = rows_where(m, model__lock_like, &m->nlocks);
	for (size_t i = 0; i < m->nlocks; i++)
		m->total_lock_wait += m->locks[i]->total.wait_ns;
	m->conds = rows_where(m, is_cond, &m->nconds);
	m->sems = rows_where(m, is_sem, &m->nsems);
	m->barriers = rows_where(m, is_barrier, &m->nbarriers);
	m->futexes = rows_where(m, is_futex, &m->nfutexes);
	m->parks = rows_where(m, is_park, &m->nparks);
	for (size_t i = 0; i < m->nparks; i++)
		model__park_add(&m->park, m->parks[i]->obj->o.kind, &m->parks[i]->total);
	for (size_t i = 0; i < p->ncounters; i++)
		if (p->counters[i].c.kind == CV_COUNTER_PROGRESS && p->counters[i].c.value > 0) {
			m->thread_progress[p->counters[i].c.thread] += (uint64_t)p->counters[i].c.value;
			m->total_progress += (uint64_t)p->counters[i].c.value;
		}
	for (size_t i = 0; i < p->nthreads; i++)
		m->total_thread_ns += p->threads[i].end_ns - p->threads[i].start_ns;
	m->wall_ns = (double)(p->process.end_ns - p->process.start_ns);
}

void model__free(struct model *m)
{
	free(m->rows);
	free(m->stats_start);
	free(m->stats_of);
	free(m->locks);
	free(m->conds);
	free(m->sems);
	free(m->barriers);
	free(m->futexes);
	free(m->parks);
	free(m->thread_lock_wait);
	free(m->thread_cond_wait);
	free(m->thread_barrier_wait);
	free(m->thread_park);
	free(m->thread_spin_ns);
	free(m->thread_progress);
	free(m->thread_kind_wait);
}
