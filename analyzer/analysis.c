/* analysis.c — one profile through the pipeline (analysis.h). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "cpuprof.h"
#include "profile.h"
#include "symbols.h"
#include "util.h"

/* The hang snapshot of the process that wrote p, beside path: a profile
 * *.hang in its directory (the shim names it convoy-COMM-PID.hang; a
 * recording may rename it) written by the same process (pid and start
 * time); other files of that name are passed over (one with a profile's
 * magic that does not parse gets profile__load's error line). Of several snapshots of
 * the process (requests beside the watchdog's one), the earliest: the
 * hang as first seen, whatever order the directory lists them in. NULL
 * when there is none (caller frees). */
static char *hang_snapshot_path(const char *path, const struct profile *p)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	char *found = NULL;
	uint64_t found_end = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		const char *name = e->d_name, *dot = strrchr(name, '.');
		if (!dot || strcmp(dot, CV_SNAPSHOT_EXT))
			continue;   /* the pid in the name is checked in the file */
		char full[4400];
		snprintf(full, sizeof(full), "%s/%s", dir, name);
		struct profile *h = profile__has_magic(full) ? profile__load(full) : NULL;
		if (h && h->process.pid == p->process.pid && h->process.start_realtime_ns == p->process.start_realtime_ns &&
		    h->process.exit_reason == CV_EXIT_HANG_SNAPSHOT &&
		    (!found || h->process.end_ns < found_end || (h->process.end_ns == found_end && strcmp(full, found) < 0))) {
			free(found);
			found = xstrndup(full, strlen(full));
			found_end = h->process.end_ns;
		}
		profile__free(h);
	}
	closedir(d);
	return found;
}

int analysis__load(struct analysis *a, const char *path)
{
	memset(a, 0, sizeof(*a));
	a->p = profile__load(path);
	if (!a->p)
		return -1;
	const char *sym = getenv("CONVOY_SYMBOLS");
	a->syms = syms__load(a->p, !(sym && !strcmp(sym, "0")));
	model__build(&a->m, a->p, a->syms);
	a->cpu = cpuprof__load(path, &a->m);
	a->m.cpu = a->cpu;
	char *hang = a->p->process.exit_reason == CV_EXIT_HANG_SNAPSHOT ? NULL : hang_snapshot_path(path, a->p);
	if (hang) {
		a->hang = xcalloc(1, sizeof(*a->hang));
		if (analysis__load(a->hang, hang) == 0) {
			a->m.hang = &a->hang->m;
		} else {
			free(a->hang);
			a->hang = NULL;
		}
		free(hang);
	}
	return 0;
}

void analysis__diagnose(struct analysis *a)
{
	/* A single run has no reference: its stack counts all on-CPU time as
	 * useful, at as many threads as were busy (docs/findings.md). */
	speedup__compute(&a->s, &a->m, speedup__busy_threads(&a->m), 0, -1);
	struct run_view v = { &a->m, &a->s };
	findings__diagnose(&a->f, NULL, &v);
	findings__sort(&a->f);
	a->diagnosed = 1;
}

void analysis__free(struct analysis *a)
{
	if (!a->p)
		return;
	if (a->hang) {
		analysis__free(a->hang);
		free(a->hang);
	}
	findings__free(&a->f);
	speedup__free(&a->s);
	cpuprof__free(a->cpu);
	model__free(&a->m);
	syms__free(a->syms);
	profile__free(a->p);
	memset(a, 0, sizeof(*a));
}

/* ---- which process -------------------------------------------------------- */

struct candidate {
	char *path;
	pid_t pid, ppid;
	char comm[CV_NAME_MAX];
	char exe[256];
	double work;            /* thread time (threaded_work) */
	int threaded;           /* created a thread */
	int synchronised;       /* used a synchronisation object */
	int in_tree;
	uint64_t start_ns;      /* the image's start (realtime): images of one pid follow each other */
	int exec_ended;         /* the image ended by an exec */
};

/* Thread time: each created thread's lifetime, and the main thread's CPU
 * time (a shell's main thread lives as long as its child, but idles). */
static double threaded_work(const struct profile *p)
{
	double work = 0;
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct cv_thread_rec *t = &p->threads[i];
		work += t->flags & CV_THREAD_MAIN ? (double)t->cpu_ns : (double)(t->end_ns - t->start_ns);
	}
	return work;
}

/* The profiles convoy-*SUFFIX in dir written since since. */
static size_t scan(const char *dir, time_t since, const char *suffix, struct candidate **out)
{
	DIR *d = opendir(dir);
	size_t n = 0, cap = 0;
	*out = NULL;
	if (!d)
		return 0;
	size_t el = strlen(suffix);
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len <= el + 7 || strncmp(e->d_name, "convoy-", 7) || strcmp(e->d_name + len - el, suffix))
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		struct profile *p = profile__load(path);
		if (!p)
			continue;   /* said why */
		/* Written by this run, not left over from an earlier one. */
		if (p->process.start_realtime_ns / 1000000000u + 1 >= (uint64_t)since) {
			if (n == cap) {
				cap = cap ? 2 * cap : 8;
				*out = realloc(*out, cap * sizeof(**out));
				if (!*out)
					abort();
			}
			struct candidate *c = &(*out)[n++];
			memset(c, 0, sizeof(*c));
			c->path = xstrndup(path, strlen(path));
			c->pid = p->process.pid;
			c->ppid = p->process.ppid;
			snprintf(c->comm, sizeof(c->comm), "%s", p->process.comm);
			snprintf(c->exe, sizeof(c->exe), "%s", p->exe ? p->exe : "");
			c->work = threaded_work(p);
			c->threaded = p->nthreads > 1;
			c->synchronised = p->nobjects > 0;
			c->start_ns = p->process.start_realtime_ns;
			c->exec_ended = p->process.exit_reason == CV_EXIT_EXEC;
		}
		profile__free(p);
	}
	closedir(d);
	return n;
}

