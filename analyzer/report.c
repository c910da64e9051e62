/* report.c — the report of one profile.
 *
 * The profile holds per-thread records; the report sums them per object
 * (each object is one generation of one address), names objects (the
 * program's own name, else the ELF symbol that contains the address, else the
 * kind and address), and ranks locks by the time threads lost waiting for
 * them. The JSON form follows the contract in docs/report-json.md.
 */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"
#include "html.h"
#include "model.h"
#include "primitives.h"
#include "profile.h"
#include "report.h"
#include "stack.h"
#include "stacks.h"
#include "symbols.h"
#include "util.h"

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

static const char *thread_label(const struct profile *p, uint32_t index, char *buf, size_t size)
{
	const struct cv_thread_rec *t = &p->threads[index];
	if (t->name[0])
		snprintf(buf, size, "%d %s", t->tid, t->name);
	else
		snprintf(buf, size, "%d", t->tid);
	return buf;
}

/* ---- text --------------------------------------------------------------- */

static void text_header(const struct model *m, FILE *out)
{
	const struct profile *p = m->p;
	char a[32];
	fprintf(out, "convoy report: %s\n", p->cmdline && *p->cmdline ? p->cmdline : p->process.comm);
	fprintf(out, "  pid %d%s, %s profiled, %zu thread%s, %zu lock%s, %zu condvar%s; ended: %s\n",
		p->process.pid, p->process.forked ? " (forked child)" : "", fmt_ns(a, sizeof(a), m->wall_ns),
		p->nthreads, p->nthreads == 1 ? "" : "s", m->nlocks, m->nlocks == 1 ? "" : "s",
		m->nconds, m->nconds == 1 ? "" : "s",
		exit_text(p->process.exit_reason));
	fprintf(out, "  profile %s\n\n", p->path);
}

/* The first thing to read: where blocked time went, in one sentence. */
static void text_summary(const struct model *m, FILE *out)
{
	char a[32], b[32], c[32];
	if (!m->nlocks || !m->total_lock_wait) {
		fprintf(out, "No thread waited for a mutex%s.\n\n",
			m->nlocks ? "" : " (no mutex was used)");
		return;
	}
	const struct object_row *top = m->locks[0];
	int mutexes_only = 1;   /* the wording: other kinds (spinlocks) wait without blocking */
	for (size_t i = 0; i < m->nlocks; i++)
		mutexes_only &= m->locks[i]->obj->o.kind == CV_OBJ_MUTEX;
	fprintf(out, mutexes_only ? "Threads spent %s blocked on mutexes (%s of their combined lifetime); "
		"%s accounts for %s of it: %s of its %s acquisitions waited, %s on average.\n\n" :
		"Threads spent %s waiting for locks (%s of their combined lifetime); "
		"%s accounts for %s of it: %s of its %s acquisitions waited, %s on average.\n\n",
		fmt_ns(a, sizeof(a), (double)m->total_lock_wait),
		fmt_pct(b, sizeof(b), ratio(m->total_lock_wait, m->total_thread_ns)),
		top->name, fmt_pct(c, sizeof(c), ratio(top->total.wait_ns, m->total_lock_wait)),
		fmt_pct((char[32]){0}, 32, ratio(top->total.contended, top->total.acquisitions)),
		fmt_count((char[32]){0}, 32, top->total.acquisitions),
		fmt_ns((char[32]){0}, 32, top->total.waits ? (double)top->total.wait_ns / (double)top->total.waits : 0));
}

/* Whether hardware counters were available, in words. */
static const char *pmu_status(const struct profile *p, char *buf, size_t size)
{
	if (p->process.perf_error)
		snprintf(buf, size, "unavailable: no hardware PMU (perf_event_open: %s)", strerror(p->process.perf_error));
	else if (p->process.perf_valid >> CV_PERF_CYCLES)
		snprintf(buf, size, "available");
	else
		snprintf(buf, size, "not opened (CONVOY_PERF=0)");
	return buf;
}

