/* offcpu.c — sampled context switches outside timed waits, by kind and call
 * site (offcpu.h).
 *
 * A switch sample's chain starts where the thread entered the kernel; the
 * launcher unwound it from call-frame information where it could, so it
 * passes through code without frame pointers (the C library's). When
 * any of its frames is inside libconvoy.so, an interposed wait (a mutex, a
 * condvar, a barrier, OpenMP's) was around it, and the shim timed that wait
 * already: it is left out. The rest is classified by the innermost named
 * function (the system call's wrapper), and its site is the first frame
 * that is neither the C library nor another runtime: the program's call.
 *
 * Timing, where the launcher recorded every switch: a sampled switch-out
 * and the switch record of the same switch are written one after the other
 * by the kernel, so the thread's first record at or after the sample's time
 * is its switch-out (or, "preempted", its preemption: runnable time, which
 * the stack counts from the run queue, left out here), and its next
 * switch-in ends the time off its CPU.
 */
#include <stdlib.h>
#include <string.h>

#include "cpuprof.h"
#include "model.h"
#include "offcpu.h"
#include "profile.h"
#include "samples.h"
#include "symbols.h"
#include "util.h"

const char *const offcpu_kind_names[OFFCPU_KIND_N] = {
#define CV_X(sym, key, words) [sym] = key,
	OFFCPU_KINDS(CV_X)
#undef CV_X
};

const char *const offcpu_kind_words[OFFCPU_KIND_N] = {
#define CV_X(sym, key, words) [sym] = words,
	OFFCPU_KINDS(CV_X)
#undef CV_X
};

/* The wrappers of the blocking system calls, by kind: a function whose name
 * is one of these, or one of these with glibc's __libc_/__GI_ prefixes. */
static const struct { const char *name; enum offcpu_kind kind; } calls[] = {
	{ "read", OFFCPU_IO }, { "write", OFFCPU_IO }, { "pread64", OFFCPU_IO }, { "pwrite64", OFFCPU_IO },
	{ "readv", OFFCPU_IO }, { "writev", OFFCPU_IO }, { "preadv", OFFCPU_IO }, { "pwritev", OFFCPU_IO },
	{ "recv", OFFCPU_IO }, { "recvfrom", OFFCPU_IO }, { "recvmsg", OFFCPU_IO }, { "send", OFFCPU_IO },
	{ "sendto", OFFCPU_IO }, { "sendmsg", OFFCPU_IO }, { "fsync", OFFCPU_IO }, { "fdatasync", OFFCPU_IO },
	{ "open", OFFCPU_IO }, { "open64", OFFCPU_IO }, { "openat", OFFCPU_IO }, { "openat64", OFFCPU_IO },
	{ "close", OFFCPU_IO }, { "accept", OFFCPU_IO }, { "accept4", OFFCPU_IO }, { "connect", OFFCPU_IO },
	{ "copy_file_range", OFFCPU_IO }, { "sendfile", OFFCPU_IO }, { "sendfile64", OFFCPU_IO },
	{ "poll", OFFCPU_POLL }, { "ppoll", OFFCPU_POLL }, { "select", OFFCPU_POLL }, { "pselect", OFFCPU_POLL },
	{ "epoll_wait", OFFCPU_POLL }, { "epoll_pwait", OFFCPU_POLL }, { "epoll_pwait2", OFFCPU_POLL },
	{ "nanosleep", OFFCPU_SLEEP }, { "clock_nanosleep", OFFCPU_SLEEP }, { "usleep", OFFCPU_SLEEP },
	{ "sleep", OFFCPU_SLEEP }, { "pause", OFFCPU_SLEEP }, { "sigsuspend", OFFCPU_SLEEP },
	{ "sigtimedwait", OFFCPU_SLEEP },
	{ "wait", OFFCPU_CHILD }, { "wait3", OFFCPU_CHILD }, { "wait4", OFFCPU_CHILD }, { "waitpid", OFFCPU_CHILD },
	{ "waitid", OFFCPU_CHILD },
};

/* in_libc: the function is the C library's (or another system runtime's,
 * symbols.h): a futex wait there is glibc's own, inside a pthread call
 * whose interposer frame the unwinder lost, not a runtime's inline one. */
