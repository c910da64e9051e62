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
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "primitives.h"
#include "profile.h"
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
		fprintf(out, "  %-28s read: %s acquired, %s waited, %s; write: %s acquired, %s waited, %s\n", "",
			fmt_count(a, sizeof(a), s->rd_acquisitions), fmt_count(b, sizeof(b), s->rd_contended),
			fmt_ns(c, sizeof(c), (double)s->rd_wait_ns), fmt_count(d, sizeof(d), wa),
			fmt_count(e, sizeof(e), wc), fmt_ns(f, sizeof(f), (double)wn));
		if (s->wr_behind_readers)
			fprintf(out, "  %-28s writers waited behind readers %s times, %s in all\n", "",
				fmt_count(a, sizeof(a), s->wr_behind_readers),
				fmt_ns(b, sizeof(b), (double)s->wr_behind_readers_ns));
		break;
	}
	case CV_OBJ_SPIN:
		if (s->wait_ns)
			fprintf(out, "  %-28s spinning: %s on-CPU in %s contended acquisitions\n", "",
				fmt_ns(a, sizeof(a), (double)s->wait_ns), fmt_count(b, sizeof(b), s->contended));
		break;
	case CV_OBJ_FUTEX:
		fprintf(out, "  %-28s futex: %s waits slept (%s woken), %s found the word changed; "
			"%s wakes woke %s threads, %s woke nobody\n", "",
			fmt_count(a, sizeof(a), s->waits), fmt_count(b, sizeof(b), s->contended),
			fmt_count(c, sizeof(c), s->futex_eagain), fmt_count(d, sizeof(d), s->signals),
			fmt_count(e, sizeof(e), s->futex_woken), fmt_count(f, sizeof(f), s->signals_unwaited));
		break;
	}
}

static size_t rows_shown(size_t n, const struct report_options *o)
{
	return o->limit && (size_t)o->limit < n ? (size_t)o->limit : n;
}

static void more(size_t shown, size_t n, FILE *out)
{
	if (shown < n)
		fprintf(out, "  ... %zu more (use --limit 0)\n", n - shown);
}

static void text_sems(const struct model *m, const struct report_options *o, FILE *out)
{
	if (!m->nsems)
		return;
	fprintf(out, "Semaphores, by total wait\n");
	fprintf(out, "  %-28s %9s %10s %9s %9s %10s %14s %16s %9s\n", "semaphore", "blocked", "wait total",
		"avg", "max", "acquired", "trywait (fail)", "posts (no waiter)", "timeouts");
	size_t n = rows_shown(m->nsems, o);
	for (size_t i = 0; i < n; i++) {
		const struct cv_stats *s = &m->sems[i]->total;
		char a[32], b[32], c[32], d[32], e[32], tw[48], po[48], x[32], y[32];
		snprintf(tw, sizeof(tw), "%s (%s)", fmt_count(x, sizeof(x), s->trylocks), fmt_count(y, sizeof(y), s->trylock_failures));
		snprintf(po, sizeof(po), "%s (%s)", fmt_count(x, sizeof(x), s->signals), fmt_count(y, sizeof(y), s->signals_unwaited));
		fprintf(out, "  %-28s %9s %10s %9s %9s %10s %14s %16s %9s\n", m->sems[i]->name,
			fmt_count(a, sizeof(a), s->waits), fmt_ns(b, sizeof(b), (double)s->wait_ns),
			ns_or_dash(c, sizeof(c), s->wait_ns, s->waits),
			s->waits ? fmt_ns(d, sizeof(d), (double)s->max_wait_ns) : "-",
			fmt_count(e, sizeof(e), s->acquisitions), tw, po, fmt_count(x, sizeof(x), s->timeouts));
	}
	more(n, m->nsems, out);
	fputc('\n', out);
}

