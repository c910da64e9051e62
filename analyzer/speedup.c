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
 * Over the run: useful = min(Σ cpu_out, reference's Σ cpu_out), inflation =
 * the rest of Σ cpu_out; idle = N·T − Σ active. The components then add up to
 * N·T exactly, by construction; what the construction cannot attribute shows
 * up in "unexplained" and, when more than N threads were active at once, as
 * negative idle.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "profile.h"
#include "speedup.h"
#include "util.h"

const char *const stack_keys[STACK_N] = {
#define CV_X(sym, key, phrase) [sym] = key,
	SPEEDUP_COMPONENTS(CV_X)
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
 * for the workers, so its slot counts as idle then. */
static int coordinator(const struct cv_thread_rec *t)
{
	return (t->flags & CV_THREAD_MAIN) && t->threads_created > 0;
}

/* A thread's active time: alive, not waiting for the workers. */
static double active_time(const struct model *m, size_t i)
{
	const struct cv_thread_rec *t = &m->p->threads[i];
	double life = (double)(t->end_ns - t->start_ns);
	double active = life - minf((double)t->join_wait_ns, life);
	if (coordinator(t))
		active -= minf((double)(m->thread_cond_wait[i] + m->thread_barrier_wait[i]), active);
	return active;
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
 * active at the start), so brief overlaps from that guess do not count. */
int speedup__busy_threads(const struct model *m)
{
	const struct profile *p = m->p;
	size_t n = p->nthreads;
	struct edge *e = xcalloc(2 * n, sizeof(*e));
	double first = INFINITY, last = 0;
	for (size_t i = 0; i < n; i++) {
		const struct cv_thread_rec *t = &p->threads[i];
		double start = (double)t->start_ns, active = active_time(m, i);
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
	return busy;
}

void speedup__compute(struct speedup *s, const struct model *m, int n, double wall_ns,
		    double ref_cpu_out_ns)
{
	const struct profile *p = m->p;
	memset(s, 0, sizeof(*s));
	s->threads = n;
	s->wall_ns = wall_ns > 0 ? wall_ns : m->wall_ns;
	s->budget_ns = (double)n * s->wall_ns;
	double raw_lock = 0, carved_lock = 0;   /* blocked lock waits before and after the run queue's part */

	for (size_t i = 0; i < p->nthreads; i++) {
		const struct cv_thread_rec *t = &p->threads[i];
		double life = (double)(t->end_ns - t->start_ns);
		double active = life - minf((double)t->join_wait_ns, life);
		double lock = (double)m->thread_lock_wait[i], park = (double)m->thread_cond_wait[i];
		double barrier = (double)m->thread_barrier_wait[i];
		if (coordinator(t)) {
			/* Waiting for the workers' results is not work either. */
			active -= minf(park + barrier, active);
			park = barrier = 0;
		}
		/* Spinning for a spinlock is waiting for it, on a CPU: it counts
		 * as lock wait and comes out of the thread's CPU time. */
		double spin = minf((double)m->thread_spin_ns[i], (double)t->cpu_ns);
		lock += spin;
		double blocked = lock + park + barrier;
		double u = active - blocked;
		if (u < 0) {
			s->c[STACK_UNEXPLAINED] += u;
			u = 0;
		}
		double cpu = minf((double)t->cpu_ns - spin, u);
		double runnable = minf((double)t->run_delay_ns, u - cpu);
		double other = u - cpu - runnable;
		/* The rest of the run-queue delay followed wake-ups inside waits: a
		 * woken thread waits for a CPU before its wait returns, and that
		 * time is the CPUs' shortage, not the lock's or the barrier's. It
		 * comes out of the sleeping waits (not spinning: that is on-CPU),
		 * in proportion. */
		double sleeping = lock - spin + park + barrier;
		double inside = minf((double)t->run_delay_ns - runnable, sleeping);
		raw_lock += lock - spin;
		if (inside > 0) {
			double keep = (sleeping - inside) / sleeping;
			lock = spin + (lock - spin) * keep;
			park *= keep;
			barrier *= keep;
			runnable += inside;
		}
		carved_lock += lock - spin;
		s->active_ns += active;
		s->cpu_out_ns += cpu;
		s->c[STACK_LOCK] += lock;
		s->c[STACK_PARK] += park;
		s->c[STACK_BARRIER] += barrier;
		s->c[STACK_RUNNABLE] += runnable;
		s->c[STACK_OTHER] += other;
	}
	s->runq_in_waits = raw_lock > 0 ? 1 - carved_lock / raw_lock : 0;
	s->c[STACK_USEFUL] = ref_cpu_out_ns >= 0 ? minf(s->cpu_out_ns, ref_cpu_out_ns) : s->cpu_out_ns;
	s->c[STACK_INFLATION] = s->cpu_out_ns - s->c[STACK_USEFUL];
	s->c[STACK_IDLE] = s->budget_ns - s->active_ns;

	for (size_t i = 0; i < p->ncounters; i++)
		if (p->counters[i].c.kind == CV_COUNTER_PROGRESS && p->counters[i].c.value > 0)
			s->progress += (double)p->counters[i].c.value;

	s->locks = xcalloc(m->nlocks, sizeof(*s->locks));
	for (size_t i = 0; i < m->nlocks; i++)
		if ((wait_class_of_obj(m->locks[i]->obj) == WAIT_LOCK || m->locks[i]->obj->o.kind == CV_OBJ_SPIN) &&
		    m->locks[i]->total.wait_ns) {
			/* Each lock's share of the run queue's part, as the whole's. */
			double keep = m->locks[i]->obj->o.kind == CV_OBJ_SPIN ? 1 : 1 - s->runq_in_waits;
			s->locks[s->nlocks].row = m->locks[i];
			s->locks[s->nlocks++].wait_ns = (double)m->locks[i]->total.wait_ns * keep;
		}
	qsort(s->locks, s->nlocks, sizeof(*s->locks), by_lock_wait);
	s->by_identity = xcalloc(s->nlocks ? s->nlocks : 1, sizeof(*s->by_identity));
	memcpy(s->by_identity, s->locks, s->nlocks * sizeof(*s->locks));
	qsort(s->by_identity, s->nlocks, sizeof(*s->by_identity), by_identity);
}

void speedup__free(struct speedup *s)
{
	free(s->locks);
	free(s->by_identity);
	s->locks = s->by_identity = NULL;
}

double speedup__lock_wait(const struct speedup *s, const struct object_row *row)
{
	struct stack_lock key = { .row = row };
	const struct stack_lock *hit = s->nlocks ? bsearch(&key, s->by_identity, s->nlocks, sizeof(key), by_identity) : NULL;
	return hit && model__same_object(hit->row, row) ? hit->wait_ns : 0;
}