/* Where the busy threads' time went, one line. */
static void text_stack(const struct run_stack *st, FILE *out)
{
	char w[32];
	fprintf(out, "Where the time went: %d busy thread%s × %s =", st->threads, st->threads == 1 ? "" : "s",
		fmt_ns(w, sizeof(w), st->wall_ns));
	int first = 1;
	for (int k = 0; k < STACK_N; k++) {
		double share = st->budget_ns > 0 ? st->c[k] / st->budget_ns : 0;
		if (k == STACK_INFLATION || (fabs(share) < 0.005 && k != STACK_USEFUL))
			continue;
		fprintf(out, "%s %.0f%% %s", first ? "" : ",", share * 100, stack_phrases[k]);
		first = 0;
	}
	fputs(".\n\n", out);
}

/* --stacks: 3 per lock in text unless given (convoy run and scale too). */
static int text_stacks(const struct report_options *o)
{
	return o->stacks_given ? o->stacks : 3;
}

static size_t rows_to_show(size_t n, const struct report_options *o)
{
	return o->limit && (size_t)o->limit < n ? (size_t)o->limit : n;
}

static void text_locks(const struct model *m, const struct report_options *o, FILE *out)
{
	const struct profile *p = m->p;
	if (!m->nlocks)
		return;
	int mutexes_only = 1;
	for (size_t i = 0; i < m->nlocks; i++)
		mutexes_only &= m->locks[i]->obj->o.kind == CV_OBJ_MUTEX;
	fprintf(out, "%s, by total wait (hold time sampled on 1 in %u acquisitions)\n",
		mutexes_only ? "Mutexes" : "Locks (mutexes, rwlocks, spinlocks: on-CPU, futex words)",
		p->process.hold_sample_period);
	fprintf(out, "  %-28s %-10s %12s %9s %10s %9s %9s %9s %10s\n", mutexes_only ? "mutex" : "lock", "type", "acquired",
		"contended", "wait total", "avg", "max", "hold avg", "hand-offs");
	size_t n = rows_to_show(m->nlocks, o);
	for (size_t i = 0; i < n; i++) {
		const struct object_row *r = m->locks[i];
		const struct cv_stats *s = &r->total;
		char acq[32], pct[32], tot[32], avg[32], max[32], hold[32], ho[32];
		fprintf(out, "  %-28s %-10s %12s %9s %10s %9s %9s %9s %10s\n", r->name, r->type,
			fmt_count(acq, sizeof(acq), s->acquisitions),
			fmt_pct(pct, sizeof(pct), ratio(s->contended, s->acquisitions)),
			fmt_ns(tot, sizeof(tot), (double)s->wait_ns),
			s->waits ? fmt_ns(avg, sizeof(avg), (double)s->wait_ns / (double)s->waits) : "-",
			s->waits ? fmt_ns(max, sizeof(max), (double)s->max_wait_ns) : "-",
			s->hold_samples ? fmt_ns(hold, sizeof(hold), (double)s->hold_ns / (double)s->hold_samples) : "-",
			fmt_count(ho, sizeof(ho), s->handoffs));
		if (s->trylocks || s->timeouts)
			fprintf(out, "  %-28s trylock: %s calls, %s failed (EBUSY); timeouts: %s\n", "",
				fmt_count(acq, sizeof(acq), s->trylocks), fmt_count(pct, sizeof(pct), s->trylock_failures),
				fmt_count(tot, sizeof(tot), s->timeouts));
		prims__text_lock_detail(r, out);   /* rwlock sides, spin time, futex wakes */
		stacks__text(out, m->syms, r->obj->o.id, s->wait_ns, text_stacks(o), o->verbose, "      ");
		if (r->nthreads < 2 && !o->verbose)
			continue;
		for (size_t k = 0; k < p->nstats; k++) {
			const struct cv_stats *t = &p->stats[k];
			if (t->object != r->obj->o.id)
				continue;
			char who[64];
			fprintf(out, "  %-28s thread %-18s %12s %9s %10s\n", "",
				thread_label(p, t->thread, who, sizeof(who)),
				fmt_count(acq, sizeof(acq), t->acquisitions),
				fmt_pct(pct, sizeof(pct), ratio(t->contended, t->acquisitions)),
				fmt_ns(tot, sizeof(tot), (double)t->wait_ns));
		}
	}
	if (n < m->nlocks)
		fprintf(out, "  ... %zu more (use --limit 0)\n", m->nlocks - n);
	fputc('\n', out);
}