/* The root, what it started, and again and again what a member started
 * (and the first process of a PID namespace, below). A
 * process that wrote no profile (a shell that exits with _exit, a static
 * binary) breaks the chain below it: when nothing is found that way, every
 * profile written into dir during the run counts (dir is the one the command
 * was told to write into). */
static void mark_tree(struct candidate *c, size_t n, pid_t root)
{
	size_t members = 0;
	/* A process whose parent is 0 is the first of a PID namespace the
	 * command made (unshare -p, a container): its profile and its
	 * children's carry that namespace's pids, which no chain from root
	 * reaches. It roots a tree of the command's too. */
	for (size_t i = 0; i < n; i++)
		members += c[i].in_tree = c[i].pid == root || c[i].ppid == root || c[i].ppid == 0;
	for (int changed = 1; changed;) {
		changed = 0;
		for (size_t i = 0; i < n; i++)
			for (size_t k = 0; k < n && !c[i].in_tree; k++)
				if (c[k].in_tree && c[k].pid == c[i].ppid && c[k].pid != c[i].pid) {
					changed = c[i].in_tree = 1;
					members++;
				}
	}
	for (size_t i = 0; i < n && !members; i++)
		c[i].in_tree = 1;
}

/* --comm NAME: the kernel's comm (at most 15 characters) or the
 * executable's file name. */
static int named(const struct candidate *c, const char *name)
{
	const char *slash = strrchr(c->exe, '/');
	return !strcmp(c->comm, name) || !strcmp(slash ? slash + 1 : c->exe, name);
}

/* Whether c[i] is an image its process replaced by exec: it ended by an
 * exec, and another profile of its pid started later. The last image is the program asked about
 * (env, nice, sh -c 'exec prog'); an earlier one that recorded something
 * wrote its own profile, with its own work. */
static int replaced(const struct candidate *c, size_t n, size_t i)
{
	for (size_t k = 0; k < n; k++)
		if (k != i && c[i].exec_ended && c[k].in_tree && c[k].pid == c[i].pid && c[k].start_ns > c[i].start_ns)
			return 1;   /* not a pid used again, nor one of another PID namespace */
	return 0;
}

static char *find_profile(const char *dir, pid_t pid, time_t since, const char *comm, int say, const char *suffix)
{
	struct candidate *c;
	size_t n = scan(dir, since, suffix, &c), best = n, members = 0;
	mark_tree(c, n, pid);
	for (size_t i = 0; i < n; i++) {
		if (!c[i].in_tree)
			continue;
		members++;
		if ((comm && !named(&c[i], comm)) || (!comm && replaced(c, n, i)))
			continue;
		/* A process that created threads beats one that did not, whatever
		 * their CPU: a shell's start-up on a busy machine can outlast a
		 * short threaded program's. Without threads, one that used a lock
		 * or another synchronisation object beats one that used none (the
		 * shell that ran it). */
		if (best == n || c[i].threaded > c[best].threaded ||
		    (c[i].threaded == c[best].threaded &&
		     (c[i].synchronised > c[best].synchronised ||
		      (c[i].synchronised == c[best].synchronised && c[i].work > c[best].work))))
			best = i;
	}
	char *found = best < n ? c[best].path : NULL;
	if (found && (say & FIND_SAY_CHOICE) && members > 1) {
		char others[512] = "";
		size_t len = 0;
		for (size_t i = 0; i < n && len < sizeof(others) - 64; i++)
			if (c[i].in_tree && i != best)
				len += (size_t)snprintf(others + len, sizeof(others) - len, "%s%s (pid %d)", len ? ", " : "",
							c[i].comm, (int)c[i].pid);
		fprintf(stderr, "convoy: analysing %s (pid %d), %s; also profiled: %s (--comm NAME picks another)\n",
			c[best].comm, (int)c[best].pid,
			comm		     ? "as --comm asked"
			: c[best].threaded     ? "the process that did the most threaded work"
			: c[best].synchronised ? "the one that used synchronisation objects"
					       : "the one that used the most CPU",
			others);
	}
	if (found && (say & FIND_SAY_UNTHREADED) && members > 1 && !c[best].threaded)
		fprintf(stderr, "convoy: no process of the command created a thread (%zu processes profiled): "
			"convoy explains threads within a process, not work spread across processes\n", members);
	for (size_t i = 0; i < n; i++)
		if (c[i].path != found)
			free(c[i].path);
	free(c);
	return found;
}

char *analysis__find_profile(const char *dir, pid_t pid, time_t since, const char *comm, int say)
{
	char *found = find_profile(dir, pid, since, comm, say, "." CV_PROFILE_EXT);
	if (found)
		return found;
	/* No profile (the program died of a signal the shim does not write on,
	 * such as a terminal's Ctrl-C, after a hang): the snapshot the shim
	 * wrote at the hang still explains it. */
	found = find_profile(dir, pid, since, comm, 0, CV_SNAPSHOT_EXT);
	if (found && say)
		fprintf(stderr, "convoy: no profile was written at the end; explaining the snapshot taken at the hang (%s)\n",
			found);
	return found;
}
