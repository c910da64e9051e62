/* testutil.c — see testutil.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <criterion/hooks.h>
#include <criterion/internal/ordered-set.h>

#include "testutil.h"

extern char **environ;

/* ---- paths ------------------------------------------------------------ */

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	cr_assert(n >= 0, "out of memory");
	return s;
}

char *tu_build_path(const char *rel) { return xasprintf("%s/%s", BUILD_DIR, rel); }
char *tu_prog(const char *name) { return xasprintf("%s/tests/progs/%s", BUILD_DIR, name); }

const char *tu_shim(void)
{
	static char *p;
	if (!p)
		p = tu_build_path("libconvoy.so");
	return p;
}

const char *tu_convoy(void)
{
	static char *p;
	if (!p)
		p = tu_build_path("convoy");
	return p;
}

/* ---- temporary directories -------------------------------------------- */

#define TU_MAX_TMPDIRS 32
static char *tmpdirs[TU_MAX_TMPDIRS];
static int ntmpdirs;
static pid_t tmpdir_owner;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	if (remove(path) != 0 && errno == EACCES) {
		chmod(path, 0700);
		remove(path);
	}
	return 0;
}

static void remove_tmpdirs(void)
{
	if (getpid() != tmpdir_owner)
		return;   /* a forked child of the test: the test process cleans up */
	for (int i = 0; i < ntmpdirs; i++)
		nftw(tmpdirs[i], rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

char *tu_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char *d = xasprintf("%s/convoy-test.XXXXXX", base && *base ? base : "/tmp");
	cr_assert(mkdtemp(d) != NULL, "mkdtemp %s: %s", d, strerror(errno));
	if (!ntmpdirs) {
		tmpdir_owner = getpid();
		atexit(remove_tmpdirs);
	}
	if (ntmpdirs < TU_MAX_TMPDIRS)
		tmpdirs[ntmpdirs++] = d;
	return d;
}

/* ---- running programs -------------------------------------------------- */

static bool dropped_var(const char *entry)
{
	return strncmp(entry, "LD_PRELOAD=", 11) == 0 || strncmp(entry, "CONVOY_", 7) == 0 ||
	       strncmp(entry, "LD_DEBUG", 8) == 0;
}

char **tu_env(const struct tu_opts *o)
{
	size_t n = 0, extra = 4;
	while (environ[n])
		n++;
	for (const char *const *e = o->env; e && *e; e++)
		extra++;
	char **env = calloc(n + extra + 1, sizeof(*env));
	cr_assert(env, "out of memory");
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!dropped_var(environ[i]))
			env[k++] = environ[i];
	if (o->preload)
		env[k++] = xasprintf("LD_PRELOAD=%s", tu_shim());
	if (o->dir)
		env[k++] = xasprintf("CONVOY_DIR=%s", o->dir);
	if (o->quiet)
		env[k++] = "CONVOY_QUIET=1";
	for (const char *const *e = o->env; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		size_t keylen = eq ? (size_t)(eq - *e) : strlen(*e);
		/* a later setting replaces an earlier one; "KEY" alone removes it */
		for (size_t i = 0; i < k; i++) {
			if (strncmp(env[i], *e, keylen) == 0 && env[i][keylen] == '=') {
				memmove(&env[i], &env[i + 1], (k - i - 1) * sizeof(*env));
				k--;
				i--;
			}
		}
		if (eq)
			env[k++] = (char *)*e;
	}
	env[k] = NULL;
	return env;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct sink { char *buf; size_t len, cap; };

static bool drain(int fd, struct sink *s)
{
	char tmp[65536];
	ssize_t n = read(fd, tmp, sizeof(tmp));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0)
		return false;
	if (s->len + (size_t)n + 1 > s->cap) {
		s->cap = (s->len + (size_t)n + 1) * 2;
		s->buf = realloc(s->buf, s->cap);
		cr_assert(s->buf, "out of memory");
	}
	memcpy(s->buf + s->len, tmp, (size_t)n);
	s->len += (size_t)n;
	s->buf[s->len] = '\0';
	return true;
}

/* Under make test-asan: the tests keep what they allocate until their process
 * ends (testutil.h), so leak checking is for the programs they run (convoy),
 * which take ASAN_OPTIONS from the environment, not this default. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

/* TEST_TIMEOUT_MULT (tests/run) stretches every time limit for builds that
 * run slower (sanitizers): each test's .timeout, here before any test runs,
 * and each child program's limit in tu_run(). */
