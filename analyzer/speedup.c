/* speedup.c — the speedup stack (docs/findings.md, "The speedup stack").
 *
 * Per thread i, from the profile: lifetime L, time in pthread_join J, time
 * blocked by wait class (locks, parks, barriers; measured around the blocking
 * calls), CPU time C and run-queue delay R (schedstat).
 *
 *   active  = L − J          a thread waiting in join is waiting for the
 *                             workers, not working: its slot is idle (so are
 *                             the main thread's parks and barrier waits when
 *                             it made threads: it is waiting for them)
 *   blocked = lock + park + barrier   (spinlock spinning counts as lock wait
 *                                       and comes out of C: it is on-CPU)
 *   U       = active − blocked          time neither blocked nor joining
 *   cpu_out = min(C, U)                 on-CPU outside the waits
 *   runnable= min(R, U − cpu_out) + the rest of R, up to the sleeping
 *             waits, taken out of them in proportion (a woken thread waits
 *             for a CPU before its wait call returns)
 *   other   = U − cpu_out − min(R, U − cpu_out)
 *
 * (When blocked > active, the measured waits overlap and the excess is
 * reported as negative "unexplained" time rather than hidden.)
 *
 * Roles: programs run more threads than N (a main thread reading input, a
 * writer, service threads). The N slots are filled by threads in order of
 * CPU time over their active intervals; the part of a thread's active time
 * that ran beside N others is helper time, kept beside the stack
 * (helper_ns), and each of its components is counted in the stack in that
 * proportion. Threads that slept beside the work (find_sleepers) take only
 * slots no other thread held. So no component is negative or above N·T
 * however many threads ran (docs/findings.md, "Threads by role").
 *
 * Over the run: useful = min(Σ cpu_out, reference's Σ cpu_out), inflation =
 * the rest of Σ cpu_out; idle = N·T − Σ active. The components then add up to
 * N·T exactly, by construction; what the construction cannot attribute shows
 * up in "unexplained".
 */
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpuprof.h"
#include "model.h"
#include "offcpu.h"
#include "profile.h"
#include "speedup.h"
#include "symbols.h"
#include "util.h"

const char *const stack_keys[STACK_N] = {
#define CV_X(sym, key, phrase) [sym] = key,
	SPEEDUP_COMPONENTS(CV_X)
#undef CV_X
};

const char *const role_names[ROLE_N] = {
#define CV_X(sym, name) [sym] = name,
	THREAD_ROLES(CV_X)
#undef CV_X
};

const char *const stack_phrases[STACK_N] = {
#define CV_X(sym, key, phrase) [sym] = phrase,
	SPEEDUP_COMPONENTS(CV_X)
#undef CV_X
};

static double minf(double a, double b) { return a < b ? a : b; }

static int by_lock_wait(const void *a, const void *b)
{
	const struct stack_lock *x = a, *y = b;
	return x->wait_ns < y->wait_ns ? 1 : x->wait_ns > y->wait_ns ? -1 : 0;
}

static int by_identity(const void *a, const void *b)
{
	return model__cmp_identity(((const struct stack_lock *)a)->row, ((const struct stack_lock *)b)->row);
}

/* The main thread of a program that made threads sets up, hands out work
 * and waits for it: its parks and barrier waits, like its joins, are waiting
 * for the workers, so its slot counts as idle then. A main thread that met
 * them at a barrier (an OpenMP master: a thread of the team) is one of them,
 * and its waits are theirs. */
static int coordinator(const struct model *m, const struct cv_thread_rec *t)
{
	return (t->flags & CV_THREAD_MAIN) && t->threads_created > 0 && !m->main_in_team;
}

/* The "merged threads" row (tid -1): the threads that ended past the
 * shim's cap of 1,024, their times summed and their lives spanned by one
 * interval (docs/profile-format.md, "Threads"). It is placed as one
 * thread, so its work stays in the stack (a program of thousands of short
 * threads is mostly this row), but the sums may be longer than the span:
 * thread_split fits its waits into what its span leaves after its CPU
 * time, and its role says it is many threads. */
static int merged_row(const struct cv_thread_rec *t)
{
	return t->tid == -1;
}

/* One thread's time split by wait class, before it is placed in the stack
 * (the per-thread formulas at the top of this file). */
static void thread_split(struct stack_thread *x, const struct model *m, size_t i, double *unexplained)
{
	const struct cv_thread_rec *t = &m->p->threads[i];
	double life = (double)(t->end_ns - t->start_ns);
	double active = life - minf((double)t->join_wait_ns, life);
	double lock = (double)m->thread_lock_wait[i], park = (double)m->thread_cond_wait[i];
	double barrier = (double)m->thread_barrier_wait[i], waiting = 0;
	if (coordinator(m, t)) {
		/* Waiting for the workers' results is not work either. */
		waiting = minf(park + barrier, active);
		active -= waiting;
		park = barrier = 0;
	}
	/* Spinning for a spinlock is waiting for it, on a CPU: it counts as
	 * lock wait and comes out of the thread's CPU time. */
	double spin = minf((double)m->thread_spin_ns[i], (double)t->cpu_ns);
	lock += spin;
	double waits = lock + park + barrier, room = active - minf((double)t->cpu_ns - spin, active);
	if (merged_row(t) && waits > room) {   /* many threads' waits in one span: scaled to fit */
		double f = room > 0 ? room / waits : 0;
		lock *= f, park *= f, barrier *= f, spin *= f;
	}
	double u = active - (lock + park + barrier);
	*unexplained = 0;
	if (u < 0) {
		*unexplained = u;
		u = 0;
	}
	double cpu = minf((double)t->cpu_ns - spin, u);
	double runnable = minf((double)t->run_delay_ns, u - cpu);
	double other = u - cpu - runnable;
	/* The rest of the run-queue delay followed wake-ups inside waits: a
	 * woken thread waits for a CPU before its wait returns, and that time
	 * is the CPUs' shortage, not the lock's or the barrier's. It comes out
	 * of the sleeping waits (not spinning: that is on-CPU), in proportion,
	 * so a thread's runnable time and its waits never overlap. */
	double sleeping = lock - spin + park + barrier;
	double inside = minf((double)t->run_delay_ns - runnable, sleeping);
	double keep = 1;
	if (inside > 0) {
		keep = (sleeping - inside) / sleeping;
		lock = spin + (lock - spin) * keep;
		park *= keep;
		barrier *= keep;
		runnable += inside;
	}
	*x = (struct stack_thread){ .active = active, .cpu = cpu, .lock = lock, .park = park, .barrier = barrier,
				    .runnable = runnable, .other = other, .parked_for_threads = waiting, .wait_keep = keep };
}

