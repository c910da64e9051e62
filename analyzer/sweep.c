/* sweep.c — a program at several thread counts, diagnosed (sweep.h).
 *
 * Each count's runs are repeated; the run with the median wall time stands
 * for its count. The smallest count is the reference: its on-CPU time
 * outside waits is the work itself, so each larger count's stack splits its
 * on-CPU time into that work and inflation (docs/findings.md).
 */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "deadlock.h"
#include "profile.h"
#include "cpuprof.h"
#include "offcpu.h"
#include "sweep.h"
#include "symbols.h"
#include "textfit.h"
#include "util.h"

static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The run with the median wall time, among those whose profile is known. */
static void choose_median(struct sweep_run *r, int repeat)
{
	double sorted[SWEEP_MAX_REPEAT];
	size_t n = 0;
	for (int k = 0; k < repeat; k++)
		if (r->profiles[k])
			sorted[n++] = r->walls[k];
	qsort(sorted, n, sizeof(double), by_double);
	double median = sorted[(n - 1) / 2];
	for (int k = 0; k < repeat; k++)
		if (r->walls[k] == median && r->profiles[k]) {
			r->chosen = k;
			return;
		}
}

/* Keep, for each (kind, first object), the instance that explains most. */
static void merge_findings(struct findings *all, const struct findings *add)
{
	for (size_t i = 0; i < add->n; i++) {
		const struct finding *x = &add->v[i];
		size_t k;
		for (k = 0; k < all->n; k++)
			if (all->v[k].kind == x->kind && all->v[k].nobjects && x->nobjects &&
			    !strcmp(all->v[k].objects[0], x->objects[0]))
				break;
		if (k < all->n) {
			if (x->share * x->threads > all->v[k].share * all->v[k].threads)
				all->v[k] = *x;
			continue;
		}
		if (all->n == all->cap) {
			all->cap = all->cap ? 2 * all->cap : 8;
			all->v = realloc(all->v, all->cap * sizeof(*all->v));
			if (!all->v)
				abort();
		}
		all->v[all->n++] = *x;
	}
}

/* Work per unit: with progress points, times are compared per unit of the
 * reference run's work. */
static double work_scale(const struct speedup *ref, const struct speedup *s)
{
	return ref->progress > 0 && s->progress > 0 ? ref->progress / s->progress : 1;
}

/* What off-CPU time outside waits cannot be split by without the
 * launcher's sampled context switches (sampling off, or refused). */
#define OFFCPU_SITES_UNAVAILABLE "the call sites of off-CPU time outside waits (no sampled context switches " \
	"with call stacks): it is explained by thread, page faults and voluntary switches only"

/* Did the last run's sampling record context switches? */
static int switches_sampled(const struct sweep *w)
{
	const struct model *m = &w->runs[w->nruns - 1].a.m;
	return m->cpu && m->cpu->smp.switch_samples;
}

/* Efficiency above this is more than the added threads can give. */
#define SUPERLINEAR 1.05
/* A reference run that spent this share of its worker time off-CPU outside
 * any wait (I/O, sleep, page faults) measured those as much as the work. */
#define IO_BOUND_SHARE 0.25

/* A reference run that spent this share of its worker time runnable but
 * not running, mostly for other processes (caution says how that is told),
 * measured their load. */
#define LOADED_SHARE 0.25

static double runnable_share(const struct speedup *s)
{
	return s->budget_ns > 0 ? s->c[STACK_RUNNABLE] / s->budget_ns : 0;
}

static double other_share(const struct speedup *s)
{
	return s->budget_ns > 0 ? s->c[STACK_OTHER] / s->budget_ns : 0;
}

/* What the reference run's off-CPU time outside waits was, from its
 * sampled switches (the thread with most of it): "mostly blocking I/O in
 * __GI___libc_write, called from pigz+0x447d"; "" unsampled. *from_disk:
 * it may be the first read of files the later runs found cached: major
 * faults (pages read in), blocking I/O in a read call, or nothing sampled
 * that says otherwise. */
static enum offcpu_kind offcpu_what(const struct sweep_run *r, char *buf, size_t size, int *from_disk)
{
	const struct model *m = &r->a.m;
	long i = speedup__offcpu_thread(&r->a.s);
	buf[0] = '\0';
	*from_disk = 1;
	struct offcpu o;
	if (i < 0 || offcpu__sites(m, m->p->threads[i].tid, &o) != 0 || !o.nsites || !o.sites[0].function[0] ||
	    !strcmp(o.sites[0].function, "?"))
		return OFFCPU_OTHER;
	const struct offcpu_site *x = &o.sites[0];   /* the most time (or samples) */
	*from_disk = r->a.p->process.major_faults > 0 || (x->kind == OFFCPU_IO && strstr(x->function, "read"));
	snprintf(buf, size, ", mostly %s in %s%s%s", offcpu_kind_words[x->kind], x->function,
		 strcmp(x->site, "?") ? ", called from " : "", strcmp(x->site, "?") ? x->site : "");
	return x->kind;
}