static void text_conds(const struct model *m, const struct report_options *o, FILE *out)
{
	if (!m->nconds)
		return;
	fprintf(out, "Condition variables, by total wait\n");
	fprintf(out, "  %-28s %10s %10s %9s %9s %9s %16s %16s\n", "condvar", "waits", "wait total",
		"avg", "max", "timeouts", "signals (none)", "broadcasts (none)");
	size_t n = rows_to_show(m->nconds, o);
	for (size_t i = 0; i < n; i++) {
		const struct cv_stats *s = &m->conds[i]->total;
		char w[32], tot[32], avg[32], max[32], to[32], sig[48], bc[48], x[32], y[32];
		snprintf(sig, sizeof(sig), "%s (%s)", fmt_count(x, sizeof(x), s->signals),
			 fmt_count(y, sizeof(y), s->signals_unwaited));
		snprintf(bc, sizeof(bc), "%s (%s)", fmt_count(x, sizeof(x), s->broadcasts),
			 fmt_count(y, sizeof(y), s->broadcasts_unwaited));
		fprintf(out, "  %-28s %10s %10s %9s %9s %9s %16s %16s\n", m->conds[i]->name,
			fmt_count(w, sizeof(w), s->waits), fmt_ns(tot, sizeof(tot), (double)s->wait_ns),
			s->waits ? fmt_ns(avg, sizeof(avg), (double)s->wait_ns / (double)s->waits) : "-",
			s->waits ? fmt_ns(max, sizeof(max), (double)s->max_wait_ns) : "-",
			fmt_count(to, sizeof(to), s->timeouts), sig, bc);
		stacks__text(out, m->syms, m->conds[i]->obj->o.id, s->wait_ns, text_stacks(o), o->verbose, "      ");
	}
	if (n < m->nconds)
		fprintf(out, "  ... %zu more (use --limit 0)\n", m->nconds - n);
	fputs("  (none): signals and broadcasts sent while no thread was waiting for one\n\n", out);
}

static void text_threads(const struct model *m, const struct report_options *o, struct syms *syms, FILE *out)
{
	const struct profile *p = m->p;
	fprintf(out, "Threads\n");
	fprintf(out, "  %-7s %-15s %-22s %-7s %9s %9s %9s %13s %9s %9s %9s\n", "tid", "name",
		"start routine", "creator", "lifetime", "in create", "cpu", "switches v/i", "lock wait",
		"cond wait", "join wait");
	size_t n = rows_to_show(p->nthreads, o);
	for (size_t i = 0; i < n; i++) {
		const struct cv_thread_rec *t = &p->threads[i];
		char fn[200], life[32], cr[32], cpu[32], sw[48], lw[32], cw[32], jw[32], creator[16];
		const char *routine = t->flags & CV_THREAD_MAIN ? "(main)" :
				      t->start_routine ? syms__name(syms, t->start_routine, fn, sizeof(fn)) : "(untracked)";
		if (!routine) {
			snprintf(fn, sizeof(fn), "0x%llx", (unsigned long long)t->start_routine);
			routine = fn;
		}
		snprintf(creator, sizeof(creator), t->creator_tid ? "%d" : "-", t->creator_tid);
		snprintf(sw, sizeof(sw), "%llu/%llu", (unsigned long long)t->voluntary_cs,
			 (unsigned long long)t->involuntary_cs);
		fprintf(out, "  %-7d %-15s %-22.22s %-7s %9s %9s %9s %13s %9s %9s %9s\n", t->tid,
			t->name[0] ? t->name : "-", routine, creator,
			fmt_ns(life, sizeof(life), (double)(t->end_ns - t->start_ns)),
			t->create_ns ? fmt_ns(cr, sizeof(cr), (double)t->create_ns) : "-",
			fmt_ns(cpu, sizeof(cpu), (double)t->cpu_ns), sw,
			fmt_ns(lw, sizeof(lw), (double)m->thread_lock_wait[i]),
			fmt_ns(cw, sizeof(cw), (double)m->thread_cond_wait[i]),
			fmt_ns(jw, sizeof(jw), (double)t->join_wait_ns));
	}
	if (n < p->nthreads)
		fprintf(out, "  ... %zu more (use --limit 0)\n", p->nthreads - n);
}

