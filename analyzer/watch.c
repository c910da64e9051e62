/* watch.c — write watchpoints on the sampled words, from the launcher
 * (watch.h; records: docs/samples-format.md).
 *
 * The watchpoints are opened once, before the exec, like the sampling
 * events: WATCH_WORDS_PER_WINDOW breakpoint events per CPU on the child,
 * inherited by every thread, disabled. A window points them at the chosen
 * words (PERF_EVENT_IOC_MODIFY_ATTRIBUTES, which the kernel applies to every
 * inherited copy) and enables them; every write to an armed word is one
 * sample in the CPU's ring (its thread and address), counted here per
 * thread and word. Opening per-thread events instead would give each thread
 * a perf context of its own, and the kernel then no longer switches between
 * the program's threads by swapping their identical contexts: every context
 * switch would pay for all the sampling events, for the rest of the run
 * (3x the wall of a park-heavy program on the development VM).
 *
 * Cost to the program while armed: every write to an armed word traps into
 * the kernel (a debug exception and a sample, some microseconds in a VM), so
 * a word written every few nanoseconds runs far slower while it is armed.
 * A window is therefore short and rare: WINDOW_MS armed every PERIOD_MS
 * (measured: make bench, docs/performance.md). A thread's CPU time in the
 * window comes from /proc/PID/task/TID/schedstat at its start and end.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <dirent.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "cachelines.h"
#include "symindex.h"
#include "unwind.h"
#include "util.h"
#include "watch.h"

#define WINDOW_MS 2                /* armed ... */
#define PERIOD_MS 200              /* ... once per this */
#define MAX_PROCS 16               /* processes of the command with candidates */
#define MAX_WORDS 64               /* candidate words per process */
#define ROTATION 16                /* of which the hottest this many are watched in turn */
#define MAX_THREADS 1024           /* threads counted per window */
#define IP_CACHE 4096              /* decoded IPs per process (open addressing) */
#define MAX_CODE 65536             /* bytes of one function read to decode it */

/* The bytes a watchpoint covers: x86 watches 1, 2, 4 or 8 bytes aligned on
 * their length, the smallest that holds the accesses sampled at word. */
struct candidate {
	uint64_t word;
	unsigned len;
	uint64_t samples;
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

/* One thread's CPU time at the window's start, and its writes in it. */
struct watched_thread {
	pid_t tid;
	uint64_t cpu_ns;
	uint64_t writes[WATCH_WORDS_PER_WINDOW];
};

struct watcher {
	watch_file_fn file;
	watch_drain_fn drain;
	void *ctx;
	struct insn_decoder *dec;
	int ncpus;
	int (*fd)[WATCH_WORDS_PER_WINDOW];   /* by CPU and slot; -1: not open */
	uint64_t (*id)[WATCH_WORDS_PER_WINDOW];
	struct perf_event_attr attr;   /* as opened: a modification changes only bp_addr and bp_len */
	struct proc procs[MAX_PROCS];
	int nprocs;
	int next_proc;                 /* the process the next window watches */
	/* the window */
	int is_armed;
	uint64_t armed_ns;             /* when it opened: its records' time, inside the program's run */
	pid_t pid;
	struct candidate words[WATCH_WORDS_PER_WINDOW];
	int nwords;
	struct watched_thread threads[MAX_THREADS];
	int nthreads;
	uint64_t next_ns;              /* the next arming or closing */
	unsigned char *code;
};

/* Whether this machine's write breakpoints count writes at all: some
 * virtual machines accept the event but never pass the debug registers
 * through, and an armed word then seems never written. One breakpoint on a
 * word of the launcher's own, PROBE_WRITES writes, its count read. */
#define PROBE_WRITES 8
static volatile uint64_t probe_word;

static int breakpoints_fire(char *why, size_t size)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_BREAKPOINT,
		.bp_type = HW_BREAKPOINT_W,
		.bp_addr = (uint64_t)(uintptr_t)&probe_word,
		.bp_len = HW_BREAKPOINT_LEN_8,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		snprintf(why, size, "perf_event_open refused a write watchpoint: %s", strerror(errno));
		return 0;
	}
	for (int i = 0; i < PROBE_WRITES; i++)
		probe_word = (uint64_t)i;
	uint64_t count = 0;
	int counted = read(fd, &count, sizeof(count)) == (ssize_t)sizeof(count);
	close(fd);
	if (!counted || count == 0) {
		snprintf(why, size,
			 "this machine accepts hardware watchpoints but they never fire (one counted %llu of %d writes; "
			 "a virtual machine that does not pass the debug registers through)",
			 (unsigned long long)count, PROBE_WRITES);
		return 0;
	}
	return 1;
}