/* How much faster rb ran than ra, its work scaled to ra's. */
static double step_speedup(const struct sweep_run *ra, const struct sweep_run *rb)
{
	const struct speedup *a = &ra->a.s, *b = &rb->a.s;
	return a->wall_ns / (b->wall_ns * work_scale(a, b));
}

/* Whether going from ra to rb sped up more than the added threads can
 * give. */
static int step_superlinear(const struct sweep_run *ra, const struct sweep_run *rb)
{
	return step_speedup(ra, rb) > (double)rb->threads / ra->threads * SUPERLINEAR;
}

/* The superlinear step out of run slow, in words: "from 2 to 4 threads
 * ... the 2-thread run was slowed by something the next was not". */
static void slow_step(const struct sweep_run *slow, char *buf, size_t size)
{
	snprintf(buf, size,
		 "from %d to %d threads the run got %.2f× faster with %.3g× the threads, more than they can give: "
		 "the %d-thread run was slowed by something the next was not",
		 slow->threads, slow[1].threads, step_speedup(slow, slow + 1), (double)slow[1].threads / slow->threads,
		 slow->threads);
}

/* Why the speedups cannot be taken at face value: a superlinear step, a
 * reference run dominated by off-CPU time the later runs did not have
 * (the page cache filled by the first run, where its switches say it
 * read, or paged in; else whatever they say it was), or one that waited
 * for CPUs it did not fill (other processes' load: helper-130's pigz
 * sweep, 68% runnable at one thread). Empty when nothing says so. */
static void caution(struct sweep *w)
{
	const struct sweep_run *ref = &w->runs[0];
	const struct sweep_run *super = NULL, *slow = NULL;   /* slow: before a superlinear step */
	double later = 0;   /* the largest off-CPU share among the later runs */
	for (int i = 1; i < w->nruns; i++) {
		if (!super && w->runs[i].efficiency > SUPERLINEAR)
			super = &w->runs[i];
		if (!slow && step_superlinear(&w->runs[i - 1], &w->runs[i]))
			slow = &w->runs[i - 1];
		if (other_share(&w->runs[i].a.s) > later)
			later = other_share(&w->runs[i].a.s);
	}
	double refo = other_share(&ref->a.s);
	int io = refo >= IO_BOUND_SHARE && refo > 2 * later, from_disk = 0;
	/* Loaded: waiting for CPUs mostly other processes held, as the
	 * oversubscription finding tells it. */
	uint32_t cpus = ref->a.p->process.cpus_allowed;
	int busy = speedup__busy_threads(&ref->a.m), recorded;
	double own;
	int external = speedup__runq_external(&ref->a.m, cpus, &busy, &own, &recorded);
	int loaded = cpus && runnable_share(&ref->a.s) >= LOADED_SHARE && external;
	char why[128], share[32];
	if (recorded)
		snprintf(why, sizeof(why), "of which its own threads outnumbering the CPUs explain %s",
			 fmt_pct(share, sizeof(share), own));
	else
		snprintf(why, sizeof(why), "with %d busy thread%s on %u CPUs", busy, busy == 1 ? "" : "s", cpus);
	char a[32], b[32], what[512];
	enum offcpu_kind kind = offcpu_what(ref, what, sizeof(what), &from_disk);
	uint64_t ref_major = ref->a.p->process.major_faults;
	const char *consequence = super ? "The speedups against it are not the threads' doing" :
					  "Speedups against it measure that time, not the threads";
	/* In parentheses: what the samples say it was, else what it may be. */
	char detail[640];
	if (what[0])
		snprintf(detail, sizeof(detail), "major faults: %llu%s", (unsigned long long)ref_major, what);
	else
		snprintf(detail, sizeof(detail), "reading from disk, sleeping or faulting pages in: %llu major faults",
			 (unsigned long long)ref_major);
	if (refo >= IO_BOUND_SHARE && kind == OFFCPU_CHILD)
		snprintf(w->caution, sizeof(w->caution),
			 "the %d-thread run spent %s of its worker time off-CPU outside any wait%s: the command's work "
			 "ran in child processes, and convoy explains the threads of one process (this one; --comm NAME "
			 "analyses another), not work spread across processes.",
			 ref->threads, fmt_pct(a, sizeof(a), refo), what);
	else if (io && from_disk && w->warmup == 0)
		snprintf(w->caution, sizeof(w->caution),
			 "the %d-thread run spent %s of its worker time off-CPU outside any wait (%s), the later runs at "
			 "most %s: most likely the %d-thread run read from disk and the later runs from the page cache. "
			 "%s: use --warmup 1 (or more), so every count starts from the same caches.",
			 ref->threads, fmt_pct(a, sizeof(a), refo), detail, fmt_pct(b, sizeof(b), later), ref->threads,
			 consequence);
	else if (io)
		snprintf(w->caution, sizeof(w->caution),
			 "the %d-thread run spent %s of its worker time off-CPU outside any wait (%s), the later runs at "
			 "most %s. %s.", ref->threads, fmt_pct(a, sizeof(a), refo), detail, fmt_pct(b, sizeof(b), later),
			 consequence);
	else if (loaded) {
		int n = snprintf(w->caution, sizeof(w->caution),
				 "the %d-thread run spent %s of its worker time runnable but waiting for a CPU, %s: "
				 "other processes' load, which the later runs may not have met. %s: measure on an idle "
				 "machine%s.",
				 ref->threads, fmt_pct(a, sizeof(a), runnable_share(&ref->a.s)), why,
				 super ? "The speedups against it are not the threads' doing" :
					 "Speedups against it measure that load as much as the threads",
				 w->repeat > 1 ? "" : ", or use --repeat so the median run stands for each count");
		if (slow && !super && n > 0 && (size_t)n < sizeof(w->caution)) {   /* the step sentence points here too */
			char step[256];
			slow_step(slow, step, sizeof(step));
			snprintf(w->caution + n, sizeof(w->caution) - (size_t)n, " Also %s.", step);
		}
	}
	else if (super)
		snprintf(w->caution, sizeof(w->caution),
			 "at %d threads the efficiency is %.0f%%, more than the added threads can give: the %d-thread run "
			 "was slowed by something the later runs were not (cold caches, CPU frequency, other processes), "
			 "or the runs did different work. Use --warmup and --repeat before reading the speedups.",
			 super->threads, 100 * super->efficiency, ref->threads);
	else if (slow) {   /* a later step's: the step sentence points here */
		char step[256];
		slow_step(slow, step, sizeof(step));
		snprintf(w->caution, sizeof(w->caution),
			 "%s (cold caches, CPU frequency, other processes), or the runs did different work. Use "
			 "--warmup and --repeat before reading the speedups.", step);
	}
	else if (w->warmup == 0 && refo >= IO_BOUND_SHARE)
		snprintf(w->caution, sizeof(w->caution),
			 "the %d-thread run spent %s of its worker time off-CPU outside any wait (%s): the sweep "
			 "measures that as much as the threads.", ref->threads, fmt_pct(a, sizeof(a), refo),
			 what[0] ? what + strlen(", ") : "I/O, sleep, page faults");
}

