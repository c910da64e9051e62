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

#include "analysis.h"
#include "cpuprof.h"
#include "deadlock.h"
#include "families.h"
#include "findings.h"
#include "html.h"
#include "model.h"
#include "primitives.h"
#include "profile.h"
#include "report.h"
#include "speedup.h"
#include "callstacks.h"
#include "cpuprof.h"
#include "symbols.h"
#include "textfit.h"
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

static void text_header(const struct model *m, const struct run_outcome *run, FILE *out)
{
	const struct profile *p = m->p;
	int width = textfit__width(out);
	char a[32], line[512];
	textfit__wrap(out, width, 4, "convoy report: ", p->cmdline && *p->cmdline ? p->cmdline : p->process.comm);
	snprintf(line, sizeof(line), "pid %d%s, %s profiled, %zu thread%s, %zu lock%s, %zu condvar%s; ended: %s",
		 p->process.pid, p->process.forked ? " (forked child)" : "", fmt_ns(a, sizeof(a), m->wall_ns),
		 p->nthreads, p->nthreads == 1 ? "" : "s", m->nlocks, m->nlocks == 1 ? "" : "s",
		 m->nconds, m->nconds == 1 ? "" : "s", exit_text(p->process.exit_reason));
	textfit__wrap(out, width, 4, "  ", line);
	fprintf(out, "  profile %s\n", p->path);
	if (m->hang)   /* its deadlocks and starved pools are among the findings */
		fprintf(out, "  hang snapshot %s\n", m->hang->p->path);
	if (p->process.uses_unrecorded) {
		char cap[32];
		snprintf(line, sizeof(line), "%s%s uses of locks and other objects are not in this report: the shim "
			 "records at most %s (object, thread) pairs, and these came from pairs past that",
			 p->process.uses_unrecorded == UINT32_MAX ? "at least " : "",
			 fmt_count(a, sizeof(a), p->process.uses_unrecorded), fmt_count(cap, sizeof(cap), CV_RECORDS_MAX));
		textfit__wrap(out, width, 4, "  ", line);
	}
	if (p->process.uses_without_memory) {
		snprintf(line, sizeof(line), "at least %s uses of locks and other objects are counted only in part, or "
			 "not at all, in this report: the shim could not get memory for their counts (an "
			 "address-space limit, or the machine's memory)",
			 fmt_count(a, sizeof(a), p->process.uses_without_memory));
		textfit__wrap(out, width, 4, "  ", line);
	}
	if (p->inflight_waits) {
		snprintf(line, sizeof(line), "%zu wait%s still in progress when the profile was written (%s in all) %s "
			 "counted as waits up to then", p->inflight_waits, p->inflight_waits == 1 ? "" : "s",
			 fmt_ns(a, sizeof(a), (double)p->inflight_wait_ns), p->inflight_waits == 1 ? "is" : "are");
		textfit__wrap(out, width, 4, "  ", line);
	}
	char stopped[160];
	if (deadlock__search_stopped(m, stopped, sizeof(stopped)))
		textfit__wrap(out, width, 4, "  Caution: ", stopped);
	fputc('\n', out);
	if (outcome__failed(run)) {
		outcome__sentence(run, line, sizeof(line));
		textfit__wrap(out, width, 0, "", line);
		fputc('\n', out);
	}
}

/* The first thing to read: the main cause, where a finding stands out,
 * then where blocked time went, in one sentence (where no thread waited
 * for a mutex, said only when nothing stood out). */
