/* findings.c — the rules that turn speedup stacks into findings.
 *
 * Every rule is written down, with its thresholds and the reasoning, in
 * docs/findings.md; keep the two in step. A rule looks at how much a
 * component of the stack grew from the reference run to the target run (or,
 * for a single run, at the component itself), names the object that caused
 * it, and states what the wall time would have been without it:
 *
 *   predicted T(N) = T(N) − Δcomponent / N
 *
 * because the components add up to N·T(N) exactly.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "callstacks.h"
#include "cpuprof.h"
#include "deadlock.h"
#include "findings.h"
#include "model.h"
#include "profile.h"
#include "speedup.h"
#include "symbols.h"
#include "textfit.h"
#include "util.h"

/* Thresholds (docs/findings.md explains each). */
#define SHORT_HOLD_NS        1000.0   /* below: the cost is the number of entries ... */
#define FREQUENT_RATE         1e5     /* ... when they come at least this often a second */
#define LONG_HOLD_NS        20000.0   /* above: the critical section does real work */
#define LONG_HOLD_UTIL          0.7   /* ... or the lock is held this share of the run */
#define FEW_HOLD_SAMPLES          5   /* fewer sampled holds say nothing of how long a lock is held */
#define SHORT_PARK_NS      200000.0   /* parks shorter than this are wake/sleep cycles */
#define IMBALANCE_RATIO         1.5   /* busiest thread vs median */
#define CHURN_MIN_THREADS        64
#define INFLATION_MIN_SHARE     0.3
#define DECODED_ENOUGH          0.5   /* samples with a data address: enough to withdraw a suspicion */
#define BOUNCING_HANDOFFS      0.01   /* hand-offs per acquisition: its line moves between CPUs */
#define BOUNCING_RATE         1e4     /* ... at least this many times a second */
#define NOISE_SHARE            0.05   /* findings explaining less are dropped */
#define SUSPECTED_HIGH_SHARE    0.5   /* a suspected finding is high only above this share */
#define CORES_SLOW_EACH_OTHER   2.0   /* CPU for the same work grown this much by busy cores alone */
#define MONITOR_WAKE_ENDED      0.5   /* condvar waits ended by a wake or a timeout, of all */
#define MONITOR_PEER_SIGNALS    0.5   /* wakes sent by the waiting threads themselves, of all */
#define MONITOR_MAX_CPUS        1.5   /* the threads' CPU time adds up to at most this many CPUs */
#define MAX_CLAIMED               16

struct finding *findings__add(struct findings *f, enum finding_kind kind, double share)
{
	if (f->n == f->cap) {
		f->cap = f->cap ? 2 * f->cap : 8;
		f->v = realloc(f->v, f->cap * sizeof(*f->v));
		if (!f->v) {
			cv_error("out of memory");
			abort();
		}
	}
	struct finding *x = &f->v[f->n++];
	memset(x, 0, sizeof(*x));
	x->kind = kind;
	x->share = share < 0 ? 0 : share > 1 ? 1 : share;
	return x;
}

static void object(struct finding *x, const char *name)
{
	if (x->nobjects < FINDING_MAX_OBJECTS)
		snprintf(x->objects[x->nobjects++], sizeof(x->objects[0]), "%s", name);
}

static void evidence(struct finding *x, const char *key, double value)
{
	if (x->nevidence < FINDING_MAX_EVIDENCE) {
		x->evidence[x->nevidence].key = key;
		x->evidence[x->nevidence++].value = value;
	}
}

