/* watch.c — write watchpoints on the sampled words, from the launcher
 * (watch.h; records: docs/samples-format.md).
 *
 * Cost to the program: every write to an armed word traps into the kernel
 * (a debug exception, about a microsecond), so a word written every few
 * nanoseconds runs hundreds of times slower while it is armed. A window is
 * therefore short and rare: WINDOW_MS armed every PERIOD_MS, so at most
 * WINDOW_MS / PERIOD_MS of the run is slowed (measured: make bench,
 * docs/performance.md). What a window counts is exact for its length: each
 * thread's writes to each armed word, and the CPU time the thread ran armed.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <dirent.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cachelines.h"
#include "util.h"
#include "watch.h"

#define WINDOW_MS 5                /* armed ... */
#define PERIOD_MS 200              /* ... once per this */
#define MAX_PROCS 16               /* processes of the command with candidates */
#define MAX_WORDS 64               /* candidate words per process */
#define ROTATION 16                /* of which the hottest this many are watched in turn */
#define MAX_THREADS 256            /* threads armed per process and window */
#define IP_CACHE 4096              /* decoded IPs per process (open addressing) */
#define MAX_CODE 65536             /* bytes of one function read to decode it */

struct candidate {
	uint64_t word;
	uint64_t samples;
};

struct armed {
	pid_t pid, tid;
	uint64_t word;
	int fd;
};

struct proc {
	pid_t pid;
	Dwfl *dwfl;                    /* its modules, as /proc/PID/maps says */
	int reported;                  /* the maps were read since the last window */
	struct data_operand *ips;      /* IP_CACHE slots; ip 0: empty */
	struct candidate words[MAX_WORDS];
	int nwords;
	int cursor;                    /* the rotation's next word among the hottest */
};

struct watcher {
	watch_file_fn file;
	void *ctx;
	struct insn_decoder *dec;
	struct proc procs[MAX_PROCS];
	int nprocs;
	struct armed *armed;
	size_t narmed;
	int is_armed;
	uint64_t next_ns;              /* the next arming or closing */
	unsigned char *code;
};

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

