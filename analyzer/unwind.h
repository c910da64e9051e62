/* unwind.h — user call chains from DWARF call-frame information, in the
 * launcher (sampler.c), the way `perf record --call-graph dwarf` unwinds:
 * each sample carries the thread's user registers and a copy of the top of
 * its user stack; libdwfl unwinds them with the .eh_frame (or .debug_frame)
 * of the modules the process has mapped (/proc/PID/maps). The kernel's own
 * chain follows frame pointers, which code built without them (Debian's C
 * library and most of its binaries) does not keep: its chain stops at the
 * first such frame, or runs into data. */
#ifndef CONVOY_UNWIND_H
#define CONVOY_UNWIND_H

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct unwinder;

/* libdwfl's callbacks for the modules of a process while it runs, from
 * /proc/PID/maps, with no search for separate debug files: what the
 * launcher may afford while it competes with the program (unwind.c). */
extern const Dwfl_Callbacks unwind_live_callbacks;

/* One sample to unwind. */
struct unwind_sample {
	pid_t pid, tid;
	const uint64_t *regs;         /* the user registers, samples.h's order (enum sample_reg) */
	const unsigned char *stack;   /* the user stack from regs[REG_SP] up, as the kernel copied it */
	size_t stack_len;
};

/* What the unwinder did over a run (the samples file's `unwound` line). */
struct unwind_stats {
	uint64_t cfi;                 /* chains unwound from call-frame information */
	uint64_t kept;                /* the kernel's chain kept: the CFI unwind failed or found fewer frames */
};

/* NULL, with the reason in why, when libdwfl cannot unwind here. */
struct unwinder *unwinder__new(char *why, size_t size);

/* chain[0..*n) is the kernel's frame-pointer chain of sample x (return
 * addresses, innermost first, the IP left out). Replaces it with the chain
 * unwound from call-frame information (at most cap entries; where the
 * kernel's chain passes through its last frame, continued with the
 * kernel's frames beyond) when that one has at least as many frames in the
 * process's code: a frame-pointer chain through code without frame
 * pointers runs into data, which no module's code holds. Returns 1 when it
 * replaced the chain, else 0. */
int unwinder__chain(struct unwinder *u, const struct unwind_sample *x, uint64_t *chain, size_t *n, size_t cap);

/* Process pid exec'd: its modules are another program's. */
void unwinder__forget(struct unwinder *u, pid_t pid);

void unwinder__stats(const struct unwinder *u, struct unwind_stats *out);
void unwinder__free(struct unwinder *u);

#endif