/* Annotation counters: one row per (kind, name) with the total and the
 * threads that have it; all-zero counters are only counted. */
static void text_counters(const struct model *m, FILE *out)
{
	const struct profile *p = m->p;
	char *done = xcalloc(p->ncounters, 1);
	size_t zero = 0, shown = 0;
	for (size_t i = 0; i < p->ncounters; i++) {
		if (done[i])
			continue;
		const struct profile_counter *c = &p->counters[i];
		int64_t total = 0;
		char line[512] = "";
		size_t len = 0, threads = 0;
		for (size_t k = i; k < p->ncounters; k++) {
			const struct profile_counter *d = &p->counters[k];
			if (done[k] || d->c.kind != c->c.kind || strcmp(d->name, c->name))
				continue;
			done[k] = 1;
			total += d->c.value;
			if (threads++ < 6 && len < sizeof(line) - 64) {
				char who[64], v[32];
				len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s %s", len ? ", " : "",
							thread_label(p, d->c.thread, who, sizeof(who)),
							fmt_count(v, sizeof(v), (uint64_t)(d->c.value < 0 ? -d->c.value : d->c.value)));
			}
		}
		if (!total) {
			zero++;
			continue;
		}
		if (!shown++)
			fprintf(out, "\nCounters (convoy.h annotations)\n  %-9s %-24s %14s  %s\n", "kind", "name", "total", "by thread (tid name value)");
		char tot[32];
		fprintf(out, "  %-9s %-24s %14s  %s%s\n", c->c.kind == CV_COUNTER_PROGRESS ? "progress" : "counter",
			c->name, total < 0 ? "negative" : fmt_count(tot, sizeof(tot), (uint64_t)total), line,
			threads > 6 ? ", ..." : "");
	}
	if (zero)
		fprintf(out, "%s  (%zu counter%s zero on every thread)\n", shown ? "" : "\nCounters (convoy.h annotations)\n",
			zero, zero == 1 ? "" : "s");
	free(done);
}

/* ---- JSON --------------------------------------------------------------- */

static json_object *jstr(const char *s) { return json_object_new_string(s ? s : ""); }
static json_object *ju64(uint64_t v) { return json_object_new_int64((int64_t)v); }

static json_object *jaddr(uint64_t addr)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)addr);
	return json_object_new_string(buf);
}

static json_object *json_histogram(const struct cv_stats *s)
{
	json_object *h = json_object_new_array();
	for (int i = 0; i < CV_HIST_BUCKETS; i++) {
		if (!s->wait_hist[i])
			continue;
		json_object *b = json_object_new_object();
		json_object_object_add(b, "ge_ns", ju64(i ? 1ull << i : 0));
		json_object_object_add(b, "lt_ns", ju64(i + 1 < 64 ? 1ull << (i + 1) : UINT64_MAX));
		json_object_object_add(b, "count", ju64(s->wait_hist[i]));
		json_object_array_add(h, b);
	}
	return h;
}

