/* demo_common.h — what every seed demo shares: one option parser, the clock,
 * min/median/max of repeated runs, the seed tables' duration format, and a
 * watchdog for the demos whose point is that they hang.
 *
 * Every demo has the same command-line shape (docs/seeds.md):
 *
 *   demo               the seed's own sweep, in the seed's own table format
 *   demo --workers N   one run at N workers, one result line (for convoy scale)
 *   demo --help        usage with examples
 *
 * A bad option or value is one line on stderr naming it, and exit status 2.
 */
#ifndef DEMO_COMMON_H
#define DEMO_COMMON_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define DC_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define DC_CACHE_LINE 64 /* x86-64; what the false-sharing sweep shows here */

/* ---- options (demo_common.c) ------------------------------------------- */

enum dc_kind {
	DC_UINT,   /* uint64_t in [min, max]; decimal, '_' allowed: 2_000_000 */
	DC_FLAG,   /* bool, no argument */
	DC_CHOICE, /* int: index into choices[] */
	DC_LIST,   /* dc_list: comma-separated uints in [min, max] */
};

#define DC_LIST_MAX 32
struct dc_list {
	size_t n;
	uint64_t v[DC_LIST_MAX];
};

struct dc_opt {
	const char *name;            /* "workers" is --workers */
	enum dc_kind kind;
	void *dst;                   /* uint64_t *, bool *, int *, struct dc_list * */
	const char *help;            /* one line; the default is appended */
	uint64_t min, max;           /* DC_UINT, DC_LIST */
	const char *const *choices;  /* DC_CHOICE: NULL-terminated */
	bool no_default;             /* usage shows no "(default ...)" */
	bool given;                  /* set by dc_parse */
};

/* Option-table entries; every demo's table ends with DC_OPT_END. */
#define DC_OPT_UINT(n, d, h, lo, hi) { .name = (n), .kind = DC_UINT, .dst = (d), .help = (h), .min = (lo), .max = (hi) }
#define DC_OPT_LIST(n, d, h, lo, hi) { .name = (n), .kind = DC_LIST, .dst = (d), .help = (h), .min = (lo), .max = (hi) }
#define DC_OPT_FLAG(n, d, h)         { .name = (n), .kind = DC_FLAG, .dst = (d), .help = (h) }
#define DC_OPT_CHOICE(n, d, h, c)    { .name = (n), .kind = DC_CHOICE, .dst = (d), .help = (h), .choices = (c) }
/* The --workers option every demo has: absent means the sweep. */
#define DC_OPT_WORKERS(d, hi) { .name = "workers", .kind = DC_UINT, .dst = (d), \
	.help = "one run at N workers instead of the sweep", .min = 1, .max = (hi), .no_default = true }
#define DC_OPT_END                   { .name = NULL }

struct dc_prog {
	const char *name;     /* the binary's name, prefix of every error */
	const char *summary;  /* one line: what the demo shows */
	const char *seed;     /* which seed experiment it reproduces */
	const char *details;  /* optional paragraph (may be NULL) */
	const char *examples; /* lines of examples, each "  cmd  # what" */
	struct dc_opt *opts;  /* terminated by an entry with name == NULL */
};

/* Parses argv against prog->opts. On --help prints usage and exits 0; on an
 * unknown option, a missing or bad value, or a stray argument prints one line
 * "NAME: ..." on stderr and exits 2. Returns the number of options given. */
int dc_parse(const struct dc_prog *prog, int argc, char **argv);

/* Whether option `name` was on the command line. */
bool dc_given(const struct dc_prog *prog, const char *name);

/* Prints "NAME: message" on stderr and exits 2 (for checks across options). */
void dc_usage_error(const struct dc_prog *prog, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 2, 3)));

/* Prints "NAME: message" on stderr and exits 1 (a failed run or check). */
void dc_die(const char *name, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 2, 3)));

/* Dies with "NAME: WHAT: <wp_strerror(err)>" (exit 1) unless err is 0: the
 * pool demos' check of every workpool call. */
void dc_check(const char *name, int err, const char *what);

/* ---- time ---------------------------------------------------------------- */

uint64_t dc_now_ns(void);                /* CLOCK_MONOTONIC */
void dc_sleep_ns(uint64_t ns);           /* nanosleep, restarted on EINTR */
static inline double dc_ms(uint64_t ns) { return (double)ns / 1e6; }

/* A Rust Duration printed with "{:.0?}", the seed 000 tables' time column:
 * "63ms", "850µs", "2s". Returns buf. */
char *dc_fmt_duration(char *buf, size_t size, uint64_t ns);