/* Threads that slept beside the work: a service thread that wakes now and
 * then, an I/O thread with little to do. Such a thread was on a CPU for
 * under SLEEPER_CPU of its active time as often as the workers were (its CPU
 * time over its active time, against the highest such rate among the
 * threads that kept a CPU busy for at least SLEEPER_CPU of the run), and
 * spent most of its active time off-CPU outside the waits the shim timed:
 * asleep (not in a runtime's own waits, inline futex calls, by the kinds of
 * its timed switches where the launcher sampled them: those are a worker's
 * waits the shim could not time) or runnable (on a busy machine each of its
 * wake-ups waits for the CPUs the workers hold: that is their demand, not
 * its). It was not busy and takes no slot beside working threads: that
 * time is helper time, outside the stack, so its sleep is not the
 * workers' (docs/findings.md, "Threads by role"). Threads that all slept
 * alike (blocking I/O in every worker) are none of them sleepers, and
 * neither is any thread of a run in which no thread worked (a hang).
 *
 * So is a stage beside a pool: where two or more threads of one start
 * routine were busy (a pool did the work), a thread that used under
 * SLEEPER_CPU as much CPU and spent most of its active time parked or
 * asleep, and that is no member of the busy pool (pbzip2's and pigz's
 * writer, a main thread that parks while the pool compresses: none of the
 * busy threads ran its start routine; zstd's I/O thread: it ran theirs,
 * but parked only on its own pool's queue, made at another site, and they
 * never on it: parked_together), waited for the pool's output, not for
 * work it could have done (helper-130: each was the "median worker" of a
 * [high] load-imbalance at 1,924x; zstd -T2's at 2.5x). An idle member of
 * the pool, which shares its routine and its queue (or a queue made
 * alike), stays a worker: its idleness is the imbalance. */
#define SLEEPER_CPU 0.1

/* Whether a pool did the work: two or more busy threads (busy[i]) ran one
 * start routine. */
static int pool_worked(const struct cv_thread_rec *t, size_t nt, const int *busy)
{
	for (size_t i = 0; i < nt; i++)
		for (size_t k = i + 1; busy[i] && t[i].start_routine && k < nt; k++)
			if (busy[k] && t[k].start_routine == t[i].start_routine)
				return 1;
	return 0;
}

/* The objects each thread parked on: thread i's are obj[start[i] ..
 * start[i + 1]), as indices + 1. */
struct parked_on {
	size_t *start, *obj;
};

static void parked_on(const struct profile *p, struct parked_on *out)
{
	out->start = xcalloc(p->nthreads + 2, sizeof(size_t));
	out->obj = xcalloc(p->nstats + 1, sizeof(size_t));
	for (size_t i = 0; i < p->nstats; i++)   /* counted per thread, then placed */
		if (wait_class_of_obj(&p->objects[p->stats[i].object]) == WAIT_PARK && p->stats[i].waits)
			out->start[p->stats[i].thread + 2]++;
	for (size_t t = 2; t <= p->nthreads + 1; t++)
		out->start[t] += out->start[t - 1];
	for (size_t i = 0; i < p->nstats; i++) {
		const struct cv_stats *s = &p->stats[i];
		if (wait_class_of_obj(&p->objects[s->object]) == WAIT_PARK && s->waits)
			out->obj[out->start[s->thread + 1]++] = (size_t)s->object + 1;
	}
}

/* Whether objects a and b (indices + 1) are one object, condvars under one
 * mutex, or objects made at one site: their init or first-use stacks have
 * the same frames. Threads of one pool park on its queue's object, on
 * objects made alike (a queue per thread, made in a loop), or on the
 * condvars of one monitor (a hand-made rwlock's readers and writers); a
 * second pool of the same start routine made elsewhere parks on an object
 * made at another site, under its own mutex (zstd's I/O thread beside its
 * compression workers, both POOL_thread, their condvars made by one
 * function called from two places). */
static int same_pool_object(const struct profile *p, size_t a, size_t b)
{
	uint32_t ma = p->objects[a - 1].o.monitor, mb = p->objects[b - 1].o.monitor;
	if (a == b || (ma && ma == mb))
		return 1;
	uint32_t sa = p->objects[a - 1].o.first_stack, sb = p->objects[b - 1].o.first_stack;
	if (!sa || !sb)
		return 0;
	const struct profile_stack *x = &p->stacks[sa - 1], *y = &p->stacks[sb - 1];
	return x->s.depth == y->s.depth && !memcmp(x->pcs, y->pcs, x->s.depth * sizeof(*x->pcs));
}

/* Whether threads i and k parked on one object, or on objects of one
 * pool (same_pool_object); either that never parked is taken to have. */
static int parked_together(const struct profile *p, const struct parked_on *on, size_t i, size_t k)
{
	if (on->start[i] == on->start[i + 1] || on->start[k] == on->start[k + 1])
		return 1;
	for (size_t a = on->start[i]; a < on->start[i + 1]; a++)
		for (size_t b = on->start[k]; b < on->start[k + 1]; b++)
			if (same_pool_object(p, on->obj[a], on->obj[b]))
				return 1;
	return 0;
}

