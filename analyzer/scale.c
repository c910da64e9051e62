/* scale.c — `convoy scale`: run a command at several thread counts and
 * explain the curve.
 *
 * Four steps: parse the options, run the command (each count --repeat
 * times, the counts interleaved round by round so a noisy neighbour hits
 * them alike), diagnose the sweep (sweep.c) and render it. Every profile and
 * every run's output is kept under -o DIR, with the sweep itself as
 * DIR/sweep.json, which `scale --replay DIR` and `convoy diff` read back.
 */
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis.h"
#include "html.h"
#include "launch.h"
#include "watchdog.h"
#include "scale.h"
#include "sweep.h"
#include "util.h"

struct scale_options {
	int counts[SWEEP_MAX_COUNTS];
	int ncounts;
	int repeat;
	int warmup;             /* --warmup: unrecorded runs before the sweep */
	int json;
	double timeout_s;
	struct watchdog_config watchdog;   /* CONVOY_WATCHDOG, --on-hang (watchdog.h) */
	const char *on_hang;    /* --on-hang A */
	const char *dir;
	const char *html;       /* --html FILE */
	int dir_given;          /* -o DIR: the page also goes to DIR/report.html */
	const char *comm;       /* --comm: the process to analyse */
	const char *replay;     /* --replay DIR */
	const char *sample_hz;  /* --sample-hz N */
	unsigned hz;            /* the sampling rate it means (launch__sample_hz) */
	char **cmd;
	int cmdc;
};