static void json_mutex_stats(json_object *o, const struct cv_stats *s)
{
	json_object_object_add(o, "acquisitions", ju64(s->acquisitions));
	json_object_object_add(o, "contended", ju64(s->contended));
	json_object_object_add(o, "wait_ns", ju64(s->wait_ns));
	json_object_object_add(o, "max_wait_ns", ju64(s->max_wait_ns));
	json_object_object_add(o, "waits", ju64(s->waits));
	json_object_object_add(o, "timeouts", ju64(s->timeouts));
	json_object_object_add(o, "trylocks", ju64(s->trylocks));
	json_object_object_add(o, "trylock_failures", ju64(s->trylock_failures));
	json_object_object_add(o, "handoffs", ju64(s->handoffs));
	json_object_object_add(o, "hold_samples", ju64(s->hold_samples));
	json_object_object_add(o, "hold_avg_ns",
			       s->hold_samples ? ju64(s->hold_ns / s->hold_samples) : NULL);
	json_object_object_add(o, "max_hold_ns", s->hold_samples ? ju64(s->max_hold_ns) : NULL);
}

static void json_cond_stats(json_object *o, const struct cv_stats *s)
{
	json_object_object_add(o, "waits", ju64(s->waits));
	json_object_object_add(o, "wait_ns", ju64(s->wait_ns));
	json_object_object_add(o, "max_wait_ns", ju64(s->max_wait_ns));
	json_object_object_add(o, "timeouts", ju64(s->timeouts));
	json_object_object_add(o, "signals", ju64(s->signals));
	json_object_object_add(o, "broadcasts", ju64(s->broadcasts));
	json_object_object_add(o, "signals_unwaited", ju64(s->signals_unwaited));
	json_object_object_add(o, "broadcasts_unwaited", ju64(s->broadcasts_unwaited));
}

/* --stacks for JSON rows (json_object_row is also called back by prims.c). */
static int json_stacks = -1;

static json_object *json_object_row(const struct model *m, const struct object_row *r)
{
	const struct profile *p = m->p;
	json_object *o = json_object_new_object();
	int mutex = r->obj->o.kind == CV_OBJ_MUTEX, cond = r->obj->o.kind == CV_OBJ_COND;
	json_object_object_add(o, "name", jstr(r->name));
	json_object_object_add(o, "kind", jstr(kind_name(r->obj->o.kind)));
	if (r->type[0])
		json_object_object_add(o, "type", jstr(r->type));
	json_object_object_add(o, "addr", jaddr(r->obj->o.addr));
	json_object_object_add(o, "generation", ju64(r->obj->o.generation));
	json_object_object_add(o, "destroyed", json_object_new_boolean(r->obj->o.retired));
	if (mutex || cond)
		(mutex ? json_mutex_stats : json_cond_stats)(o, &r->total);
	prims__json_stats(o, r->obj, &r->total);   /* the other kinds, park/wake */
	if (r->obj->o.kind == CV_OBJ_BARRIER)
		json_object_object_add(o, "count", json_object_new_int64(r->obj->o.flags));
	json_object_object_add(o, "wait_histogram", json_histogram(&r->total));
	stacks__json(o, m->syms, r->obj->o.id, json_stacks);   /* site, first_use, stacks[] */
	json_object *threads = json_object_new_array();
	for (size_t k = 0; k < p->nstats; k++) {
		const struct cv_stats *s = &p->stats[k];
		if (s->object != r->obj->o.id)
			continue;
		json_object *t = json_object_new_object();
		json_object_object_add(t, "tid", json_object_new_int(p->threads[s->thread].tid));
		json_object_object_add(t, "thread", ju64(s->thread));
		if (mutex || cond)
			(mutex ? json_mutex_stats : json_cond_stats)(t, s);
		prims__json_stats(t, r->obj, s);
		json_object_array_add(threads, t);
	}
	json_object_object_add(o, "threads", threads);
	return o;
}