/* Whether a busy thread ran t[i]'s start routine and parked where it did. */
static int pool_mate_busy(const struct profile *p, const int *busy, const struct parked_on *on, size_t i)
{
	const struct cv_thread_rec *t = p->threads;
	for (size_t k = 0; k < p->nthreads && t[i].start_routine; k++)
		if (busy[k] && t[k].start_routine == t[i].start_routine && parked_together(p, on, i, k))
			return 1;
	return 0;
}

static void find_sleepers(const struct model *m, const struct stack_thread *x,
			  double (*offcpu)[OFFCPU_KIND_N], int *sleeper)
{
	size_t nt = m->p->nthreads;
	/* On a CPU at all: the thread's whole CPU time, not x[i].cpu (outside
	 * its waits), since a thread spinning in a lock waits on a CPU and is
	 * as busy as one working. */
	const struct cv_thread_rec *t = m->p->threads;
	double top = 0;
	for (size_t i = 0; i < nt; i++)
		if (x[i].active > 0 && (double)t[i].cpu_ns >= SLEEPER_CPU * m->wall_ns &&
		    (double)t[i].cpu_ns / x[i].active > top)
			top = (double)t[i].cpu_ns / x[i].active;
	int *busy = xcalloc(nt + 1, sizeof(int));
	for (size_t i = 0; i < nt; i++)
		busy[i] = x[i].active > 0 && (double)t[i].cpu_ns >= SLEEPER_CPU * top * x[i].active;
	int pool = pool_worked(t, nt, busy);
	struct parked_on on = { NULL, NULL };
	if (pool)
		parked_on(m->p, &on);
	for (size_t i = 0; i < nt; i++) {
		double timed = 0;
		for (int k = 0; k < OFFCPU_KIND_N; k++)
			timed += offcpu[i][k];
		double runtime = timed > 0 ? offcpu[i][OFFCPU_RUNTIME] / timed : 0;
		double asleep = x[i].other * (1 - runtime) + x[i].runnable;
		int quiet = x[i].active > 0 && !busy[i];
		sleeper[i] = quiet && (asleep >= 0.5 * x[i].active ||
				       (pool && asleep + x[i].park >= 0.5 * x[i].active &&
					!pool_mate_busy(m->p, busy, &on, i)));
	}
	free(on.start);
	free(on.obj);
	free(busy);
}

/* Every thread's split (thread_split; unexplained: NULL or one per thread),
 * its timed off-CPU time outside waits by kind (offcpu__thread_times) and
 * whether it slept beside the work. */
static void split_threads(const struct model *m, struct stack_thread *x, double *unexplained,
			  double (*offcpu)[OFFCPU_KIND_N], int *sleeper)
{
	for (size_t i = 0; i < m->p->nthreads; i++) {
		double u;
		thread_split(&x[i], m, i, &u);
		if (unexplained)
			unexplained[i] = u;
	}
	offcpu__thread_times(m, offcpu);
	find_sleepers(m, x, offcpu, sleeper);
}

struct edge { double t; int d; };

static int by_time(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->d - y->d;   /* ends before starts at the same instant */
}

/* The most threads active at once for at least a tenth of the run. A
 * thread's active interval is taken as its lifetime with its join waits cut
 * from the end (a main thread that sets up, starts workers and joins them is
 * active at the start), so brief overlaps from that guess do not count.
 * Threads that slept beside the work (find_sleepers) were not busy. */
int speedup__busy_threads(const struct model *m)
{
	const struct profile *p = m->p;
	size_t n = p->nthreads;
	struct stack_thread *x = xcalloc(n + 1, sizeof(*x));
	int *sleeper = xcalloc(n + 1, sizeof(int));
	double (*offcpu)[OFFCPU_KIND_N] = xcalloc(n + 1, sizeof(*offcpu));
	split_threads(m, x, NULL, offcpu, sleeper);
	free(offcpu);
	struct edge *e = xcalloc(2 * n, sizeof(*e));
	double first = INFINITY, last = 0;
	for (size_t i = 0; i < n; i++) {
		const struct cv_thread_rec *t = &p->threads[i];
		double start = (double)t->start_ns, active = sleeper[i] ? 0 : x[i].active;
		e[2 * i] = (struct edge){ start, +1 };
		e[2 * i + 1] = (struct edge){ start + active, -1 };
		first = minf(first, start);
		last = (double)t->end_ns > last ? (double)t->end_ns : last;
	}
	qsort(e, 2 * n, sizeof(*e), by_time);
	/* at_least[k]: time with at least k threads active. */
	double *at_least = xcalloc(n + 2, sizeof(double));
	int live = 0;
	for (size_t i = 0; i + 1 < 2 * n; i++) {
		live += e[i].d;
		if (live > 0 && live <= (int)n)
			at_least[live] += e[i + 1].t - e[i].t;   /* exactly live, for now */
	}
	for (int k = (int)n - 1; k >= 1; k--)
		at_least[k] += at_least[k + 1];
	int busy = 1;
	for (int k = (int)n; k > 1; k--)
		if (at_least[k] >= 0.1 * (last - first)) {
			busy = k;
			break;
		}
	free(at_least);
	free(e);
	free(sleeper);
	free(x);
	return busy;
}

/* A change of one thread's state in speedup__runq_split: a switch record,
 * or the thread's start or end from the profile (the kernel writes no
 * switch-out record for an exiting thread, so its last record is a switch
 * in). */
enum run_state { GONE, ON_CPU, WAITING, ASLEEP };
struct run_event {
	uint64_t time_ns;
	size_t thread;                /* index into the tids seen */
	enum run_state state;
};

static int by_event_time(const void *a, const void *b)
{
	const struct run_event *x = a, *y = b;
	return x->time_ns < y->time_ns ? -1 : x->time_ns > y->time_ns;
}

static int by_tid(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return x < y ? -1 : x > y;
}