/* The step sentence: the component that grew most from a to b. */
static void step_sentence(const struct sweep_run *ra, const struct sweep_run *rb, char *buf, size_t size)
{
	const struct speedup *a = &ra->a.s, *b = &rb->a.s;
	double scale = work_scale(a, b);
	double ratio = step_speedup(ra, rb);
	double added = b->budget_ns * scale - a->budget_ns;
	char speed[64];
	if (ratio >= 1)
		snprintf(speed, sizeof(speed), "%.2f× faster", ratio);
	else
		snprintf(speed, sizeof(speed), "%.2f× slower", 1 / ratio);
	double more = (double)rb->threads / ra->threads;
	if (step_superlinear(ra, rb)) {
		snprintf(buf, size, "%d → %d threads: %s, more than the %.3g× more threads can give (superlinear): "
			 "not the threads' doing (see the caution below).", ra->threads, rb->threads, speed, more);
		return;
	}
	if (added <= 0.05 * b->budget_ns * scale) {
		snprintf(buf, size, "%d → %d threads: %s; the added threads paid for themselves "
			 "(worker time grew %.0f%%).", ra->threads, rb->threads, speed,
			 a->budget_ns > 0 ? 100 * added / a->budget_ns : 0);
		return;
	}
	/* Candidates: every component, with locks split by lock. */
	int best = -1;
	double best_d = -INFINITY;
	const struct stack_lock *best_lock = NULL;
	for (int k = 0; k < STACK_N; k++) {
		if (k == STACK_LOCK || k == STACK_USEFUL)
			continue;
		double d = b->c[k] * scale - a->c[k];
		if (d > best_d) {
			best_d = d;
			best = k;
		}
	}
	for (size_t i = 0; i < b->nlocks; i++) {
		double d = b->locks[i].wait_ns * scale - speedup__lock_wait(a, b->locks[i].row);
		if (d > best_d) {
			best_d = d;
			best = STACK_LOCK;
			best_lock = &b->locks[i];
		}
	}
	double share = best_d / added;
	char part[96];
	if (share > 1)
		snprintf(part, sizeof(part), "More than all of the added worker time (other components shrank) is");
	else
		snprintf(part, sizeof(part), "%.0f%% of the added worker time is", share * 100);
	int n = snprintf(buf, size, "%d → %d threads: %s. %s ", ra->threads, rb->threads, speed, part);
	/* On-CPU growth with a lock whose cache line keeps changing hands is
	 * that lock's doing, as in the findings. */
	if (best == STACK_INFLATION)
		for (size_t i = 0; i < b->nlocks; i++)
			if (findings__bouncing(b->locks[i].row, b->wall_ns)) {
				const struct object_row *r = b->locks[i].row;
				char x[32];
				snprintf(buf + n, size - (size_t)n,
					 "on-CPU time beyond the reference run's: the cache line of %s %s, whose owner "
					 "changed on %s of its %s acquisitions, moving between CPUs.",
					 kind_name(r->obj->o.kind), r->name,
					 fmt_pct(x, sizeof(x), (double)r->total.handoffs / (double)r->total.acquisitions),
					 fmt_count((char[32]){0}, 32, r->total.acquisitions));
				return;
			}
	if (best == STACK_LOCK && best_lock) {
		const struct object_row *r = best_lock->row;
		double acq = (double)r->total.acquisitions;
		char x[32], y[32], z[32];
		if (!model__acquisitions_seen(r->obj))
			n += snprintf(buf + n, size - (size_t)n, "waiting for %s %s, %s wait%s%s",
				      kind_name(r->obj->o.kind), r->name, fmt_count(x, sizeof(x), r->total.waits),
				      r->total.waits == 1 ? "" : "s",
				      wait_class_of_obj(r->obj) == WAIT_LOCK ?
					      " (" MODEL_FUTEX_LOCK_UNSEEN ")" : "");
		else
			n += snprintf(buf + n, size - (size_t)n,
				      "waiting for %s %s, acquired %s times, contended on %s of acquisitions",
				      kind_name(r->obj->o.kind), r->name, fmt_count(x, sizeof(x), (uint64_t)acq),
				      fmt_pct(y, sizeof(y), acq ? (double)r->total.contended / acq : 0));
		if (r->typical_hold_ns > 0 && acq > 0)
			snprintf(buf + n, size - (size_t)n, "; the critical section is %s but it is entered every %s.",
				 fmt_ns(x, sizeof(x), r->typical_hold_ns), fmt_ns(z, sizeof(z), b->wall_ns / acq));
		else
			snprintf(buf + n, size - (size_t)n, ".");
	} else if (best >= 0) {
		n += snprintf(buf + n, size - (size_t)n, "%s.", stack_phrases[best]);
		/* What the stack cannot name by object: a serial phase, or the
		 * thread and the kind of its off-CPU time. */
		char more[768] = "";
		if (best == STACK_IDLE)
			speedup__serial_text(b, &rb->a.m, more, sizeof(more));
		else if (best == STACK_OTHER)
			speedup__offcpu_text(b, &rb->a.m, more, sizeof(more));
		if (more[0] && (size_t)n < size)
			snprintf(buf + n, size - (size_t)n, " %s", more);
	}
}

