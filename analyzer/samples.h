/* samples.h — a process's samples file (sampler.c; docs/samples-format.md),
 * read back and joined to its profile by pid and time. */
#ifndef CONVOY_SAMPLES_H
#define CONVOY_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#define SAMPLES_VERSION 4            /* written; versions 1 (no mem, watch records), 2 (8-byte
				      * watchpoints) and 3 (frame-pointer chains only) are read too */
#define SAMPLES_NREGS 20             /* x86-64: sampler.c's SAMPLE_REGS_NAMES */

enum sample_kind {
	SAMPLE_CPU,      /* on a CPU, in user code */
	SAMPLE_SYS,      /* on a CPU, in the kernel on the thread's behalf; ip: where it entered */
	SAMPLE_SWITCH,   /* leaving its CPU (sampled); ip: where it entered the kernel */
};

/* Register indexes in struct sample's regs (perf's x86-64 order, the
 * segment registers but CS and SS left out). */
enum sample_reg {
	REG_AX, REG_BX, REG_CX, REG_DX, REG_SI, REG_DI, REG_BP, REG_SP, REG_IP, REG_FLAGS,
	REG_CS, REG_SS, REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
};

struct sample {
	uint64_t time_ns;            /* CLOCK_MONOTONIC, the profile's clock */
	int32_t tid;
	uint32_t cpu;
	enum sample_kind kind;
	uint64_t ip;
	uint32_t chain, nchain;      /* return addresses, innermost first: samples.pcs[chain..] */
	int cfi;                     /* the chain was unwound from call-frame information, not frame pointers */
	int has_regs;
	uint64_t regs[SAMPLES_NREGS];
};

/* A switch record: a thread left its CPU (blocked or preempted) or got one. */
enum switch_kind { SWITCH_IN, SWITCH_OUT, SWITCH_PREEMPTED };
struct switch_rec {
	uint64_t time_ns;
	int32_t tid;
	uint32_t cpu;
	enum switch_kind kind;
};

/* A PMU memory-access sample (Intel PEBS mem-loads/mem-stores, AMD IBS op):
 * the data address itself, no decoding needed. */
struct mem_sample {
	uint64_t time_ns;
	int32_t tid;
	uint32_t cpu;
	uint64_t ip, addr;
	uint64_t data_src;           /* perf's union perf_mem_data_src, as the kernel gave it */
	int write;                   /* a store sample, else a load */
};

/* A hardware watchpoint's window on one thread: the writes it counted to
 * the len bytes at addr while armed (running_ns of the thread's CPU time). */
struct watch_rec {
	uint64_t time_ns;            /* when the window opened */
	int32_t tid;
	uint64_t addr;
	unsigned len;                /* 1, 2, 4 or 8 (version 2: always 8) */
	uint64_t writes;
	uint64_t running_ns;
};

struct samples {
	int32_t pid;
	uint64_t period_ns;          /* of each thread's CPU time between samples */
	int user_only;               /* kernel time was not sampled (perf_event_paranoid) */
	int switch_samples;          /* context-switch samples were taken */
	uint64_t lost;               /* records the kernel dropped (all processes of the run) */
	struct sample *v;
	size_t n;
	struct switch_rec *sw;       /* as the kernel wrote them per CPU (not sorted) */
	size_t nsw;
	uint64_t records_off_ns;     /* switch records stopped here, the rest of the run unrecorded (0: never) */
	uint64_t *pcs;
	size_t npcs;
	char mem_source[64];         /* the PMU event that sampled data addresses; "" when none */
	char mem_unavailable[256];   /* why not (version 1: "not recorded") */
	struct mem_sample *mem;
	size_t nmem;
	int watch_on;                /* watchpoints were armed */
	char watch_unavailable[256]; /* why not */
	struct watch_rec *watch;
	size_t nwatch;
	unsigned stack_bytes;        /* of user stack copied per sample to unwind (0: none) */
	char stack_unavailable[256]; /* why none ("": on, or a version 3 file, which predates them) */
	int has_unwound;             /* the unwound line: */
	uint64_t unwound_cfi;        /* chains unwound from call-frame information (all processes of the run) */
	uint64_t unwound_kept;       /* ... where the kernel's chain was kept (the unwind failed or was shorter) */
	uint64_t unwound_stackless;  /* ... samples with no stack to unwind */
	uint64_t drain_cpu_ns;       /* the launcher's CPU time draining (and unwinding) the samples; 0: unknown */
};

/* Reads path, keeping what pid did from from_ns to to_ns. Returns 0; 1
 * when there is no such file (not sampled); -1 after one error line. */
int samples__load(struct samples *s, const char *path, int32_t pid, uint64_t from_ns, uint64_t to_ns);
/* The samples file beside a profile of pid: DIR/convoy-PID.samples. */
void samples__path(char *buf, size_t size, const char *profile_path, int32_t pid);
void samples__free(struct samples *s);

#endif
