/* offcpu.c — sampled context switches outside timed waits, by kind and call
 * site (offcpu.h).
 *
 * A switch sample's chain starts where the thread entered the kernel. When
 * any of its frames is inside libconvoy.so, an interposed wait (a mutex, a
 * condvar, a barrier, OpenMP's) was around it, and the shim timed that wait
 * already: it is left out. The rest is classified by the innermost named
 * function (the system call's wrapper), and its site is the first frame
 * that is neither the C library nor another runtime: the program's call.
 */
#include <string.h>

#include "cpuprof.h"
#include "model.h"
#include "offcpu.h"
#include "samples.h"
#include "symbols.h"

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

int offcpu__sites(const struct model *m, int32_t tid, struct offcpu *out)
{
	memset(out, 0, sizeof(*out));
	const struct cpuprof *c = m->cpu;
	if (!c || !c->smp.switch_samples)
		return -1;
	const struct samples *s = &c->smp;
	struct offcpu_site all[64];
	size_t nall = 0;
	for (size_t i = 0; i < s->n; i++) {
		const struct sample *x = &s->v[i];
		if (x->kind != SAMPLE_SWITCH || (tid && x->tid != tid))
			continue;
		/* The frames, innermost first: ip, then the return addresses. */
		int shim = 0, in_libc = 0;
		const char *function = NULL;
		char site[256] = "";
		for (uint32_t k = 0; k <= x->nchain && !shim; k++) {
			uint64_t pc = k ? s->pcs[x->chain + k - 1] : x->ip;
			const struct sym_frame *f;
			size_t nf = syms__frames(m->syms, pc, SYMS_ANY_GEN, k > 0, &f);
			for (size_t j = 0; j < nf; j++) {
				shim |= f[j].shim;
				if (!function && f[j].function) {
					function = f[j].function;
					in_libc = f[j].runtime;
				}
				/* A frame in no module is not code (a chain unwound
				 * without frame pointers runs into data). */
				if (!site[0] && !f[j].runtime && !f[j].shim && f[j].module)
					syms__frame_label(&f[j], site, sizeof(site));
			}
		}
		if (shim) {
			out->in_waits++;
			continue;
		}
		enum offcpu_kind kind = kind_of(function, in_libc);
		if (!site[0])
			snprintf(site, sizeof(site), "?");   /* the chain did not reach the program */
		out->samples++;
		out->by_kind[kind]++;
		size_t j = 0;
		while (j < nall && !(all[j].kind == kind && !strcmp(all[j].site, site) &&
				     !strcmp(all[j].function, function ? function : "?")))
			j++;
		if (j == nall) {
			if (nall == sizeof(all) / sizeof(all[0]))
				continue;   /* the rarest sites beyond 64 are only counted by kind */
			all[j] = (struct offcpu_site){ .kind = kind };
			snprintf(all[j].function, sizeof(all[j].function), "%s", function ? function : "?");
			snprintf(all[j].site, sizeof(all[j].site), "%s", site);
			nall++;
		}
		all[j].samples++;
	}
	for (size_t k = 0; k < OFFCPU_MAX_SITES; k++) {   /* the most sampled sites */
		size_t best = nall;
		for (size_t j = 0; j < nall; j++)
			if (all[j].samples && (best == nall || all[j].samples > all[best].samples))
				best = j;
		if (best == nall)
			break;
		out->sites[out->nsites++] = all[best];
		all[best].samples = 0;
	}
	return 0;
}