int sweep__analyse(struct sweep *w)
{
	for (int i = 0; i < w->nruns; i++) {
		struct sweep_run *r = &w->runs[i];
		choose_median(r, w->repeat);
		if (analysis__load(&r->a, r->profiles[r->chosen]) != 0)
			return -1;
		r->a.run = r->outcomes[r->chosen];
	}
	/* The reference run's on-CPU time outside waits is the work itself. */
	struct sweep_run *ref = &w->runs[0];
	speedup__compute(&ref->a.s, &ref->a.m, ref->threads, ref->walls[ref->chosen], -1);
	for (int i = 1; i < w->nruns; i++) {
		struct sweep_run *r = &w->runs[i];
		double wall = r->walls[r->chosen];
		speedup__compute(&r->a.s, &r->a.m, r->threads, wall, -1);   /* for its progress count */
		double ref_work = ref->a.s.cpu_out_ns / work_scale(&ref->a.s, &r->a.s);
		speedup__free(&r->a.s);
		speedup__compute(&r->a.s, &r->a.m, r->threads, wall, ref_work);
	}
	for (int i = 0; i < w->nruns; i++) {
		struct sweep_run *r = &w->runs[i];
		double t = r->a.s.wall_ns * work_scale(&ref->a.s, &r->a.s);   /* time for the reference's work */
		r->speedup = t > 0 ? ref->a.s.wall_ns / t : 0;
		r->efficiency = r->speedup * ref->threads / r->threads;
		if (i)
			step_sentence(&w->runs[i - 1], r, r->step, sizeof(r->step));
	}
	caution(w);
	for (int i = 1; i < w->nruns; i++) {
		struct findings one = { 0 };
		struct run_view rv = { &ref->a.m, &ref->a.s }, t = { &w->runs[i].a.m, &w->runs[i].a.s };
		findings__diagnose(&one, &rv, &t);
		merge_findings(&w->f, &one);
		findings__free(&one);
	}
	if (w->nruns == 1) {
		struct run_view t = { &ref->a.m, &ref->a.s };
		findings__diagnose(&w->f, NULL, &t);
	} else {   /* the steps diagnose only their targets: the reference run's cycles and hangs too */
		struct findings one = { 0 };
		deadlock__diagnose(&one, &ref->a.m, ref->threads, ref->a.s.wall_ns);
		merge_findings(&w->f, &one);
		findings__free(&one);
	}
	findings__sort(&w->f);
	return 0;
}

/* ---- JSON ---------------------------------------------------------------- */

static json_object *stack_json(const struct speedup *s)
{
	json_object *o = json_object_new_object();
	for (int k = 0; k < STACK_N; k++)
		json_object_object_add(o, stack_keys[k], json_object_new_int64((int64_t)llround(s->c[k])));
	return o;
}

/* Each role's threads, by tid: which threads the stack was built on. */
static json_object *roles_json(const struct speedup *s, const struct profile *p)
{
	json_object *o = json_object_new_object();
	for (int r = 0; r < ROLE_N; r++) {
		json_object *tids = json_object_new_array();
		for (size_t i = 0; i < s->nthreads; i++)
			if (s->t[i].role == (enum thread_role)r)
				json_object_array_add(tids, json_object_new_int(p->threads[i].tid));
		json_object_object_add(o, role_names[r], tids);
	}
	return o;
}