static void text_summary(const struct model *m, const struct findings *f, FILE *out)
{
	char a[32], b[32], c[32];
	char cause[1536];
	int have_cause = findings__main_cause(f, cause, sizeof(cause));
	if (have_cause) {
		textfit__wrap(out, textfit__width(out), 0, "", cause);
		fputc('\n', out);
	}
	const struct object_row *top = m->nlocks ? m->locks[0] : NULL;   /* the lock waited for most */
	if (!top || !m->total_lock_wait) {
		if (!have_cause)
			fprintf(out, "No thread waited for a mutex%s.\n\n", m->nlocks ? "" : " (no mutex was used)");
		return;
	}
	int mutexes_only = 1;   /* the wording: other kinds (spinlocks) wait without blocking */
	for (size_t i = 0; i < m->nlocks; i++)
		mutexes_only &= m->locks[i]->obj->o.kind == CV_OBJ_MUTEX;
	char text[1024];
	const char *avg =
		fmt_ns((char[32]){0}, 32, top->total.waits ? (double)top->total.wait_ns / (double)top->total.waits : 0);
	int n = snprintf(text, sizeof(text), "Threads spent %s %s (%s of their combined lifetime); %s accounts for %s of it: ",
			 fmt_ns(a, sizeof(a), (double)m->total_lock_wait),
			 mutexes_only ? "blocked on mutexes" : "waiting for locks",
			 fmt_pct(b, sizeof(b), ratio(m->total_lock_wait, m->total_thread_ns)), top->name,
			 fmt_pct(c, sizeof(c), ratio(top->total.wait_ns, m->total_lock_wait)));
	if (!model__acquisitions_seen(top->obj))
		snprintf(text + n, sizeof(text) - (size_t)n,
			 "%s wait%s, %s on average (" MODEL_FUTEX_LOCK_UNSEEN ").",
			 fmt_count((char[32]){0}, 32, top->total.waits), top->total.waits == 1 ? "" : "s", avg);
	else
		snprintf(text + n, sizeof(text) - (size_t)n, "%s of its %s acquisitions waited, %s on average.",
			 fmt_pct((char[32]){0}, 32, ratio(top->total.contended, top->total.acquisitions)),
			 fmt_count((char[32]){0}, 32, top->total.acquisitions), avg);
	textfit__wrap(out, textfit__width(out), 0, "", text);
	fputc('\n', out);
}

/* Whether hardware counters were available, in words. */
static const char *pmu_status(const struct profile *p, char *buf, size_t size)
{
	if (p->process.perf_error)
		snprintf(buf, size, "unavailable: no hardware PMU (perf_event_open: %s)", strerror(p->process.perf_error));
	else if (p->process.perf_valid >> CV_PERF_CYCLES)
		snprintf(buf, size, "available");
	else
		snprintf(buf, size, "not opened (CONVOY_PERF unset or 0: convoy run, or CONVOY_PERF=hw, opens them)");
	return buf;
}

/* Where the busy threads' time went, one line. */
static void text_stack(const struct speedup *st, const struct model *m, FILE *out)
{
	char w[32], text[1024];
	size_t len = (size_t)snprintf(text, sizeof(text), "%d busy thread%s × %s =", st->threads,
				      st->threads == 1 ? "" : "s", fmt_ns(w, sizeof(w), st->wall_ns));
	int first = 1;
	for (int k = 0; k < STACK_N && len < sizeof(text); k++) {
		double share = st->budget_ns > 0 ? st->c[k] / st->budget_ns : 0;
		if (k == STACK_INFLATION || (fabs(share) < 0.005 && k != STACK_USEFUL))
			continue;
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s %.0f%% %s", first ? "" : ",", share * 100,
					stack_phrases[k]);
		first = 0;
	}
	if (len < sizeof(text) - 1)
		strcat(text, ".");
	textfit__wrap(out, textfit__width(out), 2, "Where the time went: ", text);
	speedup__roles_text(st, m, text, sizeof(text));
	textfit__wrap(out, textfit__width(out), 2, "Threads by role: ", text);
	speedup__serial_text(st, m, text, sizeof(text));
	if (text[0])
		textfit__wrap(out, textfit__width(out), 2, "Serial phase: ", text);
	speedup__offcpu_text(st, m, text, sizeof(text));
	if (text[0])
		textfit__wrap(out, textfit__width(out), 2, "Off-CPU outside waits: ", text);
	speedup__other_text(st, text, sizeof(text));
	if (text[0])
		textfit__wrap(out, textfit__width(out), 2, "Other off-CPU by kind: ", text);
	fputc('\n', out);
}

/* --stacks: 3 per lock in text unless given (convoy run and scale too). */
static int text_stacks(const struct report_options *o)
{
	return o->stacks_given ? o->stacks : 3;
}

size_t report__rows_to_show(size_t n, const struct report_options *o)
{
	return o->limit && (size_t)o->limit < n ? (size_t)o->limit : n;
}

void report__more(FILE *out, const struct object_group *g, size_t shown, size_t n)
{
	if (shown >= n)
		return;
	size_t objects = g ? model__group_objects(g, shown, n) : n - shown;
	if (objects != n - shown)
		fprintf(out, "  ... %zu more row%s (%zu objects; use --limit 0)\n", n - shown, n - shown == 1 ? "" : "s",
			objects);
	else
		fprintf(out, "  ... %zu more (use --limit 0)\n", n - shown);
}

