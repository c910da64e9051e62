/* offcpu.h — where threads went off-CPU outside the waits the shim timed:
 * the launcher's sampled context switches (samples.h, SAMPLE_SWITCH, each
 * with the user call chain where the thread entered the kernel) that no
 * interposed wait encloses, by kind and call site, and, where the launcher
 * also recorded every switch (samples.h, switch_rec), how long each sampled
 * one kept the thread off its CPU (docs/findings.md, "Serial phases and
 * off-CPU time outside waits"). */
#ifndef CONVOY_OFFCPU_H
#define CONVOY_OFFCPU_H

#include <stddef.h>
#include <stdint.h>

struct model;

/* X-macro: kind, its JSON key, its words in sentences. */
#define OFFCPU_KINDS(X)                                                                              \
	X(OFFCPU_IO,      "io",      "blocking I/O")                                                  \
	X(OFFCPU_POLL,    "poll",    "waiting for I/O readiness (poll, select, epoll)")              \
	X(OFFCPU_SLEEP,   "sleep",   "sleep")                                                         \
	X(OFFCPU_RUNTIME, "runtime", "a runtime's own wait (a futex call the shim cannot interpose)") \
	X(OFFCPU_CHILD,   "child",   "waiting for child processes (wait, waitpid)")                   \
	X(OFFCPU_OTHER,   "other",   "other (page faults, other system calls; preemptions no record told apart)")

enum offcpu_kind {
#define CV_X(sym, key, words) sym,
	OFFCPU_KINDS(CV_X)
#undef CV_X
	OFFCPU_KIND_N
};
extern const char *const offcpu_kind_names[OFFCPU_KIND_N];
extern const char *const offcpu_kind_words[OFFCPU_KIND_N];

#define OFFCPU_MAX_SITES 3

struct offcpu_site {
	enum offcpu_kind kind;
	char function[160];   /* where it entered the kernel: "read", "nanosleep", or the program's own frame that
	                       * issued the call inline: "park_on_futex (inline_futex.c:37)" */
	char site[256];       /* the program's frame that called it: "load (io.c:42)"; "?": not unwound */
	uint64_t samples;
	uint64_t ns;          /* off-CPU time after its timed samples */
};

/* Counts are of sampled switches; times (ns) are what followed the samples
 * that switch records timed: from the switch-out to the thread's next
 * switch-in. Switches are sampled by count, so the times of the sampled
 * ones, added up, are a sample of the off-CPU time: their shares by kind
 * estimate the shares of all of it (offcpu__thread_times). */
struct offcpu {
	uint64_t samples;                      /* sampled switches of the thread outside timed waits */
	uint64_t in_waits;                     /* ... inside them (not counted above) */
	uint64_t preempted;                    /* ... preempted, still runnable (runnable time, not counted above) */
	uint64_t by_kind[OFFCPU_KIND_N];
	uint64_t timed;                        /* samples counted above that switch records timed */
	uint64_t ns, ns_by_kind[OFFCPU_KIND_N];
	struct offcpu_site sites[OFFCPU_MAX_SITES];   /* most time first (most samples when none was timed) */
	size_t nsites;
};

/* The sampled switches of thread tid (every thread: tid 0) in m's CPU
 * samples. Returns 0, or -1 when the run has no switch samples. */
int offcpu__sites(const struct model *m, int32_t tid, struct offcpu *out);

/* Every thread's timed sampled switches outside timed waits, in one pass:
 * ns[i][kind] for the profile's thread i (ns has one row per thread).
 * Their shares by kind estimate the shares of all the thread's off-CPU
 * time outside waits. Returns 0, or -1 (all zero) without switch samples. */
int offcpu__thread_times(const struct model *m, double (*ns)[OFFCPU_KIND_N]);

/* What thread tid did in the time spans [spans[2k], spans[2k+1]) (a
 * serial phase): its CPU samples (each period_ns of CPU) and its sampled
 * switches that records timed (each the time off its CPU that followed),
 * and the program's call path with most of that time, its two deepest
 * frames outside the C library: "read_block (io.c:12) in read_all
 * (io.c:41)" (when no sample's chain reached the program, the innermost
 * function with most, saying so). */
struct phase_site {
	uint64_t samples;
	double cpu_ns, offcpu_ns;               /* sampled estimates */
	double offcpu_by_kind[OFFCPU_KIND_N];
	char site[512];                         /* "" when no sample was named */
	double site_ns;
	int site_program;                       /* site is the program's code (else no sample reached it) */
};
/* Returns 0, or -1 when no sample of tid fell in the spans. */
int offcpu__phase_site(const struct model *m, int32_t tid, const double *spans, size_t nspans,
		       struct phase_site *out);

#endif