static json_object *json_thread(const struct model *m, size_t i, struct syms *syms)
{
	const struct profile *p = m->p;
	const struct cv_thread_rec *t = &p->threads[i];
	json_object *o = json_object_new_object();
	char fn[200];
	json_object_object_add(o, "index", ju64(t->index));
	json_object_object_add(o, "tid", json_object_new_int(t->tid));
	json_object_object_add(o, "name", jstr(t->name));
	json_object_object_add(o, "main", json_object_new_boolean(t->flags & CV_THREAD_MAIN));
	const char *routine = t->start_routine ? syms__name(syms, t->start_routine, fn, sizeof(fn)) : NULL;
	json_object_object_add(o, "start_routine", routine ? jstr(routine) : t->start_routine ? jaddr(t->start_routine) : NULL);
	json_object_object_add(o, "creator_tid", t->creator_tid ? json_object_new_int(t->creator_tid) : NULL);
	json_object_object_add(o, "start_ns", ju64(t->start_ns - p->process.start_ns));
	json_object_object_add(o, "lifetime_ns", ju64(t->end_ns - t->start_ns));
	json_object_object_add(o, "exited", json_object_new_boolean(t->flags & CV_THREAD_EXITED));
	json_object_object_add(o, "detached", json_object_new_boolean(t->flags & CV_THREAD_DETACHED));
	json_object_object_add(o, "pthread_exit", json_object_new_boolean(t->flags & CV_THREAD_PTHREAD_EXIT));
	json_object_object_add(o, "create_ns", ju64(t->create_ns));
	json_object_object_add(o, "cpu_ns", ju64(t->cpu_ns));
	json_object_object_add(o, "voluntary_switches", ju64(t->voluntary_cs));
	json_object_object_add(o, "involuntary_switches", ju64(t->involuntary_cs));
	json_object_object_add(o, "lock_wait_ns", ju64(m->thread_lock_wait[i]));
	json_object_object_add(o, "cond_wait_ns", ju64(m->thread_cond_wait[i]));
	json_object_object_add(o, "join_wait_ns", ju64(t->join_wait_ns));
	json_object_object_add(o, "joins", ju64(t->joins));
	json_object_object_add(o, "threads_created", ju64(t->threads_created));
	/* Run-queue delay is read only for threads that lived 2 ms (the read costs
	 * more than a shorter thread's life): null when it was not. */
	json_object_object_add(o, "run_delay_ns", t->flags & CV_THREAD_RUNQ ? ju64(t->run_delay_ns) : NULL);
	json_object_object_add(o, "timeslices", t->flags & CV_THREAD_RUNQ ? ju64(t->timeslices) : NULL);
	json_object_object_add(o, "minor_faults", ju64(t->minor_faults));
	json_object_object_add(o, "major_faults", ju64(t->major_faults));
	prims__json_thread(o, m, i);   /* spin_ns, wait_ns_by_kind, park_wake */
	json_object *counters = json_object_new_object(), *progress = json_object_new_object();
	for (size_t k = 0; k < p->ncounters; k++) {
		const struct profile_counter *c = &p->counters[k];
		if (c->c.thread == i)
			json_object_object_add(c->c.kind == CV_COUNTER_PROGRESS ? progress : counters, c->name,
					       json_object_new_int64(c->c.value));
	}
	json_object_object_add(o, "counters", counters);
	json_object_object_add(o, "progress", progress);
	return o;
}

