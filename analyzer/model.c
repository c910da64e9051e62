/* model.c — one profile summed per object, named, and ranked.
 *
 * The profile holds per-thread records; the model sums them per object (each
 * object is one generation of one address), names objects (the program's own
 * name, else the ELF symbol that contains the address, else the kind and
 * address), and ranks locks by the time threads lost waiting for them. The
 * report, the speedup stack and the findings all read it.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "profile.h"
#include "callstacks.h"
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

static void add_stats(struct cv_stats *to, const struct cv_stats *s)
{
	const uint64_t *src = (const uint64_t *)&s->acquisitions;
	uint64_t *dst = (uint64_t *)&to->acquisitions;
	size_t n = (sizeof(*s) - offsetof(struct cv_stats, acquisitions)) / sizeof(uint64_t);
	for (size_t i = 0; i < n; i++)
		dst[i] += src[i];
}

#define MAX_OF(a, b) ((a) > (b) ? (a) : (b))

/* Sums, except the maxima. */
static void merge_stats(struct cv_stats *to, const struct cv_stats *s)
{
	struct cv_stats max = {
		.max_wait_ns = MAX_OF(to->max_wait_ns, s->max_wait_ns),
		.max_hold_ns = MAX_OF(to->max_hold_ns, s->max_hold_ns),
		.rd_max_wait_ns = MAX_OF(to->rd_max_wait_ns, s->rd_max_wait_ns),
		.wr_max_wait_ns = MAX_OF(to->wr_max_wait_ns, s->wr_max_wait_ns),
		.max_wake_latency_ns = MAX_OF(to->max_wake_latency_ns, s->max_wake_latency_ns),
		.max_imbalance_ns = MAX_OF(to->max_imbalance_ns, s->max_imbalance_ns),
	};
	add_stats(to, s);
	to->max_wait_ns = max.max_wait_ns;
	to->max_hold_ns = max.max_hold_ns;
	to->rd_max_wait_ns = max.rd_max_wait_ns;
	to->wr_max_wait_ns = max.wr_max_wait_ns;
	to->max_wake_latency_ns = max.max_wake_latency_ns;
	to->max_imbalance_ns = max.max_imbalance_ns;
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
	if (o->generation) {
		size_t n = strlen(row->name);
		snprintf(row->name + n, sizeof(row->name) - n, " (generation %u)", o->generation);
	}
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

static bool lock_like(const struct object_row *row)
{
	switch (row->obj->o.kind) {
	case CV_OBJ_MUTEX:
	case CV_OBJ_RWLOCK:
	case CV_OBJ_SPIN:
		return true;
	case CV_OBJ_FUTEX:   /* a futex word that threads waited on, whatever its role */
		return row->total.waits != 0;
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
	}
	for (size_t i = 0; i < p->nobjects; i++)
		m->rows[i].typical_hold_ns = acquisitions[i] ? held[i] / acquisitions[i] : 0;
	free(held);
	free(acquisitions);
}

void model__build(struct model *m, const struct profile *p, struct syms *syms)
{
	memset(m, 0, sizeof(*m));
	m->p = p;
	m->syms = syms;
	m->rows = xcalloc(p->nobjects, sizeof(*m->rows));
	m->thread_lock_wait = xcalloc(p->nthreads, sizeof(uint64_t));
	m->thread_cond_wait = xcalloc(p->nthreads, sizeof(uint64_t));
	m->thread_barrier_wait = xcalloc(p->nthreads, sizeof(uint64_t));
	for (size_t i = 0; i < p->nobjects; i++) {
		m->rows[i].obj = &p->objects[i];
		name_object(&m->rows[i], syms);
		object_type(&p->objects[i], m->rows[i].type, sizeof(m->rows[i].type));
	}
	for (size_t i = 0; i < p->nstats; i++) {
		const struct cv_stats *s = &p->stats[i];
		struct object_row *row = &m->rows[s->object];
		merge_stats(&row->total, s);
		row->nthreads++;
		switch (wait_class_of_obj(row->obj)) {
		case WAIT_LOCK:    m->thread_lock_wait[s->thread] += s->wait_ns; break;
		case WAIT_PARK:    m->thread_cond_wait[s->thread] += s->wait_ns; break;
		case WAIT_BARRIER: m->thread_barrier_wait[s->thread] += s->wait_ns; break;
		case WAIT_NONE:    break;
		}
	}
	typical_holds(m);
	m->locks = xcalloc(p->nobjects, sizeof(*m->locks));
	m->conds = xcalloc(p->nobjects, sizeof(*m->conds));
	for (size_t i = 0; i < p->nobjects; i++) {
		if (!m->rows[i].nthreads)
			continue;   /* named or initialised but never used */
		if (lock_like(&m->rows[i])) {
			m->locks[m->nlocks++] = &m->rows[i];
			m->total_lock_wait += m->rows[i].total.wait_ns;
		} else if (p->objects[i].o.kind == CV_OBJ_COND) {
			m->conds[m->nconds++] = &m->rows[i];
		}
	}
	qsort(m->locks, m->nlocks, sizeof(*m->locks), by_wait);
	qsort(m->conds, m->nconds, sizeof(*m->conds), by_wait);
	for (size_t i = 0; i < p->nthreads; i++)
		m->total_thread_ns += p->threads[i].end_ns - p->threads[i].start_ns;
	m->wall_ns = (double)(p->process.end_ns - p->process.start_ns);
	prims__model_build(m);
}

void model__free(struct model *m)
{
	free(m->rows);
	free(m->locks);
	free(m->conds);
	free(m->thread_lock_wait);
	free(m->thread_cond_wait);
	free(m->thread_barrier_wait);
	prims__model_free(m);
}

