/* testutil.h — helpers shared by the shim and analyzer tests.
 *
 * Every test runs in its own process (Criterion forks), so the helpers keep
 * no state beyond the temporary directories they remove at exit, assert
 * through Criterion themselves, and never free what a test will not reuse.
 *
 *   tu_run()       run a program (with or without LD_PRELOAD=libconvoy.so) in
 *                  a clean environment, capture stdout, stderr and how it
 *                  ended, and kill it (its whole process group) on a timeout
 *   tu_profiles()  the profiles a run wrote into its CONVOY_DIR
 *   tu_report()    `convoy report --json PROFILE`, parsed with json-c
 *   tu_lock() ...  lookups in a parsed report
 */
#ifndef CONVOY_TESTUTIL_H
#define CONVOY_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <json-c/json.h>

#ifndef BUILD_DIR
#error "compile with -DBUILD_DIR=\"/abs/path/to/build\""
#endif

#define TU_TIMEOUT_S 20   /* per child program; each Criterion test has its own .timeout */

/* TEST_TIMEOUT_MULT (default 1): every time limit, the tests' and tu_run()'s,
 * is multiplied by it. */
double tu_timeout_mult(void);

/* How a child ended and what it printed. */
struct tu_proc {
	bool   exited;        /* WIFEXITED */
	int    code;          /* exit status when exited */
	bool   signaled;
	int    sig;           /* terminating signal when signaled */
	bool   timed_out;     /* killed by tu_run after its timeout */
	char  *out, *err;     /* NUL-terminated */
	size_t out_len, err_len;
};

struct tu_opts {
	bool preload;                /* LD_PRELOAD=<build>/libconvoy.so */
	const char *dir;             /* CONVOY_DIR; NULL: unset */
	bool quiet;                  /* CONVOY_QUIET=1 */
	const char *const *env;      /* more "KEY=VALUE" entries; "KEY" alone unsets */
	const char *cwd;             /* NULL: the test's own */
	int timeout_s;               /* 0: TU_TIMEOUT_S */
};

/* Paths into the build tree. Each returns a new string. */
char *tu_build_path(const char *rel);           /* BUILD_DIR "/" rel */
char *tu_prog(const char *name);                /* BUILD_DIR/tests/progs/name */
const char *tu_shim(void);                      /* BUILD_DIR/libconvoy.so */
const char *tu_convoy(void);                    /* BUILD_DIR/convoy */

/* A fresh empty directory under $TMPDIR, removed when the test process exits. */
char *tu_tmpdir(void);

/* Runs argv (argv[0] a path) as described by o. One that cannot start (its
 * exec, o's directory) exits 127, the reason on its stderr, as a shell says
 * it. Environment: the test's own, minus LD_PRELOAD and every CONVOY_*
 * variable, plus what o asks for. */
void tu_run(struct tu_proc *p, const struct tu_opts *o, const char *const argv[]);
/* All that fd sends until its end, NUL-terminated (*len bytes before the
 * NUL), in limit_s at most (asserts past it). */
char *tu_read_to_end(int fd, double limit_s, size_t *len);
/* The environment tu_run gives a program: this process's without
 * LD_PRELOAD, LD_DEBUG* and CONVOY_*, then o's. */
char **tu_env(const struct tu_opts *o);

/* Shorthands. The prog is a name under tests/progs; args end with NULL. */
void tu_run_native(struct tu_proc *p, const char *prog, ...) __attribute__((sentinel));
/* Under the shim with CONVOY_QUIET=1 and CONVOY_DIR=dir. */
void tu_run_shim(struct tu_proc *p, const char *dir, const char *prog, ...) __attribute__((sentinel));

/* Asserts the child exited with status 0; shows its stderr otherwise. */
void tu_assert_exit(const struct tu_proc *p, int code, const char *what);

/* Runs prog natively and under the shim and asserts identical stdout and
 * exit status, nothing on stderr, and that the shim's run wrote exactly one
 * profile that `convoy report --json` reads. Returns the native run's
 * stdout; *report (when not NULL) gets the parsed report. */
char *tu_same_behaviour(const char *prog, json_object **report);

/* The profiles (convoy-*.convoy, never *.tmp) in dir, sorted by name. */
char **tu_profiles(const char *dir, size_t *n);
/* Asserts dir holds exactly one profile and returns its path. */
char *tu_only_profile(const char *dir);
/* How many entries of dir (any type) are named prefix...suffix; *first (when
 * not NULL) gets the path of the first one found. */
