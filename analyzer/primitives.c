/* primitives.c — rwlocks, spinlocks, semaphores, barriers, futexes, and what
 * parking and waking cost, rendered in the report (the model sums them:
 * model.c).
 *
 * Park/wake numbers (docs/report-json.md, "park_wake"): a park is a wait
 * that blocked on a condvar, semaphore, barrier (every arrival but the last
 * of its round) or futex word; a wake-up is a park that ended with a wake
 * the shim saw sent (signal, broadcast, post, FUTEX_WAKE, the last arrival),
 * and its latency runs from the waker's call to the waiter running again
 * (the estimator and its error: preload/park.c). Wakes sent while nobody
 * waited are the signals, posts and FUTEX_WAKEs that found no waiter. Per
 * thread, parks and voluntary context switches are also divided by the
 * thread's progress units (convoy.h) when the program reports progress.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "primitives.h"
#include "profile.h"
#include "report.h"
#include "textfit.h"
#include "util.h"

static json_object *jstr(const char *s) { return json_object_new_string(s ? s : ""); }
static json_object *ju64(uint64_t v) { return json_object_new_int64((int64_t)v); }
static json_object *jdiv(uint64_t a, uint64_t b) { return b ? ju64(a / b) : NULL; }
static json_object *jratio(uint64_t a, uint64_t b)
{
	return b ? json_object_new_double((double)a / (double)b) : NULL;
}

/* ---- text ------------------------------------------------------------------- */

static const char *ns_or_dash(char *buf, size_t size, uint64_t ns, uint64_t n)
{
	return n ? fmt_ns(buf, size, (double)ns / (double)n) : "-";
}

void prims__text_lock_detail(const struct object_row *r, FILE *out)
{
	const struct cv_stats *s = &r->total;
	char a[32], b[32], c[32], d[32], e[32], f[32];
	switch (r->obj->o.kind) {
	case CV_OBJ_RWLOCK: {
		uint64_t wa = s->acquisitions - s->rd_acquisitions, wc = s->contended - s->rd_contended;
		uint64_t wn = s->wait_ns - s->rd_wait_ns;
		textfit__detail(out, "read: %s acquired, %s waited, %s; write: %s acquired, %s waited, %s",
		       fmt_count(a, sizeof(a), s->rd_acquisitions), fmt_count(b, sizeof(b), s->rd_contended),
		       fmt_ns(c, sizeof(c), (double)s->rd_wait_ns), fmt_count(d, sizeof(d), wa),
		       fmt_count(e, sizeof(e), wc), fmt_ns(f, sizeof(f), (double)wn));
		if (s->wr_behind_readers)
			textfit__detail(out, "writers waited behind readers %s times, %s in all",
			       fmt_count(a, sizeof(a), s->wr_behind_readers),
			       fmt_ns(b, sizeof(b), (double)s->wr_behind_readers_ns));
		break;
	}
	case CV_OBJ_SPIN:
		if (s->wait_ns)
			textfit__detail(out, "spinning: %s on-CPU in %s contended acquisitions",
			       fmt_ns(a, sizeof(a), (double)s->wait_ns), fmt_count(b, sizeof(b), s->contended));
		break;
	case CV_OBJ_FUTEX:
		textfit__detail(out, "futex (" MODEL_FUTEX_LOCK_UNSEEN "): %s waits slept (%s woken), %s found the word "
		       "changed; %s wakes woke %s threads, %s woke nobody",
		       fmt_count(a, sizeof(a), s->waits), fmt_count(b, sizeof(b), s->contended),
		       fmt_count(c, sizeof(c), s->futex_eagain), fmt_count(d, sizeof(d), s->signals),
		       fmt_count(e, sizeof(e), s->futex_woken), fmt_count(f, sizeof(f), s->signals_unwaited));
		break;
	}
}