double tu_timeout_mult(void)
{
	const char *m = getenv("TEST_TIMEOUT_MULT");
	double k = m ? strtod(m, NULL) : 1.0;
	return k > 0 ? k : 1.0;
}

ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
	double k = tu_timeout_mult();
	FOREACH_SET(struct criterion_suite_set *suite, set->suites) {
		FOREACH_SET(struct criterion_test *test, suite->tests) {
			if (test->data->timeout > 0)
				test->data->timeout *= k;
		}
	}
}

void tu_run(struct tu_proc *p, const struct tu_opts *o, const char *const argv[])
{
	static const struct tu_opts none;
	if (!o)
		o = &none;
	memset(p, 0, sizeof(*p));
	int out[2], err[2];
	cr_assert(pipe2(out, O_CLOEXEC) == 0 && pipe2(err, O_CLOEXEC) == 0, "pipe: %s", strerror(errno));
	char **env = tu_env(o);
	/* posix_spawn, not fork: the child shares this process's memory until
	 * its exec instead of copying its page tables, which a test holding a
	 * parsed report of thousands of objects paid for with every program it
	 * ran next, and with a fault on each page it wrote after. The child
	 * leads a process group of its own, so a timeout kills everything it
	 * started. */
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	cr_assert(posix_spawn_file_actions_init(&fa) == 0 && posix_spawnattr_init(&attr) == 0 &&
		  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0) == 0 &&
		  posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO) == 0 &&
		  posix_spawn_file_actions_adddup2(&fa, err[1], STDERR_FILENO) == 0 &&
		  (!o->cwd || posix_spawn_file_actions_addchdir_np(&fa, o->cwd) == 0) &&
		  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP) == 0 && posix_spawnattr_setpgroup(&attr, 0) == 0,
		  "posix_spawn's file actions or attributes: out of memory");
	pid_t pid;
	int rc = posix_spawn(&pid, argv[0], &fa, &attr, (char *const *)argv, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (rc != 0) {   /* its descriptors, directory or exec failed: exit 127, as a shell says it */
		close(out[0]);
		close(out[1]);
		close(err[0]);
		close(err[1]);
		p->exited = true;
		p->code = 127;
		p->out = calloc(1, 1);
		p->err = xasprintf("tu_run: cannot run %s%s%s: %s\n", argv[0], o->cwd ? " in " : "", o->cwd ? o->cwd : "",
				   strerror(rc));
		p->err_len = strlen(p->err);
		return;
	}
	close(out[1]);
	close(err[1]);
	struct sink so = { 0 }, se = { 0 };
	struct pollfd fds[2] = { { .fd = out[0], .events = POLLIN }, { .fd = err[0], .events = POLLIN } };
	double limit_s = (o->timeout_s ? o->timeout_s : TU_TIMEOUT_S) * tu_timeout_mult();
	uint64_t deadline = now_ms() + (uint64_t)(limit_s * 1000);
	int open_fds = 2;
	while (open_fds) {
		uint64_t now = now_ms();
		if (!p->timed_out && now >= deadline) {
			p->timed_out = true;
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
		}
		int r = poll(fds, 2, p->timed_out ? 1000 : (int)(deadline - now));
		if (r < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
				if (!drain(fds[i].fd, i ? &se : &so)) {
					close(fds[i].fd);
					fds[i].fd = -1;
					open_fds--;
				}
			}
		}
	}
	for (int i = 0; i < 2; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	p->exited = WIFEXITED(status);
	p->code = p->exited ? WEXITSTATUS(status) : -1;
	p->signaled = WIFSIGNALED(status);
	p->sig = p->signaled ? WTERMSIG(status) : 0;
	p->out = so.buf ? so.buf : calloc(1, 1);
	p->out_len = so.len;
	p->err = se.buf ? se.buf : calloc(1, 1);
	p->err_len = se.len;
	cr_assert(!p->timed_out, "%s did not finish within %.0f s (killed); stderr:\n%s", argv[0],
		  limit_s, p->err);
}

char *tu_read_to_end(int fd, double limit_s, size_t *len)
{
	struct sink s = { 0 };
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t deadline = now_ms() + (uint64_t)(limit_s * 1000);
	for (;;) {
		uint64_t now = now_ms();
		cr_assert(now < deadline, "no end of what fd %d sends within %.0f s", fd, limit_s);
		int r = poll(&pfd, 1, (int)(deadline - now));
		cr_assert(r >= 0 || errno == EINTR, "poll: %s", strerror(errno));
		if (r > 0 && !drain(fd, &s))
			break;
	}
	*len = s.len;
	return s.buf ? s.buf : calloc(1, 1);
}