static json_object *json_report(const struct model *m, struct syms *syms)
{
	const struct profile *p = m->p;
	json_object *root = json_object_new_object(), *proc = json_object_new_object();
	json_object_object_add(root, "convoy_report_version", json_object_new_int(1));
	json_object_object_add(proc, "pid", json_object_new_int(p->process.pid));
	json_object_object_add(proc, "ppid", json_object_new_int(p->process.ppid));
	json_object_object_add(proc, "comm", jstr(p->process.comm));
	json_object_object_add(proc, "cmdline", jstr(p->cmdline));
	json_object_object_add(proc, "exe", jstr(p->exe));
	json_object_object_add(proc, "forked", json_object_new_boolean(p->process.forked));
	json_object_object_add(proc, "wall_ns", ju64(p->process.end_ns - p->process.start_ns));
	json_object_object_add(proc, "exit", jstr(exit_text(p->process.exit_reason)));
	json_object_object_add(proc, "hold_sample_period", ju64(p->process.hold_sample_period));
	json_object_object_add(proc, "cpus_online", ju64(p->process.ncpus));
	json_object_object_add(proc, "cpus_allowed", ju64(p->process.cpus_allowed));
	json_object_object_add(proc, "cpu_ns", ju64(p->process.cpu_ns));
	json_object_object_add(proc, "voluntary_switches", ju64(p->process.voluntary_cs));
	json_object_object_add(proc, "involuntary_switches", ju64(p->process.involuntary_cs));
	json_object_object_add(proc, "minor_faults", ju64(p->process.minor_faults));
	json_object_object_add(proc, "major_faults", ju64(p->process.major_faults));
	/* perf_event_open counters: the ones counted, and why the rest are not. */
	static const char *const perf_names[] = {
#define CV_X(sym, name, type, config, hw) [sym] = name,
		CV_PERF_EVENTS(CV_X)
#undef CV_X
	};
	json_object *perf = json_object_new_object(), *missing = json_object_new_array();
	for (int e = 0; e < CV_PERF_COUNT; e++) {
		if (p->process.perf_valid & (1u << e))
			json_object_object_add(perf, perf_names[e], ju64(p->process.perf[e]));
		else
			json_object_array_add(missing, jstr(perf_names[e]));
	}
	json_object_object_add(proc, "perf", perf);
	json_object_object_add(proc, "perf_not_counted", missing);
	char pmu[160];
	json_object_object_add(proc, "pmu", jstr(pmu_status(p, pmu, sizeof(pmu))));
	json_object_object_add(proc, "profile", jstr(p->path));
	json_object_object_add(root, "process", proc);

	json_object *locks = json_object_new_array(), *conds = json_object_new_array(), *threads = json_object_new_array();
	for (size_t i = 0; i < m->nlocks; i++)
		json_object_array_add(locks, json_object_row(m, m->locks[i]));
	for (size_t i = 0; i < m->nconds; i++)
		json_object_array_add(conds, json_object_row(m, m->conds[i]));
	for (size_t i = 0; i < p->nthreads; i++)
		json_object_array_add(threads, json_thread(m, i, syms));
	json_object_object_add(root, "locks", locks);
	json_object_object_add(root, "condvars", conds);
	prims__json_sections(root, m, json_object_row);   /* semaphores, barriers, futexes, park_wake */
	json_object_object_add(root, "threads", threads);
	json_object_object_add(root, "findings", json_object_new_array());   /* filled by report__write */
	return root;
}