/* The thread that ran alone longest (speedup__serial_text), or null. */
static json_object *serial_json(const struct speedup *s, const struct profile *p)
{
	long i = speedup__serial_thread(s);
	if (i < 0)
		return NULL;
	json_object *o = json_object_new_object();
	json_object_object_add(o, "tid", json_object_new_int(p->threads[i].tid));
	json_object_object_add(o, "alone_ns", json_object_new_int64((int64_t)llround(s->t[i].alone)));
	return o;
}

/* The thread with most off-CPU time outside waits and its evidence of kind
 * (speedup__offcpu_text), or null. */
static json_object *offcpu_json(const struct speedup *s, const struct model *m)
{
	long i = speedup__offcpu_thread(s);
	if (i < 0)
		return NULL;
	const struct cv_thread_rec *t = &m->p->threads[i];
	uint64_t waits = speedup__thread_waits(m, (size_t)i);
	json_object *o = json_object_new_object();
	json_object_object_add(o, "tid", json_object_new_int(t->tid));
	json_object_object_add(o, "other_ns", json_object_new_int64((int64_t)llround(s->t[i].other * s->t[i].in_stack)));
	json_object_object_add(o, "major_faults", json_object_new_int64((int64_t)t->major_faults));
	json_object_object_add(o, "minor_faults", json_object_new_int64((int64_t)t->minor_faults));
	json_object_object_add(o, "voluntary_switches", json_object_new_int64((int64_t)t->voluntary_cs));
	json_object_object_add(o, "timed_waits", json_object_new_int64((int64_t)waits));
	struct offcpu sites;
	if (offcpu__sites(m, t->tid, &sites) == 0) {
		json_object *kinds = json_object_new_object(), *list = json_object_new_array();
		for (int k = 0; k < OFFCPU_KIND_N; k++)
			json_object_object_add(kinds, offcpu_kind_names[k], json_object_new_int64((int64_t)sites.by_kind[k]));
		for (size_t k = 0; k < sites.nsites; k++) {
			json_object *x = json_object_new_object();
			json_object_object_add(x, "kind", json_object_new_string(offcpu_kind_names[sites.sites[k].kind]));
			json_object_object_add(x, "function", json_object_new_string(sites.sites[k].function));
			json_object_object_add(x, "site", json_object_new_string(sites.sites[k].site));
			json_object_object_add(x, "samples", json_object_new_int64((int64_t)sites.sites[k].samples));
			json_object_object_add(x, "timed_ns", json_object_new_int64((int64_t)sites.sites[k].ns));
			json_object_array_add(list, x);
		}
		json_object_object_add(o, "switch_samples", json_object_new_int64((int64_t)sites.samples));
		json_object_object_add(o, "switch_samples_in_waits", json_object_new_int64((int64_t)sites.in_waits));
		json_object_object_add(o, "switch_samples_preempted", json_object_new_int64((int64_t)sites.preempted));
		json_object_object_add(o, "switch_samples_timed", json_object_new_int64((int64_t)sites.timed));
		json_object_object_add(o, "by_kind", kinds);
		json_object_object_add(o, "sites", list);
	}
	return o;
}

/* path relative to dir when it lies under it. */
static const char *under(const char *dir, const char *path)
{
	size_t n = strlen(dir);
	return !strncmp(path, dir, n) && path[n] == '/' ? path + n + 1 : path;
}

