/* scale.c — `convoy scale`: run a command at several thread counts and
 * explain the curve.
 *
 * Each count runs --repeat times, the counts interleaved round by round so a
 * noisy neighbour hits them alike; the run with the median wall time stands
 * for its count. Every profile and every run's output is kept under -o DIR,
 * with the sweep itself as DIR/sweep.json (what `convoy diff` reads).
 */
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "findings.h"
#include "html.h"
#include "launch.h"
#include "model.h"
#include "profile.h"
#include "scale.h"
#include "stack.h"
#include "symbols.h"
#include "util.h"

#define MAX_COUNTS 64
#define MAX_REPEAT 100

struct count_runs {
	int threads;
	double walls[MAX_REPEAT];
	char *profiles[MAX_REPEAT];
	int chosen;                  /* index of the median run */
	struct profile *p;
	struct syms *syms;
	struct model m;
	struct run_stack s;
	double speedup, efficiency;
};

struct scale_options {
	int counts[MAX_COUNTS];
	int ncounts;
	int repeat;
	int json;
	double timeout_s;
	const char *dir;
	const char *html;       /* --html FILE */
};

static int parse_counts(const char *list, struct scale_options *o)
{
	char *copy = xstrndup(list, strlen(list)), *save = NULL;
	o->ncounts = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long long v = parse_count(tok);
		if (v < 1 || v > 4096 || o->ncounts == MAX_COUNTS) {
			cv_error("scale: --threads takes a comma-separated list of counts from 1 to 4096 "
				 "(at most %d), not '%s'", MAX_COUNTS, list);
			free(copy);
			return -1;
		}
		for (int i = 0; i < o->ncounts; i++)
			if (o->counts[i] == v) {
				cv_error("scale: thread count %lld appears twice in '%s'", v, list);
				free(copy);
				return -1;
			}
		o->counts[o->ncounts++] = (int)v;
	}
	free(copy);
	if (!o->ncounts) {
		cv_error("scale: --threads needs at least one count");
		return -1;
	}
	for (int i = 1; i < o->ncounts; i++)   /* ascending: the smallest is the reference */
		for (int k = i; k > 0 && o->counts[k] < o->counts[k - 1]; k--) {
			int t = o->counts[k];
			o->counts[k] = o->counts[k - 1];
			o->counts[k - 1] = t;
		}
	return 0;
}

/* argv with every "{threads}" replaced by n. */
static char **substitute(char **argv, int argc, int n)
{
	char **out = xcalloc((size_t)argc + 1, sizeof(char *)), num[16];
	snprintf(num, sizeof(num), "%d", n);
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		size_t len = 0;
		for (const char *p = a; *p;)
			if (!strncmp(p, "{threads}", 9)) { len += strlen(num); p += 9; } else { len++; p++; }
		char *s = xcalloc(1, len + 1), *d = s;
		for (const char *p = a; *p;)
			if (!strncmp(p, "{threads}", 9)) { d = stpcpy(d, num); p += 9; } else { *d++ = *p++; }
		out[i] = s;
	}
	return out;
}