int report__write(const struct profile *p, const struct report_options *o, FILE *out)
{
	struct syms *syms = syms__load(p);
	struct model m;
	model__build(&m, p, syms);
	json_stacks = o->stacks_given ? o->stacks : -1;
	/* A single run has no reference: its stack counts all on-CPU time as
	 * useful, at as many threads as were busy (docs/findings.md). */
	struct run_stack st;
	stack__compute(&st, &m, stack__busy_threads(&m), 0, -1);
	struct findings f = { 0 };
	struct run_view view = { &m, &st };
	findings__diagnose(&f, NULL, &view);
	findings__sort(&f);
	if (o->json) {
		json_object *root = json_report(&m, syms);
		json_object *stack = json_object_new_object();
		json_object_object_add(stack, "threads", json_object_new_int(st.threads));
		json_object_object_add(stack, "wall_ns", json_object_new_int64((int64_t)st.wall_ns));
		json_object_object_add(stack, "budget_ns", json_object_new_int64((int64_t)st.budget_ns));
		for (int k = 0; k < STACK_N; k++)
			json_object_object_add(stack, stack_keys[k], json_object_new_int64((int64_t)st.c[k]));
		json_object_object_add(root, "stack", stack);
		json_object_object_add(root, "findings", findings__json(&f));
		fputs(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE), out);
		fputc('\n', out);
		json_object_put(root);
	} else {
		text_header(&m, out);
		text_summary(&m, out);
		text_stack(&st, out);
		findings__print(&f, out);
		fputc('\n', out);
		text_locks(&m, o, out);
		text_conds(&m, o, out);
		prims__text(&m, o, out);   /* semaphores, barriers, futexes, park and wake */
		text_threads(&m, o, syms, out);
		text_counters(&m, out);
		char pmu[160];
		if (!(p->process.perf_valid >> CV_PERF_CYCLES))
			fprintf(out, "\nNot measured: hardware counters (cycles, instructions, cache misses): %s.\n",
				pmu_status(p, pmu, sizeof(pmu)));
	}
	findings__free(&f);
	stack__free(&st);
	model__free(&m);
	syms__free(syms);
	if (fflush(out) != 0 || ferror(out)) {
		cv_error("cannot write the report: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- the command --------------------------------------------------------- */

static void report_usage(FILE *f)
{
	fputs("usage: convoy report [--json | --html FILE] [-v] [--limit N] PROFILE\n"
	      "\n"
	      "Prints what a profile recorded: mutexes ranked by the time threads waited\n"
	      "for them, condition variables, and threads.\n"
	      "\n"
	      "  --json       one JSON object (docs/report-json.md) instead of text\n"
	      "  --html FILE  write the report as a self-contained web page to FILE\n"
	      "  -v           every thread's share of every mutex\n"
	      "  --limit N    at most N rows per table (default 20; 0 = all)\n"
	      "  --stacks N   the N call stacks that waited longest on each lock and\n"
	      "               condvar (default 3 in text, all in JSON; 0 = none)\n"
	      "\n"
	      "example:\n"
	      "  convoy report convoy-myprog-1234.convoy\n", f);
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "html", required_argument, NULL, 'H' },
		{ "limit", required_argument, NULL, 'l' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "stacks", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct report_options o = { .limit = 20 };
	const char *html = NULL;
	int c;
	optind = 1;
	while ((c = cv_getopt("report", argc, argv, "vh", longopts)) != -1) {
		switch (c) {
		case 'j': o.json = 1; break;
		case 'H': html = optarg; break;
		case 'v': o.verbose = 1; break;
		case 'l': {
			long long v = parse_count(optarg);
			if (v < 0 || v > 1000000) {
				cv_error("report: --limit takes a count from 0 to 1000000, not '%s'", optarg);
				return 2;
			}
			o.limit = (int)v;
			break;
		}
		case 's': {
			long long v = parse_count(optarg);
			if (v < 0 || v > 1000000) {
				cv_error("report: --stacks takes a count from 0 to 1000000, not '%s'", optarg);
				return 2;
			}
			o.stacks = (int)v;
			o.stacks_given = 1;
			break;
		}
		case 'h': report_usage(stdout); return 0;
		default:
			return 2;   /* cv_getopt said why */
		}
	}
	if (optind != argc - 1) {
		cv_error("report: expected one PROFILE, got %d (try 'convoy report --help')", argc - optind);
		return 2;
	}
	struct profile *p = profile__load(argv[optind]);
	if (!p)
		return 1;
	int rc;
	if (html) {
		json_object *page = html__report_page(p);
		rc = page ? html__write(html, page) : -1;
		json_object_put(page);
	} else
		rc = report__write(p, &o, stdout);
	profile__free(p);
	return rc ? 1 : 0;
}