static int parse_counts(const char *list, struct scale_options *o)
{
	char *copy = xstrndup(list, strlen(list)), *save = NULL;
	o->ncounts = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long long v = parse_count(tok);
		if (v < 1 || v > 4096 || o->ncounts == SWEEP_MAX_COUNTS) {
			cv_error("scale: --threads takes a comma-separated list of counts from 1 to 4096 "
				 "(at most %d), not '%s'", SWEEP_MAX_COUNTS, list);
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

static void scale_usage(FILE *f)
{
	fputs("usage: convoy scale --threads LIST [--repeat K] [--warmup K] [--json] [-o DIR] [--timeout S]\n"
	      "                    [--comm NAME] [--sample-hz N] [--on-hang auto|stop|continue]\n"
	      "                    -- COMMAND ... {threads} ...\n"
	      "       convoy scale --replay DIR [--json]\n"
	      "\n"
	      "Runs COMMAND once per thread count in LIST (each {threads} in its arguments\n"
	      "replaced by the count, also exported as CONVOY_THREADS), K times each, and\n"
	      "explains the curve: wall time, speedup, efficiency, where the worker time\n"
	      "went at each count (the speedup stack), one sentence per step, and findings.\n"
	      "\n"
	      "  --threads LIST   comma-separated counts, e.g. 1,2,4,8 (the smallest is the reference)\n"
	      "  --repeat K       runs per count; the median run stands for it (default 1)\n"
	      "  --warmup K       run the command K times at the first count before the sweep,\n"
	      "                   unanalysed, so the page cache and other caches are warm for\n"
	      "                   every count, as hyperfine's --warmup (default 0)\n"
	      "  --json           print the sweep as JSON (also saved as DIR/sweep.json)\n"
	      "  --html FILE      write the sweep as a web page to FILE (and DIR/report.html with -o)\n"
	      "  -o DIR           keep profiles and output here (default convoy-scale-DATE-TIME)\n"
	      "  --timeout S      give up on a run after S seconds (default 600)\n"
	      "  --comm NAME      analyse the process named NAME (default: of the processes the\n"
	      "                   command started, the one that did the most threaded work)\n"
	      "  --sample-hz N    sample each thread's CPU time N times a second from outside\n"
	      "                   the command (default CONVOY_SAMPLE_HZ, else 1000; 0: off)\n"
	      "  --on-hang A      what the watchdog (CONVOY_WATCHDOG) does with a hung run: a\n"
	      "                   snapshot, and stop it only when that shows a deadlock (auto,\n"
	      "                   the default); stop it (stop); let it go on after a snapshot\n"
	      "                   (continue; default CONVOY_ON_HANG)\n"
	      "  --replay DIR     diagnose the sweep recorded in DIR by an earlier -o DIR again,\n"
	      "                   running nothing\n"
	      "\n"
	      "examples:\n"
	      "  convoy scale --threads 1,2,4 -- build/demos/global_queue --workers {threads}\n"
	      "  convoy scale --threads 1,2,4,8 --repeat 3 --json -- ./myprog -j {threads}\n", f);
}


/* ---- parse --------------------------------------------------------------- */

/* Returns 0, or the exit status after one error line (-1: --help shown). */
static int parse(int argc, char **argv, struct scale_options *o)
{
	static const struct option longopts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "json", no_argument, NULL, 'j' },
		{ "html", required_argument, NULL, 'H' },
		{ "output", required_argument, NULL, 'o' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "comm", required_argument, NULL, 'c' },
		{ "replay", required_argument, NULL, 'R' },
		{ "sample-hz", required_argument, NULL, 's' },
		{ "on-hang", required_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *threads = NULL;
	int c, running = 0;   /* options about running the command */
	optind = 1;
	while ((c = cv_getopt("scale", argc, argv, "o:h", longopts)) != -1) {
		long long v;
		running += c != 'j' && c != 'H' && c != 'R' && c != 'h';
		switch (c) {
		case 't': threads = optarg; break;
		case 'r':
			v = parse_count(optarg);
			if (v < 1 || v > SWEEP_MAX_REPEAT) {
				cv_error("scale: --repeat takes a count from 1 to %d, not '%s'", SWEEP_MAX_REPEAT, optarg);
				return 2;
			}
			o->repeat = (int)v;
			break;
		case 'w':
			v = parse_count(optarg);
			if (v < 0 || v > SWEEP_MAX_REPEAT) {
				cv_error("scale: --warmup takes a count from 0 to %d, not '%s'", SWEEP_MAX_REPEAT, optarg);
				return 2;
			}
			o->warmup = (int)v;
			break;
		case 'T':
			v = parse_count(optarg);
			if (v < 1 || v > 86400) {
				cv_error("scale: --timeout takes seconds from 1 to 86400, not '%s'", optarg);
				return 2;
			}
			o->timeout_s = (double)v;
			break;
		case 'j': o->json = 1; break;
		case 'H': o->html = optarg; break;
		case 'o': o->dir = optarg; o->dir_given = 1; break;
		case 'c': o->comm = optarg; break;
		case 'R': o->replay = optarg; break;
		case 's': o->sample_hz = optarg; break;
		case 'O': o->on_hang = optarg; break;
		case 'h': scale_usage(stdout); return -1;
		default:
			return 2;   /* cv_getopt said why */
		}
	}
	if (o->replay) {
		if (running || optind < argc) {
			cv_error("scale: --replay DIR runs nothing: only --json and --html go with it");
			return 2;
		}
		return 0;
	}
	if (!threads) {
		cv_error("scale: --threads LIST is required (try 'convoy scale --help')");
		return 2;
	}
	if (watchdog__config(&o->watchdog, "scale", o->on_hang) != 0)
		return 2;
	if (parse_counts(threads, o))
		return 2;
	if (optind >= argc) {
		cv_error("scale: no command given (usage: convoy scale --threads LIST -- COMMAND ... {threads} ...)");
		return 2;
	}
	o->cmd = argv + optind;
	o->cmdc = argc - optind;
	int placeholder = 0;
	for (int i = 0; i < o->cmdc; i++)
		placeholder |= strstr(o->cmd[i], "{threads}") != NULL;
	if (!placeholder) {
		cv_error("scale: the command has no {threads} for the thread count (e.g. --workers {threads})");
		return 2;
	}
	return 0;
}

/* ---- run ------------------------------------------------------------------ */

/* One run of the command at n threads into sub; its profile into *profile
 * and how it ended into *end (profile NULL: a warm-up run, whose profile is
 * not looked for). A run that failed or hung is explained like any other:
 * only one that left no profile stops the sweep. */
static int run_once(const struct scale_options *o, int n, int k, const char *sub, double *wall, char **profile,
		    struct run_outcome *end)
{
	char log[PATH_MAX + 96], num[16], tmp[PATH_MAX];
	snprintf(log, sizeof(log), "%s/output.txt", sub);
	snprintf(num, sizeof(num), "%d", n);
	if (launch__prepare(sub, o->hz, tmp, sizeof(tmp)) != 0)
		return -1;
	setenv("CONVOY_THREADS", num, 1);
	char **args = substitute(o->cmd, o->cmdc, n);
	struct launch_result r;
	time_t since = time(NULL);
	int started = launch__run(args, log, o->timeout_s, &o->watchdog, &r);
	free_argv(args);
	if (started != 0)
		return -1;
	outcome__set(end, &r, o->timeout_s, &o->watchdog);
	*wall = r.wall_ns;
	if (!profile)
		return 0;
	/* The first run says which process it analyses; the others pick alike.
	 * That it made no thread is said at the largest count: at one thread
	 * many programs make none (pigz -p 1). */
	int say = k != 0 ? 0 : (n == o->counts[0] ? FIND_SAY_CHOICE : 0) |
				(n == o->counts[o->ncounts - 1] ? FIND_SAY_UNTHREADED : 0);
	*profile = analysis__find_profile(sub, r.pid, since, o->comm, say);
	if (!*profile) {
		char how[512];
		outcome__sentence(end, how, sizeof(how));
		cv_error("scale: at %d threads the command wrote no profile%s (statically linked? output: %s). %s", n,
			 o->comm ? " of that --comm (one the command started writes none when it made no thread, used "
				   "no synchronisation object and under 10 ms of CPU)" : "",
			 log, how);
		return -1;
	}
	return 0;
}

/* A signal convoy was sent went on to the run at n threads (a
 * supervisor's stop, ^C under the time limit): the sweep ends there, as
 * convoy would have by the signal, with what it has said. */
static int stopped(int n, const struct sweep *w)
{
	int sig = launch__passed_on();
	cv_error("scale: stopped by signal %d (%s), passed on to the run at %d thread%s; the sweep is cut short "
		 "(its profiles so far are in %s)", sig, strsignal(sig), n, n == 1 ? "" : "s", w->dir);
	return 128 + sig;
}

/* Every run: 0, -1 after an error line, or 128 + the signal that stopped
 * the sweep (stopped). */
static int run_all(const struct scale_options *o, struct sweep *w)
{
	int tty = isatty(STDERR_FILENO), total = o->ncounts * o->repeat, done = 0;
	for (int k = 0; k < o->warmup; k++) {
		char sub[PATH_MAX + 64];
		double wall;
		struct run_outcome end;
		snprintf(sub, sizeof(sub), "%s/warmup-%d", w->dir, k + 1);
		if (tty)
			fprintf(stderr, "\rconvoy scale: warm-up run %d/%d...   ", k + 1, o->warmup);
		int rc = run_once(o, o->counts[0], k, sub, &wall, NULL, &end);
		if (tty)
			fputs("\r\033[K", stderr);
		if (rc)
			return -1;
		if (launch__passed_on())
			return stopped(o->counts[0], w);
	}
	for (int k = 0; k < o->repeat; k++)
		for (int i = 0; i < o->ncounts; i++) {
			int n = o->counts[i];
			w->runs[i].threads = n;
			char sub[PATH_MAX + 64];
			snprintf(sub, sizeof(sub), "%s/threads-%d-run-%d", w->dir, n, k + 1);
			if (tty)
				fprintf(stderr, "\rconvoy scale: run %d/%d: %d thread%s (repeat %d/%d)...   ", ++done, total, n,
					n == 1 ? "" : "s", k + 1, o->repeat);
			int rc = run_once(o, n, k, sub, &w->runs[i].walls[k], &w->runs[i].profiles[k],
					  &w->runs[i].outcomes[k]);
			if (tty)
				fputs("\r\033[K", stderr);
			if (rc)
				return -1;
			if (launch__passed_on())
				return stopped(n, w);
		}
	return 0;
}

/* ---- render --------------------------------------------------------------- */

static int render(const struct scale_options *o, const struct sweep *w)
{
	json_object *root = sweep__json(w);
	if (!o->replay) {
		char path[PATH_MAX + 16];
		snprintf(path, sizeof(path), "%s/sweep.json", w->dir);
		if (json_object_to_file_ext(path, root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE) != 0)
			cv_error("scale: cannot write %s", path);
	}
	if (o->json)
		puts(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	else
		sweep__text(w, stdout);
	json_object_put(root);
	int html_failed = o->html && html__write_sweep(w, o->html, o->dir_given) != 0;
	return fflush(stdout) == 0 && !ferror(stdout) && !html_failed ? 0 : 1;
}

/* ---- the command ----------------------------------------------------------- */

int cmd_scale(int argc, char **argv)
{
	struct scale_options o = { .repeat = 1, .timeout_s = 600 };
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? 0 : rc;
	struct sweep w;
	if (o.replay) {
		rc = sweep__load(&w, o.replay) == 0 ? render(&o, &w) : 1;
		sweep__free(&w);
		return rc;
	}
	char dirbuf[128], absdir[PATH_MAX];
	if (!o.dir) {
		time_t now = time(NULL);
		strftime(dirbuf, sizeof(dirbuf), "convoy-scale-%Y%m%d-%H%M%S", localtime(&now));
		o.dir = dirbuf;
	}
	if (launch__sample_hz("scale", o.sample_hz, &o.hz) != 0)
		return 2;
	if (launch__prepare(o.dir, o.hz, absdir, sizeof(absdir)) != 0)
		return 1;
	memset(&w, 0, sizeof(w));
	w.dir = xstrndup(absdir, strlen(absdir));
	w.command = xcalloc((size_t)o.cmdc + 1, sizeof(char *));
	for (int i = 0; i < o.cmdc; i++)
		w.command[i] = xstrndup(o.cmd[i], strlen(o.cmd[i]));
	w.ncommand = o.cmdc;
	w.repeat = o.repeat;
	w.warmup = o.warmup;
	w.nruns = o.ncounts;
	rc = run_all(&o, &w);
	if (rc == 0)
		rc = sweep__analyse(&w) == 0 ? render(&o, &w) : 1;
	else if (rc < 0)
		rc = 1;
	sweep__free(&w);
	return rc;
}