/* Each thread is on a CPU from a switch in to its next switch out, waiting
 * for one from a preemption to its next switch in, and asleep otherwise (a
 * woken thread's wait for a CPU is not in the records: only the preempted
 * waits are weighed). From its start (or the first record, for a thread the
 * profile does not know) to its first record it is on a CPU when that
 * record is a switch out, else asleep; after its end it is gone. */
int speedup__runq_split(const struct model *m, uint32_t cpus, int *busy, double *own)
{
	const struct samples *s = m->cpu ? &m->cpu->smp : NULL;
	if (!s || s->nsw < 2 || cpus == 0)
		return -1;
	int32_t *tids = xcalloc(s->nsw, sizeof(*tids));
	for (size_t i = 0; i < s->nsw; i++)
		tids[i] = s->sw[i].tid;
	qsort(tids, s->nsw, sizeof(*tids), by_tid);
	size_t nt = 0;
	for (size_t i = 0; i < s->nsw; i++)
		if (nt == 0 || tids[nt - 1] != tids[i])
			tids[nt++] = tids[i];
	/* Records, then each thread's start and end. */
	struct run_event *e = xcalloc(s->nsw + 2 * nt, sizeof(*e));
	uint64_t *first = xcalloc(nt, sizeof(*first));
	enum run_state *before = xcalloc(nt, sizeof(*before));   /* until its first record */
	uint64_t from = UINT64_MAX, to = 0;
	for (size_t i = 0; i < s->nsw; i++) {
		const struct switch_rec *r = &s->sw[i];
		size_t k = (size_t)((int32_t *)bsearch(&r->tid, tids, nt, sizeof(*tids), by_tid) - tids);
		e[i] = (struct run_event){ r->time_ns, k, r->kind == SWITCH_IN ? ON_CPU :
					   r->kind == SWITCH_PREEMPTED ? WAITING : ASLEEP };
		if (first[k] == 0 || r->time_ns < first[k]) {
			first[k] = r->time_ns;
			before[k] = r->kind == SWITCH_IN ? ASLEEP : ON_CPU;
		}
		from = r->time_ns < from ? r->time_ns : from;
		to = r->time_ns > to ? r->time_ns : to;
	}
	size_t n = s->nsw;
	for (size_t k = 0; k < nt; k++) {
		uint64_t start = from, end = UINT64_MAX;
		for (size_t i = 0; i < m->p->nthreads; i++)
			if (m->p->threads[i].tid == tids[k]) {
				start = m->p->threads[i].start_ns;
				end = m->p->threads[i].end_ns;
			}
		e[n++] = (struct run_event){ start < first[k] ? start : first[k], k, before[k] };
		if (end < to)
			e[n++] = (struct run_event){ end, k, GONE };
	}
	qsort(e, n, sizeof(*e), by_event_time);
	enum run_state *state = xcalloc(nt, sizeof(*state));
	double *at_least = xcalloc(nt + 2, sizeof(double));   /* time with exactly k wanting a CPU, then at least */
	double wait = 0, outnumbered = 0;
	uint32_t on = 0, waiting = 0;
	for (size_t i = 0; i < n; i++) {
		if (i > 0) {
			double dt = (double)(e[i].time_ns - e[i - 1].time_ns);
			uint32_t wanting = on + waiting;
			wait += dt * waiting;
			/* Threads that would have waited with the machine to itself. */
			outnumbered += dt * (wanting > cpus ? minf(waiting, wanting - cpus) : 0);
			at_least[wanting <= nt ? wanting : nt] += dt;
		}
		size_t k = e[i].thread;
		if (state[k] == GONE && e[i].state != GONE && e[i].time_ns > first[k])
			continue;   /* a record after the thread's end: clocks a little apart */
		on -= state[k] == ON_CPU;
		waiting -= state[k] == WAITING;
		state[k] = e[i].state;
		on += state[k] == ON_CPU;
		waiting += state[k] == WAITING;
	}
	for (size_t k = nt; k-- > 0;)
		at_least[k] += at_least[k + 1];
	double span = (double)(e[n - 1].time_ns - e[0].time_ns);
	*busy = 1;
	for (size_t k = nt; k > 1; k--)
		if (at_least[k] >= 0.1 * span) {
			*busy = (int)k;
			break;
		}
	free(at_least);
	free(state);
	free(before);
	free(first);
	free(e);
	free(tids);
	/* Under a millisecond of waiting says nothing either way. */
	if (wait < 1e6)
		return -1;
	*own = outnumbered / wait;
	return 0;
}

int speedup__runq_external(const struct model *m, uint32_t cpus, int *busy, double *own, int *recorded)
{
	*own = -1;
	*recorded = speedup__runq_split(m, cpus, busy, own) == 0;
	return *recorded ? *own < 0.5 : *busy <= (int)cpus;
}

struct by_cpu_key { double cpu; size_t i; };