static enum offcpu_kind kind_of(const char *function, int in_libc)
{
	if (!function)
		return OFFCPU_OTHER;
	const char *name = function;
	static const char *const prefixes[] = { "__GI___libc_", "__libc_", "__GI___", "__GI_", "__" };
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i]))) {
			name += strlen(prefixes[i]);
			break;
		}
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (!strcmp(name, calls[i].name))
			return calls[i].kind;
	/* Futex waits issued inline by a runtime: libgomp's barriers and
	 * locks, Go's and others' futex helpers. */
	if (!in_libc && (strstr(function, "futex") || !strncmp(function, "gomp_", 5) || !strncmp(function, "runtime.", 8)))
		return OFFCPU_RUNTIME;
	return OFFCPU_OTHER;
}

static int by_tid_time(const void *a, const void *b)
{
	const struct switch_rec *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->time_ns < y->time_ns ? -1 : x->time_ns > y->time_ns;
}

/* The switch records of tid (every thread: 0), by thread and time. */
static struct switch_rec *records_of(const struct samples *s, int32_t tid, size_t *n)
{
	struct switch_rec *v = malloc((s->nsw ? s->nsw : 1) * sizeof(*v));
	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < s->nsw; i++)
		if (!tid || s->sw[i].tid == tid)
			v[(*n)++] = s->sw[i];
	qsort(v, *n, sizeof(*v), by_tid_time);
	return v;
}

/* The function a frame-pointer chain skipped: the kernel's unwinder starts
 * from the frame pointer, so when the function at ip set up no frame (the
 * C library keeps none; a leaf system-call wrapper of the program's own),
 * the chain's first return address is its caller's caller's, and its
 * caller is lost. The call instruction before that return address says
 * whom it called: a direct call (e8 rel32) to a named function other than
 * the one at ip is the lost frame, returned in out (its function only:
 * where in it the call was is not known, so no line); 0 when nothing was
 * skipped or it cannot be told (an indirect call, no symbol with a size, a
 * call through the PLT). */
static size_t skipped_caller(const struct model *m, const struct sym_frame *at_ip, size_t nip, uint64_t ret,
			     struct sym_frame *out)
{
	uint64_t start;
	size_t len;
	const unsigned char *code = syms__function_code(m->syms, ret - 1, SYMS_ANY_GEN, &start, &len);
	if (!code || ret < start + 5 || ret > start + len || code[ret - 5 - start] != 0xe8)
		return 0;
	int32_t rel;
	memcpy(&rel, code + (ret - 4 - start), sizeof(rel));
	uint64_t target = ret + (uint64_t)(int64_t)rel, entry;
	if (!syms__function_code(m->syms, target, SYMS_ANY_GEN, &entry, &len) || entry != target)
		return 0;   /* not a function's entry (a PLT stub has no symbol of its own) */
	const struct sym_frame *f;
	size_t n = syms__frames(m->syms, target, SYMS_ANY_GEN, 0, &f);
	const char *callee = n ? f[n - 1].function : NULL, *here = nip ? at_ip[nip - 1].function : NULL;
	if (!callee || f[n - 1].runtime || f[n - 1].shim || (here && !strcmp(callee, here)))
		return 0;
	*out = f[n - 1];   /* the function itself, not what its entry inlines */
	out->line = 0;
	out->inlined = 0;
	return 1;
}

/* A sample's frames, innermost first (ip, then the return addresses): was
 * it inside the shim (an interposed call, below the program's frames), the
 * innermost named function and whether it is the
 * C library's, and the program's frame nearest to it (site, "" when the
 * chain did not reach the program). */
static void walk(const struct model *m, const struct sample *x, int *shim, const char **function, int *in_libc,
		 char *site, size_t size, char *caller, size_t caller_size)
{
	const struct samples *s = &m->cpu->smp;
	*shim = *in_libc = 0;
	*function = NULL;
	site[0] = '\0';
	if (caller)
		caller[0] = '\0';
	const struct sym_frame *at_ip = NULL;
	size_t nip = 0;
	for (uint32_t k = 0; k <= x->nchain && !*shim; k++) {
		uint64_t pc = k ? s->pcs[x->chain + k - 1] : x->ip;
		const struct sym_frame *f;
		size_t nf = syms__frames(m->syms, pc, SYMS_ANY_GEN, k > 0, &f);
		if (k == 0) {
			at_ip = f;
			nip = nf;
		}
		struct sym_frame lost;   /* a chain unwound from call-frame information skips none */
		size_t nlost = k == 1 && !x->cfi ? skipped_caller(m, at_ip, nip, pc, &lost) : 0;
		for (size_t j = 0; j < nlost + nf; j++) {
			const struct sym_frame *fr = j < nlost ? &lost : &f[j - nlost];
			/* Only inside the program's frames: the shim also starts
			 * every thread (the outermost frames of its chains). */
			*shim |= fr->shim && !site[0];
			if (!*function && fr->function) {
				*function = fr->function;
				*in_libc = fr->runtime;
			}
			/* A frame in no module is not code (a chain unwound
			 * without frame pointers runs into data). */
			if (fr->runtime || fr->shim || !fr->module)
				continue;
			if (!site[0])
				syms__frame_label(fr, site, size);
			else if (caller && !caller[0] && fr->function)
				syms__frame_label(fr, caller, caller_size);
		}
	}
}