static void free_argv(char **v)
{
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void choose_median(struct count_runs *c, int repeat)
{
	double sorted[MAX_REPEAT];
	memcpy(sorted, c->walls, sizeof(double) * (size_t)repeat);
	qsort(sorted, (size_t)repeat, sizeof(double), by_double);
	double median = sorted[(repeat - 1) / 2];
	for (int k = 0; k < repeat; k++)
		if (c->walls[k] == median)
			c->chosen = k;
}

/* ---- the text form ------------------------------------------------------ */

static void print_table(const struct count_runs *c, int n, FILE *out)
{
	fprintf(out, "%7s %10s %8s %10s  %s\n", "threads", "wall", "speedup", "efficiency",
		"where the worker time N x wall went (% of it)");
	fprintf(out, "%7s %10s %8s %10s  %6s %6s %6s %6s %6s %6s %6s %6s %6s\n", "", "", "", "",
		"useful", "inflat", "locks", "park", "barr", "runq", "other", "idle", "unexpl");
	for (int i = 0; i < n; i++) {
		char w[32];
		fprintf(out, "%7d %10s %7.2fx %9.0f%%  ", c[i].threads, fmt_ns(w, sizeof(w), c[i].s.wall_ns),
			c[i].speedup, c[i].efficiency * 100);
		for (int k = 0; k < STACK_N; k++)
			fprintf(out, " %5.1f%%", c[i].s.budget_ns > 0 ? 100.0 * c[i].s.c[k] / c[i].s.budget_ns : 0);
		fputc('\n', out);
	}
	fputs("  useful: on-CPU work (the reference run's); inflat: extra on-CPU time; locks: waiting\n"
	      "  for locks; park: parked on condvars, semaphores, futexes; barr: barriers; runq: runnable,\n"
	      "  waiting for a CPU; other: other off-CPU; idle: fewer than N threads had work;\n"
	      "  unexpl: not accounted for.\n\n", out);
}

/* The step sentence: the component that grew most from a to b. */
static void step_sentence(const struct count_runs *a, const struct count_runs *b, char *buf, size_t size)
{
	double scale = a->s.progress > 0 && b->s.progress > 0 ? a->s.progress / b->s.progress : 1;
	double ratio = a->s.wall_ns / (b->s.wall_ns * scale);
	double added = b->s.budget_ns * scale - a->s.budget_ns;
	char speed[64];
	if (ratio >= 1)
		snprintf(speed, sizeof(speed), "%.2f× faster", ratio);
	else
		snprintf(speed, sizeof(speed), "%.2f× slower", 1 / ratio);
	if (added <= 0.05 * b->s.budget_ns * scale) {
		snprintf(buf, size, "%d → %d threads: %s; the added threads paid for themselves "
			 "(worker time grew %.0f%%).", a->threads, b->threads, speed,
			 a->s.budget_ns > 0 ? 100 * added / a->s.budget_ns : 0);
		return;
	}
	/* Candidates: every component, with locks split by lock. */
	int best = -1;
	double best_d = -INFINITY;
	const struct stack_lock *best_lock = NULL;
	for (int k = 0; k < STACK_N; k++) {
		if (k == STACK_LOCK || k == STACK_USEFUL)
			continue;
		double d = b->s.c[k] * scale - a->s.c[k];
		if (d > best_d) {
			best_d = d;
			best = k;
		}
	}
	for (size_t i = 0; i < b->s.nlocks; i++) {
		double d = b->s.locks[i].wait_ns * scale - stack__lock_wait(&a->s, b->s.locks[i].row->name);
		if (d > best_d) {
			best_d = d;
			best = STACK_LOCK;
			best_lock = &b->s.locks[i];
		}
	}
	double share = best_d / added;
	char part[96];
	if (share > 1)
		snprintf(part, sizeof(part), "More than all of the added worker time (other components shrank) is");
	else
		snprintf(part, sizeof(part), "%.0f%% of the added worker time is", share * 100);
	int n = snprintf(buf, size, "%d → %d threads: %s. %s ", a->threads, b->threads, speed, part);
	/* On-CPU growth with a lock whose cache line keeps changing hands is
	 * that lock's doing, as in the findings. */
	if (best == STACK_INFLATION)
		for (size_t i = 0; i < b->s.nlocks; i++)
			if (findings__bouncing(b->s.locks[i].row, b->s.wall_ns)) {
				const struct object_row *r = b->s.locks[i].row;
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
		n += snprintf(buf + n, size - (size_t)n,
			      "waiting for %s %s, acquired %s times, contended on %s of acquisitions",
			      kind_name(r->obj->o.kind), r->name, fmt_count(x, sizeof(x), (uint64_t)acq),
			      fmt_pct(y, sizeof(y), acq ? (double)r->total.contended / acq : 0));
		if (r->typical_hold_ns > 0 && acq > 0)
			snprintf(buf + n, size - (size_t)n, "; the critical section is %s but it is entered every %s.",
				 fmt_ns(x, sizeof(x), r->typical_hold_ns), fmt_ns(z, sizeof(z), b->s.wall_ns / acq));
		else
			snprintf(buf + n, size - (size_t)n, ".");
	} else if (best >= 0) {
		snprintf(buf + n, size - (size_t)n, "%s.", stack_phrases[best]);
	}
}

/* ---- JSON ---------------------------------------------------------------- */

static json_object *stack_json(const struct run_stack *s)
{
	json_object *o = json_object_new_object();
	for (int k = 0; k < STACK_N; k++)
		json_object_object_add(o, stack_keys[k], json_object_new_int64((int64_t)llround(s->c[k])));
	return o;
}

static json_object *sweep_json(const struct count_runs *c, int n, char **cmd, int cmdc,
			       const struct findings *f, char steps[][1024], const struct scale_options *o)
{
	json_object *root = json_object_new_object(), *runs = json_object_new_array();
	json_object *command = json_object_new_array(), *steps_j = json_object_new_array();
	for (int i = 0; i < cmdc; i++)
		json_object_array_add(command, json_object_new_string(cmd[i]));
	json_object_object_add(root, "convoy_sweep_version", json_object_new_int(1));
	json_object_object_add(root, "command", command);
	json_object_object_add(root, "repeat", json_object_new_int(o->repeat));
	json_object_object_add(root, "reference_threads", json_object_new_int(c[0].threads));
	json_object_object_add(root, "cpus", json_object_new_int((int)c[0].p->process.cpus_allowed));
	json_object_object_add(root, "throughput_from_progress", json_object_new_boolean(c[0].s.progress > 0));
	for (int i = 0; i < n; i++) {
		json_object *r = json_object_new_object(), *walls = json_object_new_array(), *locks = json_object_new_array();
		json_object_object_add(r, "threads", json_object_new_int(c[i].threads));
		json_object_object_add(r, "wall_ns", json_object_new_int64((int64_t)c[i].s.wall_ns));
		json_object_object_add(r, "speedup", json_object_new_double(round(c[i].speedup * 1000) / 1000));
		json_object_object_add(r, "efficiency", json_object_new_double(round(c[i].efficiency * 1000) / 1000));
		json_object_object_add(r, "budget_ns", json_object_new_int64((int64_t)llround(c[i].s.budget_ns)));
		json_object_object_add(r, "stack", stack_json(&c[i].s));
		for (size_t k = 0; k < c[i].s.nlocks; k++) {
			json_object *l = json_object_new_object();
			json_object_object_add(l, "name", json_object_new_string(c[i].s.locks[k].row->name));
			json_object_object_add(l, "wait_ns", json_object_new_int64((int64_t)c[i].s.locks[k].wait_ns));
			json_object_object_add(l, "acquisitions", json_object_new_int64((int64_t)c[i].s.locks[k].row->total.acquisitions));
			json_object_object_add(l, "contended", json_object_new_int64((int64_t)c[i].s.locks[k].row->total.contended));
			json_object_array_add(locks, l);
		}
		json_object_object_add(r, "locks", locks);
		json_object_object_add(r, "progress_units", json_object_new_double(c[i].s.progress));
		for (int k = 0; k < o->repeat; k++)
			json_object_array_add(walls, json_object_new_int64((int64_t)c[i].walls[k]));
		json_object_object_add(r, "walls_ns", walls);
		json_object_object_add(r, "profile", json_object_new_string(c[i].profiles[c[i].chosen]));
		json_object_array_add(runs, r);
	}
	json_object_object_add(root, "runs", runs);
	for (int i = 1; i < n; i++)
		json_object_array_add(steps_j, json_object_new_string(steps[i]));
	json_object_object_add(root, "steps", steps_j);
	json_object_object_add(root, "findings", findings__json(f));
	const struct profile *p = c[n - 1].p;
	json_object *missing = json_object_new_array();
	if (p->process.perf_error)
		json_object_array_add(missing, json_object_new_string("hardware counters (cycles, instructions, cache misses): no PMU"));
	json_object_object_add(root, "evidence_unavailable", missing);
	return root;
}

/* Keep, for each (kind, first object), the instance that explains most. */
static void merge_findings(struct findings *all, const struct findings *add)
{
	for (size_t i = 0; i < add->n; i++) {
		const struct finding *x = &add->v[i];
		size_t k;
		for (k = 0; k < all->n; k++)
			if (!strcmp(all->v[k].kind, x->kind) && all->v[k].nobjects && x->nobjects &&
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

/* ---- the command --------------------------------------------------------- */

static void scale_usage(FILE *f)
{
	fputs("usage: convoy scale --threads LIST [--repeat K] [--json] [-o DIR] [--timeout S] -- COMMAND ... {threads} ...\n"
	      "\n"
	      "Runs COMMAND once per thread count in LIST (each {threads} in its arguments\n"
	      "replaced by the count, also exported as CONVOY_THREADS), K times each, and\n"
	      "explains the curve: wall time, speedup, efficiency, where the worker time\n"
	      "went at each count (the speedup stack), one sentence per step, and findings.\n"
	      "\n"
	      "  --threads LIST   comma-separated counts, e.g. 1,2,4,8 (the smallest is the reference)\n"
	      "  --repeat K       runs per count; the median run stands for it (default 1)\n"
	      "  --json           print the sweep as JSON (also saved as DIR/sweep.json)\n"
	      "  --html FILE      write the sweep as a web page to FILE (and DIR/report.html with -o)\n"
	      "  -o DIR           keep profiles and output here (default convoy-scale-DATE-TIME)\n"
	      "  --timeout S      give up on a run after S seconds (default 600)\n"
	      "\n"
	      "examples:\n"
	      "  convoy scale --threads 1,2,4 -- build/demos/global_queue --workers {threads}\n"
	      "  convoy scale --threads 1,2,4,8 --repeat 3 --json -- ./myprog -j {threads}\n", f);
}

static int analyse(struct count_runs *c, int n)
{
	for (int i = 0; i < n; i++) {
		c[i].p = profile__load(c[i].profiles[c[i].chosen]);
		if (!c[i].p)
			return -1;
		c[i].syms = syms__load(c[i].p);
		model__build(&c[i].m, c[i].p, c[i].syms);
	}
	/* The reference run's on-CPU time outside waits is the work itself. */
	stack__compute(&c[0].s, &c[0].m, c[0].threads, c[0].walls[c[0].chosen], -1);
	for (int i = 1; i < n; i++) {
		stack__compute(&c[i].s, &c[i].m, c[i].threads, c[i].walls[c[i].chosen], -1);
		double ref_work = c[0].s.cpu_out_ns;
		if (c[0].s.progress > 0 && c[i].s.progress > 0)
			ref_work *= c[i].s.progress / c[0].s.progress;
		stack__free(&c[i].s);
		stack__compute(&c[i].s, &c[i].m, c[i].threads, c[i].walls[c[i].chosen], ref_work);
	}
	for (int i = 0; i < n; i++) {
		double t_ref = c[0].s.wall_ns, t = c[i].s.wall_ns;
		if (c[0].s.progress > 0 && c[i].s.progress > 0)
			t *= c[0].s.progress / c[i].s.progress;   /* time per the reference's work */
		c[i].speedup = t > 0 ? t_ref / t : 0;
		c[i].efficiency = c[i].speedup * c[0].threads / c[i].threads;
	}
	return 0;
}

int cmd_scale(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "html", required_argument, NULL, 'H' },
		{ "output", required_argument, NULL, 'o' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct scale_options o = { .repeat = 1, .timeout_s = 600 };
	const char *threads = NULL;
	int c;
	optind = 1;
	while ((c = cv_getopt("scale", argc, argv, "o:h", longopts)) != -1) {
		long long v;
		switch (c) {
		case 't': threads = optarg; break;
		case 'r':
			v = parse_count(optarg);
			if (v < 1 || v > MAX_REPEAT) {
				cv_error("scale: --repeat takes a count from 1 to %d, not '%s'", MAX_REPEAT, optarg);
				return 2;
			}
			o.repeat = (int)v;
			break;
		case 'T':
			v = parse_count(optarg);
			if (v < 1 || v > 86400) {
				cv_error("scale: --timeout takes seconds from 1 to 86400, not '%s'", optarg);
				return 2;
			}
			o.timeout_s = (double)v;
			break;
		case 'j': o.json = 1; break;
		case 'H': o.html = optarg; break;
		case 'o': o.dir = optarg; break;
		case 'h': scale_usage(stdout); return 0;
		default:
			return 2;   /* cv_getopt said why */
		}
	}
	if (!threads) {
		cv_error("scale: --threads LIST is required (try 'convoy scale --help')");
		return 2;
	}
	if (parse_counts(threads, &o))
		return 2;
	if (optind >= argc) {
		cv_error("scale: no command given (usage: convoy scale --threads LIST -- COMMAND ... {threads} ...)");
		return 2;
	}
	char **cmd = argv + optind;
	int cmdc = argc - optind, placeholder = 0;
	for (int i = 0; i < cmdc; i++)
		placeholder |= strstr(cmd[i], "{threads}") != NULL;
	if (!placeholder) {
		cv_error("scale: the command has no {threads} for the thread count (e.g. --workers {threads})");
		return 2;
	}
	char dirbuf[128];
	if (!o.dir) {
		time_t now = time(NULL);
		strftime(dirbuf, sizeof(dirbuf), "convoy-scale-%Y%m%d-%H%M%S", localtime(&now));
		o.dir = dirbuf;
	}
	char absdir[PATH_MAX];
	if (launch__prepare(o.dir, absdir, sizeof(absdir)) != 0)
		return 1;

	struct count_runs *runs = xcalloc((size_t)o.ncounts, sizeof(*runs));
	int tty = isatty(STDERR_FILENO), total = o.ncounts * o.repeat, done = 0, rc = 1;
	for (int k = 0; k < o.repeat; k++) {
		for (int i = 0; i < o.ncounts; i++) {
			int n = o.counts[i];
			runs[i].threads = n;
			char sub[PATH_MAX + 64], log[PATH_MAX + 96], num[16];
			snprintf(sub, sizeof(sub), "%s/threads-%d-run-%d", absdir, n, k + 1);
			snprintf(log, sizeof(log), "%s/output.txt", sub);
			snprintf(num, sizeof(num), "%d", n);
			char tmp[PATH_MAX];
			if (launch__prepare(sub, tmp, sizeof(tmp)) != 0)
				goto out;
			setenv("CONVOY_THREADS", num, 1);
			if (tty)
				fprintf(stderr, "\rconvoy scale: run %d/%d: %d thread%s (repeat %d/%d)...   ", ++done, total, n,
					n == 1 ? "" : "s", k + 1, o.repeat);
			char **args = substitute(cmd, cmdc, n);
			struct launch_result r;
			int started = launch__run(args, log, o.timeout_s, &r);
			free_argv(args);
			if (started != 0)
				goto out;
			if (tty)
				fputs("\r\033[K", stderr);
			if (r.timed_out) {
				cv_error("scale: at %d threads the command ran past %.0f s and was killed (output: %s)",
					 n, o.timeout_s, log);
				goto out;
			}
			if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
				cv_error("scale: at %d threads the command %s %d (output: %s)", n,
					 WIFEXITED(r.status) ? "exited with status" : "was killed by signal",
					 WIFEXITED(r.status) ? WEXITSTATUS(r.status) : WTERMSIG(r.status), log);
				goto out;
			}
			runs[i].walls[k] = r.wall_ns;
			runs[i].profiles[k] = launch__find_profile(sub, r.pid);
			if (!runs[i].profiles[k]) {
				cv_error("scale: at %d threads the command wrote no profile (statically linked? "
					 "output: %s)", n, log);
				goto out;
			}
		}
	}
	for (int i = 0; i < o.ncounts; i++)
		choose_median(&runs[i], o.repeat);
	if (analyse(runs, o.ncounts) != 0)
		goto out;

	struct findings all = { 0 };
	for (int i = 1; i < o.ncounts; i++) {
		struct findings one = { 0 };
		struct run_view ref = { &runs[0].m, &runs[0].s }, t = { &runs[i].m, &runs[i].s };
		findings__diagnose(&one, &ref, &t);
		merge_findings(&all, &one);
		findings__free(&one);
	}
	if (o.ncounts == 1) {
		struct run_view t = { &runs[0].m, &runs[0].s };
		findings__diagnose(&all, NULL, &t);
	}
	findings__sort(&all);
	char (*steps)[1024] = xcalloc((size_t)o.ncounts, sizeof(*steps));
	for (int i = 1; i < o.ncounts; i++)
		step_sentence(&runs[i - 1], &runs[i], steps[i], sizeof(steps[i]));

	json_object *root = sweep_json(runs, o.ncounts, cmd, cmdc, &all, steps, &o);
	char sweep_path[PATH_MAX + 16];
	snprintf(sweep_path, sizeof(sweep_path), "%s/sweep.json", absdir);
	if (json_object_to_file_ext(sweep_path, root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE) != 0)
		cv_error("scale: cannot write %s", sweep_path);
	int html_failed = o.html && html__write_sweep(root, o.html, o.dir != dirbuf ? absdir : NULL) != 0;
	if (o.json) {
		puts(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	} else {
		printf("convoy scale:");
		for (int i = 0; i < cmdc; i++)
			printf(" %s", cmd[i]);
		printf("\n  %d CPU%s available; median of %d run%s per count; profiles in %s\n\n",
		       runs[0].p->process.cpus_allowed, runs[0].p->process.cpus_allowed == 1 ? "" : "s",
		       o.repeat, o.repeat == 1 ? "" : "s", absdir);
		if (runs[0].s.progress > 0)
			puts("  (the program has progress points: speedup is throughput, not wall time)\n");
		print_table(runs, o.ncounts, stdout);
		for (int i = 1; i < o.ncounts; i++)
			printf("%s\n", steps[i]);
		if (o.ncounts > 1)
			putchar('\n');
		findings__print(&all, stdout);
		if (runs[o.ncounts - 1].p->process.perf_error)
			puts("\nNot measured: hardware counters (cycles, instructions, cache misses) — this machine has no PMU.");
	}
	json_object_put(root);
	free(steps);
	findings__free(&all);
	rc = fflush(stdout) == 0 && !html_failed ? 0 : 1;
out:
	for (int i = 0; i < o.ncounts; i++) {
		for (int k = 0; k < o.repeat; k++)
			free(runs[i].profiles[k]);
		if (runs[i].p) {
			stack__free(&runs[i].s);
			model__free(&runs[i].m);
			syms__free(runs[i].syms);
			profile__free(runs[i].p);
		}
	}
	free(runs);
	return rc;
}