struct watcher *watcher__open(pid_t pid, const int *ring_fd, int ncpus, watch_file_fn file, watch_drain_fn drain,
			      void *ctx, char *why, size_t size)
{
	if (!breakpoints_fire(why, size))
		return NULL;
	struct insn_decoder *dec = decoder__open();
	if (!dec) {
		snprintf(why, size, "%s to find the words to watch", decoder__why_not());
		return NULL;
	}
	struct watcher *w = xcalloc(1, sizeof(*w));
	w->file = file;
	w->drain = drain;
	w->ctx = ctx;
	w->dec = dec;
	w->ncpus = ncpus;
	w->fd = xcalloc((size_t)ncpus, sizeof(*w->fd));
	w->id = xcalloc((size_t)ncpus, sizeof(*w->id));
	struct perf_event_attr *a = &w->attr;
	a->size = sizeof(*a);
	a->type = PERF_TYPE_BREAKPOINT;
	a->bp_type = HW_BREAKPOINT_W;
	a->bp_addr = 0x10000;          /* any aligned user address until a window points it */
	a->bp_len = HW_BREAKPOINT_LEN_8;
	a->sample_period = 1;          /* every write: its thread */
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR;
	a->exclude_kernel = 1;         /* the program's own stores, not the kernel's copies into its memory */
	a->exclude_hv = 1;
	a->disabled = 1;
	a->inherit = 1;
	a->use_clockid = 1;            /* the rings' clock, or they refuse the output */
	a->clockid = CLOCK_MONOTONIC;
	int opened = 0, err = 0;
	for (int c = 0; c < ncpus; c++)
		for (int k = 0; k < WATCH_WORDS_PER_WINDOW; k++) {
			int fd = ring_fd[c] < 0 ? -1 : (int)syscall(SYS_perf_event_open, a, pid, c, -1, PERF_FLAG_FD_CLOEXEC);
			if (fd >= 0 && (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring_fd[c]) != 0 ||
					ioctl(fd, PERF_EVENT_IOC_ID, &w->id[c][k]) != 0)) {
				close(fd);
				fd = -1;
			}
			if (fd < 0 && ring_fd[c] >= 0)
				err = errno;
			w->fd[c][k] = fd;
			opened += fd >= 0;
		}
	if (!opened) {
		snprintf(why, size, "perf_event_open refused a write watchpoint: %s", strerror(err));
		watcher__close(w);
		return NULL;
	}
	w->code = xcalloc(1, MAX_CODE);
	return w;
}

int watcher__owns(const struct watcher *w, uint64_t id)
{
	for (int c = 0; w && c < w->ncpus; c++)
		for (int k = 0; k < WATCH_WORDS_PER_WINDOW; k++)
			if (w->fd[c][k] >= 0 && w->id[c][k] == id)
				return 1;
	return 0;
}