static const char **collect_args(const char *first, va_list ap)
{
	size_t cap = 16, n = 0;
	const char **argv = calloc(cap, sizeof(*argv));
	argv[n++] = first;
	for (const char *a; (a = va_arg(ap, const char *));) {
		if (n + 2 > cap)
			argv = realloc(argv, (cap *= 2) * sizeof(*argv));
		argv[n++] = a;
	}
	argv[n] = NULL;
	return argv;
}

void tu_run_native(struct tu_proc *p, const char *prog, ...)
{
	va_list ap;
	va_start(ap, prog);
	const char **argv = collect_args(tu_prog(prog), ap);
	va_end(ap);
	tu_run(p, NULL, argv);
}

void tu_run_shim(struct tu_proc *p, const char *dir, const char *prog, ...)
{
	va_list ap;
	va_start(ap, prog);
	const char **argv = collect_args(tu_prog(prog), ap);
	va_end(ap);
	struct tu_opts o = { .preload = true, .dir = dir, .quiet = true };
	tu_run(p, &o, argv);
}

void tu_assert_exit(const struct tu_proc *p, int code, const char *what)
{
	cr_assert(p->exited, "%s: killed by signal %d (%s); stderr:\n%s", what, p->sig, strsignal(p->sig), p->err);
	cr_assert(p->code == code, "%s: exit status %d, expected %d; stderr:\n%s", what, p->code, code, p->err);
}

char *tu_same_behaviour(const char *prog, json_object **report)
{
	struct tu_proc native, shim;
	char *dir = tu_tmpdir();
	tu_run_native(&native, prog, NULL);
	tu_run_shim(&shim, dir, prog, NULL);
	cr_assert(native.exited, "%s (native) killed by signal %d; stdout:\n%s\nstderr:\n%s", prog,
		  native.sig, native.out, native.err);
	cr_assert(shim.exited, "%s (under the shim) killed by signal %d (%s); stdout:\n%s\nstderr:\n%s", prog,
		  shim.sig, strsignal(shim.sig), shim.out, shim.err);
	cr_assert(native.code == shim.code, "%s: exit status under the shim %d, natively %d; stderr:\n%s",
		  prog, shim.code, native.code, shim.err);
	cr_assert(strcmp(native.out, shim.out) == 0,
		  "%s: stdout differs.\n--- native\n%s--- under the shim\n%s", prog, native.out, shim.out);
	cr_assert(shim.err_len == 0, "%s: stderr under the shim with CONVOY_QUIET=1:\n%s", prog, shim.err);
	json_object *r = tu_report_dir(dir);   /* exactly one profile, and it loads */
	if (report)
		*report = r;
	else
		json_object_put(r);
	return native.out;
}

/* ---- profiles and reports ---------------------------------------------- */

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **tu_profiles(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	cr_assert(d, "opendir %s: %s", dir, strerror(errno));
	size_t cap = 8, k = 0;
	char **v = calloc(cap, sizeof(*v));
	for (struct dirent *e; (e = readdir(d));) {
		size_t len = strlen(e->d_name);
		if (strncmp(e->d_name, "convoy-", 7) != 0 || len < 14 ||
		    strcmp(e->d_name + len - 7, ".convoy") != 0)
			continue;
		if (k + 2 > cap)
			v = realloc(v, (cap *= 2) * sizeof(*v));
		v[k++] = xasprintf("%s/%s", dir, e->d_name);
	}
	closedir(d);
	qsort(v, k, sizeof(*v), by_name);
	v[k] = NULL;
	*n = k;
	return v;
}

char *tu_only_profile(const char *dir)
{
	size_t n;
	char **v = tu_profiles(dir, &n);
	cr_assert(n == 1, "%s holds %zu profiles, expected 1%s%s", dir, n, n ? "; first: " : "",
		  n ? v[0] : "");
	return v[0];
}

size_t tu_count_entries(const char *dir, const char *prefix, const char *suffix, char **first)
{
	DIR *d = opendir(dir);
	cr_assert(d, "opendir %s: %s", dir, strerror(errno));
	size_t n = 0, pl = strlen(prefix), sl = strlen(suffix);
	for (struct dirent *e; (e = readdir(d));) {
		size_t len = strlen(e->d_name);
		if (len < pl + sl || strncmp(e->d_name, prefix, pl) != 0 || strcmp(e->d_name + len - sl, suffix) != 0)
			continue;
		if (!n++ && first)
			*first = xasprintf("%s/%s", dir, e->d_name);
	}
	closedir(d);
	return n;
}