static int by_cpu_desc(const void *a, const void *b)
{
	const struct by_cpu_key *x = a, *y = b;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? 1 : -1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Roles: the N slots of the budget are filled by threads in order of CPU
 * time, each over its active interval (its life from its start, its waits
 * for other threads cut from the end, as in speedup__busy_threads). Where N
 * threads already fill the slots, a thread runs beside them: that part of
 * its time is helper time, outside the stack. in_stack is the share of a
 * thread's active time that found a free slot. */
static void place_threads(struct speedup *s, const struct model *m, int n, const int *sleeper)
{
	size_t nt = m->p->nthreads;
	double *cut = xcalloc(2 * nt + 1, sizeof(double));
	struct by_cpu_key *order = xcalloc(nt + 1, sizeof(*order));
	for (size_t i = 0; i < nt; i++) {
		double start = (double)m->p->threads[i].start_ns;
		cut[2 * i] = start;
		cut[2 * i + 1] = start + s->t[i].active;
		order[i] = (struct by_cpu_key){ s->t[i].cpu, i };
	}
	qsort(cut, 2 * nt, sizeof(double), cmp_double);
	qsort(order, nt, sizeof(*order), by_cpu_desc);
	int *used = xcalloc(2 * nt + 1, sizeof(int));   /* used[k]: slots taken in [cut[k], cut[k+1]) */
	size_t *taker = xcalloc(2 * nt + 1, sizeof(size_t));   /* the first thread to take one there */
	/* Threads that slept beside the work (find_sleepers) come last and
	 * take only slots no other thread held: with nothing else running
	 * (reading the input before the workers start) a sleeping thread is
	 * the program's progress; beside working threads it is a helper. */
	for (size_t o = 0; o < 2 * nt; o++) {
		size_t i = order[o % nt].i;
		if (sleeper[i] != (o >= nt))
			continue;
		double a = (double)m->p->threads[i].start_ns, b = a + s->t[i].active, got = 0;
		size_t lo = 0, hi = 2 * nt;
		while (lo < hi) {   /* the first cut at or after a */
			size_t mid = (lo + hi) / 2;
			if (cut[mid] < a)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t k = lo; k + 1 < 2 * nt && cut[k] < b; k++)
			if (used[k] < n && (!sleeper[i] || !used[k])) {
				if (!used[k]++)
					taker[k] = i;
				got += cut[k + 1] - cut[k];
			}
		s->t[i].in_stack = s->t[i].active > 0 ? minf(got / s->t[i].active, 1) : 1;
	}
	/* Serial time: one thread alone in the slots while N > 1 (not the
	 * merged threads' row: its threads may have run side by side). */
	s->alone_spans = xcalloc(4 * nt + 2, sizeof(double));
	s->alone_thread = xcalloc(2 * nt + 1, sizeof(size_t));
	for (size_t k = 0; n > 1 && k + 1 < 2 * nt; k++)
		if (used[k] == 1 && cut[k + 1] > cut[k] && !merged_row(&m->p->threads[taker[k]])) {
			s->t[taker[k]].alone += cut[k + 1] - cut[k];
			s->alone_spans[2 * s->nalone] = cut[k];
			s->alone_spans[2 * s->nalone + 1] = cut[k + 1];
			s->alone_thread[s->nalone++] = taker[k];
		}
	free(taker);
	free(used);
	free(order);
	free(cut);
}

static int by_routine(const void *a, const void *b, void *profile)
{
	const struct profile *p = profile;
	uint64_t x = p->threads[*(const size_t *)a].start_routine, y = p->threads[*(const size_t *)b].start_routine;
	return x < y ? -1 : x > y;
}

/* A thread that made threads and was mostly waiting for them is a waiter,
 * unless it was also among the busiest (half the busiest thread's CPU time,
 * and on a CPU for a quarter of its life: ffmpeg's main runs the transcode
 * loop and waits for its frame threads, helper-130);
 * otherwise a worker when most of its active time was in the stack, else a
 * helper. Threads that ran one start routine, most of whose time was in the
 * stack and whose time beside it is negligible (under GROUP_BESIDE of the
 * budget), are all workers: a pool's short-lived task threads that overlap
 * a little at their ends. */
#define GROUP_BESIDE 0.05
static void assign_roles(struct speedup *s, const struct profile *p)
{
	size_t nt = p->nthreads, *idx = xcalloc(nt + 1, sizeof(size_t));
	uint64_t top_cpu = 0;   /* the busiest thread's CPU time */
	for (size_t i = 0; i < nt; i++) {
		idx[i] = i;
		if (!merged_row(&p->threads[i]) && p->threads[i].cpu_ns > top_cpu)
			top_cpu = p->threads[i].cpu_ns;
	}
	qsort_r(idx, nt, sizeof(size_t), by_routine, (void *)p);
	for (size_t a = 0, b; a < nt; a = b) {
		uint64_t routine = p->threads[idx[a]].start_routine;
		double in = 0, all = 0;
		for (b = a; b < nt && p->threads[idx[b]].start_routine == routine && (routine || b == a); b++) {
			in += s->t[idx[b]].in_stack * s->t[idx[b]].active;
			all += s->t[idx[b]].active;
		}
		for (size_t k = a; k < b; k++) {
			const struct cv_thread_rec *t = &p->threads[idx[k]];
			struct stack_thread *x = &s->t[idx[k]];
			double life = (double)(t->end_ns - t->start_ns);
			if (merged_row(t))
				x->role = ROLE_MERGED;
			else if (t->threads_created > 0 && x->active < 0.5 * life &&
				 (2 * t->cpu_ns < top_cpu || 4 * (double)t->cpu_ns < life))   /* ffmpeg's main: a worker */
				x->role = ROLE_WAITER;
			else
				x->role = x->in_stack >= 0.5 || (in >= 0.5 * all && all - in < GROUP_BESIDE * s->budget_ns) ?
					  ROLE_WORKER : ROLE_HELPER;
			s->nroles[x->role]++;
		}
	}
	free(idx);
}

/* One object's waits as the stack counts them: each thread's, less the run
 * queue's part (not for spinning: on-CPU), times the thread's place in the
 * stack; a main thread's parks waiting for its threads are not in it. */
static double stack_wait(const struct speedup *s, const struct model *m, const struct object_row *row, int on_cpu)
{
	const struct profile *p = m->p;
	int parks = wait_class_of_obj(row->obj) == WAIT_PARK;
	double wait = 0;
	uint32_t id = row->obj->o.id;
	for (size_t j = m->stats_start[id]; j < m->stats_start[id + 1]; j++) {
		const struct cv_stats *st = &p->stats[m->stats_of[j]];
		const struct stack_thread *x = &s->t[st->thread];
		if (parks && coordinator(m, &p->threads[st->thread]))
			continue;
		wait += (double)st->wait_ns * (on_cpu ? 1 : x->wait_keep) * x->in_stack;
	}
	return wait;
}

void speedup__compute(struct speedup *s, const struct model *m, int n, double wall_ns,
		    double ref_cpu_out_ns)
{
	const struct profile *p = m->p;
	memset(s, 0, sizeof(*s));
	s->threads = n;
	s->wall_ns = wall_ns > 0 ? wall_ns : m->wall_ns;
	s->budget_ns = (double)n * s->wall_ns;
	s->nthreads = p->nthreads;
	s->t = xcalloc(p->nthreads + 1, sizeof(*s->t));
	double *unexplained = xcalloc(p->nthreads + 1, sizeof(double));
	int *sleeper = xcalloc(p->nthreads + 1, sizeof(int));
	double (*offcpu)[OFFCPU_KIND_N] = xcalloc(p->nthreads + 1, sizeof(*offcpu));
	split_threads(m, s->t, unexplained, offcpu, sleeper);
	place_threads(s, m, n, sleeper);
	assign_roles(s, p);
	free(sleeper);
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct stack_thread *x = &s->t[i];
		double f = x->in_stack;
		s->helper_ns += (1 - f) * x->active;
		s->helper_cpu_ns += (1 - f) * x->cpu;
		s->active_ns += f * x->active;
		s->cpu_out_ns += f * x->cpu;
		s->c[STACK_LOCK] += f * x->lock;
		s->c[STACK_PARK] += f * x->park;
		s->c[STACK_BARRIER] += f * x->barrier;
		s->c[STACK_RUNNABLE] += f * x->runnable;
		s->c[STACK_OTHER] += f * x->other;
		s->c[STACK_UNEXPLAINED] += f * unexplained[i];
		/* Its other off-CPU time split by the shares of its timed switches. */
		double timed = 0;
		for (int k = 0; k < OFFCPU_KIND_N; k++)
			timed += offcpu[i][k];
		for (int k = 0; k < OFFCPU_KIND_N && f * x->other > 0 && timed > 0; k++)
			s->other_by_kind[k] += f * x->other * offcpu[i][k] / timed;
		if (f * x->other > 0 && timed <= 0)
			s->other_untimed += f * x->other;
	}
	free(offcpu);
	s->c[STACK_USEFUL] = ref_cpu_out_ns >= 0 ? minf(s->cpu_out_ns, ref_cpu_out_ns) : s->cpu_out_ns;
	s->c[STACK_INFLATION] = s->cpu_out_ns - s->c[STACK_USEFUL];
	s->c[STACK_IDLE] = s->budget_ns - s->active_ns;

	for (size_t i = 0; i < p->ncounters; i++)
		if (p->counters[i].c.kind == CV_COUNTER_PROGRESS && p->counters[i].c.value > 0)
			s->progress += (double)p->counters[i].c.value;

	/* Each lock's wait and each condvar's park in the stack: its threads'
	 * waits, each with its thread's run-queue share taken out and its
	 * thread's place in the stack, so they add up to lock_wait and (with the
	 * other park objects) park. */
	s->locks = xcalloc(m->nlocks + 1, sizeof(*s->locks));
	for (size_t i = 0; i < m->nlocks; i++) {
		const struct object_row *row = m->locks[i];
		if (!row->total.wait_ns)
			continue;
		s->locks[s->nlocks].row = row;
		s->locks[s->nlocks++].wait_ns = stack_wait(s, m, row, row->obj->o.kind == CV_OBJ_SPIN);
	}
	s->parks = xcalloc(m->nparks + 1, sizeof(*s->parks));
	for (size_t i = 0; i < m->nparks; i++)
		if (wait_class_of_obj(m->parks[i]->obj) == WAIT_PARK && m->parks[i]->total.wait_ns) {
			s->parks[s->nparks].row = m->parks[i];
			s->parks[s->nparks++].wait_ns = stack_wait(s, m, m->parks[i], 0);
		}
	qsort(s->parks, s->nparks, sizeof(*s->parks), by_lock_wait);
	free(unexplained);
	qsort(s->locks, s->nlocks, sizeof(*s->locks), by_lock_wait);
	s->by_identity = xcalloc(s->nlocks ? s->nlocks : 1, sizeof(*s->by_identity));
	memcpy(s->by_identity, s->locks, s->nlocks * sizeof(*s->locks));
	qsort(s->by_identity, s->nlocks, sizeof(*s->by_identity), by_identity);
}