static struct watched_thread *thread_in_window(struct watcher *w, pid_t tid)
{
	for (int i = 0; i < w->nthreads; i++)
		if (w->threads[i].tid == tid)
			return &w->threads[i];
	if (w->nthreads == MAX_THREADS)
		return NULL;
	struct watched_thread *t = &w->threads[w->nthreads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	return t;   /* started in the window: all its CPU time is in it */
}

void watcher__hit(struct watcher *w, pid_t pid, pid_t tid, uint64_t addr)
{
	if (!w->is_armed || pid != w->pid)
		return;   /* a late record of a closed window, or another process at that address */
	for (int k = 0; k < w->nwords; k++)
		if (w->words[k].word == addr) {   /* a breakpoint's sample gives its bp_addr */
			struct watched_thread *t = thread_in_window(w, tid);
			if (t)
				t->writes[k]++;
			return;
		}
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

/* A module's symbol index (symindex__addrinfo's) lives in its userdata.
 * dwfl_report_end's removed callback: its second argument, declared void *,
 * is the userdata's address (libdwfl's MODCB_ARGS), as for dwfl_getmodules. */
static int index_removed(Dwfl_Module *mod, void *userdata, const char *name, Dwarf_Addr base, void *arg)
{
	(void)mod, (void)name, (void)base, (void)arg;
	struct symindex **ix = userdata;
	symindex__free(*ix);
	*ix = NULL;
	return DWARF_CB_OK;
}

static int index_freed(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base, void *arg)
{
	return index_removed(mod, userdata, name, base, arg);
}

/* The symbol covering addr in mod, as dwfl_module_addrinfo gives it,
 * through the module's index: libdw 0.188 reads the whole table for each
 * address, and in node's binary (109,000 symbols) that was most of the
 * launcher's CPU time beside the program (194 ms of drain for a 190 ms
 * run), a CPU the program would have had. */
static bool module_symbol(Dwfl_Module *mod, uint64_t addr, GElf_Off *off, GElf_Sym *sym)
{
	void **userdata;
	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	return symindex__addrinfo((struct symindex **)userdata, mod, addr, off, sym) != NULL;
}

/* Reads the process's module map again (an exec, a dlopen), at most once
 * per window. */
static void report_modules(struct proc *p)
{
	if (p->reported)
		return;
	p->reported = 1;
	if (!p->dwfl)
		p->dwfl = dwfl_begin(&unwind_live_callbacks);
	if (!p->dwfl)
		return;
	dwfl_report_begin(p->dwfl);
	dwfl_linux_proc_report(p->dwfl, p->pid);
	dwfl_report_end(p->dwfl, index_removed, NULL);
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
	if (!mod || !module_symbol(mod, o->ip, &off, &sym) || !sym.st_size)
		return;
	uint64_t start = o->ip - off;
	size_t len = sym.st_size < MAX_CODE ? (size_t)sym.st_size : MAX_CODE;
	struct iovec local = { w->code, len }, remote = { (void *)(uintptr_t)start, len };
	if (process_vm_readv(p->pid, &local, 1, &remote, 1, 0) != (ssize_t)len)
		return;
	decoder__operand(w->dec, w->code, start, len, o);
}

/* The smallest watchable block (1, 2, 4 or 8 bytes, aligned on its
 * length) holding the size bytes at *addr, its start into *addr; 0 when
 * none does. */
static unsigned watch_span(uint64_t *addr, unsigned size)
{
	for (unsigned len = 1; len <= 8; len *= 2)
		if (len >= size && *addr / len == (*addr + size - 1) / len) {
			*addr = *addr / len * len;
			return len;
		}
	return 0;
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
	uint64_t word = data_operand__address(o, regs);
	unsigned len = watch_span(&word, o->size ? o->size : 1);
	if (!len)
		return;   /* across an 8-byte boundary: no watchpoint covers it */
	/* One candidate per address (a window's hits are told apart by it), as
	 * long as the widest access sampled there. */
	for (int i = 0; i < p->nwords; i++)
		if (p->words[i].word == word) {
			p->words[i].samples++;
			if (len > p->words[i].len)
				p->words[i].len = len;
			return;
		}
	if (p->nwords < MAX_WORDS)
		p->words[p->nwords++] = (struct candidate){ word, len, 1 };
}

static int by_samples(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return x->word < y->word ? -1 : x->word > y->word;
}

/* A thread's time on a CPU so far (the first field of its schedstat); 0
 * when it is gone. */
static uint64_t thread_cpu_ns(pid_t pid, pid_t tid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
	FILE *f = fopen(path, "re");
	unsigned long long ns = 0;
	if (f) {
		if (fscanf(f, "%llu", &ns) != 1)
			ns = 0;
		fclose(f);
	}
	return ns;
}

/* Points the watchpoints at the next few candidate words of the next
 * process that has some, and notes its threads' CPU time. */
static void arm(struct watcher *w, uint64_t now_ns)
{
	struct proc *p = NULL;
	for (int i = 0; i < w->nprocs && !p; i++) {
		struct proc *q = &w->procs[(w->next_proc + i) % w->nprocs];
		q->reported = 0;
		if (q->nwords)
			p = q;
	}
	if (!p)
		return;
	w->next_proc = (int)(p - w->procs + 1) % w->nprocs;
	qsort(p->words, (size_t)p->nwords, sizeof(*p->words), by_samples);
	int hot = p->nwords < ROTATION ? p->nwords : ROTATION;
	w->nwords = hot < WATCH_WORDS_PER_WINDOW ? hot : WATCH_WORDS_PER_WINDOW;
	for (int k = 0; k < w->nwords; k++)
		w->words[k] = p->words[(p->cursor + k) % hot];
	p->cursor = (p->cursor + w->nwords) % hot;
	w->pid = p->pid;
	w->armed_ns = now_ns;
	w->nthreads = 0;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)p->pid);
	DIR *d = opendir(path);
	if (!d)
		return;   /* gone */
	for (struct dirent *e; (e = readdir(d)) && w->nthreads < MAX_THREADS;) {
		pid_t tid = (pid_t)atoi(e->d_name);
		if (tid > 0)
			thread_in_window(w, tid)->cpu_ns = thread_cpu_ns(p->pid, tid);
	}
	closedir(d);
	for (int c = 0; c < w->ncpus; c++)
		for (int k = 0; k < w->nwords; k++) {
			struct perf_event_attr a = w->attr;
			a.bp_addr = w->words[k].word;
			a.bp_len = w->words[k].len;
			if (w->fd[c][k] >= 0 && ioctl(w->fd[c][k], PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &a) == 0 &&
			    ioctl(w->fd[c][k], PERF_EVENT_IOC_ENABLE, 0) == 0)
				w->is_armed = 1;
		}
}

