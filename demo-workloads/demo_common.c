/* demo_common.c — option parsing, timing, statistics and the watchdog shared by
 * every seed demo (see demo_common.h). */
#include "demo_common.h"
#include "workpool.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- options --------------------------------------------------------------- */

static void print_default(FILE *out, const struct dc_opt *o)
{
	switch (o->kind) {
	case DC_UINT:
		fprintf(out, " (default %llu)", (unsigned long long)*(uint64_t *)o->dst);
		break;
	case DC_CHOICE:
		fprintf(out, " (default %s)", o->choices[*(int *)o->dst]);
		break;
	case DC_LIST: {
		const struct dc_list *l = o->dst;
		fputs(" (default ", out);
		for (size_t i = 0; i < l->n; i++)
			fprintf(out, "%s%llu", i ? "," : "", (unsigned long long)l->v[i]);
		fputc(')', out);
		break;
	}
	case DC_FLAG:
		break;
	}
}

static void usage(const struct dc_prog *p)
{
	printf("usage: %s [options]\n\n%s\nReproduces %s.\n", p->name, p->summary, p->seed);
	if (p->details)
		printf("\n%s\n", p->details);
	printf("\nWith no --workers, prints the seed's sweep in the seed's table format.\n"
	       "With --workers N, does one run at N workers and prints one result line\n"
	       "(for `convoy scale --threads 1,2,4 -- %s --workers {threads}`).\n\noptions:\n",
	       p->name);
	for (const struct dc_opt *o = p->opts; o->name; o++) {
		char left[64];
		switch (o->kind) {
		case DC_UINT:
			snprintf(left, sizeof left, "--%s N", o->name);
			break;
		case DC_LIST:
			snprintf(left, sizeof left, "--%s N,N,...", o->name);
			break;
		case DC_FLAG:
			snprintf(left, sizeof left, "--%s", o->name);
			break;
		case DC_CHOICE: {
			size_t n = (size_t)snprintf(left, sizeof left, "--%s ", o->name);
			for (size_t i = 0; o->choices[i] && n < sizeof left; i++)
				n += (size_t)snprintf(left + n, sizeof left - n, "%s%s",
						      i ? "|" : "", o->choices[i]);
			break;
		}
		}
		printf("  %-22s %s", left, o->help);
		if (o->kind == DC_UINT || o->kind == DC_LIST)
			printf(" [%llu..%llu]", (unsigned long long)o->min,
			       (unsigned long long)o->max);
		if (!o->no_default)
			print_default(stdout, o);
		putchar('\n');
	}
	printf("  %-22s %s\n", "-h, --help", "this text");
	if (p->examples)
		printf("\nexamples:\n%s", p->examples);
}

void dc_usage_error(const struct dc_prog *p, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", p->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

void dc_die(const char *name, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

void dc_check(const char *name, int err, const char *what)
{
	if (err)
		dc_die(name, "%s: %s", what, wp_strerror(err));
}

/* Decimal digits with optional '_' between them; 0 on success, -1 otherwise. */
static int parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	bool digit = false;
	if (!*s)
		return -1;
	for (const char *c = s; *c; c++) {
		if (*c == '_' && digit && c[1] >= '0' && c[1] <= '9')
			continue;
		if (*c < '0' || *c > '9')
			return -1;
		unsigned d = (unsigned)(*c - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
		digit = true;
	}
	*out = v;
	return 0;
}

static void parse_uint(const struct dc_prog *p, const struct dc_opt *o,
		       const char *val, uint64_t *out)
{
	if (parse_u64(val, out) != 0 || *out < o->min || *out > o->max)
		dc_usage_error(p, "--%s: '%s' is not an integer in %llu..%llu", o->name, val,
			       (unsigned long long)o->min, (unsigned long long)o->max);
}

static void parse_value(const struct dc_prog *p, struct dc_opt *o, const char *val)
{
	switch (o->kind) {
	case DC_UINT:
		parse_uint(p, o, val, o->dst);
		break;
	case DC_CHOICE:
		for (int i = 0; o->choices[i]; i++) {
			if (strcmp(o->choices[i], val) == 0) {
				*(int *)o->dst = i;
				return;
			}
		}
		{
			char all[128];
			size_t n = 0;
			all[0] = '\0';
			for (int i = 0; o->choices[i] && n < sizeof all; i++)
				n += (size_t)snprintf(all + n, sizeof all - n, "%s%s",
						      i ? ", " : "", o->choices[i]);
			dc_usage_error(p, "--%s: '%s' is not one of %s", o->name, val, all);
		}
	case DC_LIST: {
		struct dc_list l = { .n = 0 };
		char buf[512];
		if (strlen(val) >= sizeof buf)
			dc_usage_error(p, "--%s: list too long", o->name);
		strcpy(buf, val);
		char *save = NULL;
		for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (l.n == DC_LIST_MAX)
				dc_usage_error(p, "--%s: more than %d values", o->name, DC_LIST_MAX);
			parse_uint(p, o, tok, &l.v[l.n++]);
		}
		if (l.n == 0)
			dc_usage_error(p, "--%s: '%s' is not a comma-separated list of integers",
				       o->name, val);
		*(struct dc_list *)o->dst = l;
		break;
	}
	case DC_FLAG:
		*(bool *)o->dst = true;
		break;
	}
}

int dc_parse(const struct dc_prog *p, int argc, char **argv)
{
	int given = 0;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
			usage(p);
			exit(0);
		}
		if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0')
			dc_usage_error(p, "unexpected argument '%s' (try --help)", arg);
		const char *name = arg + 2, *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		struct dc_opt *o = p->opts;
		while (o->name && !(strlen(o->name) == len && strncmp(o->name, name, len) == 0))
			o++;
		if (!o->name)
			dc_usage_error(p, "unknown option '%.*s' (try --help)", (int)(len + 2), arg);
		if (o->given)
			dc_usage_error(p, "--%s given twice", o->name);
		const char *val = NULL;
		if (o->kind == DC_FLAG) {
			if (eq)
				dc_usage_error(p, "--%s takes no value", o->name);
		} else if (eq) {
			val = eq + 1;
		} else if (i + 1 < argc) {
			val = argv[++i];
		} else {
			dc_usage_error(p, "--%s needs a value (try --help)", o->name);
		}
		parse_value(p, o, val);
		o->given = true;
		given++;
	}
	return given;
}