/* seen: every acquisition was counted (model__acquisitions_seen); else the
 * acquired and waited columns are unknown. */
static void text_lock_row(FILE *out, const char *name, const struct cv_stats *s, int seen)
{
	char acq[32], pct[32], tot[32], avg[32], hold[32], ho[32];
	textfit__name(out, name);
	fprintf(out, " %9s %7s %9s %8s %8s %9s\n", seen ? fmt_count(acq, sizeof(acq), s->acquisitions) : "-",
		seen ? fmt_pct(pct, sizeof(pct), ratio(s->contended, s->acquisitions)) : "-",
		fmt_ns(tot, sizeof(tot), (double)s->wait_ns),
		s->waits ? fmt_ns(avg, sizeof(avg), (double)s->wait_ns / (double)s->waits) : "-",
		s->hold_samples ? fmt_ns(hold, sizeof(hold), (double)s->hold_ns / (double)s->hold_samples) : "-",
		fmt_count(ho, sizeof(ho), s->handoffs));
}

/* Type, longest wait, trylocks and timeouts: one line under the row. */
static void text_lock_detail(FILE *out, const char *type, const struct cv_stats *s)
{
	char a[32], b[32], c[32], d[32], line[256];
	int len = snprintf(line, sizeof(line), "%s%slongest wait %s", type, *type ? "; " : "",
			   s->waits ? fmt_ns(a, sizeof(a), (double)s->max_wait_ns) : "-");
	if (s->trylocks || s->timeouts)
		snprintf(line + len, sizeof(line) - (size_t)len, "; trylock: %s calls, %s failed (EBUSY); timeouts: %s",
			 fmt_count(b, sizeof(b), s->trylocks), fmt_count(c, sizeof(c), s->trylock_failures),
			 fmt_count(d, sizeof(d), s->timeouts));
	textfit__wrap(out, textfit__width(out), 8, "      ", line);
}

static void text_lock_threads(const struct model *m, const struct report_options *o, const struct object_row *r,
			      FILE *out)
{
	const struct profile *p = m->p;
	size_t first = m->stats_start[r->obj->o.id], end = m->stats_start[r->obj->o.id + 1];
	size_t shown = first + report__rows_to_show(end - first, o);
	for (size_t k = first; k < shown; k++) {
		const struct cv_stats *t = &p->stats[m->stats_of[k]];
		char who[64], fit[64], acq[32], pct[32], tot[32];
		int seen = model__acquisitions_seen(r->obj);
		fprintf(out, "    thread %-16s %9s %7s %9s\n",
			textfit__fit(fit, sizeof(fit), thread_label(p, t->thread, who, sizeof(who)), 16),
			seen ? fmt_count(acq, sizeof(acq), t->acquisitions) : "-",
			seen ? fmt_pct(pct, sizeof(pct), ratio(t->contended, t->acquisitions)) : "-",
			fmt_ns(tot, sizeof(tot), (double)t->wait_ns));
	}
	if (shown < end)
		fprintf(out, "    ... %zu more threads (use --limit 0)\n", end - shown);
}

static void text_locks(const struct model *m, const struct report_options *o, FILE *out)
{
	const struct profile *p = m->p;
	if (!m->nlocks)
		return;
	int mutexes_only = 1;
	for (size_t i = 0; i < m->nlocks; i++)
		mutexes_only &= m->locks[i]->obj->o.kind == CV_OBJ_MUTEX;
	fprintf(out, "%s, by total wait\n(hold time sampled on 1 in %u acquisitions)\n",
		mutexes_only ? "Mutexes" : "Locks (mutexes, rwlocks, spinlocks: on-CPU, futex words)",
		p->process.hold_sample_period);
	fprintf(out, "  %-*s %9s %7s %9s %8s %8s %9s\n", TEXTFIT_NAME_COLS, mutexes_only ? "mutex" : "lock", "acquired",
		"waited", "wait", "avg wait", "avg hold", "hand-offs");
	/* Objects made at one site share one row, unless -v asks for each. */
	struct object_group *g = NULL;
	size_t ng = o->verbose ? m->nlocks : model__group(m->locks, m->nlocks, &g);
	size_t n = report__rows_to_show(ng, o);
	for (size_t i = 0; i < n; i++) {
		const struct object_row *r = g ? g[i].first : m->locks[i];
		struct object_row sum;
		char note[200];
		if (g && model__group_row(&g[i], &sum, note, sizeof(note))) {
			text_lock_row(out, sum.name, &sum.total, model__acquisitions_seen(sum.obj));
			fprintf(out, "      %s\n", note);
			continue;
		}
		const struct cv_stats *s = &r->total;
		text_lock_row(out, r->name, s, model__acquisitions_seen(r->obj));
		if (r->inside)
			textfit__detail(out, "inside %s", r->inside);
		if (o->verbose || s->trylocks || s->timeouts || (r->type[0] && strcmp(r->type, "normal")))
			text_lock_detail(out, r->type, s);
		prims__text_lock_detail(r, out);   /* rwlock sides, spin time, futex wakes */
		callstacks__text(out, m->syms, r->obj->o.id, s->wait_ns, text_stacks(o), o->verbose, "      ");
		if (r->nthreads >= 2 || o->verbose)
			text_lock_threads(m, o, r, out);
	}
	report__more(out, g, n, ng);
	free(g);
	fputc('\n', out);
}