/* Disables the watchpoints, takes the writes still in the rings, and writes
 * each thread that ran in the window a record per word. */
static void disarm(struct watcher *w)
{
	for (int c = 0; c < w->ncpus; c++)
		for (int k = 0; k < WATCH_WORDS_PER_WINDOW; k++)
			if (w->fd[c][k] >= 0)
				ioctl(w->fd[c][k], PERF_EVENT_IOC_DISABLE, 0);
	w->drain(w->ctx);
	w->is_armed = 0;
	FILE *f = w->file(w->ctx, w->pid);
	for (int i = 0; f && i < w->nthreads; i++) {
		const struct watched_thread *t = &w->threads[i];
		uint64_t now = thread_cpu_ns(w->pid, t->tid);
		if (now <= t->cpu_ns)
			continue;   /* did not run armed (or is gone): it says nothing */
		for (int k = 0; k < w->nwords; k++)
			fprintf(f, "watch %llu %d %llx %llu %llu %u\n", (unsigned long long)w->armed_ns, (int)t->tid,
				(unsigned long long)w->words[k].word, (unsigned long long)t->writes[k],
				(unsigned long long)(now - t->cpu_ns), w->words[k].len);
	}
}

int watcher__tick(struct watcher *w, uint64_t now_ns)
{
	if (now_ns >= w->next_ns) {
		if (w->is_armed) {
			disarm(w);
			w->next_ns = now_ns + (uint64_t)(PERIOD_MS - WINDOW_MS) * 1000000;
		} else {
			/* Nothing to watch yet: look again soon, the samples are coming. */
			arm(w, now_ns);
			w->next_ns = now_ns + (uint64_t)(w->is_armed ? WINDOW_MS : 2 * WINDOW_MS) * 1000000;
		}
	}
	uint64_t left = w->next_ns > now_ns ? w->next_ns - now_ns : 0;
	return (int)((left + 999999) / 1000000);
}

void watcher__close(struct watcher *w)
{
	if (!w)
		return;
	if (w->is_armed)
		disarm(w);
	for (int c = 0; c < w->ncpus; c++)
		for (int k = 0; k < WATCH_WORDS_PER_WINDOW; k++)
			if (w->fd[c][k] >= 0)
				close(w->fd[c][k]);
	for (int i = 0; i < w->nprocs; i++) {
		if (w->procs[i].dwfl) {
			dwfl_getmodules(w->procs[i].dwfl, index_freed, NULL, 0);
			dwfl_end(w->procs[i].dwfl);
		}
		free(w->procs[i].ips);
	}
	decoder__close(w->dec);
	free(w->fd);
	free(w->id);
	free(w->code);
	free(w);
}
