/* families.c — condition variables, semaphores, barriers and futex words
 * in the text report: one generic table renderer, and per kind a table of
 * its columns (header, width, cell) and the detail line under a row. */
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include "callstacks.h"
#include "families.h"
#include "model.h"
#include "profile.h"
#include "report.h"
#include "textfit.h"
#include "util.h"

typedef const char *(*cell_fn)(char *buf, size_t size, const struct object_row *r);

struct column {
	const char *head;
	int width;
	cell_fn cell;
};

#define MAX_COLUMNS 7

struct family {
	const char *title;
	const char *what;                         /* the name column's header */
	size_t rows_offset, count_offset;         /* the model's rows of this kind and their count */
	struct column cols[MAX_COLUMNS];
	void (*detail)(FILE *out, const struct object_row *r, int verbose);   /* NULL: none */
	int (*stacks)(const struct object_row *r);   /* show the call stacks that waited on it; NULL: never */
};

/* ---- cells ----------------------------------------------------------------- */

static const char *avg_or_dash(char *b, size_t n, uint64_t sum, uint64_t count)
{
	return count ? fmt_ns(b, n, (double)sum / (double)count) : "-";
}

#define COUNT_CELL(name, field) \
	static const char *name(char *b, size_t n, const struct object_row *r) { return fmt_count(b, n, r->total.field); }
#define NS_CELL(name, field) \
	static const char *name(char *b, size_t n, const struct object_row *r) { return fmt_ns(b, n, (double)r->total.field); }
#define AVG_CELL(name, sum, count) \
	static const char *name(char *b, size_t n, const struct object_row *r) { return avg_or_dash(b, n, r->total.sum, r->total.count); }

COUNT_CELL(c_waits, waits)
COUNT_CELL(c_timeouts, timeouts)
COUNT_CELL(c_signals, signals)
COUNT_CELL(c_broadcasts, broadcasts)
COUNT_CELL(c_acquisitions, acquisitions)
COUNT_CELL(c_rounds, rounds)
COUNT_CELL(c_eagain, futex_eagain)
NS_CELL(c_wait, wait_ns)
AVG_CELL(c_avg_wait, wait_ns, waits)
AVG_CELL(c_avg_spread, imbalance_ns, rounds)

static const char *c_max_spread(char *b, size_t n, const struct object_row *r)
{
	return r->total.rounds ? fmt_ns(b, n, (double)r->total.max_imbalance_ns) : "-";
}

static const char *c_barrier_count(char *b, size_t n, const struct object_row *r)
{
	snprintf(b, n, "%u", r->obj->o.flags);   /* the count it was initialised with */
	return b;
}

static const char *c_role(char *b, size_t n, const struct object_row *r)
{
	snprintf(b, n, "%s", r->type);   /* "lock" or "park" */
	return b;
}

/* ---- detail lines ---------------------------------------------------------- */

static void cond_detail(FILE *out, const struct object_row *r, int verbose)
{
	const struct cv_stats *s = &r->total;
	char a[32], b[32], c[32];
	if (r->inside)
		textfit__detail(out, "inside %s", r->inside);
	if (r->monitor)   /* the mutex its waits named: one monitor */
		textfit__detail(out, "waited under mutex %s%s", r->monitor->name,
		       r->obj->o.flags & CV_COND_MUTEXES_VARY ? " (and others before it)" : "");
	if (s->signals_unwaited || s->broadcasts_unwaited || verbose)
		textfit__detail(out, "longest wait %s; sent with no thread waiting: %s signals, %s broadcasts",
		       s->waits ? fmt_ns(a, sizeof(a), (double)s->max_wait_ns) : "-",
		       fmt_count(b, sizeof(b), s->signals_unwaited), fmt_count(c, sizeof(c), s->broadcasts_unwaited));
}

static void sem_detail(FILE *out, const struct object_row *r, int verbose)
{
	const struct cv_stats *s = &r->total;
	char a[32], b[32], c[32], x[32], y[32];
	if (s->trylocks || s->signals_unwaited || s->timeouts || verbose)
		textfit__detail(out, "longest wait %s; trywait: %s calls, %s failed; posts with no waiter: %s; timeouts: %s",
		       s->waits ? fmt_ns(a, sizeof(a), (double)s->max_wait_ns) : "-",
		       fmt_count(b, sizeof(b), s->trylocks), fmt_count(c, sizeof(c), s->trylock_failures),
		       fmt_count(x, sizeof(x), s->signals_unwaited), fmt_count(y, sizeof(y), s->timeouts));
}