void prims__text_park(const struct model *m, const struct report_options *o, FILE *out)
{
	const struct profile *p = m->p;
	const struct park_totals *t = &m->park;
	if (!m->nparks)
		return;
	int width = textfit__width(out);
	char a[32], b[32], c[32], d[32], e[32], f[32], g[32], line[1024];
	fprintf(out, "Park and wake (condvars, semaphores, barriers, futexes)\n");
	fprintf(out, "  %-*s %-9s %8s %8s %9s %13s\n", TEXTFIT_NAME_COLS, "object", "kind", "parks", "woken",
		"latency", "wakes (nobody)");
	/* Objects made at one site share one row, unless -v asks for each. */
	struct object_group *groups = NULL;
	size_t ng = o->verbose ? m->nparks : model__group(m->parks, m->nparks, &groups);
	size_t n = report__rows_to_show(ng, o);
	for (size_t i = 0; i < n; i++) {
		const struct object_row *r = groups ? groups[i].first : m->parks[i];
		struct object_row sum;
		char note[200], sent[48];
		bool grouped = groups && model__group_row(&groups[i], &sum, note, sizeof(note));
		if (grouped)
			r = &sum;
		struct park_totals x = { 0 };
		model__park_add(&x, r->obj->o.kind, &r->total);
		snprintf(sent, sizeof(sent), "%s (%s)", fmt_count(a, sizeof(a), x.wakes_sent),
			 fmt_count(b, sizeof(b), x.wakes_unwaited));
		textfit__name(out, r->name);
		fprintf(out, " %-9s %8s %8s %9s %13s\n", kind_name(r->obj->o.kind), fmt_count(c, sizeof(c), x.parks),
			fmt_count(d, sizeof(d), x.wakeups), ns_or_dash(e, sizeof(e), x.wake_latency_ns, x.wakeups), sent);
		if (grouped)
			fprintf(out, "      %s\n", note);
	}
	report__more(out, groups, n, ng);
	free(groups);
	int len = snprintf(line, sizeof(line), "%s parks (%s blocked), %s woken by a wake the shim saw, %s from wake to "
		"running on average (max %s); %s of %s wakes sent found nobody waiting; %s futile wake-ups",
		fmt_count(a, sizeof(a), t->parks), fmt_ns(b, sizeof(b), (double)t->park_ns),
		fmt_count(c, sizeof(c), t->wakeups), ns_or_dash(d, sizeof(d), t->wake_latency_ns, t->wakeups),
		fmt_ns(e, sizeof(e), (double)t->max_wake_latency_ns), fmt_count(f, sizeof(f), t->wakes_unwaited),
		fmt_count(g, sizeof(g), t->wakes_sent), fmt_count((char[32]){0}, 32, t->futile_wakes));
	if (t->broadcasts && len < (int)sizeof(line))
		len += snprintf(line + len, sizeof(line) - (size_t)len, "; broadcasts woke %.1f waiters each, %s of %s went back to sleep",
			(double)t->broadcast_woken / (double)t->broadcasts,
			fmt_count(a, sizeof(a), t->broadcast_back_to_sleep), fmt_count(b, sizeof(b), t->broadcast_woken));
	if (len < (int)sizeof(line) - 1)
		strcat(line, ".");
	textfit__wrap(out, width, 4, "  In all: ", line);
	if (m->total_progress) {
		uint64_t vol = 0;
		for (size_t i = 0; i < p->nthreads; i++)
			vol += p->threads[i].voluntary_cs;
		fprintf(out, "  Per progress unit (convoy.h): %.3g parks, %.3g voluntary context switches.\n",
			(double)t->parks / (double)m->total_progress, (double)vol / (double)m->total_progress);
	}
	fprintf(out, "  By thread%s:\n", m->total_progress ? " (and per progress unit)" : "");
	size_t shown = 0;
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct park_totals *x = &m->thread_park[i];
		const struct cv_thread_rec *th = &p->threads[i];
		if (!x->parks && !x->wakes_sent)
			continue;
		if (o->limit && shown++ >= (size_t)o->limit)
			continue;
		char fit[32];
		fprintf(out, "    %-7d %-10s %7s parks %7s woken %8s avg %7s switches\n", th->tid,
			textfit__fit(fit, sizeof(fit), th->name[0] ? th->name : "-", 10), fmt_count(a, sizeof(a), x->parks),
			fmt_count(b, sizeof(b), x->wakeups), ns_or_dash(c, sizeof(c), x->wake_latency_ns, x->wakeups),
			fmt_count(d, sizeof(d), th->voluntary_cs));
		if (m->thread_progress[i])
			fprintf(out, "            per unit: %.3g parks, %.3g switches\n",
				(double)x->parks / (double)m->thread_progress[i],
				(double)th->voluntary_cs / (double)m->thread_progress[i]);
	}
	if (o->limit && shown > (size_t)o->limit)
		fprintf(out, "    ... %zu more threads (use --limit 0)\n", shown - (size_t)o->limit);
	fputc('\n', out);
}