static void say(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

static const char *const kind_names[FINDING_KIND_N] = {
#define CV_X(sym, name) [sym] = name,
	FINDING_KINDS(CV_X)
#undef CV_X
};

static const char *const severity_names[SEVERITY_N] = {
#define CV_X(sym, name) [sym] = name,
	SEVERITIES(CV_X)
#undef CV_X
};

const char *finding_kind_name(enum finding_kind k) { return kind_names[k]; }
const char *severity_name(enum severity s) { return severity_names[s]; }

/* ---- what both runs had -------------------------------------------------- */

struct step {
	const struct run_view *ref, *t;
	double lost;       /* thread-time beyond the ideal: budget(t) − budget(ref) */
	double scale;      /* units of work: multiply the target's times by this */
	int n;
	double inflation_left;   /* on-CPU growth not yet attributed to a lock */
	int busy;                /* threads busy at once in the target run */
	uint32_t cpus;           /* the CPUs it could use */
	int oversubscribed;      /* busy > cpus: spinning would only make it worse */
	/* Objects a monitor finding explained: the lock rules skip them, and
	 * their park growth is not left for the park rule. */
	const struct object_row *claimed[MAX_CLAIMED];
	size_t nclaimed;
	double park_claimed;
};

static int claimed(const struct step *st, const struct object_row *row)
{
	for (size_t i = 0; i < st->nclaimed; i++)
		if (st->claimed[i] == row)
			return 1;
	return 0;
}

static void claim(struct step *st, const struct object_row *row)
{
	if (st->nclaimed < MAX_CLAIMED)
		st->claimed[st->nclaimed++] = row;
}

static double comp(const struct run_view *r, enum stack_component c)
{
	return r ? r->s->c[c] : 0;
}

static double delta(const struct step *st, enum stack_component c)
{
	return comp(st->t, c) * st->scale - (st->ref ? comp(st->ref, c) : 0);
}

/* The target run's wall time without removed_ns of its thread time (in
 * the step's units), of which useful_removed_ns (the target's own units)
 * was useful on-CPU work: that time's share of each of its N threads, but
 * never less than the useful work left takes on the CPUs it could use (N,
 * or fewer CPUs): removing a wait does not add a CPU (helper-130: the
 * oversubscription and load-imbalance what-ifs of pbzip2, lbzip2 and perl
 * at 4 threads on 2 CPUs were below their CPU time over 2). */
static double predicted_less_work(const struct step *st, double removed_ns, double useful_removed_ns)
{
	const struct speedup *s = st->t->s;
	double w = s->wall_ns - removed_ns / s->threads / st->scale;
	int slots = st->cpus && st->cpus < (uint32_t)s->threads ? (int)st->cpus : s->threads;
	double floor = (s->c[STACK_USEFUL] - useful_removed_ns) / slots;
	if (floor > s->wall_ns)
		floor = s->wall_ns;
	if (floor < 0)   /* create_ns is time in pthread_create, which may not all have been useful CPU */
		floor = 0;
	return w > floor ? w : floor;
}

/* The same where the useful work stays (waits, spinning, bouncing,
 * inflation removed). */
static double predicted(const struct step *st, double removed_ns)
{
	return predicted_less_work(st, removed_ns, 0);
}

static const char *fmt_rate(char *buf, size_t size, double per_second)
{
	if (per_second >= 1e6)
		snprintf(buf, size, "%.1fM/s", per_second / 1e6);
	else if (per_second >= 1e3)
		snprintf(buf, size, "%.1fk/s", per_second / 1e3);
	else
		snprintf(buf, size, "%.0f/s", per_second);
	return buf;
}

/* ---- rules --------------------------------------------------------------- */

/* The on-CPU time a run spent inside the implementation of the lock that is
 * row's object (row may come from the other run's model): its share of the
 * CPU samples times the run's on-CPU time outside waits. 0 unsampled. */
static double spin_cpu(const struct run_view *r, const struct object_row *row)
{
	const struct cpuprof *c = r ? r->m->cpu : NULL;
	if (!c)
		return 0;
	for (size_t i = 0; i < r->s->nlocks; i++)
		if (model__same_object(r->s->locks[i].row, row))
			return cpuprof__spin_share(c, r->s->locks[i].row->obj->o.id) * r->s->cpu_out_ns;
	return 0;
}

/* The shared or spun-on line the run's CPU samples found hottest holds
 * this lock: its traffic is the lock's (its word, and the data beside it). */
static const struct cache_line *lock_line(const struct step *st, const struct object_row *row)
{
	const struct cache_line *l = cpuprof__top_line(st->t->m->cpu);
	return l && row->obj->o.addr / CACHE_LINE * CACHE_LINE == l->addr ? l : NULL;
}

int findings__bouncing(const struct object_row *row, double wall_ns)
{
	const struct cv_stats *k = &row->total;
	double acq = (double)k->acquisitions;
	if (!model__acquisitions_seen(row->obj))   /* hand-offs among its waits only: no fraction to take */
		return 0;
	return acq > 0 && wall_ns > 0 && (double)k->handoffs / acq >= BOUNCING_HANDOFFS &&
	       (double)k->handoffs / wall_ns * 1e9 >= BOUNCING_RATE;
}

static void rule_locks(struct findings *out, struct step *st)
{
	const struct speedup *s = st->t->s;
	for (size_t i = 0; i < s->nlocks; i++) {
		const struct object_row *row = s->locks[i].row;
		double grew = s->locks[i].wait_ns * st->scale -
			      (st->ref ? speedup__lock_wait(st->ref->s, row) : 0);
		/* CPU samples inside the lock's implementation (spinning before
		 * parking, a spinlock's loop) locate part of the inflation exactly:
		 * the lock claims that first. */
		double spun = st->ref ? spin_cpu(st->t, row) * st->scale - spin_cpu(st->ref, row) : 0;
		spun = spun < 0 ? 0 : spun < st->inflation_left ? spun : st->inflation_left;
		/* One thread's lock has nobody to wait for: its "waits" are a
		 * timed call that was slow (an OpenMP lock set up on its first
		 * use, a preemption: helper-131's single-threaded clang program). */
		if (grew + spun <= 0 || grew + spun < NOISE_SHARE * st->lost || claimed(st, row) || row->nthreads < 2)
			continue;
		st->inflation_left -= spun;
		const struct cv_stats *k = &row->total;
		double wall = s->wall_ns, hold = row->typical_hold_ns;
		double acq = (double)k->acquisitions, interval = acq ? wall / acq : 0;
		double contended = acq ? (double)k->contended / acq : 0;
		double util = wall ? acq * hold / wall : 0;
		enum finding_kind kind = FINDING_LOCK_CONTENTION;
		int few = row->hold_samples < FEW_HOLD_SAMPLES && row->hold_samples < k->acquisitions;   /* all sampled: known */
		if (few)
			;   /* which of the two below it is, the holds cannot tell */
		else if (hold > 0 && hold < SHORT_HOLD_NS && wall > 0 && acq / wall * 1e9 >= FREQUENT_RATE)
			kind = FINDING_ACQUISITION_FREQ;
		else if (hold >= LONG_HOLD_NS || util >= LONG_HOLD_UTIL)
			kind = FINDING_LONG_HOLD;
		/* A hot lock whose ownership keeps moving between threads drags its
		 * cache line (and the data it guards) from CPU to CPU: the on-CPU
		 * growth of the same work is that traffic, so the lock claims it. */
		double handoffs = acq ? (double)k->handoffs / acq : 0, bounced = 0;
		const struct cache_line *line = lock_line(st, row);
		if ((findings__bouncing(row, wall) || line) && st->inflation_left > 0) {
			bounced = st->inflation_left;
			st->inflation_left = 0;
		}
		struct finding *x = findings__add(out, kind, (grew + spun + bounced) / st->lost);
		object(x, row->name);
		x->predicted_wall_ns = predicted(st, grew + spun + bounced);
		/* A lock built on a futex word (Rust's Mutex, a hand-made one)
		 * enters the kernel, where the shim sees it, only when contended:
		 * its acquisitions are its woken waits, and neither how often it
		 * is taken nor how long it is held is known. */
		int seen = model__acquisitions_seen(row->obj);
		if (seen)
			evidence(x, "handoff_fraction", handoffs);
		evidence(x, "cpu_inflation_ns", bounced);
		if (spun > 0)
			evidence(x, "sampled_spin_ns", spun);
		if (seen) {
			evidence(x, "acquisitions", acq);
			evidence(x, "contended_fraction", contended);
		} else {
			evidence(x, "waits", (double)k->waits);
		}
		evidence(x, "wait_ns", (double)k->wait_ns);
		evidence(x, "hold_ns", hold);
		if (seen) {
			evidence(x, "interval_ns", interval);
			evidence(x, "utilization", util);
		}
		char a[32], b[32], c[32], d[32], e[32];
		if (!seen) {
			snprintf(x->summary, sizeof(x->summary),
				 "Waiting for %s %s: %s wait%s (%s), %s in all; " MODEL_FUTEX_LOCK_UNSEEN ".",
				 kind_name(row->obj->o.kind), row->name, fmt_count(a, sizeof(a), k->waits),
				 k->waits == 1 ? "" : "s", fmt_rate(e, sizeof(e), wall ? (double)k->waits / wall * 1e9 : 0),
				 fmt_ns(c, sizeof(c), (double)k->wait_ns));
		} else {
			const char *what =
				kind == FINDING_ACQUISITION_FREQ ? "but it is entered every %s — the cost is the number of entries" :
				kind == FINDING_LONG_HOLD ? "and it is entered every %s — the critical section is long" :
							    "and it is entered every %s — threads queue for it";
			int len = snprintf(x->summary, sizeof(x->summary),
			    "Waiting for %s %s: %s acquisitions (%s), %s contended, %s waited in all; the critical section is %s ",
			    kind_name(row->obj->o.kind), row->name, fmt_count(a, sizeof(a), (uint64_t)acq),
			    fmt_rate(e, sizeof(e), wall ? acq / wall * 1e9 : 0), fmt_pct(b, sizeof(b), contended),
			    fmt_ns(c, sizeof(c), (double)k->wait_ns), hold > 0 ? fmt_ns(d, sizeof(d), hold) : "unmeasured");
			if (hold > 0 && few)   /* sort's merge locks: 1.4 us from one sample, 1.2 ms whole */
				len += snprintf(x->summary + len, sizeof(x->summary) - (size_t)len,
						"(from %llu sampled hold%s: too few to say how long it is held) ",
						(unsigned long long)row->hold_samples, row->hold_samples == 1 ? "" : "s");
			len += snprintf(x->summary + len, sizeof(x->summary) - (size_t)len, what, fmt_ns(a, sizeof(a), interval));
			if (kind == FINDING_LOCK_CONTENTION && hold > 0 && hold < SHORT_HOLD_NS && !few)
				snprintf(x->summary + len, sizeof(x->summary) - (size_t)len,
					 ". Entered this rarely and held this briefly (sampled 1 in %u), it should not keep "
					 "threads waiting: some holds are longer than the samples, or holders lost their CPU",
					 st->t->m->p->process.hold_sample_period);
			strncat(x->summary, ".", sizeof(x->summary) - strlen(x->summary) - 1);
		}
		if (spun > 0) {
			size_t len = strlen(x->summary);
			say(x->summary + len, sizeof(x->summary) - len,
			    " CPU samples place %s more CPU time than at %d thread%s inside its lock "
			    "implementation (spinning to get it).",
			    fmt_ns(c, sizeof(c), spun / st->scale), st->ref->s->threads,
			    st->ref->s->threads == 1 ? "" : "s");
		}
		if (bounced > 0 && line) {
			size_t len = strlen(x->summary);
			say(x->summary + len, sizeof(x->summary) - len,
			    " CPU samples put %s of the CPU time on its cache line, which the threads keep "
			    "writing: the same work needed %s more CPU time than at %d thread%s.",
			    fmt_pct(a, sizeof(a), (double)line->samples / (double)st->t->m->cpu->samples),
			    fmt_ns(c, sizeof(c), bounced / st->scale),
			    st->ref ? st->ref->s->threads : 1, st->ref && st->ref->s->threads == 1 ? "" : "s");
		} else if (bounced > 0) {
			size_t len = strlen(x->summary);
			say(x->summary + len, sizeof(x->summary) - len,
			    " Its owner changed on %s of acquisitions, moving its cache line between CPUs: the "
			    "same work needed %s more CPU time than at %d thread%s.",
			    fmt_pct(a, sizeof(a), handoffs), fmt_ns(c, sizeof(c), bounced / st->scale),
			    st->ref ? st->ref->s->threads : 1, st->ref && st->ref->s->threads == 1 ? "" : "s");
		}
		if (kind == FINDING_ACQUISITION_FREQ)
			say(x->fix, sizeof(x->fix),
			    "Enter %s less often: take work in batches, or give each thread its own queue and "
			    "let idle threads steal (demo-workloads/work_stealing.c).", row->name);
		else if (kind == FINDING_LONG_HOLD)
			say(x->fix, sizeof(x->fix),
			    "Shorten the critical section under %s: move computation and I/O out of it, "
			    "or split the data it protects so threads lock different parts.", row->name);
		else
			say(x->fix, sizeof(x->fix),
			    "Split %s (shard it, or per-thread state merged at the end), or use a structure "
			    "that needs no lock for the common operation.", row->name);
	}
}

/* What the threads that parked on a set of objects (a monitor's condvars,
 * or one semaphore) did to them. */
struct turn_use {
	const struct object_row *parks[FINDING_MAX_OBJECTS - 1];
	size_t nparks;
	double park_grew;          /* their park growth in the stack */
	uint64_t waits, wait_ns, ended, timeouts, signals, peer_signals;
	uint64_t released_together;   /* waiters woken by a broadcast beside another, and running on */
};

/* Did thread (index) block on row's object? */
static int waited_on(const struct model *m, const struct object_row *row, uint32_t thread)
{
	uint32_t id = row->obj->o.id;
	for (size_t q = m->stats_start[id]; q < m->stats_start[id + 1]; q++) {
		const struct cv_stats *w = &m->p->stats[m->stats_of[q]];
		if (w->thread == thread && w->waits > 0)
			return 1;
	}
	return 0;
}

/* The signals and broadcasts of k that found a thread waiting: a wake sent
 * to nobody (a consumer telling an idle producer there is room) hands no
 * turn to anyone. */
static uint64_t wakes_delivered(const struct cv_stats *k)
{
	uint64_t sent = k->signals + k->broadcasts, unwaited = k->signals_unwaited + k->broadcasts_unwaited;
	return sent > unwaited ? sent - unwaited : 0;
}

/* Sums u's objects' waits and wakes. A wake "from a peer" is one sent by a
 * thread that itself parked on the same object: threads handing the turn
 * to each other, not a producer feeding consumers (which park on another
 * condvar of the monitor, if at all). */
static void turn_use_sum(const struct step *st, struct turn_use *u)
{
	const struct model *m = st->t->m;
	size_t nt = m->p->nthreads;
	uint64_t *parked = xcalloc(nt + 1, sizeof(uint64_t)), *woke = xcalloc(nt + 1, sizeof(uint64_t));
	for (size_t c = 0; c < u->nparks; c++) {
		const struct object_row *row = u->parks[c];
		u->park_grew += speedup__park_wait(st->t->s, row) * st->scale -
				(st->ref ? speedup__park_wait(st->ref->s, row) : 0);
		const struct cv_stats *k = &row->total;
		u->waits += k->waits;
		u->wait_ns += k->wait_ns;
		u->ended += k->wakeups + k->timeouts;
		u->timeouts += k->timeouts;
		u->signals += wakes_delivered(k);
		/* Woken by broadcasts that woke more than one each, and not
		 * back to sleep at once: a herd that queues for the mutex again
		 * (futile) is still one at a time. */
		uint64_t fanned = k->broadcasts - (k->broadcasts_unwaited < k->broadcasts ? k->broadcasts_unwaited : k->broadcasts);
		if (k->broadcast_woken > fanned && k->broadcast_woken > k->futile_after_broadcast)
			u->released_together += k->broadcast_woken - k->futile_after_broadcast;
		uint32_t id = row->obj->o.id;
		for (size_t j = m->stats_start[id]; j < m->stats_start[id + 1]; j++) {
			const struct cv_stats *ts = &m->p->stats[m->stats_of[j]];
			if (wakes_delivered(ts) && waited_on(m, row, ts->thread))
				u->peer_signals += wakes_delivered(ts);
			if (ts->thread < nt) {
				parked[ts->thread] += ts->waits;
				woke[ts->thread] += wakes_delivered(ts);
			}
		}
	}
	/* A hand-off queue (Ruby's GVL: each thread parks on a condvar of its
	 * own, and the thread letting go wakes the next one's) has no wake
	 * sent on the object its sender parked on, but every thread both parks
	 * in the monitor and wakes others in it, about as often: the wakes so
	 * balanced are handed turns too. A producer that seldom parks, and
	 * consumers that seldom wake anyone, balance few (helper-130: ruby's
	 * threads, parked 70% of their time, got no finding). */
	uint64_t handed = 0;
	for (size_t t = 0; t < nt; t++)
		handed += parked[t] < woke[t] ? parked[t] : woke[t];
	if (handed > u->peer_signals)
		u->peer_signals = handed;
	free(parked);
	free(woke);
}

/* Threads took turns through these objects: most parks ended with a wake or
 * an expired timeout, and most wakes came from the parked threads
 * themselves, one thread at a time: not most of them released together by
 * broadcasts that each woke several (a barrier made of a mutex and a
 * condvar, whose last arrival wakes the rest: helper-134's imbalance-gate
 * was "a lock in effect"). */
static int took_turns(const struct turn_use *u)
{
	return u->waits && u->signals && (double)u->ended >= MONITOR_WAKE_ENDED * (double)u->waits &&
	       (double)u->peer_signals >= MONITOR_PEER_SIGNALS * (double)u->signals &&
	       2 * u->released_together < u->ended;
}

/* The finding for threads that ran one at a time through a monitor (mu and
 * u's condvars) or, with mu NULL, a semaphore used as a lock. */
static void turn_finding(struct findings *out, struct step *st, const struct object_row *mu,
			 const struct turn_use *u, double grew, double cpus)
{
	struct finding *x = findings__add(out, FINDING_LOCK_CONTENTION, grew / st->lost);
	char names[512] = "", a[32], b[32], c[32], d[32], e[32];
	if (mu) {
		object(x, mu->name);
		claim(st, mu);
	}
	for (size_t k = 0; k < u->nparks; k++) {
		object(x, u->parks[k]->name);
		claim(st, u->parks[k]);
		size_t len = strlen(names);
		snprintf(names + len, sizeof(names) - len, "%s%s", k ? (k + 1 == u->nparks ? " and " : ", ") : "",
			 u->parks[k]->name);
	}
	st->park_claimed += u->park_grew > 0 ? u->park_grew : 0;
	x->predicted_wall_ns = predicted(st, grew);
	const struct cv_stats *k = mu ? &mu->total : NULL;
	double acq = k ? (double)k->acquisitions : 0, handoffs = acq ? (double)k->handoffs / acq : 0;
	evidence(x, "mutex_wait_ns", k ? (double)k->wait_ns : 0);
	evidence(x, "park_ns", (double)u->wait_ns);
	evidence(x, "parks", (double)u->waits);
	evidence(x, "parks_ended_by_wake_or_timeout", (double)u->ended);
	evidence(x, "timeouts", (double)u->timeouts);
	evidence(x, "wakes_from_parked_threads", (double)u->peer_signals);
	evidence(x, "handoff_fraction", handoffs);
	evidence(x, "cpus_in_use", cpus);
	size_t len;
	/* A monitor inside a runtime's known state is its interpreter lock. */
	char inside[160] = "";
	if (mu && mu->inside)
		snprintf(inside, sizeof(inside), " (inside %s)", mu->inside);
	/* "mutex m and condvars c1 and c2"; "futex turn_lock and semaphore turn_sem" */
	const char *lk = mu ? kind_name(mu->obj->o.kind) : NULL, *pk = kind_name(u->parks[0]->obj->o.kind);
	const char *plural = u->nparks == 1 ? "" : "s";
	if (mu)
		len = (size_t)snprintf(x->summary, sizeof(x->summary),
		    "Threads ran one at a time through the monitor of %s %s and %s%s %s%s: a lock in "
		    "effect. They waited %s for the %s and were parked %s on the %s%s",
		    lk, mu->name, pk, plural, names, inside, fmt_ns(a, sizeof(a), (double)k->wait_ns), lk,
		    fmt_ns(b, sizeof(b), (double)u->wait_ns), pk, plural);
	else
		len = (size_t)snprintf(x->summary, sizeof(x->summary),
		    "Threads ran one at a time through %s %s, used as a lock: they were parked on it %s",
		    kind_name(u->parks[0]->obj->o.kind), names, fmt_ns(b, sizeof(b), (double)u->wait_ns));
	if (len < sizeof(x->summary))
		len += (size_t)snprintf(x->summary + len, sizeof(x->summary) - len,
		    " (%s of the lost time%s); %s of the %s waits ended with another waiting thread's wake",
		    fmt_pct(c, sizeof(c), x->share), mu ? " together" : "", fmt_count(d, sizeof(d), u->ended - u->timeouts),
		    fmt_count(e, sizeof(e), u->waits));
	if (u->timeouts && len < sizeof(x->summary))
		len += (size_t)snprintf(x->summary + len, sizeof(x->summary) - len,
					" and %s timed waits expired (a switch interval: the waiter asks for its turn)",
					fmt_count(a, sizeof(a), u->timeouts));
	if (mu && mu->obj->o.kind != CV_OBJ_FUTEX && len < sizeof(x->summary))   /* a futex word's uncontended
										   * acquisitions are not seen */
		len += (size_t)snprintf(x->summary + len, sizeof(x->summary) - len,
					"; the %s changed owner on %s of its acquisitions", lk, fmt_pct(a, sizeof(a), handoffs));
	if (len < sizeof(x->summary))
		snprintf(x->summary + len, sizeof(x->summary) - len,
			 "; the threads' CPU time adds up to %.1f CPUs of %d.", cpus, st->n);
	say(x->fix, sizeof(x->fix),
	    "Only the thread that holds it makes progress. If it is an interpreter lock (Python's GIL, "
	    "a Perl shared lock), run the work in processes, or in native code that releases it; "
	    "otherwise hold it for less of the work, or split what it protects.");
}

/* The function of the program's own code that r's most waited stack
 * waited from (its call site's function); NULL without one. */
static const char *wait_site_function(const struct model *m, const struct object_row *r)
{
	struct stack_sum *sums;
	size_t n = callstacks__object(m->p, r->obj->o.id, &sums);
	const struct sym_frame *site = NULL;
	for (size_t i = 0; i < n && !site; i++)   /* stack 0: waits whose stack was not captured */
		site = sums[i].stack ? callstacks__site(m->syms, sums[i].stack) : NULL;
	free(sums);
	return site ? site->function : NULL;
}

/* Did one of r's wait stacks pass through fn, in the program's own code? */
static int waited_through(const struct model *m, const struct object_row *r, const char *fn)
{
	struct stack_sum *sums;
	size_t n = callstacks__object(m->p, r->obj->o.id, &sums);
	int found = 0;
	for (size_t i = 0; i < n && !found; i++) {
		const struct sym_frame **f;
		size_t nf = sums[i].stack ? callstacks__frames(m->syms, sums[i].stack, &f) : 0;
		for (size_t k = 0; k < nf && !found; k++)
			found = !f[k]->runtime && f[k]->function && !strcmp(f[k]->function, fn);
		if (nf)
			free(f);
	}
	free(sums);
	return found;
}

/* A park no call names the lock of (a semaphore, a futex word used to park,
 * a condvar whose waits named no mutex). */
static int unpaired_park(const struct object_row *r)
{
	return r->obj->o.kind == CV_OBJ_SEM || (r->obj->o.kind == CV_OBJ_COND && !r->monitor) ||
	       (r->obj->o.kind == CV_OBJ_FUTEX && wait_class_of_obj(r->obj) == WAIT_PARK);
}

/* The lock of a monitor whose calls do not name the pair: a futex word
 * used as a lock, or a mutex no condvar wait named. */
static int unpaired_lock(const struct model *m, const struct object_row *r)
{
	if (r->obj->o.kind == CV_OBJ_FUTEX)
		return 1;   /* m->locks holds only futex words used as locks */
	if (r->obj->o.kind != CV_OBJ_MUTEX)
		return 0;
	for (size_t c = 0; c < m->nconds; c++)
		if (m->conds[c]->monitor == r)
			return 0;
	return 1;
}

/* The finding for lock mu (NULL: none) and the parks in u, when threads
 * took turns through them and their growth is worth a finding; 1 if made. */
static int monitor_finding(struct findings *out, struct step *st, const struct object_row *mu, struct turn_use *u,
			   double cpus)
{
	const struct speedup *s = st->t->s;
	turn_use_sum(st, u);
	double lock_grew = mu ? speedup__lock_wait(s, mu) * st->scale - (st->ref ? speedup__lock_wait(st->ref->s, mu) : 0) : 0;
	double grew = (lock_grew > 0 ? lock_grew : 0) + (u->park_grew > 0 ? u->park_grew : 0);
	if (grew <= 0 || grew < NOISE_SHARE * st->lost || !took_turns(u))
		return 0;
	turn_finding(out, st, mu, u, grew, cpus);
	return 1;
}

/* A monitor (a mutex and the condvars waited under it) or a semaphore that
 * threads took turns through is a lock in effect, whatever the program
 * built it for (an interpreter lock, a recursive lock, a binary semaphore):
 * the waits on the mutex and the parks on its condvars are one cause.
 *
 * Where no call names the pair (a futex word for the lock, a semaphore or
 * a futex word for the condition, as runtimes build them), a lock and the
 * parks waited from the code that takes it are one monitor: the park's call
 * site is a function the lock's waits came through too (take_turn waits on
 * the semaphore and, inside it, on the lock word). That needs the program's
 * symbols; without them each is judged alone. */
static void rule_monitors(struct findings *out, struct step *st)
{
	const struct model *m = st->t->m;
	const struct speedup *s = st->t->s;
	double cpus = s->wall_ns > 0 ? s->cpu_out_ns / s->wall_ns : 0;
	if (st->n < 2 || cpus > MONITOR_MAX_CPUS)
		return;   /* more than one thread made progress at a time */
	for (size_t i = 0; i < m->nlocks; i++) {
		const struct object_row *mu = m->locks[i];
		if (mu->obj->o.kind != CV_OBJ_MUTEX)
			continue;
		struct turn_use u = { .nparks = 0 };
		for (size_t c = 0; c < m->nconds && u.nparks < FINDING_MAX_OBJECTS - 1; c++)
			if (m->conds[c]->monitor == mu)
				u.parks[u.nparks++] = m->conds[c];
		if (u.nparks)
			monitor_finding(out, st, mu, &u, cpus);
	}
	char *grouped = xcalloc(m->nparks + 1, 1);   /* parks that found their lock */
	for (size_t i = 0; m->syms && i < m->nlocks; i++) {
		const struct object_row *lock = m->locks[i];
		if (!unpaired_lock(m, lock))
			continue;
		struct turn_use u = { .nparks = 0 };
		size_t members[FINDING_MAX_OBJECTS - 1];
		for (size_t p = 0; p < m->nparks && u.nparks < FINDING_MAX_OBJECTS - 1; p++) {
			const char *fn = grouped[p] || !unpaired_park(m->parks[p]) ? NULL :
					 wait_site_function(m, m->parks[p]);
			if (fn && waited_through(m, lock, fn)) {
				members[u.nparks] = p;
				u.parks[u.nparks++] = m->parks[p];
			}
		}
		if (u.nparks && monitor_finding(out, st, lock, &u, cpus))
			for (size_t k = 0; k < u.nparks; k++)
				grouped[members[k]] = 1;
	}
	/* Semaphores and futex words used to park, alone (a runtime's own lock
	 * or condition, whose lock no call names and no stack tied to it). */
	for (size_t i = 0; i < m->nparks; i++) {
		const struct object_row *row = m->parks[i];
		if (grouped[i] || !unpaired_park(row) || row->obj->o.kind == CV_OBJ_COND)
			continue;
		struct turn_use u = { .parks = { row }, .nparks = 1 };
		monitor_finding(out, st, NULL, &u, cpus);
	}
	free(grouped);
}

static void rule_runnable(struct findings *out, const struct step *st)
{
	double grew = delta(st, STACK_RUNNABLE);
	if (grew <= 0 || grew < NOISE_SHARE * st->lost)
		return;
	const struct model *m = st->t->m;
	uint32_t cpus = st->cpus;
	int busy = st->busy;
	uint64_t invol = 0;
	for (size_t i = 0; i < m->p->nthreads; i++)
		invol += m->p->threads[i].involuntary_cs;
	/* Waiting for a CPU because the program's own threads outnumbered
	 * them is the program's doing; waiting for CPUs other processes held is
	 * the machine's, which the program cannot fix: that one is never ranked
	 * high. The launcher's switch records measure which it was; without
	 * them, the count of threads busy at once decides. */
	double own;
	int recorded, external = speedup__runq_external(m, cpus, &busy, &own, &recorded);
	struct finding *x = findings__add(out, FINDING_OVERSUBSCRIPTION, grew / st->lost);
	x->external = external;
	object(x, x->external ? "other processes" : "run queue");
	x->predicted_wall_ns = predicted(st, grew);
	evidence(x, "threads_busy", busy);
	evidence(x, "cpus", cpus);
	evidence(x, "runnable_ns", st->t->s->c[STACK_RUNNABLE]);
	evidence(x, "involuntary_switches", (double)invol);
	if (recorded)
		evidence(x, "runq_own_share", own);
	char a[32], b[32], c[32], share[160] = "";
	const char *plural = cpus == 1 ? "" : "s";
	if (recorded)
		snprintf(share, sizeof(share), "%s of the preempted threads' wait came from the program's own threads "
			 "outnumbering the CPU%s", fmt_pct(c, sizeof(c), own), plural);
	const char *runnable = fmt_ns(a, sizeof(a), st->t->s->c[STACK_RUNNABLE]);
	fmt_count(b, sizeof(b), invol);
	if (!x->external && busy > (int)cpus)
		say(x->summary, sizeof(x->summary),
		    "%d busy threads shared %u CPU%s: threads spent %s runnable but waiting for a CPU, "
		    "with %s involuntary context switches%s%s.", busy, cpus, plural, runnable, b,
		    recorded ? "; " : "", share);
	else if (!x->external)
		say(x->summary, sizeof(x->summary),
		    "The program's threads outnumbered its %u CPU%s at times: threads spent %s runnable but "
		    "waiting for a CPU, with %s involuntary context switches; %s.", cpus, plural, runnable, b, share);
	else if (busy > (int)cpus)
		say(x->summary, sizeof(x->summary),
		    "Threads spent %s runnable but waiting for a CPU: %d of them were busy at once on %u CPU%s, "
		    "but only %s; other processes competed for the machine (%s involuntary switches).",
		    runnable, busy, cpus, plural, share, b);
	else
		say(x->summary, sizeof(x->summary),
		    "Threads spent %s runnable but waiting for a CPU although only %d %s busy on %u CPU%s: "
		    "other processes competed for the machine (%s involuntary switches%s%s).",
		    runnable, busy, busy == 1 ? "was" : "were", cpus, plural, b, recorded ? "; " : "", share);
	if (x->external)
		say(x->fix, sizeof(x->fix),
		    "Nothing in the program: measure on an idle machine (or pin the program to CPUs "
		    "nothing else uses); until then these timings include other processes' load.");
	else
		say(x->fix, sizeof(x->fix),
		    "Run at most one busy thread per CPU (%u here): size the pool from "
		    "sysconf(_SC_NPROCESSORS_ONLN) or the affinity mask, not from the amount of work.", cpus);
}

/* Each worker's working time: alive, not joining, not blocked, not
 * spinning for a lock and not waiting for a CPU (on a CPU, or off-CPU
 * inside its own work, such as a sleeping task): threads that share too few
 * CPUs are not uneven, and the worker that spun most is not the busiest. The
 * main thread is left out when there are workers (it sets up and joins), and
 * so are threads that lived less than a tenth of the run: a worker is there
 * for the run, and churned threads have their own rule. */
static size_t working_times(const struct run_view *r, double *out, size_t *thread)
{
	const struct model *m = r->m;
	const struct profile *p = m->p;
	const struct cpuprof *c = m->cpu;
	double *error = xcalloc(p->nthreads ? p->nthreads : 1, sizeof(double)), mean = 0;
	size_t n = 0;
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct cv_thread_rec *t = &p->threads[i];
		if (t->flags & CV_THREAD_MAIN && p->nthreads > 1)
			continue;
		if ((double)(t->end_ns - t->start_ns) < 0.1 * r->s->wall_ns)
			continue;
		if (i < r->s->nthreads && r->s->t[i].role != ROLE_WORKER)
			continue;   /* a helper's or waiter's time is not a share of the work */
		/* The sampled time spinning in lock implementations and spin
		 * loops, beyond the lock waits the shim timed (a lock it wraps
		 * spins inside the timed call; a hand-written spinlock, or Rust's
		 * spin before its futex wait, is not timed). Its sampling error:
		 * each of the thread's samples spun or did not (binomial), and a
		 * count of samples stands for its CPU time to within a period. */
		double k = c ? (double)c->thread_spin[i] : 0, samples = c ? (double)c->thread_samples[i] : 0;
		double period = c ? (double)c->smp.period_ns : 0;
		double spin = k * period - (double)m->thread_lock_wait[i];
		if (spin < 0)
			spin = 0;
		error[n] = spin > 0 && samples > 0 ? period * (sqrt(k * (samples - k) / samples) + 1) : 0;
		double u = (double)(t->end_ns - t->start_ns) - (double)t->join_wait_ns - spin -
			   (double)(m->thread_lock_wait[i] + m->thread_cond_wait[i] + m->thread_barrier_wait[i]);
		if (u < 0)
			u = 0;
		/* The run-queue delay outside the waits, as in the stack (the
		 * rest followed wake-ups and is inside the waits just taken out). */
		double on_cpu = (double)t->cpu_ns > spin ? (double)t->cpu_ns - spin : 0;
		double cpu = on_cpu < u ? on_cpu : u;
		double runnable = (double)t->run_delay_ns < u - cpu ? (double)t->run_delay_ns : u - cpu;
		thread[n] = i;
		out[n++] = u - runnable;
		mean += u - runnable;
	}
	/* Workers that did little but spin differ by the spin samples' noise:
	 * a working time within two standard errors of the workers' mean is
	 * taken as the mean, one farther is moved that much towards it. */
	mean = n ? mean / (double)n : 0;
	for (size_t w = 0; w < n; w++) {
		double off = out[w] - mean, margin = 2 * error[w];
		out[w] = fabs(off) <= margin ? mean : out[w] - (off > 0 ? margin : -margin);
	}
	free(error);
	return n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The most worker threads (speedup.h's role) alive at once in run r: its
 * workers' lifetimes swept in time order, an end before a start at the
 * same instant. 0: no worker. */
static int most_workers_at_once(const struct run_view *r)
{
	const struct profile *p = r->m->p;
	uint64_t *edges = xcalloc(2 * (p->nthreads ? p->nthreads : 1), sizeof(uint64_t));
	size_t n = 0;
	for (size_t i = 0; i < p->nthreads && i < r->s->nthreads; i++) {
		const struct cv_thread_rec *t = &p->threads[i];
		if (r->s->t[i].role != ROLE_WORKER || t->end_ns <= t->start_ns)
			continue;
		edges[n++] = t->start_ns << 1 | 1;   /* a start sorts after an end at the same ns */
		edges[n++] = t->end_ns << 1;
	}
	qsort(edges, n, sizeof(*edges), by_u64);
	int alive = 0, most = 0;
	for (size_t i = 0; i < n; i++) {
		alive += edges[i] & 1 ? 1 : -1;
		most = alive > most ? alive : most;
	}
	free(edges);
	return most;
}

/* Idle slots and long parks: fewer workers than threads asked for, uneven
 * work, or a serial phase. */
static void rule_imbalance_and_parks(struct findings *out, const struct step *st, int idle_claimed)
{
	const struct profile *p = st->t->m->p;
	double idle = idle_claimed ? 0 : delta(st, STACK_IDLE), park = delta(st, STACK_PARK) - st->park_claimed;
	double *busy = xcalloc(p->nthreads, sizeof(double));
	size_t *thread = xcalloc(p->nthreads, sizeof(size_t)), busiest = 0;
	size_t n = working_times(st->t, busy, thread);
	double ratio = 0, median = 0, max = 0, shortfall = 0;
	if (n >= 2) {
		for (size_t i = 1; i < n; i++)
			if (busy[i] > busy[busiest])
				busiest = i;
		busiest = thread[busiest];
		qsort(busy, n, sizeof(double), cmp_double);
		median = busy[(n - 1) / 2];   /* the lower median: with two workers, the idle one */
		max = busy[n - 1];
		ratio = median > 0 ? max / median : (max > 0 ? INFINITY : 0);
		/* The most idle and park time uneven work can explain: each
		 * worker's working time short of the busiest one's. The rest
		 * was waiting that evener work would not have filled. */
		for (size_t i = 0; i < n; i++)
			shortfall += max - busy[i];
	}
	free(thread);
	free(busy);

	/* Parks (condvars, semaphores, barriers, futexes): many short ones are
	 * the cost of sleeping and waking. */
	const struct park_totals *pk = &st->t->m->park;
	uint64_t waits = pk->parks, unwaited = pk->wakes_unwaited, signals = pk->wakes_sent, vol = 0;
	for (size_t i = 0; i < p->nthreads; i++)
		vol += p->threads[i].voluntary_cs;
	double latency = pk->wakeups ? (double)pk->wake_latency_ns / (double)pk->wakeups : 0;
	double park_total = st->t->s->c[STACK_PARK];
	double avg_park = waits ? park_total / (double)waits : 0;
	int imbalanced = ratio >= IMBALANCE_RATIO;
	if (park > NOISE_SHARE * st->lost && park > 0 && avg_park < SHORT_PARK_NS && !imbalanced &&
	    !st->oversubscribed) {
		struct finding *x = findings__add(out, FINDING_PARK_WAKE, park / st->lost);
		object(x, st->t->m->nparks ? st->t->m->parks[0]->name : "parks");
		x->predicted_wall_ns = predicted(st, park);
		evidence(x, "parks", (double)waits);
		evidence(x, "wake_latency_avg_ns", latency);
		evidence(x, "parks_per_unit", st->t->m->total_progress ? (double)waits / (double)st->t->m->total_progress : 0);
		evidence(x, "park_ns", park_total);
		evidence(x, "avg_park_ns", avg_park);
		evidence(x, "wakeups_sent", (double)signals);
		evidence(x, "wakeups_unwaited", (double)unwaited);
		evidence(x, "voluntary_switches", (double)vol);
		char a[32], b[32], c[32], d[32];
		size_t len = (size_t)snprintf(x->summary, sizeof(x->summary),
		    "Threads parked %s times for %s on average (%s in all) and were woken again: each "
		    "sleep and wake costs system calls and a context switch (%s voluntary switches",
		    fmt_count(a, sizeof(a), waits), fmt_ns(b, sizeof(b), avg_park),
		    fmt_ns(c, sizeof(c), park_total), fmt_count(d, sizeof(d), vol));
		if (st->t->m->total_progress && len < sizeof(x->summary))
			len += (size_t)snprintf(x->summary + len, sizeof(x->summary) - len, ", %.3g parks per unit of work",
						(double)waits / (double)st->t->m->total_progress);
		if (latency > 0 && len < sizeof(x->summary))
			len += (size_t)snprintf(x->summary + len, sizeof(x->summary) - len,
						"); a wake-up took %s from the wake call to the waiter running (",
						fmt_ns(b, sizeof(b), latency));
		else if (len < sizeof(x->summary))
			len += (size_t)snprintf(x->summary + len, sizeof(x->summary) - len, "; ");
		if (len < sizeof(x->summary))
			snprintf(x->summary + len, sizeof(x->summary) - len, "%s of the %s wake-ups found nobody waiting).",
				 fmt_count((char[32]){0}, 32, unwaited), fmt_count((char[32]){0}, 32, signals));
		say(x->fix, sizeof(x->fix),
		    "Spin briefly before parking (seed 002's idle spin: poll for a few microseconds), "
		    "batch hand-offs so a waiter has more to do per wake, and skip the signal when no "
		    "thread is parked.");
		park = 0;   /* explained */
	}
	/* Fewer workers alive at once than the N asked for, and than the CPUs
	 * could run: that many slots no thread filled for the whole run,
	 * whatever the workers did (a pool capped below N; work cut into fewer
	 * pieces than threads: xz -T4 on a file of three blocks runs three).
	 * Slots past the CPUs are not counted: a thread there would only have
	 * waited for a CPU (oversubscription's). Claimed first: a serial
	 * phase or uneven work can only explain the idle time left. */
	const struct speedup *ts = st->t->s;
	int at_once = most_workers_at_once(st->t);
	int usable = st->cpus && (int)st->cpus < ts->threads ? (int)st->cpus : ts->threads;
	if (at_once >= 1 && at_once < usable && idle > NOISE_SHARE * st->lost) {
		int empty = usable - at_once;
		double never = (double)empty * ts->wall_ns * st->scale;
		double claim = never < idle ? never : idle;
		struct finding *x = findings__add(out, FINDING_LOAD_IMBALANCE, claim / st->lost);
		object(x, "workers");
		x->predicted_wall_ns = predicted(st, claim);
		evidence(x, "workers_at_once", at_once);
		evidence(x, "threads_asked", ts->threads);
		evidence(x, "idle_ns", ts->c[STACK_IDLE]);
		char a[32], workers[640];
		speedup__role_threads_text(ts, st->t->m, ROLE_WORKER, workers, sizeof(workers));
		int made = 0;   /* threads the process made: none, and its parallel work may be in other processes */
		for (size_t i = 0; i < p->nthreads; i++)
			made += p->threads[i].threads_created > 0;
		say(x->summary, sizeof(x->summary),
		    "Fewer workers than threads: at most %d worker thread%s ran at once (%s) where %d were "
		    "asked for on %u CPUs, so %d slot%s a CPU could have run had no thread for the whole run (%s)%s",
		    at_once, at_once == 1 ? "" : "s", workers, ts->threads, st->cpus, empty, empty == 1 ? "" : "s",
		    fmt_ns(a, sizeof(a), claim / st->scale),
		    made ? "." : ". The process made no thread at all: where the command's work runs in other "
				 "processes (make -j, xargs -P), that is theirs, which convoy does not add up.");
		if (made)
			say(x->fix, sizeof(x->fix),
			    "Give the program at least as many independent pieces of work as threads (smaller blocks, "
			    "chunks or tasks), or ask for no more threads than it keeps busy (%d here).", at_once);
		else {
			x->at_most_medium = 1;   /* the command may be parallel in processes */
			say(x->fix, sizeof(x->fix),
			    "If the program should use the threads it was asked for, make it start them; if its "
			    "parallel work runs in child processes, convoy explains threads within one process "
			    "(--comm NAME picks which).");
		}
		idle -= claim;
	}
	/* Even workers, but the thread that made them ran alone while the other
	 * slots had none: a serial phase (setup, or work between parallel
	 * phases), named with its thread. A worker left alone at the end is the
	 * workers' uneven finish, not a serial phase. */
	long alone = speedup__serial_thread(st->t->s);
	if (!imbalanced && idle > NOISE_SHARE * st->lost && alone >= 0 && p->threads[alone].threads_created > 0) {
		const struct speedup *s = st->t->s;
		double serial = s->t[alone].alone * (s->threads - 1) * st->scale;
		double claim = serial < idle ? serial : idle;
		struct finding *x = findings__add(out, FINDING_LOAD_IMBALANCE, claim / st->lost);
		char who[128], text[768];
		findings__thread_label(st->t->m, &p->threads[alone], who, sizeof(who));
		object(x, who);
		x->predicted_wall_ns = predicted(st, claim);
		evidence(x, "alone_ns", s->t[alone].alone);
		evidence(x, "idle_ns", s->c[STACK_IDLE]);
		speedup__serial_text(s, st->t->m, text, sizeof(text));
		say(x->summary, sizeof(x->summary), "A serial phase: %s", text);
		say(x->fix, sizeof(x->fix),
		    "Parallelise what %s does alone (split the loading or setup between the threads, or "
		    "overlap it with the work), or start the workers earlier so they are not idle meanwhile.", who);
	}
	double uneven = (imbalanced ? idle : 0) + park;
	if (uneven > shortfall * st->scale)
		uneven = shortfall * st->scale;
	if (uneven > NOISE_SHARE * st->lost && imbalanced) {
		struct finding *x = findings__add(out, FINDING_LOAD_IMBALANCE, uneven / st->lost);
		object(x, "workers");
		x->predicted_wall_ns = predicted(st, uneven);
		evidence(x, "busiest_working_ns", max);
		evidence(x, "median_working_ns", median);
		evidence(x, "idle_ns", st->t->s->c[STACK_IDLE]);
		evidence(x, "park_ns", park_total);
		char a[32], b[32], c[32], who[200], where[640];
		speedup__thread_text(st->t->m, busiest, who, sizeof(who));
		speedup__thread_site(st->t->m, busiest, where, sizeof(where));
		say(x->summary, sizeof(x->summary),
		    "Work was spread unevenly: the busiest worker, %s, worked %s%s%s; the median one %s "
		    "(%.1f×), so the others sat idle or parked for %s while it finished.", who,
		    fmt_ns(a, sizeof(a), max), where[0] ? ", " : "", where, fmt_ns(b, sizeof(b), median), ratio,
		    fmt_ns(c, sizeof(c), uneven / st->scale));
		say(x->fix, sizeof(x->fix),
		    "Let idle threads take work from busy ones (work stealing), or cut the work into "
		    "more, smaller pieces than threads so the last piece is short; if the busiest thread "
		    "is a stage the others wait on (a producer feeding a queue), split its work between threads.");
	}
}

/* A thread's label: its start routine's symbol, else its name, else the
 * routine's address; the main thread is "main". */
const char *findings__thread_label(const struct model *m, const struct cv_thread_rec *t, char *buf, size_t size)
{
	if (t->flags & CV_THREAD_MAIN)
		snprintf(buf, size, "main");
	else if (t->start_routine && syms__name(m->syms, t->start_routine, buf, size))
		return buf;
	else if (t->name[0])
		snprintf(buf, size, "%s", t->name);
	else
		snprintf(buf, size, "thread@0x%llx", (unsigned long long)t->start_routine);
	return buf;
}


/* The start routine most created threads ran (the churned work), the thread
 * that created most of those, and how many ran it. */
static size_t churned_routine(const struct model *m, char *routine, size_t rsize, char *creator, size_t csize)
{
	const struct profile *p = m->p;
	uint64_t *keys = xcalloc(p->nthreads ? p->nthreads : 1, sizeof(uint64_t));
	size_t n = 0, best = 0, best_n = 0;
	for (size_t i = 0; i < p->nthreads; i++)
		if (!(p->threads[i].flags & CV_THREAD_MAIN))
			keys[n++] = p->threads[i].start_routine;
	qsort(keys, n, sizeof(*keys), by_u64);
	uint64_t top = 0;
	for (size_t i = 0; i < n; i = best) {
		for (best = i; best < n && keys[best] == keys[i]; best++)
			;
		if (best - i > best_n) {
			best_n = best - i;
			top = keys[i];
		}
	}
	const struct cv_thread_rec *one = NULL;
	size_t k = 0;   /* keys now holds the creators of the threads that ran it */
	for (size_t i = 0; i < p->nthreads; i++)
		if (!(p->threads[i].flags & CV_THREAD_MAIN) && p->threads[i].start_routine == top) {
			one = one ? one : &p->threads[i];
			keys[k++] = (uint64_t)(uint32_t)p->threads[i].creator_tid;
		}
	qsort(keys, k, sizeof(*keys), by_u64);
	int32_t maker = 0;
	size_t maker_n = 0;
	for (size_t i = 0, j; i < k; i = j) {
		for (j = i; j < k && keys[j] == keys[i]; j++)
			;
		if (j - i > maker_n) {
			maker_n = j - i;
			maker = (int32_t)(uint32_t)keys[i];
		}
	}
	free(keys);
	if (one)
		findings__thread_label(m, one, routine, rsize);
	else
		snprintf(routine, rsize, "(unknown)");
	snprintf(creator, csize, "an untracked thread");
	for (size_t i = 0; i < p->nthreads; i++)
		if (maker && p->threads[i].tid == maker)
			findings__thread_label(m, &p->threads[i], creator, csize);
	return best_n;
}

/* Returns whether it fired (it then claims the idle slots). */
static int rule_churn(struct findings *out, const struct step *st)
{
	const struct profile *p = st->t->m->p;
	uint64_t created = 0;
	double create_ns = 0, lifetimes = 0;
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct cv_thread_rec *t = &p->threads[i];
		created += t->threads_created;
		create_ns += (double)t->create_ns;
		if (!(t->flags & CV_THREAD_MAIN))
			lifetimes += (double)(t->end_ns - t->start_ns);
	}
	if (created < CHURN_MIN_THREADS)
		return 0;
	double mean_life = lifetimes / (double)created, mean_create = create_ns / (double)created;
	/* Threads that live only a few times longer than they take to create are
	 * churn; the idle slots while they are created one by one are its cost. */
	if (mean_life > 50 * mean_create)
		return 0;
	double idle = delta(st, STACK_IDLE);
	double cost = create_ns * st->scale + (idle > 0 ? idle : 0);
	struct finding *x = findings__add(out, FINDING_THREAD_CHURN, cost / st->lost);
	char routine[256], creator[256];
	size_t same = churned_routine(st->t->m, routine, sizeof(routine), creator, sizeof(creator));
	object(x, routine);
	x->predicted_wall_ns = predicted_less_work(st, cost, create_ns);   /* made by the creator, on a CPU */
	evidence(x, "threads_created", (double)created);
	evidence(x, "create_ns", create_ns);
	evidence(x, "mean_create_ns", mean_create);
	evidence(x, "mean_lifetime_ns", mean_life);
	char a[32], b[32], c[32], d[32];
	char who[600];
	if (same == created)
		snprintf(who, sizeof(who), "%s threads running %s were created by %s", fmt_count(a, sizeof(a), created),
			 routine, creator);
	else
		snprintf(who, sizeof(who), "%s threads were created, %s of them running %s, by %s",
			 fmt_count(a, sizeof(a), created), fmt_count(b, sizeof(b), same), routine, creator);
	say(x->summary, sizeof(x->summary),
	    "%s, each living %s on average while its creation took %s (%s inside pthread_create in all): "
	    "the program pays for a thread per piece of work.",
	    who, fmt_ns(b, sizeof(b), mean_life), fmt_ns(c, sizeof(c), mean_create), fmt_ns(d, sizeof(d), create_ns));
	say(x->fix, sizeof(x->fix),
	    "Create the threads once (a pool sized to the CPUs) and hand them tasks through a queue "
	    "instead of %s creating a thread to run %s per task.", creator, routine);
	return 1;
}

/* With more busy threads than CPUs, threads at a barrier wait for the ones
 * still waiting for a CPU: that time is the oversubscription's, and its
 * finding (from rule_runnable) claims it. Returns whether there was one. */
static int claim_for_oversubscription(struct findings *out, const struct step *st, double grew, const char *name)
{
	for (size_t i = 0; i < out->n; i++) {
		struct finding *x = &out->v[i];
		if (x->kind != FINDING_OVERSUBSCRIPTION || x->external)
			continue;
		double claimed = x->share * st->lost + grew;
		x->share = claimed / st->lost > 1 ? 1 : claimed / st->lost;
		x->predicted_wall_ns = predicted(st, claimed);
		evidence(x, "barrier_ns", grew / st->scale);
		size_t len = strlen(x->summary);
		char a[32];
		snprintf(x->summary + len, sizeof(x->summary) - len,
			 " Threads also waited %s more at barrier %s for the threads that were waiting for a CPU.",
			 fmt_ns(a, sizeof(a), grew / st->scale), name);
		return 1;
	}
	return 0;
}

/* Time at barriers: threads arriving unevenly (the spread between the
 * first and last arrival of a round) or, when they arrive together, the
 * cost of parking and waking each round. */
static void rule_barriers(struct findings *out, const struct step *st)
{
	double grew = delta(st, STACK_BARRIER);
	const struct model *m = st->t->m;
	if (grew <= 0 || grew < NOISE_SHARE * st->lost || !m->nbarriers)
		return;
	const struct object_row *row = m->barriers[0];   /* most wait */
	const struct cv_stats *k = &row->total;
	double rounds = (double)k->rounds, parks = k->waits > k->rounds ? (double)(k->waits - k->rounds) : 0;
	double spread = rounds ? (double)k->imbalance_ns / rounds : 0;
	double avg_wait = parks ? (double)k->wait_ns / parks : 0;
	/* The first arrival waits the whole spread for the last, later ones
	 * less: uneven arrivals explain an average wait up to the spread (twice
	 * it, to allow for the wake-up). Waiting longer is sleeping and waking.
	 * The run queue's part of the waits (speedup.c) is left out. */
	double barrier_ns = st->t->s->c[STACK_BARRIER];
	double avg_blocked = parks ? barrier_ns / parks : 0;
	/* Barriers whose rounds the shim cannot see (OpenMP's, preload/gomp.c)
	 * have no spread: short waits are then taken for the cost of sleeping
	 * and waking, long ones for uneven work, and the finding is suspected. */
	int unseen = !rounds;
	int uneven = unseen ? avg_wait >= SHORT_PARK_NS : avg_blocked <= 2 * spread;
	if (st->oversubscribed && claim_for_oversubscription(out, st, grew, row->name))
		return;
	struct finding *x = findings__add(out, uneven ? FINDING_LOAD_IMBALANCE : FINDING_PARK_WAKE, grew / st->lost);
	x->suspected = unseen;
	object(x, row->name);
	x->predicted_wall_ns = predicted(st, grew);
	evidence(x, "rounds", rounds);
	evidence(x, "barrier_ns", barrier_ns);
	evidence(x, "avg_wait_ns", avg_wait);
	evidence(x, "avg_spread_ns", spread);
	evidence(x, "max_spread_ns", (double)k->max_imbalance_ns);
	char a[32], b[32], c[32], d[32], e[32];
	if (unseen)
		say(x->summary, sizeof(x->summary),
		    "Threads waited %s at barrier %s, %s waits of %s on average. Its rounds are not recorded "
		    "(a runtime's own barrier), so uneven work and the cost of sleeping and waking each "
		    "round cannot be told apart; %s.",
		    fmt_ns(a, sizeof(a), (double)k->wait_ns), row->name, fmt_count(b, sizeof(b), k->waits),
		    fmt_ns(c, sizeof(c), avg_wait),
		    uneven ? "waits this long suggest the threads arrive unevenly" :
			     "waits this short suggest the cost is synchronising itself");
	else
		say(x->summary, sizeof(x->summary),
		    "Threads waited %s at barrier %s over %s rounds, %s per parked arrival; the last thread "
		    "arrived %s after the first on average (at most %s)%s.",
		    fmt_ns(a, sizeof(a), (double)k->wait_ns), row->name, fmt_count(b, sizeof(b), k->rounds),
		    fmt_ns(c, sizeof(c), avg_wait), fmt_ns(d, sizeof(d), spread),
		    fmt_ns(e, sizeof(e), (double)k->max_imbalance_ns),
		    uneven ? ": each round lasts as long as its slowest thread" :
			     ", so most of the wait is going to sleep and being woken each round");
	if (uneven)
		say(x->fix, sizeof(x->fix),
		    "Even out the work between barrier rounds (hand out smaller pieces dynamically "
		    "instead of a fixed share per thread), or synchronise less often.");
	else
		say(x->fix, sizeof(x->fix),
		    "Synchronise less often (more work per round), or let threads poll briefly before "
		    "parking at %s when they have a CPU each.", row->name);
}

/* The located form of the inflation rule: the CPU samples' data addresses
 * found the line (cachelines.h). Its words, their threads and sampled
 * writes are the evidence. */
static void located_sharing(struct finding *x, const struct step *st, const struct cache_line *l, double cpu,
			    double ref_cpu)
{
	const struct model *m = st->t->m;
	const struct cpuprof *c = m->cpu;
	int true_sharing = l->verdict == LINE_TRUE_SHARING;
	x->kind = true_sharing ? FINDING_TRUE_SHARING : FINDING_FALSE_SHARING;
	x->suspected = 0;
	char words[640] = "", name[256], a[32], b[32], d[32];
	size_t len = 0;
	uint64_t writes = 0;
	for (size_t u = 0; u < l->nuses; u++) {
		const struct word_use *w = &l->uses[u];
		writes += w->writes;
		cachelines__word_name(m, w->word, name, sizeof(name));
		int seen = 0;
		for (size_t k = 0; k < x->nobjects; k++)
			seen |= !strcmp(x->objects[k], name);
		if (!seen)
			object(x, name);
		if (!w->writes && !w->reads && !w->watched_writes)
			continue;   /* a thread a watchpoint saw not writing it: in the evidence, not the sentence */
		if (len < sizeof(words))
			len += (size_t)snprintf(words + len, sizeof(words) - len, "%s+%llu %s (thread %d: %llu writes, %llu reads",
						len ? ", " : "", (unsigned long long)(w->word - l->addr), name,
						m->p->threads[w->thread].tid, (unsigned long long)w->writes,
						(unsigned long long)w->reads);
		if (len < sizeof(words) && w->watched)
			len += (size_t)snprintf(words + len, sizeof(words) - len, "; %llu writes watched",
						(unsigned long long)w->watched_writes);
		if (len < sizeof(words))
			len += (size_t)snprintf(words + len, sizeof(words) - len, ")");
	}
	double line_share = (double)l->samples / (double)c->samples;
	evidence(x, "line_cpu_share", line_share);
	evidence(x, "threads", l->threads);
	evidence(x, "writing_threads", l->writers);
	evidence(x, "sampled_writes", (double)writes);
	evidence(x, "decoded_samples", (double)c->lines.decoded);
	/* Hardware watchpoints' exact write counts: a verdict they show alone is
	 * confirmed; one they did not see yet stays the samples'. */
	const char *watch = cachelines__evidence_name(l);
	int confirmed = !strcmp(watch, "confirmed");
	evidence(x, "watched_writes", (double)l->watched_writes);
	evidence(x, "confirmed_by_watchpoints", confirmed);
	char confirmation[160] = "";
	if (confirmed)
		say(confirmation, sizeof(confirmation), " Hardware watchpoints confirmed it: %llu writes counted, per "
		    "thread and word above.", (unsigned long long)l->watched_writes);
	else if (l->watched)
		say(confirmation, sizeof(confirmation), " Hardware watchpoints counted %llu writes to it, too few "
		    "threads yet to confirm it.", (unsigned long long)l->watched_writes);
	say(x->summary, sizeof(x->summary),
	    "%s of the sampled CPU time at %d threads is on one 64-byte cache line (0x%llx), %s: %s. "
	    "The same work took %s of CPU at %d threads against %s at %d (%.1f×).%s%s",
	    fmt_pct(a, sizeof(a), line_share), st->n, (unsigned long long)l->addr,
	    true_sharing ? "where threads write the same word" : "where threads write different words", words,
	    fmt_ns(b, sizeof(b), cpu), st->n, fmt_ns(d, sizeof(d), ref_cpu), st->ref->s->threads,
	    ref_cpu > 0 ? cpu / ref_cpu : 0, confirmation,
	    l->sync_object ? " A lock or other sync object lies on the same line, so its hand-offs drag this data "
			     "along (and the data's writes slow the lock)." : "");
	if (true_sharing)
		say(x->fix, sizeof(x->fix),
		    "Stop writing %s from every thread: keep a per-thread count (or batch the updates) and combine "
		    "at the end; making it atomic keeps it correct but not cheap.", x->objects[0]);
	else
		say(x->fix, sizeof(x->fix),
		    "Give each thread's data a cache line of its own: align or pad each element to 64 bytes "
		    "(alignas(64)), or keep it thread-local and combine at the end.");
}

/* Threads spinning on one word (a hand-written spinlock, a counter updated
 * by compare-and-swap, a flag polled): the cost of a lock, not of sharing
 * data, named by the word spun on. Data written on the same line (under
 * the lock, typically) moves with it: said, not the cause. */
static void located_spin(struct finding *x, const struct step *st, const struct cache_line *l, double cpu,
			 double ref_cpu)
{
	const struct model *m = st->t->m;
	const struct cpuprof *c = m->cpu;
	const struct word_use *word = NULL;
	uint64_t best = 0;
	for (size_t u = 0; u < l->nuses; u++) {
		uint64_t on_word = 0;
		if (!l->uses[u].spins)
			continue;   /* named after an access spun on, not a wider one around it */
		for (size_t k = 0; k < l->nuses; k++)
			on_word += cachelines__overlap(&l->uses[k], &l->uses[u]) ? l->uses[k].spins : 0;
		if (on_word > best)
			best = on_word, word = &l->uses[u];
	}
	char name[256], threads[400] = "", beside[400] = "", other[256], a[32], b[32], d[32];
	size_t len = 0, blen = 0;
	cachelines__word_name(m, word->word, name, sizeof(name));
	object(x, name);
	for (size_t u = 0; u < l->nuses; u++) {
		const struct word_use *w = &l->uses[u];
		if (w->spins && cachelines__overlap(w, word) && len < sizeof(threads))
			len += (size_t)snprintf(threads + len, sizeof(threads) - len, "%sthread %d %llu samples",
						len ? ", " : "", m->p->threads[w->thread].tid, (unsigned long long)w->spins);
		int named = 0;   /* once per word, at its first use */
		for (size_t k = 0; k < u && !named; k++)
			named = l->uses[k].word == w->word;
		if (!cachelines__overlap(w, word) && (w->writes || w->watched_writes) && !named && blen < sizeof(beside))
			blen += (size_t)snprintf(beside + blen, sizeof(beside) - blen, "%s%s", blen ? ", " : "",
						 cachelines__word_name(m, w->word, other, sizeof(other)));
	}
	double share = (double)l->spins / (double)c->samples;
	evidence(x, "spin_cpu_share", share);
	evidence(x, "watched_writes", (double)l->watched_writes);
	char data[480] = "";
	if (blen)
		say(data, sizeof(data), " Data written on the same line moves with the lock: %s.", beside);
	say(x->summary, sizeof(x->summary),
	    "%s of the sampled CPU time at %d threads is spent in loops spinning on %s (line 0x%llx: "
	    "compare-and-swap, test-and-set or polling), as on a lock (%s). The same work took %s of CPU at %d threads "
	    "against %s at %d (%.1f×).%s",
	    fmt_pct(a, sizeof(a), share), st->n, name, (unsigned long long)l->addr, threads,
	    fmt_ns(b, sizeof(b), cpu), st->n, fmt_ns(d, sizeof(d), ref_cpu), st->ref->s->threads,
	    ref_cpu > 0 ? cpu / ref_cpu : 0, data);
	say(x->fix, sizeof(x->fix),
	    "If %s is a lock: hold it for less time, take it less often, or use one that parks after a short "
	    "spin (pthread_mutex_t); if it is a counter updated by compare-and-swap: keep per-thread counts "
	    "and combine them at the end.", name);
}

/* The CPU time (of cpu in all) sampled on line l: its share of the CPU
 * samples, or of the PMU's memory samples where that is larger (those
 * sample memory accesses only: an upper bound). */
static double line_cpu(const struct cpuprof *c, const struct cache_line *l, double cpu)
{
	double cpu_share = c->samples ? (double)l->samples / (double)c->samples : 0;
	double pmu_share = c->lines.pmu ? (double)l->pmu_samples / (double)c->lines.pmu : 0;
	return cpu * (cpu_share > pmu_share ? cpu_share : pmu_share);
}

static void rule_inflation(struct findings *out, const struct step *st)
{
	if (!st->ref)
		return;   /* needs a reference run to know what the work costs */
	double grew = st->inflation_left;   /* what no lock claimed */
	const struct cpuprof *c = st->t->m->cpu;
	double ref_cpu = st->ref->s->cpu_out_ns, cpu = st->t->s->cpu_out_ns * st->scale;
	/* The hottest line shared or spun on; if spun on, the shared line
	 * after it is not what the time went to. */
	const struct cache_line *top = cpuprof__top_line(c), *line = cpuprof__top_shared_line(c);
	/* A located line explains at most the CPU time sampled on it: the
	 * misses of a line that moves between cores stall the accesses to it,
	 * and the rest of the growth is not its. One that explains too little
	 * to be worth a finding is as good as none (a starved host's Python
	 * sweep: 2 of 50 decoded samples on a reference count that both
	 * threads wrote, in turns, under the GIL claimed a quarter of the lost
	 * time, and ranked above the GIL). */
	const struct cache_line *located = top && top->verdict == LINE_SPIN ? top : line;
	double on_line = located ? line_cpu(c, located, cpu) : 0;
	if (located && on_line < NOISE_SHARE * st->lost)
		located = top = line = NULL;
	else if (located && grew > on_line)
		grew = on_line;
	/* Located, it is evidence like a lock's waits; inferred, it must explain
	 * much of the loss to be worth a guess. */
	if (grew <= 0 || grew < (top ? NOISE_SHARE : INFLATION_MIN_SHARE) * st->lost)
		return;
	/* Withdrawn: most samples' data addresses are known and no line that
	 * is written by one thread and used by another, or spun on, explains
	 * the growth. */
	if (!top && c && c->samples && (double)c->lines.decoded >= DECODED_ENOUGH * (double)c->samples)
		return;
	const struct profile *p = st->t->m->p;
	struct finding *x = findings__add(out, FINDING_TRUE_SHARING, grew / st->lost);
	x->predicted_wall_ns = predicted(st, grew);
	evidence(x, "reference_cpu_ns", ref_cpu);
	evidence(x, "cpu_ns", cpu);
	double inflation = ref_cpu > 0 ? cpu / ref_cpu : 0;
	evidence(x, "inflation", inflation);
	if (located)
		evidence(x, "line_cpu_ns", on_line);
	if (top && top->verdict == LINE_SPIN) {
		x->kind = FINDING_LOCK_CONTENTION;
		located_spin(x, st, top, cpu, ref_cpu);
		return;
	}
	if (line) {
		located_sharing(x, st, line, cpu, ref_cpu);
		return;
	}
	x->suspected = 1;
	object(x, "shared cache lines (not located)");
	int hw = (p->process.perf_valid >> CV_PERF_CACHE_MISSES) & 1;
	char a[32], b[32], d[32], why[256] = "", others[400] = "";   /* unsampled (a recording made without): nothing to add */
	if (c && c->lines.available)
		say(why, sizeof(why), " Only %s of the CPU samples' data addresses could be decoded (binaries "
		    "not read, or code without memory operands), too few to locate the lines.",
		    fmt_pct(d, sizeof(d), c->samples ? (double)c->lines.decoded / (double)c->samples : 0));
	else if (c)
		say(why, sizeof(why), " Nothing located the lines: %.200s.", decoder__why_not());
	/* Busy cores slow each other with no line shared: two hardware
	 * threads of one core run at down to half speed each; memory
	 * bandwidth, a lower clock with more cores busy and a virtual
	 * machine's host slow them too. Short of twice the CPU, the suspicion
	 * fits those as well: never high (nor with no reference CPU to
	 * compare). */
	x->at_most_medium = inflation < CORES_SLOW_EACH_OTHER;
	if (x->at_most_medium && ref_cpu > 0)
		say(others, sizeof(others), " Cores slowed by each other or by other load take up to %g× the CPU "
		    "for the same work with no line shared: two hardware threads of one core, memory bandwidth, "
		    "a lower clock with more cores busy, the other guests of a virtual machine's host (not "
		    "always counted as steal time).", CORES_SLOW_EACH_OTHER);
	say(x->summary, sizeof(x->summary),
	    "Suspected cache-line sharing: the same work took %s of CPU at %d threads against %s at %d "
	    "(%.1f×), with no lock, park or run-queue wait to explain it — the pattern of threads "
	    "writing the same variable (true sharing) or neighbouring ones (false sharing). %s%s%s",
	    fmt_ns(a, sizeof(a), cpu), st->n, fmt_ns(b, sizeof(b), ref_cpu), st->ref->s->threads,
	    inflation, hw ? "Hardware cache-miss counts are in the profile." :
			    "No hardware PMU here, so cache misses could not be counted.", why, others);
	say(x->fix, sizeof(x->fix),
	    "Find the data every thread writes (a shared counter, statistics, a flag): give each "
	    "thread its own copy and combine them at the end, and keep independently written fields "
	    "on separate 64-byte cache lines.");
}

static enum severity severity(double share, double lost_fraction)
{
	if (share >= 0.25 && lost_fraction >= 0.2)
		return SEVERITY_HIGH;
	if (share >= 0.1 && lost_fraction >= 0.1)
		return SEVERITY_MEDIUM;
	return SEVERITY_LOW;
}

void findings__diagnose(struct findings *out, const struct run_view *ref, const struct run_view *t)
{
	struct step st = { .ref = ref, .t = t, .scale = 1, .n = t->s->threads };
	/* Cycles and hangs first: they are bugs whether or not time was lost. */
	deadlock__diagnose(out, t->m, t->s->threads, t->s->wall_ns);
	/* With progress points, compare time per unit of work. */
	if (ref && ref->s->progress > 0 && t->s->progress > 0)
		st.scale = ref->s->progress / t->s->progress;
	double budget = t->s->budget_ns * st.scale;
	st.lost = ref ? budget - ref->s->budget_ns : budget - t->s->c[STACK_USEFUL];
	if (st.lost <= 0 || budget <= 0)
		return;   /* no time lost: nothing to explain */
	double lost_fraction = st.lost / budget;
	st.inflation_left = ref ? delta(&st, STACK_INFLATION) : 0;
	const struct profile *p = t->m->p;
	st.cpus = p->process.cpus_allowed ? p->process.cpus_allowed : p->process.ncpus;
	st.busy = speedup__busy_threads(t->m);
	st.oversubscribed = st.cpus && st.busy > (int)st.cpus;
	size_t first = out->n;
	rule_monitors(out, &st);
	rule_locks(out, &st);
	rule_runnable(out, &st);
	int churn = rule_churn(out, &st);
	rule_imbalance_and_parks(out, &st, churn);
	rule_barriers(out, &st);
	rule_inflation(out, &st);
	for (size_t i = first; i < out->n; i++) {
		out->v[i].threads = st.n;
		out->v[i].wall_ns = t->s->wall_ns;
		out->v[i].severity = severity(out->v[i].share, lost_fraction);
		if ((out->v[i].external || out->v[i].at_most_medium) && out->v[i].severity == SEVERITY_HIGH)
			out->v[i].severity = SEVERITY_MEDIUM;
		/* Inferred without direct evidence: high only when it explains
		 * most of the loss (SUSPECTED_HIGH_SHARE). */
		if (out->v[i].suspected && out->v[i].share < SUSPECTED_HIGH_SHARE &&
		    out->v[i].severity == SEVERITY_HIGH)
			out->v[i].severity = SEVERITY_MEDIUM;
	}
}

/* Among correctness findings: what hung (a lock cycle, then a starved pool)
 * before what could hang (a latent lock-order cycle). */
static int correctness_rank(enum finding_kind k)
{
	return k == FINDING_DEADLOCK ? 0 : k == FINDING_POOL_STARVATION ? 1 : 2;
}

static int by_importance(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;
	if (x->correctness != y->correctness)   /* a hang or a lock-order cycle before any cost */
		return y->correctness - x->correctness;
	if (x->correctness && correctness_rank(x->kind) != correctness_rank(y->kind))
		return correctness_rank(x->kind) - correctness_rank(y->kind);
	if (x->severity != y->severity)   /* the enum runs from most to least important */
		return (int)x->severity - (int)y->severity;
	if (x->external != y->external)   /* what the program can fix comes first */
		return x->external - y->external;
	return x->share < y->share ? 1 : x->share > y->share ? -1 : 0;
}

void findings__sort(struct findings *f)
{
	if (f->n)   /* f->v is NULL when there are none: qsort's base must not be */
		qsort(f->v, f->n, sizeof(*f->v), by_importance);
}

void findings__free(struct findings *f)
{
	free(f->v);
	memset(f, 0, sizeof(*f));
}

json_object *findings__json(const struct findings *f)
{
	json_object *arr = json_object_new_array();
	for (size_t i = 0; i < f->n; i++) {
		const struct finding *x = &f->v[i];
		json_object *o = json_object_new_object(), *objs = json_object_new_array(), *ev = json_object_new_object();
		json_object_object_add(o, "kind", json_object_new_string(finding_kind_name(x->kind)));
		json_object_object_add(o, "severity", json_object_new_string(severity_name(x->severity)));
		json_object_object_add(o, "share", json_object_new_double(round(x->share * 1000) / 1000));
		json_object_object_add(o, "suspected", json_object_new_boolean(x->suspected));
		json_object_object_add(o, "external", json_object_new_boolean(x->external));
		for (size_t k = 0; k < x->nobjects; k++)
			json_object_array_add(objs, json_object_new_string(x->objects[k]));
		json_object_object_add(o, "objects", objs);
		json_object_object_add(o, "summary", json_object_new_string(x->summary));
		json_object_object_add(o, "fix", json_object_new_string(x->fix));
		json_object_object_add(o, "threads", json_object_new_int(x->threads));
		json_object_object_add(o, "wall_ns", json_object_new_int64((int64_t)x->wall_ns));
		json_object_object_add(o, "predicted_wall_ns", json_object_new_int64((int64_t)x->predicted_wall_ns));
		for (size_t k = 0; k < x->nevidence; k++)
			json_object_object_add(ev, x->evidence[k].key, json_object_new_double(x->evidence[k].value));
		json_object_object_add(o, "evidence", ev);
		if (x->correctness) {   /* only there: cost findings keep their shape */
			json_object_object_add(o, "correctness", json_object_new_boolean(1));
			json_object_object_add(o, "cycle", deadlock__edges_json(x));
		}
		json_object_array_add(arr, o);
	}
	return arr;
}

/* The first sentence of a summary: up to a full stop that ends a word and
 * is followed by a space and a capital ("1.60 ms", "e.g. a" go on). */
static void first_sentence(const char *s, char *out, size_t size)
{
	size_t n = strlen(s);
	for (size_t i = 1; i + 2 < n; i++)
		if (s[i] == '.' && s[i + 1] == ' ' && s[i + 2] >= 'A' && s[i + 2] <= 'Z' && s[i - 1] != ' ') {
			n = i;
			break;
		}
	if (n && s[n - 1] == '.')
		n--;
	snprintf(out, size, "%.*s", (int)n, s);
}

int findings__main_cause(const struct findings *f, char *buf, size_t size)
{
	if (!f->n)
		return 0;
	const struct finding *x = &f->v[0];
	char first[sizeof(x->summary)];
	first_sentence(x->summary, first, sizeof(first));
	if (x->correctness)
		snprintf(buf, size, "Main cause, finding 1 (a correctness bug: %s): %s.", finding_kind_name(x->kind), first);
	else if (x->severity <= SEVERITY_MEDIUM)
		snprintf(buf, size, "%s, finding 1 ([%s] %s%s, %.0f%% of the lost time at %d thread%s): %s.",
			 x->external ? "Main cause, outside the program" : "Main cause", severity_name(x->severity),
			 finding_kind_name(x->kind), x->suspected ? " (suspected)" : "", x->share * 100, x->threads,
			 x->threads == 1 ? "" : "s", first);
	else
		return 0;
	return 1;
}

void findings__print(const struct findings *f, FILE *out)
{
	if (!f->n) {
		fputs("Findings: none — no component of the lost time stood out.\n", out);
		return;
	}
	int width = textfit__width(out);
	fputs("Findings, most important first\n", out);
	for (size_t i = 0; i < f->n; i++) {
		const struct finding *x = &f->v[i];
		char a[32], b[32], head[128], whatif[256];
		snprintf(head, sizeof(head), "  %zu. ", i + 1);
		if (x->correctness) {
			snprintf(whatif, sizeof(whatif), "[%s] %s — a correctness bug, at %d thread%s",
				 severity_name(x->severity), finding_kind_name(x->kind), x->threads,
				 x->threads == 1 ? "" : "s");
			textfit__wrap(out, width, 5, head, whatif);
			textfit__wrap(out, width, 5, "     ", x->summary);
			deadlock__edges_text(x, out);
			textfit__wrap(out, width, 5, "     Fix: ", x->fix);
			continue;
		}
		snprintf(whatif, sizeof(whatif), "[%s] %s%s — %.0f%% of the lost time at %d thread%s",
			 severity_name(x->severity), finding_kind_name(x->kind), x->suspected ? " (suspected)" : "",
			 x->share * 100, x->threads, x->threads == 1 ? "" : "s");
		textfit__wrap(out, width, 5, head, whatif);
		textfit__wrap(out, width, 5, "     ", x->summary);
		snprintf(whatif, sizeof(whatif), "without it, %d thread%s would take about %s instead of %s.",
			 x->threads, x->threads == 1 ? "" : "s", fmt_ns(a, sizeof(a), x->predicted_wall_ns),
			 fmt_ns(b, sizeof(b), x->wall_ns));
		textfit__wrap(out, width, 5, "     What if: ", whatif);
		textfit__wrap(out, width, 5, "     Fix: ", x->fix);
	}
}