json_object *sweep__json(const struct sweep *w)
{
	const struct sweep_run *ref = &w->runs[0];
	json_object *root = json_object_new_object(), *runs = json_object_new_array();
	json_object *command = json_object_new_array(), *steps = json_object_new_array();
	for (int i = 0; i < w->ncommand; i++)
		json_object_array_add(command, json_object_new_string(w->command[i]));
	json_object_object_add(root, "convoy_sweep_version", json_object_new_int(1));
	json_object_object_add(root, "command", command);
	json_object_object_add(root, "repeat", json_object_new_int(w->repeat));
	json_object_object_add(root, "warmup", json_object_new_int(w->warmup));
	json_object_object_add(root, "caution", w->caution[0] ? json_object_new_string(w->caution) : NULL);
	json_object_object_add(root, "reference_threads", json_object_new_int(ref->threads));
	json_object_object_add(root, "cpus", json_object_new_int((int)ref->a.p->process.cpus_allowed));
	json_object_object_add(root, "throughput_from_progress", json_object_new_boolean(ref->a.s.progress > 0));
	for (int i = 0; i < w->nruns; i++) {
		const struct sweep_run *c = &w->runs[i];
		const struct speedup *s = &c->a.s;
		json_object *r = json_object_new_object(), *walls = json_object_new_array(), *locks = json_object_new_array();
		json_object *profiles = json_object_new_array();
		json_object_object_add(r, "threads", json_object_new_int(c->threads));
		json_object_object_add(r, "wall_ns", json_object_new_int64((int64_t)s->wall_ns));
		json_object_object_add(r, "speedup", json_object_new_double(round(c->speedup * 1000) / 1000));
		json_object_object_add(r, "efficiency", json_object_new_double(round(c->efficiency * 1000) / 1000));
		json_object_object_add(r, "budget_ns", json_object_new_int64((int64_t)llround(s->budget_ns)));
		json_object_object_add(r, "stack", stack_json(s));
		json_object_object_add(r, "roles", roles_json(s, c->a.p));
		json_object_object_add(r, "helper_ns", json_object_new_int64((int64_t)llround(s->helper_ns)));
		json_object_object_add(r, "helper_cpu_ns", json_object_new_int64((int64_t)llround(s->helper_cpu_ns)));
		json_object_object_add(r, "serial", serial_json(s, c->a.p));
		json_object_object_add(r, "offcpu_other", offcpu_json(s, &c->a.m));
		json_object_object_add(r, "other_offcpu_by_kind", speedup__other_json(s));
		for (size_t k = 0; k < s->nlocks; k++) {
			json_object *l = json_object_new_object();
			json_object_object_add(l, "name", json_object_new_string(s->locks[k].row->name));
			json_object_object_add(l, "wait_ns", json_object_new_int64((int64_t)s->locks[k].wait_ns));
			json_object_object_add(l, "acquisitions", json_object_new_int64((int64_t)s->locks[k].row->total.acquisitions));
			json_object_object_add(l, "contended", json_object_new_int64((int64_t)s->locks[k].row->total.contended));
			json_object_array_add(locks, l);
		}
		json_object_object_add(r, "locks", locks);
		json_object_object_add(r, "progress_units", json_object_new_double(s->progress));
		for (int k = 0; k < w->repeat; k++) {
			json_object_array_add(walls, json_object_new_int64((int64_t)c->walls[k]));
			json_object_array_add(profiles, c->profiles[k] ? json_object_new_string(under(w->dir, c->profiles[k])) : NULL);
		}
		json_object_object_add(r, "walls_ns", walls);
		json_object_object_add(r, "profiles", profiles);
		json_object_object_add(r, "chosen", json_object_new_int(c->chosen));
		outcome__json(&c->outcomes[c->chosen], r);   /* the analysed run's end */
		json_object_object_add(r, "profile", json_object_new_string(under(w->dir, c->profiles[c->chosen])));
		json_object_array_add(runs, r);
	}
	json_object_object_add(root, "runs", runs);
	for (int i = 1; i < w->nruns; i++)
		json_object_array_add(steps, json_object_new_string(w->runs[i].step));
	json_object_object_add(root, "steps", steps);
	json_object_object_add(root, "findings", findings__json(&w->f));
	json_object *missing = json_object_new_array();
	if (w->runs[w->nruns - 1].a.p->process.perf_error)
		json_object_array_add(missing, json_object_new_string("hardware counters (cycles, instructions, cache misses): no PMU"));
	if (!switches_sampled(w))
		json_object_array_add(missing, json_object_new_string(OFFCPU_SITES_UNAVAILABLE));
	char data[CPUPROF_UNAVAILABLE_MAX][CPUPROF_UNAVAILABLE_SIZE];
	for (int i = 0, n = cpuprof__unavailable(w->runs[w->nruns - 1].a.m.cpu, data); i < n; i++)
		json_object_array_add(missing, json_object_new_string(data[i]));
	json_object_object_add(root, "evidence_unavailable", missing);
	return root;
}

/* ---- text ---------------------------------------------------------------- */

/* 76 columns: the counts, then each component's share of N × wall. */
static void print_table(const struct sweep *w, FILE *out)
{
	static const char *const heads[STACK_N] = { "work", "infl", "lock", "park", "barr", "runq", "othr",
						    "idle", "unex" };
	fprintf(out, "%4s %9s %7s  %s\n", "", "", "", "where the worker time N × wall went, % of it");
	fprintf(out, "%4s %9s %7s ", "N", "wall", "speedup");
	for (int k = 0; k < STACK_N; k++)
		fprintf(out, " %5s", heads[k]);
	fputc('\n', out);
	for (int i = 0; i < w->nruns; i++) {
		const struct sweep_run *c = &w->runs[i];
		char t[32];
		fprintf(out, "%4d %9s %6.2fx ", c->threads, fmt_ns(t, sizeof(t), c->a.s.wall_ns), c->speedup);
		for (int k = 0; k < STACK_N; k++)
			fprintf(out, " %4.0f%%", c->a.s.budget_ns > 0 ? 100.0 * c->a.s.c[k] / c->a.s.budget_ns : 0);
		fputc('\n', out);
	}
	fputs("  work: on-CPU work (the reference run's); infl: more on-CPU time than it\n"
	      "  needed; lock: waiting for locks; park: parked on condvars, semaphores,\n"
	      "  futexes; barr: at barriers; runq: runnable, waiting for a CPU; othr: other\n"
	      "  off-CPU time; idle: fewer than N threads had work; unex: not accounted for.\n", out);
	int width = textfit__width(out);
	for (int i = 0; i < w->nruns; i++) {
		char head[32], line[1024];
		snprintf(head, sizeof(head), "  N=%d ", w->runs[i].threads);
		speedup__roles_text(&w->runs[i].a.s, &w->runs[i].a.m, line, sizeof(line));
		textfit__wrap(out, width, 6, head, line);
	}
	fputc('\n', out);
}