json_object *tu_report(const char *profile)
{
	struct tu_proc p;
	const char *argv[] = { tu_convoy(), "report", "--json", profile, NULL };
	tu_run(&p, NULL, argv);
	cr_assert(p.exited && p.code == 0, "convoy report --json %s: %s %d; stderr:\n%s", profile,
		  p.exited ? "exit status" : "signal", p.exited ? p.code : p.sig, p.err);
	cr_assert(p.err_len == 0, "convoy report --json %s printed on stderr:\n%s", profile, p.err);
	enum json_tokener_error jerr;
	json_object *r = json_tokener_parse_verbose(p.out, &jerr);
	cr_assert(r, "convoy report --json %s: not JSON (%s):\n%.2000s", profile,
		  json_tokener_error_desc(jerr), p.out);
	cr_assert(json_object_is_type(r, json_type_object), "convoy report --json: not an object");
	return r;
}

json_object *tu_report_dir(const char *dir)
{
	return tu_report(tu_only_profile(dir));
}

void tu_fork_reports(const char *dir, json_object **parent, json_object **child)
{
	size_t n;
	char **files = tu_profiles(dir, &n);
	cr_assert(n == 2, "%s holds %zu profiles, expected 2 (a process's and its fork child's)", dir, n);
	json_object *a = tu_report(files[0]), *b = tu_report(files[1]);
	bool a_forked = tu_bool(tu_get(a, "process"), "forked"), b_forked = tu_bool(tu_get(b, "process"), "forked");
	cr_assert(a_forked != b_forked, "%s: exactly one of the two profiles must be marked forked (%d, %d)", dir,
		  a_forked, b_forked);
	*child = a_forked ? a : b;
	*parent = a_forked ? b : a;
}

/* ---- lookups ---------------------------------------------------------- */

json_object *tu_get(json_object *o, const char *key)
{
	json_object *v = NULL;
	cr_assert(o && json_object_object_get_ex(o, key, &v), "JSON has no \"%s\" in %s", key,
		  o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) : "(null)");
	return v;
}

int64_t tu_int(json_object *o, const char *key)
{
	json_object *v = tu_get(o, key);
	cr_assert(json_object_is_type(v, json_type_int), "JSON \"%s\" is not an integer: %s", key,
		  json_object_to_json_string(v));
	return json_object_get_int64(v);
}

const char *tu_str(json_object *o, const char *key)
{
	json_object *v = tu_get(o, key);
	cr_assert(json_object_is_type(v, json_type_string), "JSON \"%s\" is not a string: %s", key,
		  json_object_to_json_string(v));
	return json_object_get_string(v);
}

bool tu_bool(json_object *o, const char *key)
{
	json_object *v = tu_get(o, key);
	cr_assert(json_object_is_type(v, json_type_boolean), "JSON \"%s\" is not a boolean: %s", key,
		  json_object_to_json_string(v));
	return json_object_get_boolean(v);
}

json_object *tu_array(json_object *o, const char *key)
{
	json_object *v = tu_get(o, key);
	cr_assert(json_object_is_type(v, json_type_array), "JSON \"%s\" is not an array: %s", key,
		  json_object_to_json_string(v));
	return v;
}

json_object *tu_find(json_object *array, const char *key, const char *value)
{
	size_t n = json_object_array_length(array);
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(array, i), *v;
		if (json_object_object_get_ex(e, key, &v) && json_object_is_type(v, json_type_string) &&
		    strcmp(json_object_get_string(v), value) == 0)
			return e;
	}
	return NULL;
}

json_object *tu_lock(json_object *report, const char *name)
{
	return tu_find(tu_array(report, "locks"), "name", name);
}

json_object *tu_cond(json_object *report, const char *name)
{
	return tu_find(tu_array(report, "condvars"), "name", name);
}

bool tu_has_edge(json_object *report, const char *from, const char *to)
{
	json_object *order, *edges;
	if (!json_object_object_get_ex(report, "lock_order", &order) || !json_object_object_get_ex(order, "edges", &edges))
		return false;
	for (size_t i = 0; i < json_object_array_length(edges); i++) {
		json_object *e = json_object_array_get_idx(edges, i);
		if (!strcmp(tu_str(e, "from"), from) && !strcmp(tu_str(e, "to"), to))
			return true;
	}
	return false;
}

json_object *tu_lock_gen(json_object *report, const char *base, int64_t g)
{
	return tu_row_gen(report, "locks", base, g);
}