/* ---- JSON ------------------------------------------------------------------ */

static json_object *json_park(const struct park_totals *t)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "parks", ju64(t->parks));
	json_object_object_add(o, "park_ns", ju64(t->park_ns));
	json_object_object_add(o, "wakeups", ju64(t->wakeups));
	json_object_object_add(o, "wake_latency_ns", ju64(t->wake_latency_ns));
	json_object_object_add(o, "avg_wake_latency_ns", jdiv(t->wake_latency_ns, t->wakeups));
	json_object_object_add(o, "max_wake_latency_ns", ju64(t->max_wake_latency_ns));
	json_object_object_add(o, "wakes_sent", ju64(t->wakes_sent));
	json_object_object_add(o, "wakes_unwaited", ju64(t->wakes_unwaited));
	json_object_object_add(o, "futile_wakes", ju64(t->futile_wakes));
	json_object_object_add(o, "broadcasts", ju64(t->broadcasts));
	json_object_object_add(o, "broadcast_woken", ju64(t->broadcast_woken));
	json_object_object_add(o, "broadcast_back_to_sleep", ju64(t->broadcast_back_to_sleep));
	return o;
}

json_object *prims__json_park_wake(const struct model *m)
{
	const struct profile *p = m->p;
	json_object *pw = json_park(&m->park);
	uint64_t vol = 0;
	for (size_t i = 0; i < p->nthreads; i++)
		vol += p->threads[i].voluntary_cs;
	json_object_object_add(pw, "voluntary_switches", ju64(vol));
	json_object_object_add(pw, "progress_units", ju64(m->total_progress));
	json_object_object_add(pw, "parks_per_unit", jratio(m->park.parks, m->total_progress));
	json_object_object_add(pw, "voluntary_switches_per_unit", jratio(vol, m->total_progress));
	json_object *objs = json_object_new_array();
	for (size_t i = 0; i < m->nparks; i++) {
		const struct object_row *r = m->parks[i];
		struct park_totals x = { 0 };
		model__park_add(&x, r->obj->o.kind, &r->total);
		json_object *o = json_park(&x);
		json_object_object_add(o, "name", jstr(r->name));
		json_object_object_add(o, "kind", jstr(kind_name(r->obj->o.kind)));
		json_object_array_add(objs, o);
	}
	json_object_object_add(pw, "objects", objs);
	return pw;
}

void prims__json_thread(json_object *o, const struct model *m, size_t i)
{
	const struct profile *p = m->p;
	const struct park_totals *x = &m->thread_park[i];
	json_object_object_add(o, "spin_ns", ju64(m->thread_spin_ns[i]));
	json_object *by_kind = json_object_new_object();
	for (uint32_t k = 1; k < CV_OBJ_KIND_COUNT; k++)
		json_object_object_add(by_kind, kind_name(k), ju64(m->thread_kind_wait[i * CV_OBJ_KIND_COUNT + k]));
	json_object_object_add(o, "wait_ns_by_kind", by_kind);
	json_object *pw = json_park(x);
	json_object_object_add(pw, "progress_units", ju64(m->thread_progress[i]));
	json_object_object_add(pw, "parks_per_unit", jratio(x->parks, m->thread_progress[i]));
	json_object_object_add(pw, "voluntary_switches_per_unit",
			       jratio(p->threads[i].voluntary_cs, m->thread_progress[i]));
	json_object_object_add(o, "park_wake", pw);
	json_object_object_add(o, "parks", ju64(x->parks));
	json_object_object_add(o, "voluntary_switches_per_unit",
			       jratio(p->threads[i].voluntary_cs, m->thread_progress[i]));
}