/* Whether a sampled switch (walk's results) was inside a wait the shim
 * timed: a shim frame on its chain, or a futex wait of the C library's own
 * whose chain stops there (glibc keeps no frame pointers), almost always the
 * inside of an interposed pthread wait (a join, a condvar) whose shim frame
 * the unwinder lost; counting it as off-CPU outside waits would count that
 * wait's time twice. One with its caller unwound and no shim frame is a
 * lock of the library's own (stdio, malloc): outside. The futex waits by
 * the names glibc's symbol table gives them (symbols.c names its frames
 * without DWARF, which named the inlined futex_wait inside each). */
static int in_timed_wait(int shim, const char *function, int in_libc, const char *site)
{
	static const char *const futex_waits[] = { "futex", "lll_lock_wait", "pthread_barrier_wait", "pthread_rwlock" };
	if (shim)
		return 1;
	for (size_t i = 0; in_libc && !site[0] && function && i < sizeof(futex_waits) / sizeof(futex_waits[0]); i++)
		if (strstr(function, futex_waits[i]))
			return 1;
	return 0;
}

enum timing { UNTIMED, TIMED, PREEMPTED };

/* How long the switch sampled at x kept its thread off its CPU, from the
 * records r (by_tid_time); UNTIMED when they do not cover it (records
 * stopped or lost, or the thread never ran again). */
static enum timing time_switch(const struct samples *s, const struct switch_rec *r, size_t n,
			       const struct sample *x, uint64_t *ns)
{
	if (!n || (s->records_off_ns && x->time_ns >= s->records_off_ns))
		return UNTIMED;
	size_t lo = 0, hi = n;
	while (lo < hi) {   /* the thread's first record at or after the sample */
		size_t mid = (lo + hi) / 2;
		if (r[mid].tid < x->tid || (r[mid].tid == x->tid && r[mid].time_ns < x->time_ns))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo + 1 >= n || r[lo].tid != x->tid || r[lo].kind == SWITCH_IN)
		return UNTIMED;
	if (r[lo].kind == SWITCH_PREEMPTED)
		return PREEMPTED;
	if (r[lo + 1].tid != x->tid || r[lo + 1].kind != SWITCH_IN)
		return UNTIMED;
	*ns = r[lo + 1].time_ns - x->time_ns;
	return TIMED;
}

/* What one sampled switch was (classify). */
struct switch_class {
	enum timing timing;
	uint64_t ns;                 /* TIMED: off its CPU for this long */
	int in_wait;                 /* inside a wait the shim timed */
	enum offcpu_kind kind;
	const char *function;        /* where it entered the kernel; NULL: unnamed */
	char site[256];              /* the program's frame that called it; "?": not unwound */
	char own[256];               /* function's storage when it is the program's own frame */
};

static void classify(const struct model *m, const struct switch_rec *rec, size_t nrec, const struct sample *x,
		     struct switch_class *c)
{
	const struct samples *s = &m->cpu->smp;
	c->ns = 0;
	c->timing = time_switch(s, rec, nrec, x, &c->ns);
	c->in_wait = 0;
	if (c->timing == PREEMPTED)
		return;
	int shim, in_libc;
	char caller[256];
	walk(m, x, &shim, &c->function, &in_libc, c->site, sizeof(c->site), caller, sizeof(caller));
	c->in_wait = in_timed_wait(shim, c->function, in_libc, c->site);
	c->kind = kind_of(c->function, in_libc);
	if (!in_libc && c->function && caller[0]) {
		/* The call entered the kernel from the program's own code (an
		 * inline system call): that frame is the function, its caller
		 * the site. */
		snprintf(c->own, sizeof(c->own), "%s", c->site);
		c->function = c->own;
		snprintf(c->site, sizeof(c->site), "%s", caller);
	}
	if (!c->site[0])
		snprintf(c->site, sizeof(c->site), "?");   /* the chain did not reach the program */
}