/* e's name, the length of its base (the name up to its first space) and
 * its generation: false for a row without a name or generation. */
static bool row_base_gen(json_object *e, const char **name, size_t *base_len, int64_t *g)
{
	json_object *v, *gen;
	if (!json_object_object_get_ex(e, "name", &v) || !json_object_object_get_ex(e, "generation", &gen))
		return false;
	*name = json_object_get_string(v);
	*base_len = strcspn(*name, " ");
	*g = json_object_get_int64(gen);
	return true;
}

json_object *tu_row_gen(json_object *report, const char *section, const char *base, int64_t g)
{
	json_object *rows = tu_array(report, section);
	size_t n = json_object_array_length(rows), bl = strlen(base), len;
	const char *name;
	int64_t gen;
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(rows, i);
		if (row_base_gen(e, &name, &len, &gen) && len == bl && !strncmp(name, base, bl) && gen == g)
			return e;
	}
	return NULL;
}

json_object *tu_rows_by_gen(json_object *report, const char *section)
{
	json_object *rows = tu_array(report, section), *index = json_object_new_object();
	size_t n = json_object_array_length(rows), len;
	const char *name;
	int64_t gen;
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(rows, i);
		if (!row_base_gen(e, &name, &len, &gen))
			continue;
		char *key = xasprintf("%.*s %lld", (int)len, name, (long long)gen);
		if (!json_object_object_get_ex(index, key, NULL))   /* the first, as tu_row_gen finds */
			json_object_object_add(index, key, json_object_get(e));
		free(key);
	}
	return index;
}

json_object *tu_indexed_row(json_object *index, const char *base, int64_t g)
{
	char *key = xasprintf("%s %lld", base, (long long)g);
	json_object *row = NULL;
	json_object_object_get_ex(index, key, &row);
	free(key);
	return row;
}

json_object *tu_thread_named(json_object *report, const char *name)
{
	return tu_find(tu_array(report, "threads"), "name", name);
}

json_object *tu_main_thread(json_object *report)
{
	json_object *threads = tu_array(report, "threads"), *found = NULL;
	size_t n = json_object_array_length(threads);
	for (size_t i = 0; i < n; i++) {
		json_object *t = json_object_array_get_idx(threads, i);
		if (tu_bool(t, "main")) {
			cr_assert(!found, "two threads marked main");
			found = t;
		}
	}
	cr_assert(found, "no thread marked main");
	return found;
}

int64_t tu_split_sum(json_object *row, const char *key)
{
	return tu_sum(row, "threads", key);
}

int64_t tu_sum(json_object *o, const char *array, const char *key)
{
	json_object *rows = tu_array(o, array);
	int64_t sum = 0;
	for (size_t i = 0; i < json_object_array_length(rows); i++)
		sum += tu_int(json_object_array_get_idx(rows, i), key);
	return sum;
}

/* ---- text and files ----------------------------------------------------- */

size_t tu_count_lines(const char *s)
{
	size_t n = 0;
	const char *p = s;
	for (; *p; p++)
		if (*p == '\n')
			n++;
	if (p > s && p[-1] != '\n')
		n++;
	return n;
}

bool tu_has_line(const char *text, const char *line)
{
	size_t len = strlen(line);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, line, len) == 0 && (p[len] == '\n' || p[len] == '\0'))
			return true;
	return false;
}

const char *tu_line_value(const char *text, const char *label)
{
	size_t len = strlen(label);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, label, len) == 0 && p[len] == ' ') {
			const char *v = p + len;
			while (*v == ' ')
				v++;
			size_t n = strcspn(v, "\n");
			char *s = malloc(n + 1);
			memcpy(s, v, n);
			s[n] = '\0';
			return s;
		}
	}
	return NULL;
}

unsigned char *tu_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	cr_assert(f, "open %s: %s", path, strerror(errno));
	size_t cap = 65536, n = 0;
	unsigned char *buf = malloc(cap);
	for (size_t r; (r = fread(buf + n, 1, cap - n, f)) > 0;) {
		n += r;
		if (n == cap)
			buf = realloc(buf, cap *= 2);
	}
	fclose(f);
	buf[n] = '\0';   /* n < cap: the loop grows buf when it fills */
	*len = n;
	return buf;
}

void tu_write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	cr_assert(f, "create %s: %s", path, strerror(errno));
	cr_assert(len == 0 || fwrite(data, 1, len, f) == len, "write %s", path);
	cr_assert(fclose(f) == 0, "close %s", path);
}