/* v with thousands separators, "30,000,000" (seed 003's granularity table). */
char *dc_fmt_grouped(char *buf, size_t size, uint64_t v);

/* Prints s right-aligned in `width` characters (counting UTF-8 characters,
 * so "µs" pads like the seed's Rust output). */
void dc_print_right(FILE *out, const char *s, int width);

/* ---- memory ------------------------------------------------------------------ */

/* malloc for the large task arrays: 2 MiB-aligned and offered to transparent
 * huge pages when at least 2 MiB, as workpool's own queues are, so a direct
 * port and a workpool run pay the same page faults for the same fill.
 * Dies with one line when out of memory; free() releases it. */
void *dc_alloc_large(const char *name, size_t bytes);

/* ---- statistics ------------------------------------------------------------ */

struct dc_stats {
	uint64_t min, median, max;
};

/* Sorts v[0..n) in place and returns min, median (lower middle for even n), max. */
struct dc_stats dc_stats_of(uint64_t *v, size_t n);

/* ---- threads --------------------------------------------------------------- */

/* pthread_create / pthread_join that die with one line on failure. */
void dc_spawn(const char *name, pthread_t *thread, void *(*fn)(void *), void *arg);
void *dc_join(const char *name, pthread_t thread);
/* Names a thread (printf format, truncated to the kernel's 15 bytes) so a
 * profiler's report says "A" or "barrier-1" rather than the program name. */
void dc_name_thread(pthread_t thread, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A watchdog for demos whose point is that they hang: after timeout_ns it
 * calls report(arg) (which prints the frozen state) and then exit(status),
 * unless dc_watchdog_cancel ran first. exit() from the watchdog thread runs
 * atexit handlers, so a preloaded profiler still writes its profile. */
struct dc_watchdog;
struct dc_watchdog *dc_watchdog_start(const char *name, uint64_t timeout_ns,
				      void (*report)(void *), void *arg, int status);
void dc_watchdog_cancel(struct dc_watchdog *w);

/* Runs fn(arg) in a forked child and waits for it: a sweep uses it for the
 * scenes that end their own process (a watchdog's exit after a hang). Dies
 * with one line unless the child exits 0. */
void dc_run_child(const char *name, void (*fn)(void *), void *arg);

/* ---- poll-then-park (seed 002) ------------------------------------------------ */

/* std::thread::park on a mutex and a condition variable, as in seed 002's
 * workers: unpark leaves a token that the next park consumes instead of
 * blocking, so an announcement made between a waiter's last check and its
 * park is never lost. Counters are written by the owner only (parks) or under
 * the parker's lock (wakes_received), and read after the threads are joined. */
struct dc_parker {
	_Alignas(DC_CACHE_LINE) _Atomic int state; /* DC_PARK_EMPTY/PARKED/NOTIFIED */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t parks;          /* times the owner blocked in the condvar */
	uint64_t wakes_received; /* signals sent to it while it was parked */
};

void dc_parker_init(struct dc_parker *p);
void dc_parker_destroy(struct dc_parker *p);
/* Blocks until a token is available (returns at once if one is). Owner only. */
void dc_park(struct dc_parker *p);
/* Makes a token available; signals the owner if it is parked. Returns true
 * when it had to wake a parked owner (a "wake": one signal sent). */
bool dc_unpark(struct dc_parker *p);

/* Seed 002's idle policy: poll `ready(arg)` for at most spin_ns, then park
 * until unparked, and repeat until ready. Returns after ready(arg) is true. */
void dc_poll_then_park(struct dc_parker *p, uint64_t spin_ns, bool (*ready)(void *), void *arg);

/* ---- the seed 000 task ---------------------------------------------------- */

/* Seed 000's unit of work: a deterministic arithmetic loop; `weight` sets how
 * long one task runs. Shared by global_queue, work_stealing and
 * scheduler_compare so the three can never drift apart. */
static inline uint64_t dc_task(uint64_t weight, uint64_t seed)
{
	uint64_t state = seed | 1;
	for (uint64_t i = 0; i < weight; i++) {
		state = state * 6364136223846793005ull + 1;
		state ^= state >> 33;
	}
	return state;
}

/* Seed 003's unit of CPU work: `iterations` rounds of xorshift64 from `seed`,
 * returned so the compiler must keep the loop. */
static inline uint64_t dc_xorshift_work(uint64_t seed, uint64_t iterations)
{
	uint64_t x = seed | 1;
	for (uint64_t i = 0; i < iterations; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}


#endif /* DEMO_COMMON_H */