/* The profile's thread that tid was at time t (a tid may be reused), or
 * -1. by_tid: thread indexes sorted by tid. */
static long thread_at(const struct profile *p, const size_t *by_tid, int32_t tid, uint64_t t)
{
	size_t lo = 0, hi = p->nthreads;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (p->threads[by_tid[mid]].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	long any = -1;
	for (; lo < p->nthreads && p->threads[by_tid[lo]].tid == tid; lo++) {
		const struct cv_thread_rec *th = &p->threads[by_tid[lo]];
		any = (long)by_tid[lo];
		if (t >= th->start_ns && (!th->end_ns || t <= th->end_ns))
			break;
	}
	return any;
}

static int by_thread_tid(const void *a, const void *b, void *profile)
{
	const struct profile *p = profile;
	int32_t x = p->threads[*(const size_t *)a].tid, y = p->threads[*(const size_t *)b].tid;
	return x < y ? -1 : x > y;
}

int offcpu__thread_times(const struct model *m, double (*ns)[OFFCPU_KIND_N])
{
	const struct profile *p = m->p;
	memset(ns, 0, p->nthreads * sizeof(*ns));
	if (!m->cpu || !m->cpu->smp.switch_samples)
		return -1;
	const struct samples *s = &m->cpu->smp;
	size_t *by_tid = xcalloc(p->nthreads + 1, sizeof(size_t)), nrec;
	for (size_t i = 0; i < p->nthreads; i++)
		by_tid[i] = i;
	qsort_r(by_tid, p->nthreads, sizeof(*by_tid), by_thread_tid, (void *)p);
	struct switch_rec *rec = records_of(s, 0, &nrec);
	struct switch_class c;
	for (size_t i = 0; i < s->n; i++) {
		const struct sample *x = &s->v[i];
		if (x->kind != SAMPLE_SWITCH)
			continue;
		long t = thread_at(p, by_tid, x->tid, x->time_ns);
		if (t < 0)
			continue;
		classify(m, rec, nrec, x, &c);
		if (c.timing == TIMED && !c.in_wait)
			ns[t][c.kind] += (double)c.ns;
	}
	free(rec);
	free(by_tid);
	return 0;
}

int offcpu__sites(const struct model *m, int32_t tid, struct offcpu *out)
{
	memset(out, 0, sizeof(*out));
	const struct cpuprof *cp = m->cpu;
	if (!cp || !cp->smp.switch_samples)
		return -1;
	const struct samples *s = &cp->smp;
	size_t nrec;
	struct switch_rec *rec = records_of(s, tid, &nrec);
	struct offcpu_site all[64];
	size_t nall = 0;
	struct switch_class c;
	for (size_t i = 0; i < s->n; i++) {
		const struct sample *x = &s->v[i];
		if (x->kind != SAMPLE_SWITCH || (tid && x->tid != tid))
			continue;
		classify(m, rec, nrec, x, &c);
		if (c.timing == PREEMPTED) {
			out->preempted++;
			continue;
		}
		if (c.in_wait) {
			out->in_waits++;
			continue;
		}
		const char *function = c.function ? c.function : "?";
		out->samples++;
		out->by_kind[c.kind]++;
		if (c.timing == TIMED) {
			out->timed++;
			out->ns += c.ns;
			out->ns_by_kind[c.kind] += c.ns;
		}
		size_t j = 0;
		while (j < nall && !(all[j].kind == c.kind && !strcmp(all[j].site, c.site) &&
				     !strcmp(all[j].function, function)))
			j++;
		if (j == nall) {
			if (nall == sizeof(all) / sizeof(all[0]))
				continue;   /* the rarest sites beyond 64 are only counted by kind */
			all[j] = (struct offcpu_site){ .kind = c.kind };
			snprintf(all[j].function, sizeof(all[j].function), "%s", function);
			snprintf(all[j].site, sizeof(all[j].site), "%s", c.site);
			nall++;
		}
		all[j].samples++;
		all[j].ns += c.ns;
	}
	free(rec);
	for (size_t k = 0; k < OFFCPU_MAX_SITES; k++) {   /* the sites with most time (or samples) */
		size_t best = nall;
		for (size_t j = 0; j < nall; j++)
			if (all[j].samples && (best == nall || all[j].ns > all[best].ns ||
					       (all[j].ns == all[best].ns && all[j].samples > all[best].samples)))
				best = j;
		if (best == nall)
			break;
		out->sites[out->nsites++] = all[best];
		all[best].samples = 0;
	}
	return 0;
}

/* A site's function-level key: its label without the " (file:line)" of
 * each frame, so the samples of one function at many lines add up. */
static void site_key(const char *label, char *key, size_t size)
{
	size_t n = 0;
	for (const char *p = label; *p && n + 1 < size;) {
		const char *close = p[0] == ' ' && p[1] == '(' ? strchr(p, ')') : NULL;
		const char *colon = close ? memrchr(p, ':', (size_t)(close - p)) : NULL;
		if (colon && colon + 1 < close && strspn(colon + 1, "0123456789") == (size_t)(close - colon - 1)) {
			p = close + 1;   /* " (file.c:42)" */
			continue;
		}
		key[n++] = *p++;
	}
	key[n] = '\0';
}

int offcpu__phase_site(const struct model *m, int32_t tid, const double *spans, size_t nspans,
		       struct phase_site *out)
{
	memset(out, 0, sizeof(*out));
	const struct cpuprof *c = m->cpu;
	if (!c || !m->syms)
		return -1;
	const struct samples *s = &c->smp;
	size_t nrec;
	struct switch_rec *rec = records_of(s, tid, &nrec);
	/* By function (site_key), each shown with the line seen first. */
	struct { char key[512], site[512]; double ns; int program; } all[32];
	size_t nall = 0;
	for (size_t i = 0; i < s->n; i++) {
		const struct sample *x = &s->v[i];
		size_t k = 0;
		if (x->tid != tid)
			continue;
		while (k < nspans && !(x->time_ns >= spans[2 * k] && x->time_ns < spans[2 * k + 1]))
			k++;
		if (k == nspans)
			continue;
		uint64_t ns = s->period_ns;   /* a CPU sample: one period of CPU */
		int shim, in_libc;
		const char *function;
		char site[512], caller[256];
		walk(m, x, &shim, &function, &in_libc, site, sizeof(site), caller, sizeof(caller));
		if (x->kind == SAMPLE_SWITCH) {
			if (time_switch(s, rec, nrec, x, &ns) != TIMED || in_timed_wait(shim, function, in_libc, site))
				continue;   /* preempted, untimed, or a wait the shim timed */
			if ((double)ns > spans[2 * k + 1] - (double)x->time_ns)   /* what fell in the span */
				ns = (uint64_t)(spans[2 * k + 1] - (double)x->time_ns);
			out->offcpu_ns += ns;
			out->offcpu_by_kind[kind_of(function, in_libc)] += ns;
		} else {
			out->cpu_ns += ns;
		}
		out->samples++;
		if (!site[0] && !function)
			continue;
		int program = site[0] != '\0';
		if (!program)   /* no frame of the program's own on the chain: its innermost function */
			snprintf(site, sizeof(site), "%s (no frame of the program's own unwound)", function);
		else if (caller[0])   /* the call path: a helper's frame says little alone */
			snprintf(site + strlen(site), sizeof(site) - strlen(site), " in %s", caller);
		char key[512];
		site_key(site, key, sizeof(key));
		size_t j = 0;
		while (j < nall && strcmp(all[j].key, key))
			j++;
		if (j == nall) {
			if (nall == sizeof(all) / sizeof(all[0]))
				continue;
			snprintf(all[nall].key, sizeof(all[nall].key), "%s", key);
			snprintf(all[nall].site, sizeof(all[nall].site), "%s", site);
			all[nall].ns = 0;
			all[nall++].program = program;
		}
		all[j].ns += (double)ns;
	}
	free(rec);
	/* The program's own code first: a chain that stopped in the C library
	 * (no frame pointers there) says what, not where. */
	size_t best = nall;
	for (size_t j = 0; j < nall; j++)
		if (best == nall || all[j].program > all[best].program ||
		    (all[j].program == all[best].program && all[j].ns > all[best].ns))
			best = j;
	if (best == nall)
		return out->samples ? 0 : -1;
	snprintf(out->site, sizeof(out->site), "%s", all[best].site);
	out->site_ns = all[best].ns;
	out->site_program = all[best].program;
	return 0;
}