static void futex_detail(FILE *out, const struct object_row *r, int verbose)
{
	const struct cv_stats *s = &r->total;
	char a[32], g[32], h[32], k[32], l[32];
	if (r->inside)
		textfit__detail(out, "inside %s", r->inside);
	if (s->signals_unwaited || s->requeues || s->pi_ops || verbose)
		textfit__detail(out, "longest wait %s; woke %s threads; %s wakes woke nobody; %s requeues; %s PI operations",
		       s->waits ? fmt_ns(a, sizeof(a), (double)s->max_wait_ns) : "-",
		       fmt_count(g, sizeof(g), s->futex_woken), fmt_count(h, sizeof(h), s->signals_unwaited),
		       fmt_count(k, sizeof(k), s->requeues), fmt_count(l, sizeof(l), s->pi_ops));
}

static int always(const struct object_row *r)
{
	(void)r;
	return 1;
}

/* A futex word used as a lock shows its stacks in the lock table; one
 * parked on, here (one nobody waited on has no wait stacks). */
static int futex_parked_on(const struct object_row *r)
{
	return model__futex_parked_on(r);
}

/* ---- the tables ------------------------------------------------------------ */

#define ROWS(field, count) offsetof(struct model, field), offsetof(struct model, count)

static const struct family families[] = {
	{ "Condition variables, by total wait", "condvar", ROWS(conds, nconds),
	  { { "waits", 8, c_waits }, { "wait", 9, c_wait }, { "avg wait", 8, c_avg_wait },
	    { "timeouts", 8, c_timeouts }, { "signals", 8, c_signals }, { "broadcasts", 10, c_broadcasts } },
	  cond_detail, always },
	{ "Semaphores, by total wait", "semaphore", ROWS(sems, nsems),
	  { { "blocked", 8, c_waits }, { "wait", 9, c_wait }, { "avg wait", 9, c_avg_wait },
	    { "acquired", 9, c_acquisitions }, { "posts", 9, c_signals } },
	  sem_detail, NULL },
	{ "Barriers, by total wait (spread: first to last arrival of a round)", "barrier", ROWS(barriers, nbarriers),
	  { { "count", 5, c_barrier_count }, { "rounds", 8, c_rounds }, { "wait", 9, c_wait },
	    { "avg wait", 8, c_avg_wait }, { "avg spread", 9, c_avg_spread }, { "max spread", 9, c_max_spread } },
	  NULL, NULL },
	{ "Futex words (syscall(SYS_futex): Rust std, C++ atomic wait, direct callers), by total wait", "futex",
	  ROWS(futexes, nfutexes),
	  { { "role", -5, c_role }, { "waits", 7, c_waits }, { "wait", 9, c_wait }, { "avg wait", 8, c_avg_wait },
	    { "EAGAIN", 7, c_eagain }, { "wakes", 8, c_signals } },
	  futex_detail, futex_parked_on },
};

/* r's name and cells. */
static void family_row(FILE *out, const struct family *f, const struct object_row *r)
{
	textfit__name(out, r->name);
	for (const struct column *c = f->cols; c < f->cols + MAX_COLUMNS && c->head; c++) {
		char buf[64];
		fprintf(out, " %*s", c->width, c->cell(buf, sizeof(buf), r));
	}
	fputc('\n', out);
}

static void family_text(const struct family *f, const struct model *m, const struct report_options *o, FILE *out)
{
	struct object_row *const *rows = *(struct object_row *const *const *)((const char *)m + f->rows_offset);
	size_t n = *(const size_t *)((const char *)m + f->count_offset);
	if (!n)
		return;
	textfit__wrap(out, textfit__width(out), 2, "", f->title);
	fprintf(out, "  %-*s", TEXTFIT_NAME_COLS, f->what);
	for (const struct column *c = f->cols; c < f->cols + MAX_COLUMNS && c->head; c++)
		fprintf(out, " %*s", c->width, c->head);
	fputc('\n', out);
	/* Objects made at one site share one row, unless -v asks for each
	 * (report.c's lock table does the same). */
	struct object_group *g = NULL;
	size_t ng = o->verbose ? n : model__group(rows, n, &g);
	size_t shown = report__rows_to_show(ng, o);
	for (size_t i = 0; i < shown; i++) {
		struct object_row sum;
		char note[200];
		if (g && model__group_row(&g[i], &sum, note, sizeof(note))) {
			family_row(out, f, &sum);
			fprintf(out, "      %s\n", note);
			continue;
		}
		const struct object_row *r = g ? g[i].first : rows[i];
		family_row(out, f, r);
		if (f->detail)
			f->detail(out, r, o->verbose);
		if (f->stacks && f->stacks(r))
			callstacks__text(out, m->syms, r->obj->o.id, r->total.wait_ns,
					 o->stacks_given ? o->stacks : 3, o->verbose, "      ");
	}
	report__more(out, g, shown, ng);
	free(g);
	fputc('\n', out);
}

void families__text(const struct model *m, const struct report_options *o, FILE *out)
{
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		family_text(&families[i], m, o, out);
}