void sweep__text(const struct sweep *w, FILE *out)
{
	const struct sweep_run *ref = &w->runs[0];
	uint32_t cpus = ref->a.p->process.cpus_allowed;
	int width = textfit__width(out);
	char line[4096] = "";
	for (int i = 0, len = 0; i < w->ncommand && len < (int)sizeof(line); i++)
		len += snprintf(line + len, sizeof(line) - (size_t)len, "%s%s", i ? " " : "", w->command[i]);
	textfit__wrap(out, width, 4, "convoy scale: ", line);
	snprintf(line, sizeof(line), "%u CPU%s available; median of %d run%s per count; profiles in %s", cpus,
		 cpus == 1 ? "" : "s", w->repeat, w->repeat == 1 ? "" : "s", w->dir);
	textfit__wrap(out, width, 4, "  ", line);
	fputc('\n', out);
	if (ref->a.s.progress > 0)
		fputs("  (the program has progress points: speedup is throughput, not wall time)\n\n", out);
	print_table(w, out);
	for (int i = 1; i < w->nruns; i++)
		textfit__wrap(out, width, 2, "", w->runs[i].step);
	if (w->nruns > 1)
		fputc('\n', out);
	for (int i = 0; i < w->nruns; i++)
		if (outcome__failed(&w->runs[i].a.run)) {
			char head[32];
			snprintf(head, sizeof(head), "At %d thread%s: ", w->runs[i].threads, w->runs[i].threads == 1 ? "" : "s");
			outcome__sentence(&w->runs[i].a.run, line, sizeof(line));
			textfit__wrap(out, width, 2, head, line);
		}
	if (w->caution[0]) {
		textfit__wrap(out, width, 2, "Caution: ", w->caution);
		fputc('\n', out);
	}
	findings__print(&w->f, out);
	/* As convoy report says it, over every run's names. */
	struct syms **syms = xcalloc((size_t)w->nruns, sizeof(*syms));
	for (int i = 0; i < w->nruns; i++)
		syms[i] = w->runs[i].a.syms;
	char names[1024];
	if (syms__offsets_note_runs(syms, (size_t)w->nruns, names, sizeof(names)))
		textfit__wrap(out, width, 2, "\nNames that are module+offset: no symbol covered those addresses in ", names);
	free(syms);
	if (w->runs[w->nruns - 1].a.p->process.perf_error)
		textfit__wrap(out, width, 2, "\nNot measured: ",
			      "hardware counters (cycles, instructions, cache misses): this machine has no PMU.");
	if (!switches_sampled(w))
		textfit__wrap(out, width, 2, w->runs[w->nruns - 1].a.p->process.perf_error ? "Not measured: " : "\nNot measured: ",
			      OFFCPU_SITES_UNAVAILABLE ".");
	char data[CPUPROF_UNAVAILABLE_MAX][CPUPROF_UNAVAILABLE_SIZE];
	for (int i = 0, n = cpuprof__unavailable(w->runs[w->nruns - 1].a.m.cpu, data); i < n; i++) {
		char sentence[CPUPROF_UNAVAILABLE_SIZE + 1];
		snprintf(sentence, sizeof(sentence), "%.*s.", CPUPROF_UNAVAILABLE_SIZE - 1, data[i]);
		textfit__wrap(out, width, 2, "Not measured: ", sentence);
	}
}

/* ---- reading a recorded sweep -------------------------------------------- */

static int bad(const char *file, const char *what)
{
	cv_error("%s: not a convoy sweep (%s)", file, what);
	return -1;
}

static int get_int(json_object *o, const char *key, int64_t lo, int64_t hi, int64_t *out)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return -1;
	errno = 0;
	int64_t x = json_object_get_int64(v);
	if (errno || x < lo || x > hi)
		return -1;
	*out = x;
	return 0;
}

/* A profile path as recorded: relative ones are under the sweep directory. */
static char *resolve(const char *dir, const char *path)
{
	if (path[0] == '/')
		return xstrndup(path, strlen(path));
	size_t n = strlen(dir) + strlen(path) + 2;
	char *s = xcalloc(1, n);
	snprintf(s, n, "%s/%s", dir, path);
	return s;
}