double speedup__park_wait(const struct speedup *s, const struct object_row *row)
{
	for (size_t i = 0; i < s->nparks; i++)
		if (model__same_object(s->parks[i].row, row))
			return s->parks[i].wait_ns;
	return 0;
}

/* A thread as text: "main", else its own name, else its start routine,
 * and its tid. A name that is only the process's, inherited from the main
 * thread, says less than a start routine of the program's own (a
 * runtime's, such as Rust's thread_start, says nothing). */
const char *speedup__thread_text(const struct model *m, size_t i, char *buf, size_t size)
{
	const struct cv_thread_rec *t = &m->p->threads[i];
	const char *inherited = "";
	for (size_t k = 0; k < m->p->nthreads; k++)
		if (m->p->threads[k].flags & CV_THREAD_MAIN)
			inherited = m->p->threads[k].name;
	const struct sym_frame *f;
	size_t nf = t->start_routine ? syms__frames(m->syms, t->start_routine, SYMS_ANY_GEN, 0, &f) : 0;
	char fn[160];
	int own_routine = nf && !f[nf - 1].runtime && syms__name(m->syms, t->start_routine, fn, sizeof(fn));
	int named = t->name[0] && (strcmp(t->name, inherited) || !own_routine);
	const char *what = t->flags & CV_THREAD_MAIN ? "main" : named ? t->name : own_routine ? fn :
			   t->start_routine && syms__name(m->syms, t->start_routine, fn, sizeof(fn)) ? fn : "thread";
	snprintf(buf, size, "%s (tid %d)", what, t->tid);
	return buf;
}

long speedup__serial_thread(const struct speedup *s)
{
	long best = -1;
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->t[i].alone > 0 && (best < 0 || s->t[i].alone > s->t[best].alone))
			best = (long)i;
	return best >= 0 && s->t[best].alone >= 0.1 * s->wall_ns ? best : -1;
}