static void text_barriers(const struct model *m, const struct report_options *o, FILE *out)
{
	if (!m->nbarriers)
		return;
	fprintf(out, "Barriers, by total wait (imbalance: first to last arrival of a round)\n");
	fprintf(out, "  %-28s %6s %9s %10s %10s %9s %13s %13s\n", "barrier", "count", "rounds", "arrivals",
		"wait total", "avg", "imbalance avg", "imbalance max");
	size_t n = rows_shown(m->nbarriers, o);
	for (size_t i = 0; i < n; i++) {
		const struct object_row *r = m->barriers[i];
		const struct cv_stats *s = &r->total;
		char a[32], b[32], c[32], d[32], e[32], f[32];
		fprintf(out, "  %-28s %6u %9s %10s %10s %9s %13s %13s\n", r->name, r->obj->o.flags,
			fmt_count(a, sizeof(a), s->rounds), fmt_count(b, sizeof(b), s->waits),
			fmt_ns(c, sizeof(c), (double)s->wait_ns), ns_or_dash(d, sizeof(d), s->wait_ns, s->waits),
			ns_or_dash(e, sizeof(e), s->imbalance_ns, s->rounds),
			s->rounds ? fmt_ns(f, sizeof(f), (double)s->max_imbalance_ns) : "-");
	}
	more(n, m->nbarriers, out);
	fputc('\n', out);
}

static void text_futexes(const struct model *m, const struct report_options *o, FILE *out)
{
	if (!m->nfutexes)
		return;
	fprintf(out, "Futex words (syscall(SYS_futex): Rust std, C++ atomic wait, direct callers), by total wait\n");
	fprintf(out, "  %-28s %-5s %9s %10s %9s %9s %8s %9s %9s %9s %8s %6s\n", "futex", "role", "waits",
		"wait total", "avg", "max", "EAGAIN", "wakes", "woken", "(nobody)", "requeue", "PI");
	size_t n = rows_shown(m->nfutexes, o);
	for (size_t i = 0; i < n; i++) {
		const struct object_row *r = m->futexes[i];
		const struct cv_stats *s = &r->total;
		char a[32], b[32], c[32], d[32], e[32], f[32], g[32], h[32], k[32], l[32];
		fprintf(out, "  %-28s %-5s %9s %10s %9s %9s %8s %9s %9s %9s %8s %6s\n", r->name, r->type,
			fmt_count(a, sizeof(a), s->waits), fmt_ns(b, sizeof(b), (double)s->wait_ns),
			ns_or_dash(c, sizeof(c), s->wait_ns, s->waits),
			s->waits ? fmt_ns(d, sizeof(d), (double)s->max_wait_ns) : "-",
			fmt_count(e, sizeof(e), s->futex_eagain), fmt_count(f, sizeof(f), s->signals),
			fmt_count(g, sizeof(g), s->futex_woken), fmt_count(h, sizeof(h), s->signals_unwaited),
			fmt_count(k, sizeof(k), s->requeues), fmt_count(l, sizeof(l), s->pi_ops));
	}
	more(n, m->nfutexes, out);
	fputc('\n', out);
}