static int read_run(struct sweep *w, json_object *jr, const char *file, struct sweep_run *r)
{
	int64_t threads, wall, chosen = 0;
	json_object *profile, *walls, *profiles;
	if (!json_object_is_type(jr, json_type_object) || get_int(jr, "threads", 1, 4096, &threads) ||
	    get_int(jr, "wall_ns", 1, INT64_MAX, &wall))
		return bad(file, "a run without threads and wall_ns");
	if (!json_object_object_get_ex(jr, "profile", &profile) || !json_object_is_type(profile, json_type_string))
		return bad(file, "a run without its profile");
	r->threads = (int)threads;
	/* Every repeat when recorded (walls_ns, profiles); the chosen one otherwise. */
	if (json_object_object_get_ex(jr, "walls_ns", &walls) && json_object_is_type(walls, json_type_array) &&
	    json_object_object_get_ex(jr, "profiles", &profiles) && json_object_is_type(profiles, json_type_array) &&
	    json_object_array_length(walls) == (size_t)w->repeat && json_object_array_length(profiles) == (size_t)w->repeat &&
	    !get_int(jr, "chosen", 0, w->repeat - 1, &chosen)) {
		for (int k = 0; k < w->repeat; k++) {
			json_object *wk = json_object_array_get_idx(walls, (size_t)k), *pk = json_object_array_get_idx(profiles, (size_t)k);
			if (!json_object_is_type(wk, json_type_int) || json_object_get_int64(wk) <= 0)
				return bad(file, "a wall time that is not a positive integer");
			r->walls[k] = (double)json_object_get_int64(wk);
			if (json_object_is_type(pk, json_type_string))
				r->profiles[k] = resolve(w->dir, json_object_get_string(pk));
		}
		r->walls[chosen] = (double)wall;   /* the one the recording analysed */
	} else {
		w->repeat = 1;
		r->walls[0] = (double)wall;
		chosen = 0;
	}
	free(r->profiles[chosen]);
	r->profiles[chosen] = resolve(w->dir, json_object_get_string(profile));
	outcome__from_json(&r->outcomes[chosen], jr);
	return 0;
}

int sweep__load(struct sweep *w, const char *path)
{
	memset(w, 0, sizeof(*w));
	char file[PATH_MAX + 16], dir[PATH_MAX];
	struct stat st;
	if (stat(path, &st) != 0) {
		cv_error("%s: %s", path, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(dir, sizeof(dir), "%s", path);
		snprintf(file, sizeof(file), "%s/sweep.json", path);
	} else {
		snprintf(file, sizeof(file), "%s", path);
		snprintf(dir, sizeof(dir), "%s", path);
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		else
			snprintf(dir, sizeof(dir), ".");
	}
	char real[PATH_MAX];
	w->dir = realpath(dir, real) ? xstrndup(real, strlen(real)) : xstrndup(dir, strlen(dir));
	if (stat(file, &st) != 0 || !S_ISREG(st.st_mode))
		return bad(file, "no sweep.json, the file `convoy scale -o DIR` writes");
	/* Read through a stream opened as a regular file, not json_object_from_file:
	 * a FIFO swapped in after the stat must not hang us. */
	FILE *jf = cv_fopen_regular(file);
	json_object *root = NULL, *runs, *cmd;
	if (jf) {
		json_tokener *tok = json_tokener_new();
		char chunk[65536];
		size_t n;
		enum json_tokener_error jerr = json_tokener_continue;
		while (tok && jerr == json_tokener_continue && (n = fread(chunk, 1, sizeof(chunk), jf)) > 0) {
			root = json_tokener_parse_ex(tok, chunk, (int)n);
			jerr = json_tokener_get_error(tok);
		}
		if (jerr != json_tokener_success) {
			json_object_put(root);
			root = NULL;
		}
		json_tokener_free(tok);
		fclose(jf);
	}
	int rc = -1;
	int64_t repeat;
	if (!root || !json_object_is_type(root, json_type_object)) {
		rc = bad(file, "not a JSON object");
		goto out;
	}
	if (!json_object_object_get_ex(root, "runs", &runs) || !json_object_is_type(runs, json_type_array) ||
	    !json_object_array_length(runs) || json_object_array_length(runs) > SWEEP_MAX_COUNTS) {
		rc = bad(file, "no runs[], or more than 64");
		goto out;
	}
	w->repeat = get_int(root, "repeat", 1, SWEEP_MAX_REPEAT, &repeat) ? 1 : (int)repeat;
	int64_t warmup;
	w->warmup = get_int(root, "warmup", 0, SWEEP_MAX_REPEAT, &warmup) ? 0 : (int)warmup;
	if (json_object_object_get_ex(root, "command", &cmd) && json_object_is_type(cmd, json_type_array)) {
		w->ncommand = (int)json_object_array_length(cmd);
		w->command = xcalloc((size_t)w->ncommand + 1, sizeof(char *));
		for (int i = 0; i < w->ncommand; i++) {
			const char *a = json_object_get_string(json_object_array_get_idx(cmd, (size_t)i));
			w->command[i] = xstrndup(a ? a : "", a ? strlen(a) : 0);
		}
	}
	w->nruns = (int)json_object_array_length(runs);
	for (int i = 0; i < w->nruns; i++) {
		if (read_run(w, json_object_array_get_idx(runs, (size_t)i), file, &w->runs[i]) != 0)
			goto out;
		if (i && w->runs[i].threads <= w->runs[i - 1].threads) {
			rc = bad(file, "thread counts not ascending");
			goto out;
		}
	}
	rc = sweep__analyse(w);
out:
	json_object_put(root);
	return rc;
}

void sweep__free(struct sweep *w)
{
	for (int i = 0; i < w->nruns; i++) {
		for (int k = 0; k < SWEEP_MAX_REPEAT; k++)
			free(w->runs[i].profiles[k]);
		analysis__free(&w->runs[i].a);
	}
	for (int i = 0; i < w->ncommand; i++)
		free(w->command[i]);
	free(w->command);
	free(w->dir);
	findings__free(&w->f);
	memset(w, 0, sizeof(*w));
}