void speedup__thread_site(const struct model *m, size_t i, char *buf, size_t size)
{
	const struct cv_thread_rec *t = &m->p->threads[i];
	double life[2] = { (double)t->start_ns, (double)t->end_ns };
	struct phase_site ph;
	char a[32];
	buf[0] = '\0';
	if (offcpu__phase_site(m, t->tid, life, 1, &ph) == 0 && ph.site[0] && ph.site_program &&
	    ph.cpu_ns + ph.offcpu_ns > 0)
		snprintf(buf, size, "its own code mostly in %s (%s of its samples)", ph.site,
			 fmt_pct(a, sizeof(a), ph.site_ns / (ph.cpu_ns + ph.offcpu_ns)));
}

void speedup__serial_text(const struct speedup *s, const struct model *m, char *buf, size_t size)
{
	long i = speedup__serial_thread(s);
	buf[0] = '\0';
	if (i < 0)
		return;
	const struct cv_thread_rec *t = &m->p->threads[i];
	const struct stack_thread *x = &s->t[i];
	char who[200], a[32], b[32];
	/* Where in its life: its active time is placed from its start. */
	const char *when = (t->flags & CV_THREAD_MAIN) && t->threads_created ? ", at its start, before its threads ran" : "";
	size_t len = (size_t)snprintf(buf, size, "%s ran alone for %s (%s of the run) while the other %d slot%s had no "
				      "thread%s; it spent %s of its active time on a CPU",
				      speedup__thread_text(m, (size_t)i, who, sizeof(who)), fmt_ns(a, sizeof(a), x->alone),
				      fmt_pct(b, sizeof(b), x->alone / s->wall_ns), s->threads - 1,
				      s->threads == 2 ? "" : "s", when,
				      fmt_pct((char[32]){0}, 32, x->active > 0 ? x->cpu / x->active : 0));
	struct phase_site ph;
	if (speedup__serial_site(s, m, (size_t)i, &ph) == 0 && ph.site[0] && len < size) {
		/* Where, from its samples in the spans it was alone. */
		int kind = 0;
		for (int k = 1; k < OFFCPU_KIND_N; k++)
			if (ph.offcpu_by_kind[k] > ph.offcpu_by_kind[kind])
				kind = k;
		len += (size_t)snprintf(buf + len, size - len, "; sampled meanwhile: %s on a CPU",
					fmt_ns(b, sizeof(b), ph.cpu_ns));
		if (ph.offcpu_ns > 0 && len < size)
			len += (size_t)snprintf(buf + len, size - len, ", %s off it (mostly %s)",
						fmt_ns(a, sizeof(a), ph.offcpu_ns), offcpu_kind_words[kind]);
		if (len < size)
			len += (size_t)snprintf(buf + len, size - len, ", %s in %s (%s of it)",
						ph.site_program ? "its own code mostly" : "mostly",
						ph.site, fmt_pct(a, sizeof(a), ph.site_ns / (ph.cpu_ns + ph.offcpu_ns)));
	}
	if (len < size)
		snprintf(buf + len, size - len, ".");
}

int speedup__serial_site(const struct speedup *s, const struct model *m, size_t i, struct phase_site *out)
{
	double *spans = xcalloc(2 * s->nalone + 2, sizeof(double));
	size_t n = 0;
	for (size_t k = 0; k < s->nalone; k++)
		if (s->alone_thread[k] == i) {
			spans[2 * n] = s->alone_spans[2 * k];
			spans[2 * n + 1] = s->alone_spans[2 * k + 1];
			n++;
		}
	int rc = n ? offcpu__phase_site(m, m->p->threads[i].tid, spans, n, out) : -1;
	free(spans);
	return rc;
}

uint64_t speedup__thread_waits(const struct model *m, size_t i)
{
	uint64_t waits = 0;
	for (size_t k = 0; k < m->p->nstats; k++)
		if (m->p->stats[k].thread == i)
			waits += m->p->stats[k].waits;
	return waits + m->p->threads[i].joins;
}

long speedup__offcpu_thread(const struct speedup *s)
{
	long best = -1;
	for (size_t i = 0; i < s->nthreads; i++) {
		double o = s->t[i].other * s->t[i].in_stack;
		if (o > 0 && (best < 0 || o > s->t[best].other * s->t[best].in_stack))
			best = (long)i;
	}
	return best >= 0 && s->c[STACK_OTHER] >= 0.05 * s->budget_ns ? best : -1;
}