static void text_park(const struct model *m, const struct report_options *o, FILE *out)
{
	const struct profile *p = m->p;
	const struct park_totals *t = &m->park;
	if (!m->nparks)
		return;
	char a[32], b[32], c[32], d[32], e[32], f[32], g[32];
	fprintf(out, "Park and wake (condvars, semaphores, barriers, futexes)\n");
	fprintf(out, "  %-28s %-9s %9s %9s %12s %11s %16s %8s\n", "object", "kind", "parks", "wake-ups",
		"wake latency", "latency max", "wakes (nobody)", "futile");
	size_t n = rows_shown(m->nparks, o);
	for (size_t i = 0; i < n; i++) {
		const struct object_row *r = m->parks[i];
		struct park_totals x = { 0 };
		model__park_add(&x, r->obj->o.kind, &r->total);
		char sent[48];
		snprintf(sent, sizeof(sent), "%s (%s)", fmt_count(a, sizeof(a), x.wakes_sent),
			 fmt_count(b, sizeof(b), x.wakes_unwaited));
		fprintf(out, "  %-28s %-9s %9s %9s %12s %11s %16s %8s\n", r->name, kind_name(r->obj->o.kind),
			fmt_count(c, sizeof(c), x.parks), fmt_count(d, sizeof(d), x.wakeups),
			ns_or_dash(e, sizeof(e), x.wake_latency_ns, x.wakeups),
			x.wakeups ? fmt_ns(f, sizeof(f), (double)x.max_wake_latency_ns) : "-", sent,
			fmt_count(g, sizeof(g), x.futile_wakes));
	}
	more(n, m->nparks, out);
	fprintf(out, "  In all: %s parks (%s blocked), %s woken by a wake the shim saw, %s from wake to running "
		"on average (max %s); %s of %s wakes sent found nobody waiting; %s futile wake-ups",
		fmt_count(a, sizeof(a), t->parks), fmt_ns(b, sizeof(b), (double)t->park_ns),
		fmt_count(c, sizeof(c), t->wakeups), ns_or_dash(d, sizeof(d), t->wake_latency_ns, t->wakeups),
		fmt_ns(e, sizeof(e), (double)t->max_wake_latency_ns), fmt_count(f, sizeof(f), t->wakes_unwaited),
		fmt_count(g, sizeof(g), t->wakes_sent), fmt_count((char[32]){0}, 32, t->futile_wakes));
	if (t->broadcasts)
		fprintf(out, "; broadcasts woke %.1f waiters each, %s of %s went back to sleep",
			(double)t->broadcast_woken / (double)t->broadcasts,
			fmt_count(a, sizeof(a), t->broadcast_back_to_sleep), fmt_count(b, sizeof(b), t->broadcast_woken));
	fputs(".\n", out);
	if (m->total_progress) {
		uint64_t vol = 0;
		for (size_t i = 0; i < p->nthreads; i++)
			vol += p->threads[i].voluntary_cs;
		fprintf(out, "  Per progress unit (convoy.h): %.3f parks, %.3f voluntary context switches.\n",
			(double)t->parks / (double)m->total_progress, (double)vol / (double)m->total_progress);
	}
	fputs("  by thread (parks, wake-ups, their average latency, voluntary switches, per progress unit)\n", out);
	size_t shown = 0;
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct park_totals *x = &m->thread_park[i];
		const struct cv_thread_rec *th = &p->threads[i];
		if (!x->parks && !x->wakes_sent)
			continue;
		if (o->limit && shown++ >= (size_t)o->limit)
			continue;
		char per[96] = "";
		if (m->thread_progress[i])
			snprintf(per, sizeof(per), "  per unit: %.3f parks, %.3f switches",
				 (double)x->parks / (double)m->thread_progress[i],
				 (double)th->voluntary_cs / (double)m->thread_progress[i]);
		fprintf(out, "    %-7d %-15s %9s parks %9s woken %9s avg %9s switches%s\n", th->tid,
			th->name[0] ? th->name : "-", fmt_count(a, sizeof(a), x->parks),
			fmt_count(b, sizeof(b), x->wakeups), ns_or_dash(c, sizeof(c), x->wake_latency_ns, x->wakeups),
			fmt_count(d, sizeof(d), th->voluntary_cs), per);
	}
	fputc('\n', out);
}

void prims__text(const struct model *m, const struct report_options *o, FILE *out)
{
	text_sems(m, o, out);
	text_barriers(m, o, out);
	text_futexes(m, o, out);
	text_park(m, o, out);
}

/* ---- JSON ------------------------------------------------------------------ */

static void json_wake(json_object *o, const struct cv_stats *s)
{
	json_object_object_add(o, "wakeups", ju64(s->wakeups));
	json_object_object_add(o, "wake_latency_ns", ju64(s->wake_latency_ns));
	json_object_object_add(o, "avg_wake_latency_ns", jdiv(s->wake_latency_ns, s->wakeups));
	json_object_object_add(o, "max_wake_latency_ns", ju64(s->max_wake_latency_ns));
}

static void json_lock_base(json_object *o, const struct cv_stats *s, uint64_t acquisitions)
{
	json_object_object_add(o, "acquisitions", ju64(acquisitions));
	json_object_object_add(o, "contended", ju64(s->contended));
	json_object_object_add(o, "wait_ns", ju64(s->wait_ns));
	json_object_object_add(o, "max_wait_ns", ju64(s->max_wait_ns));
	json_object_object_add(o, "waits", ju64(s->waits));
	json_object_object_add(o, "timeouts", ju64(s->timeouts));
}