size_t tu_count_entries(const char *dir, const char *prefix, const char *suffix, char **first);

/* `convoy report --json PROFILE`, which must exit 0 and print one JSON object. */
json_object *tu_report(const char *profile);
/* The report of the only profile in dir. */
json_object *tu_report_dir(const char *dir);
/* The reports of the two profiles in dir, a process's and its fork
 * child's: asserts there are exactly two and exactly one is marked forked. */
void tu_fork_reports(const char *dir, json_object **parent, json_object **child);

/* Lookups: NULL when absent (the caller asserts with context). */
json_object *tu_get(json_object *o, const char *key);                  /* asserts present */
int64_t tu_int(json_object *o, const char *key);                        /* asserts an integer */
const char *tu_str(json_object *o, const char *key);                    /* asserts a string */
bool tu_bool(json_object *o, const char *key);                          /* asserts a boolean */
json_object *tu_array(json_object *o, const char *key);                 /* asserts an array */
json_object *tu_find(json_object *array, const char *key, const char *value);
json_object *tu_lock(json_object *report, const char *name);            /* locks[] by name */
json_object *tu_cond(json_object *report, const char *name);            /* condvars[] by name */
bool tu_has_edge(json_object *report, const char *from, const char *to); /* lock_order.edges[] has from -> to */
/* The locks[] entry for generation g of the object whose generation-0 name
 * is base ("gen_lock", or "mutex@0x..." for unnamed ones). */
json_object *tu_lock_gen(json_object *report, const char *base, int64_t g);
/* The same in any section of the report (semaphores, condvars, ...). */
json_object *tu_row_gen(json_object *report, const char *section, const char *base, int64_t g);
/* For a test that looks up thousands of rows (tu_row_gen walks the whole
 * array each time): section[]'s rows indexed by base (the name up to its
 * first space) and generation, and the row of base and g in that index. */
json_object *tu_rows_by_gen(json_object *report, const char *section);
json_object *tu_indexed_row(json_object *index, const char *base, int64_t g);
json_object *tu_thread_named(json_object *report, const char *name);   /* threads[] by name */
json_object *tu_main_thread(json_object *report);
/* Sum of key over an object row's per-thread split (row "threads"). */
int64_t tu_split_sum(json_object *row, const char *key);
/* Sum of key over the rows of o's array (a report's "locks", say). */
int64_t tu_sum(json_object *o, const char *array, const char *key);

/* Text helpers. */
size_t tu_count_lines(const char *s);            /* '\n'-terminated lines (+1 for a tail) */
bool tu_has_line(const char *text, const char *line);   /* an exact whole line */
/* The value printed after "label " on a line of the form "label value...". */
const char *tu_line_value(const char *text, const char *label);

/* Files. */
unsigned char *tu_read_file(const char *path, size_t *len);   /* NUL-terminated beyond len */
void tu_write_file(const char *path, const void *data, size_t len);

/* Asserts with both operands in the message. */
#define TU_EQ(got, want, what, ...)                                                       \
	do {                                                                              \
		long long tu_g_ = (long long)(got), tu_w_ = (long long)(want);           \
		cr_assert(tu_g_ == tu_w_, what ": got %lld, expected %lld", ##__VA_ARGS__, \
			  tu_g_, tu_w_);                                                  \
	} while (0)
#define TU_STREQ(got, want, what, ...)                                                    \
	do {                                                                              \
		const char *tu_g_ = (got), *tu_w_ = (want);                               \
		cr_assert(tu_g_ && tu_w_ && strcmp(tu_g_, tu_w_) == 0,                    \
			  what ": got \"%s\", expected \"%s\"", ##__VA_ARGS__,             \
			  tu_g_ ? tu_g_ : "(null)", tu_w_ ? tu_w_ : "(null)");            \
	} while (0)
#define TU_LE(a, b, what, ...)                                                            \
	do {                                                                              \
		long long tu_a_ = (long long)(a), tu_b_ = (long long)(b);                \
		cr_assert(tu_a_ <= tu_b_, what ": %lld > %lld", ##__VA_ARGS__, tu_a_, tu_b_); \
	} while (0)

#endif /* CONVOY_TESTUTIL_H */