static int open_watchpoint(pid_t tid, uint64_t addr, int disabled)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_BREAKPOINT;
	a.bp_type = HW_BREAKPOINT_W;
	a.bp_addr = addr;
	a.bp_len = HW_BREAKPOINT_LEN_8;
	a.read_format = PERF_FORMAT_TOTAL_TIME_RUNNING;
	a.exclude_kernel = 1;   /* the program's own stores, not the kernel's copies into its memory */
	a.exclude_hv = 1;
	a.disabled = (unsigned)disabled;
	return (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

struct watcher *watcher__open(pid_t pid, watch_file_fn file, void *ctx, char *why, size_t size)
{
	/* Any aligned user address will do to ask (nothing is armed: disabled). */
	int fd = open_watchpoint(pid, 0x10000, 1);
	if (fd < 0) {
		snprintf(why, size, "perf_event_open refused a write watchpoint: %s", strerror(errno));
		return NULL;
	}
	close(fd);
	struct insn_decoder *dec = decoder__open();
	if (!dec) {
		snprintf(why, size, "no instruction decoder for this machine to find the words to watch");
		return NULL;
	}
	struct watcher *w = xcalloc(1, sizeof(*w));
	w->file = file;
	w->ctx = ctx;
	w->dec = dec;
	w->code = xcalloc(1, MAX_CODE);
	return w;
}

static struct proc *proc_of(struct watcher *w, pid_t pid)
{
	for (int i = 0; i < w->nprocs; i++)
		if (w->procs[i].pid == pid)
			return &w->procs[i];
	if (w->nprocs == MAX_PROCS)
		return NULL;
	struct proc *p = &w->procs[w->nprocs++];
	p->pid = pid;
	p->ips = xcalloc(IP_CACHE, sizeof(*p->ips));
	return p;
}

/* Reads the process's module map again (an exec, a dlopen), at most once
 * per window. */
static void report_modules(struct proc *p)
{
	if (p->reported)
		return;
	p->reported = 1;
	if (!p->dwfl)
		p->dwfl = dwfl_begin(&proc_callbacks);
	if (!p->dwfl)
		return;
	dwfl_report_begin(p->dwfl);
	dwfl_linux_proc_report(p->dwfl, p->pid);
	dwfl_report_end(p->dwfl, NULL, NULL);
}

/* The access of an instruction at ip of the live process, decoded from its
 * function's code as it is in memory. */
static void decode_live(struct watcher *w, struct proc *p, struct data_operand *o)
{
	Dwfl_Module *mod = p->dwfl ? dwfl_addrmodule(p->dwfl, o->ip) : NULL;
	if (!mod) {
		report_modules(p);
		mod = p->dwfl ? dwfl_addrmodule(p->dwfl, o->ip) : NULL;
	}
	GElf_Off off;
	GElf_Sym sym;
	if (!mod || !dwfl_module_addrinfo(mod, o->ip, &off, &sym, NULL, NULL, NULL) || !sym.st_size)
		return;
	uint64_t start = o->ip - off;
	size_t len = sym.st_size < MAX_CODE ? (size_t)sym.st_size : MAX_CODE;
	struct iovec local = { w->code, len }, remote = { (void *)(uintptr_t)start, len };
	if (process_vm_readv(p->pid, &local, 1, &remote, 1, 0) != (ssize_t)len)
		return;
	decoder__operand(w->dec, w->code, start, len, o);
}

void watcher__sample(struct watcher *w, pid_t pid, uint64_t ip, const uint64_t *regs)
{
	struct proc *p = proc_of(w, pid);
	if (!p || !ip)
		return;
	size_t slot = (size_t)(ip * 0x9e3779b97f4a7c15ull >> 52) % IP_CACHE, probes = 0;
	while (p->ips[slot].ip && p->ips[slot].ip != ip && ++probes < IP_CACHE)
		slot = (slot + 1) % IP_CACHE;
	if (probes == IP_CACHE)
		return;   /* full: the candidates are known by now */
	struct data_operand *o = &p->ips[slot];
	if (!o->ip) {
		o->ip = ip;
		decode_live(w, p, o);
	}
	if (!o->ok)
		return;
	uint64_t word = data_operand__address(o, regs) & ~7ull;
	for (int i = 0; i < p->nwords; i++)
		if (p->words[i].word == word) {
			p->words[i].samples++;
			return;
		}
	if (p->nwords < MAX_WORDS)
		p->words[p->nwords++] = (struct candidate){ word, 1 };
}

static int by_samples(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return x->word < y->word ? -1 : x->word > y->word;
}

/* Arms the next few candidate words of each process on all its threads. */
static void arm(struct watcher *w)
{
	size_t cap = (size_t)w->nprocs * MAX_THREADS * WATCH_WORDS_PER_WINDOW;
	w->armed = xrealloc(w->armed, (cap ? cap : 1) * sizeof(*w->armed));
	w->narmed = 0;
	for (int i = 0; i < w->nprocs; i++) {
		struct proc *p = &w->procs[i];
		p->reported = 0;
		if (!p->nwords)
			continue;
		qsort(p->words, (size_t)p->nwords, sizeof(*p->words), by_samples);
		int hot = p->nwords < ROTATION ? p->nwords : ROTATION;
		int nwatch = hot < WATCH_WORDS_PER_WINDOW ? hot : WATCH_WORDS_PER_WINDOW;
		uint64_t words[WATCH_WORDS_PER_WINDOW];
		for (int k = 0; k < nwatch; k++)
			words[k] = p->words[(p->cursor + k) % hot].word;
		p->cursor = (p->cursor + nwatch) % hot;
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/task", (int)p->pid);
		DIR *d = opendir(path);
		if (!d)
			continue;   /* gone */
		int threads = 0;
		for (struct dirent *e; (e = readdir(d)) && threads < MAX_THREADS;) {
			pid_t tid = (pid_t)atoi(e->d_name);
			if (tid <= 0)
				continue;
			threads++;
			/* A word the thread's debug registers cannot take (all
			 * four in use, by us or a debugger) is not watched there. */
			for (int k = 0; k < nwatch; k++) {
				int fd = open_watchpoint(tid, words[k], 0);
				if (fd >= 0)
					w->armed[w->narmed++] = (struct armed){ p->pid, tid, words[k], fd };
			}
		}
		closedir(d);
	}
	w->is_armed = w->narmed > 0;
}

static void disarm(struct watcher *w, uint64_t now_ns)
{
	for (size_t i = 0; i < w->narmed; i++) {
		struct armed *a = &w->armed[i];
		uint64_t v[2];   /* the count, the time running */
		/* A thread that never ran armed has nothing to say. */
		if (read(a->fd, v, sizeof(v)) == (ssize_t)sizeof(v) && v[1]) {
			FILE *f = w->file(w->ctx, a->pid);
			if (f)
				fprintf(f, "watch %llu %d %llx %llu %llu\n", (unsigned long long)now_ns, (int)a->tid,
					(unsigned long long)a->word, (unsigned long long)v[0], (unsigned long long)v[1]);
		}
		close(a->fd);
	}
	w->narmed = 0;
	w->is_armed = 0;
}

int watcher__tick(struct watcher *w, uint64_t now_ns)
{
	if (now_ns >= w->next_ns) {
		if (w->is_armed) {
			disarm(w, now_ns);
			w->next_ns = now_ns + (uint64_t)(PERIOD_MS - WINDOW_MS) * 1000000;
		} else {
			/* Nothing to watch yet: look again soon, the samples are coming. */
			arm(w);
			w->next_ns = now_ns + (uint64_t)(w->is_armed ? WINDOW_MS : 2 * WINDOW_MS) * 1000000;
		}
	}
	uint64_t left = w->next_ns > now_ns ? w->next_ns - now_ns : 0;
	return (int)((left + 999999) / 1000000);
}

void watcher__close(struct watcher *w, uint64_t now_ns)
{
	if (!w)
		return;
	if (w->is_armed)
		disarm(w, now_ns);
	for (int i = 0; i < w->nprocs; i++) {
		if (w->procs[i].dwfl)
			dwfl_end(w->procs[i].dwfl);
		free(w->procs[i].ips);
	}
	decoder__close(w->dec);
	free(w->armed);
	free(w->code);
	free(w);
}