void prims__json_stats(json_object *o, const struct profile_object *obj, const struct cv_stats *s)
{
	switch (obj->o.kind) {
	case CV_OBJ_MUTEX:   /* hand-offs: from the unlock that woke a waiter to it holding the lock */
		json_wake(o, s);
		break;
	case CV_OBJ_COND:
		json_wake(o, s);
		json_object_object_add(o, "broadcast_woken", ju64(s->broadcast_woken));
		json_object_object_add(o, "futile_wakes", ju64(s->futile_wakes));
		json_object_object_add(o, "futile_after_broadcast", ju64(s->futile_after_broadcast));
		break;
	case CV_OBJ_RWLOCK:
		json_lock_base(o, s, s->acquisitions);
		json_object_object_add(o, "trylocks", ju64(s->trylocks));
		json_object_object_add(o, "trylock_failures", ju64(s->trylock_failures));
		json_object_object_add(o, "read_acquisitions", ju64(s->rd_acquisitions));
		json_object_object_add(o, "write_acquisitions", ju64(s->acquisitions - s->rd_acquisitions));
		json_object_object_add(o, "read_contended", ju64(s->rd_contended));
		json_object_object_add(o, "write_contended", ju64(s->contended - s->rd_contended));
		json_object_object_add(o, "read_waits", ju64(s->rd_waits));
		json_object_object_add(o, "write_waits", ju64(s->waits - s->rd_waits));
		json_object_object_add(o, "read_wait_ns", ju64(s->rd_wait_ns));
		json_object_object_add(o, "write_wait_ns", ju64(s->wait_ns - s->rd_wait_ns));
		json_object_object_add(o, "read_max_wait_ns", ju64(s->rd_max_wait_ns));
		json_object_object_add(o, "write_max_wait_ns", ju64(s->wr_max_wait_ns));
		json_object_object_add(o, "writer_waits_behind_readers", ju64(s->wr_behind_readers));
		json_object_object_add(o, "writer_behind_readers_wait_ns", ju64(s->wr_behind_readers_ns));
		break;
	case CV_OBJ_SPIN:
		json_lock_base(o, s, s->acquisitions);
		json_object_object_add(o, "trylocks", ju64(s->trylocks));
		json_object_object_add(o, "trylock_failures", ju64(s->trylock_failures));
		json_object_object_add(o, "spin_ns", ju64(s->wait_ns));
		json_object_object_add(o, "max_spin_ns", ju64(s->max_wait_ns));
		json_object_object_add(o, "on_cpu", json_object_new_boolean(1));
		break;
	case CV_OBJ_FUTEX:
		/* Only acquisitions that slept reach the kernel: a lower bound. */
		json_lock_base(o, s, s->acquisitions);
		json_object_object_add(o, "eagain", ju64(s->futex_eagain));
		json_object_object_add(o, "interrupts", ju64(s->interrupts));
		json_object_object_add(o, "wakes", ju64(s->signals));
		json_object_object_add(o, "woken", ju64(s->futex_woken));
		json_object_object_add(o, "wakes_unwaited", ju64(s->signals_unwaited));
		json_object_object_add(o, "wake_ops", ju64(s->wake_ops));
		json_object_object_add(o, "requeues", ju64(s->requeues));
		json_object_object_add(o, "requeued", ju64(s->requeued));
		json_object_object_add(o, "pi_ops", ju64(s->pi_ops));
		json_wake(o, s);
		break;
	case CV_OBJ_SEM:
		json_object_object_add(o, "acquisitions", ju64(s->acquisitions));
		json_object_object_add(o, "contended", ju64(s->contended));
		json_object_object_add(o, "waits", ju64(s->waits));
		json_object_object_add(o, "wait_ns", ju64(s->wait_ns));
		json_object_object_add(o, "max_wait_ns", ju64(s->max_wait_ns));
		json_object_object_add(o, "timeouts", ju64(s->timeouts));
		json_object_object_add(o, "interrupts", ju64(s->interrupts));
		json_object_object_add(o, "trywaits", ju64(s->trylocks));
		json_object_object_add(o, "trywait_failures", ju64(s->trylock_failures));
		json_object_object_add(o, "posts", ju64(s->signals));
		json_object_object_add(o, "posts_unwaited", ju64(s->signals_unwaited));
		json_wake(o, s);
		break;
	case CV_OBJ_BARRIER:
		json_object_object_add(o, "waits", ju64(s->waits));
		json_object_object_add(o, "wait_ns", ju64(s->wait_ns));
		json_object_object_add(o, "max_wait_ns", ju64(s->max_wait_ns));
		json_object_object_add(o, "rounds", ju64(s->rounds));
		json_object_object_add(o, "imbalance_ns", ju64(s->imbalance_ns));
		json_object_object_add(o, "avg_imbalance_ns", jdiv(s->imbalance_ns, s->rounds));
		json_object_object_add(o, "max_imbalance_ns", ju64(s->max_imbalance_ns));
		json_wake(o, s);
		break;
	}
}

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