void speedup__offcpu_text(const struct speedup *s, const struct model *m, char *buf, size_t size)
{
	long i = speedup__offcpu_thread(s);
	buf[0] = '\0';
	if (i < 0)
		return;
	const struct cv_thread_rec *t = &m->p->threads[i];
	uint64_t waits = speedup__thread_waits(m, (size_t)i);
	uint64_t beyond = t->voluntary_cs > waits ? t->voluntary_cs - waits : 0;
	char who[200], a[32], b[32], c[32], d[32], e[32];
	size_t len = (size_t)snprintf(buf, size, "%s of it in %s: %s major and %s minor page faults, %s voluntary context "
				      "switches beyond the %s waits the shim timed.",
				      fmt_ns(a, sizeof(a), s->t[i].other * s->t[i].in_stack),
				      speedup__thread_text(m, (size_t)i, who, sizeof(who)), fmt_count(b, sizeof(b), t->major_faults),
				      fmt_count(c, sizeof(c), t->minor_faults), fmt_count(d, sizeof(d), beyond),
				      fmt_count(e, sizeof(e), waits));
	struct offcpu o;
	if (offcpu__sites(m, t->tid, &o) != 0 || !o.samples) {
		if (len < size)
			snprintf(buf + len, size - len, " %s",
				 t->major_faults ? "Major faults read pages from disk: part of it is paging in; the call "
						   "sites of the rest were not sampled." :
						   "The call sites were not sampled (no context-switch samples).");
		return;
	}
	/* The sampled switches outside timed waits, each site with the share
	 * of the thread's off-CPU time its timed switches stood for; where no
	 * record timed them, the share of the switches (a count, not a time). */
	double other = s->t[i].other * s->t[i].in_stack;
	if (o.timed && o.ns && len < size)
		len += (size_t)snprintf(buf + len, size - len, " Timed by switch records (%s of %s sampled switches):",
					fmt_count(a, sizeof(a), o.timed), fmt_count(b, sizeof(b), o.samples));
	for (size_t k = 0; k < o.nsites && len < size; k++) {
		const struct offcpu_site *x = &o.sites[k];
		const char *sep = k ? "; " : " ";
		if (o.timed && o.ns) {
			double ns = other * (double)x->ns / (double)o.ns;
			len += (size_t)snprintf(buf + len, size - len, "%s%s (%s of the worker time) %s in %s", sep,
						fmt_ns(a, sizeof(a), ns), fmt_pct(b, sizeof(b), ns / s->budget_ns),
						offcpu_kind_words[x->kind], x->function);
		} else {
			len += (size_t)snprintf(buf + len, size - len, "%s%s of its sampled switches (counted, not timed: "
						"no switch records): %s in %s", sep,
						fmt_pct(a, sizeof(a), (double)x->samples / (double)o.samples),
						offcpu_kind_words[x->kind], x->function);
		}
		if (len < size)
			len += (size_t)snprintf(buf + len, size - len, ", %s%s",
						strcmp(x->site, "?") ? "called from " : "its caller not unwound",
						strcmp(x->site, "?") ? x->site : "");
	}
	if (len < size)
		snprintf(buf + len, size - len, ".");
}

void speedup__other_text(const struct speedup *s, char *buf, size_t size)
{
	buf[0] = '\0';
	size_t len = 0;
	double timed = s->c[STACK_OTHER] - s->other_untimed;
	if (timed <= 0 || s->c[STACK_OTHER] < 0.005 * s->budget_ns)
		return;
	for (int k = 0; k < OFFCPU_KIND_N && len < size; k++) {
		if (s->other_by_kind[k] < 0.005 * s->budget_ns)
			continue;
		char a[32], b[32];
		len += (size_t)snprintf(buf + len, size - len, "%s%s %s (%s)", len ? ", " : "",
					fmt_pct(a, sizeof(a), s->other_by_kind[k] / s->budget_ns), offcpu_kind_words[k],
					fmt_ns(b, sizeof(b), s->other_by_kind[k]));
	}
	if (s->other_untimed >= 0.005 * s->budget_ns && len < size) {
		char a[32], b[32];
		len += (size_t)snprintf(buf + len, size - len, "%s%s not timed by switch records (%s)", len ? ", " : "",
					fmt_pct(a, sizeof(a), s->other_untimed / s->budget_ns),
					fmt_ns(b, sizeof(b), s->other_untimed));
	}
	if (len && len < size)
		snprintf(buf + len, size - len, " of the worker time.");
}

json_object *speedup__other_json(const struct speedup *s)
{
	json_object *o = json_object_new_object();
	for (int k = 0; k < OFFCPU_KIND_N; k++)
		json_object_object_add(o, offcpu_kind_names[k], json_object_new_int64((int64_t)llround(s->other_by_kind[k])));
	json_object_object_add(o, "untimed", json_object_new_int64((int64_t)llround(s->other_untimed)));
	return o;
}

size_t speedup__role_threads_text(const struct speedup *s, const struct model *m, enum thread_role role, char *buf,
				  size_t size)
{
	size_t len = 0;
	int shown = 0;
	if (size)
		buf[0] = '\0';
	for (size_t i = 0; i < s->nthreads && len < size; i++) {
		if (s->t[i].role != role)
			continue;
		if (shown == 3) {
			len += (size_t)snprintf(buf + len, size - len, ", ...");
			break;
		}
		char who[200];
		len += (size_t)snprintf(buf + len, size - len, "%s%s", shown ? ", " : "",
					speedup__thread_text(m, i, who, sizeof(who)));
		shown++;
	}
	return len;
}

void speedup__roles_text(const struct speedup *s, const struct model *m, char *buf, size_t size)
{
	size_t len = 0;
	for (int r = 0; r < ROLE_N && len < size; r++) {
		if (!s->nroles[r])
			continue;
		if (r == ROLE_MERGED) {
			len += (size_t)snprintf(buf + len, size - len, "%sthe threads that ended past the shim's cap "
						"(1,024) are one \"merged threads\" row, counted as one thread",
						len ? "; " : "");
			continue;
		}
		len += (size_t)snprintf(buf + len, size - len, "%s%ss: %d (", len ? "; " : "", role_names[r], s->nroles[r]);
		if (len < size)
			len += speedup__role_threads_text(s, m, (enum thread_role)r, buf + len, size - len);
		if (len < size)
			len += (size_t)snprintf(buf + len, size - len, ")");
	}
	if (s->helper_ns > 0.005 * s->budget_ns && len < size) {
		char a[32], b[32];
		snprintf(buf + len, size - len, "; %s beside the workers (%s on a CPU), outside the stack",
			 fmt_ns(a, sizeof(a), s->helper_ns), fmt_ns(b, sizeof(b), s->helper_cpu_ns));
	}
}

void speedup__free(struct speedup *s)
{
	free(s->locks);
	free(s->by_identity);
	free(s->t);
	free(s->parks);
	free(s->alone_spans);
	free(s->alone_thread);
	s->alone_spans = NULL;
	s->alone_thread = NULL;
	s->locks = s->by_identity = s->parks = NULL;
	s->t = NULL;
}

double speedup__lock_wait(const struct speedup *s, const struct object_row *row)
{
	struct stack_lock key = { .row = row };
	const struct stack_lock *hit = s->nlocks ? bsearch(&key, s->by_identity, s->nlocks, sizeof(key), by_identity) : NULL;
	return hit && model__same_object(hit->row, row) ? hit->wait_ns : 0;
}