bool dc_given(const struct dc_prog *p, const char *name)
{
	for (const struct dc_opt *o = p->opts; o->name; o++)
		if (strcmp(o->name, name) == 0)
			return o->given;
	abort(); /* a demo asked about an option it does not have */
}

/* ---- time ---------------------------------------------------------------- */

uint64_t dc_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void dc_sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			       .tv_nsec = (long)(ns % 1000000000ull) };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Rust's Debug for Duration with precision 0 picks the largest unit in which
 * the value is at least one (s, ms, µs, ns) and rounds half up. */
char *dc_fmt_duration(char *buf, size_t size, uint64_t ns)
{
	static const struct { uint64_t div; const char *unit; } units[] = {
		{ 1000000000ull, "s" }, { 1000000ull, "ms" }, { 1000ull, "µs" }, { 1, "ns" },
	};
	for (size_t i = 0; i < DC_ARRAY_SIZE(units); i++) {
		if (ns >= units[i].div || units[i].div == 1) {
			uint64_t v = (ns + units[i].div / 2) / units[i].div;
			snprintf(buf, size, "%llu%s", (unsigned long long)v, units[i].unit);
			break;
		}
	}
	return buf;
}

char *dc_fmt_grouped(char *buf, size_t size, uint64_t v)
{
	char digits[32];
	int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
	size_t o = 0;
	for (int i = 0; i < n && o + 1 < size; i++) {
		if (i > 0 && (n - i) % 3 == 0 && o + 2 < size)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

void dc_print_right(FILE *out, const char *s, int width)
{
	int chars = 0;
	for (const unsigned char *c = (const unsigned char *)s; *c; c++)
		chars += (*c & 0xC0) != 0x80; /* count UTF-8 lead bytes only */
	for (int i = chars; i < width; i++)
		fputc(' ', out);
	fputs(s, out);
}

/* ---- memory ------------------------------------------------------------------ */

void *dc_alloc_large(const char *name, size_t bytes)
{
	const size_t huge = (size_t)2 << 20;
	void *p;
	if (bytes < huge) {
		p = malloc(bytes ? bytes : 1);
	} else {
		bytes = (bytes + huge - 1) & ~(huge - 1);
		p = aligned_alloc(huge, bytes);
		if (p)
			(void)madvise(p, bytes, MADV_HUGEPAGE); /* a hint: harmless if refused */
	}
	if (!p)
		dc_die(name, "out of memory for %zu bytes", bytes);
	return p;
}

/* ---- statistics ------------------------------------------------------------ */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

struct dc_stats dc_stats_of(uint64_t *v, size_t n)
{
	struct dc_stats s = { 0, 0, 0 };
	if (n == 0)
		return s;
	qsort(v, n, sizeof *v, cmp_u64);
	s.min = v[0];
	s.median = v[(n - 1) / 2];
	s.max = v[n - 1];
	return s;
}

/* ---- threads --------------------------------------------------------------- */

void dc_spawn(const char *name, pthread_t *thread, void *(*fn)(void *), void *arg)
{
	int rc = pthread_create(thread, NULL, fn, arg);
	if (rc != 0)
		dc_die(name, "pthread_create: %s", strerror(rc));
}

void *dc_join(const char *name, pthread_t thread)
{
	void *ret = NULL;
	int rc = pthread_join(thread, &ret);
	if (rc != 0)
		dc_die(name, "pthread_join: %s", strerror(rc));
	return ret;
}

void dc_name_thread(pthread_t thread, const char *fmt, ...)
{
	char name[16];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof name, fmt, ap);
	va_end(ap);
	pthread_setname_np(thread, name); /* best effort: a name is a label */
}

struct dc_watchdog {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool cancelled;
	uint64_t deadline_ns; /* CLOCK_MONOTONIC */
	void (*report)(void *);
	void *arg;
	int status;
};

static void *watchdog_main(void *p)
{
	struct dc_watchdog *w = p;
	struct timespec ts = { .tv_sec = (time_t)(w->deadline_ns / 1000000000ull),
			       .tv_nsec = (long)(w->deadline_ns % 1000000000ull) };
	pthread_mutex_lock(&w->lock);
	while (!w->cancelled) {
		if (pthread_cond_timedwait(&w->cond, &w->lock, &ts) == ETIMEDOUT && !w->cancelled) {
			pthread_mutex_unlock(&w->lock);
			w->report(w->arg);
			fflush(stdout);
			exit(w->status);
		}
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

struct dc_watchdog *dc_watchdog_start(const char *name, uint64_t timeout_ns,
				      void (*report)(void *), void *arg, int status)
{
	struct dc_watchdog *w = calloc(1, sizeof *w);
	pthread_condattr_t attr;
	if (!w)
		dc_die(name, "out of memory");
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cond, &attr);
	pthread_condattr_destroy(&attr);
	pthread_mutex_init(&w->lock, NULL);
	w->deadline_ns = dc_now_ns() + timeout_ns;
	w->report = report;
	w->arg = arg;
	w->status = status;
	dc_spawn(name, &w->thread, watchdog_main, w);
	dc_name_thread(w->thread, "watchdog");
	return w;
}

void dc_watchdog_cancel(struct dc_watchdog *w)
{
	pthread_mutex_lock(&w->lock);
	w->cancelled = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

void dc_run_child(const char *name, void (*fn)(void *), void *arg)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		dc_die(name, "fork: %s", strerror(errno));
	if (pid == 0) {
		fn(arg);
		fflush(NULL);
		exit(0);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			dc_die(name, "waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		dc_die(name, "child ended abnormally (wait status %d)", status);
}

/* ---- poll-then-park --------------------------------------------------------- */

enum { DC_PARK_EMPTY, DC_PARK_PARKED, DC_PARK_NOTIFIED };

void dc_parker_init(struct dc_parker *p)
{
	atomic_init(&p->state, DC_PARK_EMPTY);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->parks = 0;
	p->wakes_received = 0;
}

void dc_parker_destroy(struct dc_parker *p)
{
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
}

void dc_park(struct dc_parker *p)
{
	int expect = DC_PARK_NOTIFIED;
	/* A token left by an unpark since the last park: consume it, no block. */
	if (atomic_compare_exchange_strong(&p->state, &expect, DC_PARK_EMPTY))
		return;
	pthread_mutex_lock(&p->lock);
	expect = DC_PARK_EMPTY;
	if (!atomic_compare_exchange_strong(&p->state, &expect, DC_PARK_PARKED)) {
		/* An unpark came in between: it can only have left NOTIFIED. */
		atomic_store(&p->state, DC_PARK_EMPTY);
		pthread_mutex_unlock(&p->lock);
		return;
	}
	p->parks++;
	for (;;) {
		pthread_cond_wait(&p->cond, &p->lock);
		expect = DC_PARK_NOTIFIED;
		if (atomic_compare_exchange_strong(&p->state, &expect, DC_PARK_EMPTY))
			break; /* otherwise a spurious wake-up: still PARKED */
	}
	pthread_mutex_unlock(&p->lock);
}

bool dc_unpark(struct dc_parker *p)
{
	if (atomic_exchange(&p->state, DC_PARK_NOTIFIED) != DC_PARK_PARKED)
		return false; /* not parked: the token is enough */
	/* The owner set PARKED under the lock and holds it until cond_wait
	 * releases it; taking the lock here orders this signal after that wait. */
	pthread_mutex_lock(&p->lock);
	p->wakes_received++;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return true;
}

void dc_poll_then_park(struct dc_parker *p, uint64_t spin_ns, bool (*ready)(void *), void *arg)
{
	while (!ready(arg)) {
		if (spin_ns) {
			uint64_t until = dc_now_ns() + spin_ns;
			do {
				__builtin_ia32_pause();
				if (ready(arg))
					return;
			} while (dc_now_ns() < until);
		}
		dc_park(p);
	}
}