static void text_threads(const struct model *m, const struct speedup *st, const struct report_options *o,
			 struct syms *syms, FILE *out)
{
	const struct profile *p = m->p;
	fprintf(out, "Threads (name and start routine; runnable: waiting for a CPU, taken out of the\n"
		"  lock and park waits it ended, so no time is counted twice; role in the stack)\n");
	fprintf(out, "  %-7s %-15s %8s %8s %8s %8s %8s %8s %s\n", "tid", "thread", "lifetime",
		"cpu", "runnable", "lock", "park", "join", "role");
	size_t n = report__rows_to_show(p->nthreads, o);
	for (size_t i = 0; i < n; i++) {
		const struct cv_thread_rec *t = &p->threads[i];
		char fn[200], label[256], fit[64], life[32], cpu[32], rq[32], lw[32], cw[32], jw[32];
		const char *routine = t->flags & CV_THREAD_MAIN ? "(main)" :
				      t->start_routine ? syms__name(syms, t->start_routine, fn, sizeof(fn)) : "(untracked)";
		if (!routine) {
			snprintf(fn, sizeof(fn), "0x%llx", (unsigned long long)t->start_routine);
			routine = fn;
		}
		snprintf(label, sizeof(label), "%s%s%s", t->name, t->name[0] ? " " : "", routine);
		const struct stack_thread *x = &st->t[i];
		double park = x->park + x->parked_for_threads;
		fprintf(out, "  %-7d %-15s %8s %8s %8s %8s %8s %8s %s\n", t->tid, textfit__fit(fit, sizeof(fit), label, 15),
			fmt_ns(life, sizeof(life), (double)(t->end_ns - t->start_ns)),
			fmt_ns(cpu, sizeof(cpu), (double)t->cpu_ns),
			t->flags & CV_THREAD_RUNQ ? fmt_ns(rq, sizeof(rq), x->runnable) : "-",
			fmt_ns(lw, sizeof(lw), x->lock),
			fmt_ns(cw, sizeof(cw), park),
			fmt_ns(jw, sizeof(jw), (double)t->join_wait_ns), role_names[x->role]);
		if (o->verbose) {
			char cr[32];
			fprintf(out, "          created by %d%s%s; %llu voluntary, %llu involuntary switches\n",
				t->creator_tid, t->create_ns ? " in " : "", t->create_ns ? fmt_ns(cr, sizeof(cr), (double)t->create_ns) : "",
				(unsigned long long)t->voluntary_cs, (unsigned long long)t->involuntary_cs);
		}
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
			fprintf(out, "\nCounters (convoy.h annotations; by thread: tid name value)\n  %-8s %-*s %14s\n",
				"kind", TEXTFIT_NAME_COLS, "name", "total");
		char tot[32], fit[64];
		fprintf(out, "  %-8s %-*s %14s\n", c->c.kind == CV_COUNTER_PROGRESS ? "progress" : "counter",
			TEXTFIT_NAME_COLS, textfit__fit(fit, sizeof(fit), c->name, TEXTFIT_NAME_COLS),
			total < 0 ? "negative" : fmt_count(tot, sizeof(tot), (uint64_t)total));
		if (threads > 6 && len < sizeof(line) - 6)
			strcat(line, ", ...");
		textfit__wrap(out, textfit__width(out), 6, "    ", line);
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

/* The JSON fields of an object's row, and of each thread's share of it, by
 * kind (docs/report-json.md): X(key, kinds, value), the value an
 * expression of s (const struct cv_stats *). One table, so every kind's
 * keys are listed once, in one order. */
#define K(kind) (1u << CV_OBJ_##kind)
#define LOCKS   (K(MUTEX) | K(RWLOCK) | K(SPIN) | K(FUTEX))
#define WAITS   (LOCKS | K(COND) | K(SEM) | K(BARRIER))
#define PARKS   (K(MUTEX) | K(COND) | K(FUTEX) | K(SEM) | K(BARRIER))   /* with wake-up latency */
#define ROW_FIELDS(X)                                                                                 \
	X("acquisitions",                  LOCKS | K(SEM), ju64(s->acquisitions))                        \
	X("contended",                     LOCKS | K(SEM), ju64(s->contended))                           \
	X("wait_ns",                       WAITS, ju64(s->wait_ns))                                      \
	X("max_wait_ns",                   WAITS, ju64(s->max_wait_ns))                                  \
	X("waits",                         WAITS, ju64(s->waits))                                        \
	X("timeouts",                      WAITS, ju64(s->timeouts))                                     \
	X("trylocks",                      K(MUTEX) | K(RWLOCK) | K(SPIN), ju64(s->trylocks))            \
	X("trylock_failures",              K(MUTEX) | K(RWLOCK) | K(SPIN), ju64(s->trylock_failures))    \
	X("handoffs",                      LOCKS, ju64(s->handoffs))                                     \
	X("hold_samples",                  K(MUTEX), ju64(s->hold_samples))                              \
	X("hold_avg_ns",                   K(MUTEX), jdiv(s->hold_ns, s->hold_samples))                  \
	X("max_hold_ns",                   K(MUTEX), s->hold_samples ? ju64(s->max_hold_ns) : NULL)      \
	X("signals",                       K(COND), ju64(s->signals))                                    \
	X("broadcasts",                    K(COND), ju64(s->broadcasts))                                 \
	X("signals_unwaited",              K(COND), ju64(s->signals_unwaited))                           \
	X("broadcasts_unwaited",           K(COND), ju64(s->broadcasts_unwaited))                        \
	X("broadcast_woken",               K(COND), ju64(s->broadcast_woken))                            \
	X("futile_wakes",                  K(COND), ju64(s->futile_wakes))                               \
	X("futile_after_broadcast",        K(COND), ju64(s->futile_after_broadcast))                     \
	X("read_acquisitions",             K(RWLOCK), ju64(s->rd_acquisitions))                          \
	X("write_acquisitions",            K(RWLOCK), ju64(s->acquisitions - s->rd_acquisitions))        \
	X("read_contended",                K(RWLOCK), ju64(s->rd_contended))                             \
	X("write_contended",               K(RWLOCK), ju64(s->contended - s->rd_contended))              \
	X("read_waits",                    K(RWLOCK), ju64(s->rd_waits))                                 \
	X("write_waits",                   K(RWLOCK), ju64(s->waits - s->rd_waits))                      \
	X("read_wait_ns",                  K(RWLOCK), ju64(s->rd_wait_ns))                               \
	X("write_wait_ns",                 K(RWLOCK), ju64(s->wait_ns - s->rd_wait_ns))                  \
	X("read_max_wait_ns",              K(RWLOCK), ju64(s->rd_max_wait_ns))                           \
	X("write_max_wait_ns",             K(RWLOCK), ju64(s->wr_max_wait_ns))                           \
	X("writer_waits_behind_readers",   K(RWLOCK), ju64(s->wr_behind_readers))                        \
	X("writer_behind_readers_wait_ns", K(RWLOCK), ju64(s->wr_behind_readers_ns))                     \
	X("spin_ns",                       K(SPIN), ju64(s->wait_ns))                                    \
	X("max_spin_ns",                   K(SPIN), ju64(s->max_wait_ns))                                \
	X("on_cpu",                        K(SPIN), json_object_new_boolean(1))                          \
	X("eagain",                        K(FUTEX), ju64(s->futex_eagain))                              \
	X("interrupts",                    K(FUTEX) | K(SEM), ju64(s->interrupts))                       \
	X("wakes",                         K(FUTEX), ju64(s->signals))                                   \
	X("woken",                         K(FUTEX), ju64(s->futex_woken))                               \
	X("wakes_unwaited",                K(FUTEX), ju64(s->signals_unwaited))                          \
	X("wake_ops",                      K(FUTEX), ju64(s->wake_ops))                                  \
	X("requeues",                      K(FUTEX), ju64(s->requeues))                                  \
	X("requeued",                      K(FUTEX), ju64(s->requeued))                                  \
	X("pi_ops",                        K(FUTEX), ju64(s->pi_ops))                                    \
	X("trywaits",                      K(SEM), ju64(s->trylocks))                                    \
	X("trywait_failures",              K(SEM), ju64(s->trylock_failures))                            \
	X("posts",                         K(SEM), ju64(s->signals))                                     \
	X("posts_unwaited",                K(SEM), ju64(s->signals_unwaited))                            \
	X("rounds",                        K(BARRIER), ju64(s->rounds))                                  \
	X("imbalance_ns",                  K(BARRIER), ju64(s->imbalance_ns))                            \
	X("avg_imbalance_ns",              K(BARRIER), jdiv(s->imbalance_ns, s->rounds))                 \
	X("max_imbalance_ns",              K(BARRIER), ju64(s->max_imbalance_ns))                        \
	X("wakeups",                       PARKS, ju64(s->wakeups))                                      \
	X("wake_latency_ns",               PARKS, ju64(s->wake_latency_ns))                              \
	X("avg_wake_latency_ns",           PARKS, jdiv(s->wake_latency_ns, s->wakeups))                  \
	X("max_wake_latency_ns",           PARKS, ju64(s->max_wake_latency_ns))

static json_object *jdiv(uint64_t a, uint64_t b) { return b ? ju64(a / b) : NULL; }

static void json_stats(json_object *o, uint32_t kind, const struct cv_stats *s)
{
	uint32_t bit = kind < 32 ? 1u << kind : 0;
#define CV_X(key, kinds, value)             \
	if ((kinds) & bit)                   \
		json_object_object_add(o, key, value);
	ROW_FIELDS(CV_X)
#undef CV_X
}

/* One object's row: its kind's fields, then each thread's share (stacks:
 * how many call stacks, < 0 all). */
static json_object *json_object_row(const struct model *m, const struct object_row *r, int stacks)
{
	const struct profile *p = m->p;
	json_object *o = json_object_new_object();
	json_object_object_add(o, "name", jstr(r->name));
	json_object_object_add(o, "kind", jstr(kind_name(r->obj->o.kind)));
	if (r->type[0])
		json_object_object_add(o, "type", jstr(r->type));
	json_object_object_add(o, "addr", jaddr(r->obj->o.addr));
	json_object_object_add(o, "generation", ju64(r->obj->o.generation));
	json_object_object_add(o, "destroyed", json_object_new_boolean(r->obj->o.retired));
	if (r->obj->o.kind == CV_OBJ_COND)   /* its monitor: the mutex its waits named, or null */
		json_object_object_add(o, "mutex", r->monitor ? jstr(r->monitor->name) : NULL);
	if (r->inside)   /* a runtime's known state it lies in (symbols.c) */
		json_object_object_add(o, "inside", jstr(r->inside));
	json_stats(o, r->obj->o.kind, &r->total);
	if (r->obj->o.kind == CV_OBJ_BARRIER)
		json_object_object_add(o, "count", json_object_new_int64(r->obj->o.flags));
	json_object_object_add(o, "wait_histogram", json_histogram(&r->total));
	callstacks__json(o, m->syms, r->obj->o.id, stacks);   /* site, first_use, stacks[] */
	json_object *threads = json_object_new_array();
	for (size_t k = m->stats_start[r->obj->o.id]; k < m->stats_start[r->obj->o.id + 1]; k++) {
		const struct cv_stats *s = &p->stats[m->stats_of[k]];
		json_object *t = json_object_new_object();
		json_object_object_add(t, "tid", json_object_new_int(p->threads[s->thread].tid));
		json_object_object_add(t, "thread", ju64(s->thread));
		json_stats(t, r->obj->o.kind, s);
		json_object_array_add(threads, t);
	}
	json_object_object_add(o, "threads", threads);
	return o;
}

static json_object *json_thread(const struct model *m, const struct speedup *st, size_t i, struct syms *syms)
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
	json_object_object_add(o, "role", jstr(role_names[st->t[i].role]));
	json_object_object_add(o, "in_stack", json_object_new_double(round(st->t[i].in_stack * 1000) / 1000));
	/* Its active time split without overlaps (run-queue delay taken out
	 * of the waits it ended): what the text table shows. */
	const struct stack_thread *x = &st->t[i];
	json_object *split = json_object_new_object();
	const struct { const char *key; double ns; } parts[] = {
		{ "cpu_ns", x->cpu }, { "lock_ns", x->lock }, { "park_ns", x->park }, { "barrier_ns", x->barrier },
		{ "runnable_ns", x->runnable }, { "other_ns", x->other },
	};
	for (size_t k = 0; k < sizeof(parts) / sizeof(parts[0]); k++)
		json_object_object_add(split, parts[k].key, json_object_new_int64((int64_t)llround(parts[k].ns)));
	json_object_object_add(o, "split", split);
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

/* Where the report's JSON goes: into one tree (report__json, for the viewer
 * to embed), or straight to a file member by member and row by row, so a
 * profile with 100,000 objects never holds its whole report in memory. */
struct sink {
	json_object *root, *array;  /* tree */
	FILE *out;                  /* stream */
	int members, rows;
};

#define JSON_FLAGS (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE)

/* v pretty-printed, its lines after the first indented by indent (at most
 * 8: spaces[]) more. */
static void put_indented(FILE *out, json_object *v, int indent)
{
	static const char spaces[] = "        ";
	size_t len;
	const char *c = json_object_to_json_string_length(v, JSON_FLAGS, &len), *end = c + len;
	for (const char *nl; (nl = memchr(c, '\n', (size_t)(end - c))); c = nl + 1) {   /* a line at a time */
		fwrite(c, 1, (size_t)(nl + 1 - c), out);
		fwrite(spaces, 1, (size_t)indent, out);
	}
	fwrite(c, 1, (size_t)(end - c), out);
}

static void sink_member(struct sink *k, const char *key, json_object *v)
{
	if (k->root) {
		json_object_object_add(k->root, key, v);
		return;
	}
	fprintf(k->out, "%s\n  \"%s\":", k->members++ ? "," : "{", key);
	put_indented(k->out, v, 2);
	json_object_put(v);
}

static void sink_array_begin(struct sink *k, const char *key)
{
	k->rows = 0;
	if (k->root)
		json_object_object_add(k->root, key, k->array = json_object_new_array());
	else
		fprintf(k->out, "%s\n  \"%s\":[", k->members++ ? "," : "{", key);
}

static void sink_row(struct sink *k, json_object *v)
{
	if (k->root) {
		json_object_array_add(k->array, v);
		return;
	}
	fprintf(k->out, "%s\n    ", k->rows++ ? "," : "");
	put_indented(k->out, v, 4);
	json_object_put(v);
}

static void sink_array_end(struct sink *k)
{
	if (!k->root)
		fputs("\n  ]", k->out);   /* as json-c writes it, empty or not */
}

static void sink_rows(struct sink *k, const char *key, const struct model *m, struct object_row *const *rows,
		      size_t n, int stacks)
{
	sink_array_begin(k, key);
	for (size_t i = 0; i < n; i++)
		sink_row(k, json_object_row(m, rows[i], stacks));
	sink_array_end(k);
}

static json_object *json_stack(const struct speedup *st)
{
	json_object *stack = json_object_new_object();
	json_object_object_add(stack, "threads", json_object_new_int(st->threads));
	json_object_object_add(stack, "wall_ns", json_object_new_int64((int64_t)st->wall_ns));
	json_object_object_add(stack, "budget_ns", json_object_new_int64((int64_t)st->budget_ns));
	for (int k = 0; k < STACK_N; k++)
		json_object_object_add(stack, stack_keys[k], json_object_new_int64((int64_t)st->c[k]));
	json_object_object_add(stack, "other_offcpu_by_kind", speedup__other_json(st));
	return stack;
}

static void json_report(struct sink *k, const struct analysis *a, const struct report_options *o)
{
	const struct model *m = &a->m;
	const struct profile *p = a->p;
	struct syms *syms = a->syms;
	int stacks = o->stacks_given ? o->stacks : -1;
	json_object *proc = json_object_new_object();
	sink_member(k, "convoy_report_version", json_object_new_int(1));
	json_object_object_add(proc, "pid", json_object_new_int(p->process.pid));
	json_object_object_add(proc, "ppid", json_object_new_int(p->process.ppid));
	json_object_object_add(proc, "comm", jstr(p->process.comm));
	json_object_object_add(proc, "cmdline", jstr(p->cmdline));
	json_object_object_add(proc, "exe", jstr(p->exe));
	json_object_object_add(proc, "forked", json_object_new_boolean(p->process.forked));
	json_object_object_add(proc, "wall_ns", ju64(p->process.end_ns - p->process.start_ns));
	json_object_object_add(proc, "exit", jstr(exit_text(p->process.exit_reason)));
	outcome__json(&a->run, proc);
	json_object_object_add(proc, "hold_sample_period", ju64(p->process.hold_sample_period));
	json_object_object_add(proc, "uses_unrecorded", ju64(p->process.uses_unrecorded));
	json_object_object_add(proc, "uses_without_memory", ju64(p->process.uses_without_memory));
	json_object_object_add(proc, "inflight_waits", ju64(p->inflight_waits));
	json_object_object_add(proc, "inflight_wait_ns", ju64(p->inflight_wait_ns));
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
	if (a->m.hang)
		json_object_object_add(proc, "hang_snapshot_profile", jstr(a->m.hang->p->path));
	sink_member(k, "process", proc);
	sink_rows(k, "locks", m, m->locks, m->nlocks, stacks);
	sink_rows(k, "condvars", m, m->conds, m->nconds, stacks);
	sink_rows(k, "semaphores", m, m->sems, m->nsems, stacks);
	sink_rows(k, "barriers", m, m->barriers, m->nbarriers, stacks);
	sink_rows(k, "futexes", m, m->futexes, m->nfutexes, stacks);
	sink_member(k, "park_wake", prims__json_park_wake(m));
	sink_array_begin(k, "threads");
	for (size_t i = 0; i < p->nthreads; i++)
		sink_row(k, json_thread(m, &a->s, i, syms));
	sink_array_end(k);
	if (m->cpu)   /* only when the run was sampled (convoy run, convoy scale) */
		sink_member(k, "cpu_samples", cpuprof__json(m->cpu, m, o->limit > 0 ? o->limit : -1));
	json_object *lock_order = deadlock__graph_json(m, &a->f);
	if (lock_order)   /* only when the shim recorded lock order */
		sink_member(k, "lock_order", lock_order);
	sink_member(k, "stack", json_stack(&a->s));
	sink_member(k, "findings", findings__json(&a->f));
	char names[1024];   /* after everything above was named */
	if (a->syms && syms__offsets_note(a->syms, names, sizeof(names)))
		sink_member(k, "names_as_offsets", jstr(names));
}

json_object *report__json(const struct analysis *a, const struct report_options *o)
{
	struct sink k = { .root = json_object_new_object() };
	json_report(&k, a, o);
	return k.root;
}

int report__write(const struct analysis *a, const struct report_options *o, FILE *out)
{
	const struct model *m = &a->m;
	const struct profile *p = a->p;
	if (o->json) {
		struct sink k = { .out = out };
		json_report(&k, a, o);
		fputs("\n}\n", out);
	} else {
		text_header(m, &a->run, out);
		text_summary(m, &a->f, out);
		text_stack(&a->s, m, out);
		findings__print(&a->f, out);
		fputc('\n', out);
		text_locks(m, o, out);
		families__text(m, o, out);   /* condvars, semaphores, barriers, futexes */
		prims__text_park(m, o, out);
		text_threads(m, &a->s, o, a->syms, out);
		if (m->cpu)
			cpuprof__text(m->cpu, m, out, o->limit > 0 ? o->limit : 10);
		text_counters(m, out);
		char names[1024];
		if (a->syms && syms__offsets_note(a->syms, names, sizeof(names)))
			textfit__wrap(out, textfit__width(out), 2,
				      "\nNames that are module+offset: no symbol covered those addresses in ", names);
		char pmu[160], line[256];
		if (!(p->process.perf_valid >> CV_PERF_CYCLES)) {
			snprintf(line, sizeof(line), "hardware counters (cycles, instructions, cache misses): %s.",
				 pmu_status(p, pmu, sizeof(pmu)));
			textfit__wrap(out, textfit__width(out), 2, "\nNot measured: ", line);
		}
	}
	if (fflush(out) != 0 || ferror(out)) {
		if (errno != EPIPE)   /* a reader that left (convoy run | head) is not an error to say */
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
	struct analysis a;
	if (analysis__load(&a, argv[optind]) != 0)
		return 1;
	analysis__diagnose(&a);
	int rc;
	if (html) {
		json_object *page = html__report_page(&a);
		rc = html__write(html, page);
		json_object_put(page);
	} else
		rc = report__write(&a, &o, stdout);
	analysis__free(&a);
	return rc ? 1 : 0;
}
