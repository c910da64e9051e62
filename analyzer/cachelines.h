/* cachelines.h — cache lines located from samples: each CPU sample's
 * instruction decoded (Capstone, x86-64), its data address computed from the
 * sampled registers, with the PMU's memory samples where the CPU has them,
 * aggregated by 64-byte line, accessed bytes and thread, and checked against
 * the writes the launcher's hardware watchpoints counted (docs/findings.md,
 * "Cache lines from CPU samples"). */
#ifndef CONVOY_CACHELINES_H
#define CONVOY_CACHELINES_H

#include <stddef.h>
#include <stdint.h>

struct model;
struct samples;

/* ---- the instruction decoder (also the launcher's, watch.c) --------------- */

/* How to compute the data address a sampled instruction used. */
struct data_operand {
	uint64_t ip;                 /* the sampled IP it was decoded for */
	int ok;                      /* decoded: the fields below are set */
	int base, index;             /* enum sample_reg, or -1 */
	int scale;
	int64_t disp;
	uint64_t rip;                /* the value RIP-relative addressing adds (the next instruction) */
	unsigned size;               /* bytes accessed (the operand's size); 0: not known */
	int write;
	int spin_loop;               /* the IP is inside a loop spinning on this word (compare-and-swap,
				      * test-and-set, polling) */
};

struct insn_decoder;
/* NULL when there is no decoder for this machine or Capstone cannot be opened. */
struct insn_decoder *decoder__open(void);
/* Why decoder__open gave none, in words: "no instruction decoder (why)". */
const char *decoder__why_not(void);
void decoder__close(struct insn_decoder *d);
/* Decodes the access of a sample at o->ip, inside the function whose code is
 * the len bytes at code, which run at start. Returns o->ok. */
int decoder__operand(struct insn_decoder *d, const unsigned char *code, uint64_t start, size_t len,
		     struct data_operand *o);
/* The address it used, from the sample's registers (enum sample_reg order). */
uint64_t data_operand__address(const struct data_operand *o, const uint64_t *regs);

/* ---- lines ------------------------------------------------------------------ */

#define CACHE_LINE 64

enum line_verdict {
	LINE_PRIVATE,        /* one thread, or nobody writes it */
	LINE_FALSE_SHARING,  /* different bytes of it written by different threads */
	LINE_TRUE_SHARING,   /* bytes written by one thread and used by others */
	LINE_SPIN,           /* most of its samples spin on a word of it (compare-and-swap, test-and-set, polling):
			      * a lock-like word's line, whatever else is written on it */
};

/* One thread's sampled accesses to one word of a line: the bytes its
 * accesses covered (a 1-byte flag, a 4-byte int, an 8-byte counter), as
 * the instructions accessed them. */
struct word_use {
	uint64_t word;               /* the first byte accessed */
	unsigned size;               /* bytes from it */
	int thread;                  /* index in the profile */
	uint64_t reads, writes;      /* samples (decoded or the PMU's) */
	uint64_t spins;              /* samples in a loop spinning on it */
	int watched;                 /* a hardware watchpoint counted this thread's writes to it */
	uint64_t watched_writes;     /* ... that many */
	uint64_t watched_ns;         /* ... in this much of the thread's CPU time */
};

struct cache_line {
	uint64_t addr;               /* 64-byte aligned */
	uint64_t samples;            /* CPU samples whose decoded access is on it */
	uint64_t spins;              /* ... of them in loops spinning on a word of it */
	uint64_t pmu_samples;        /* the PMU's memory samples on it */
	struct word_use *uses;       /* by word, then thread */
	size_t nuses;
	enum line_verdict verdict;   /* with the watchpoints' evidence */
	enum line_verdict sampled_verdict;   /* from the samples alone */
	enum line_verdict watched_verdict;   /* from the watchpoints' writes alone (and the samples' reads) */
	int watched;                 /* a word of it was watched */
	uint64_t watched_writes;
	int threads, writers;
	int sync_object;             /* a lock or other sync object of the profile lies on it */
};

struct cachelines {
	struct cache_line *v;        /* most samples first */
	size_t n;
	uint64_t decoded;            /* samples whose data address was computed */
	uint64_t undecoded;          /* user-code samples without one (no memory operand, no code, ...) */
	uint64_t spin_loop;          /* decoded samples inside a spin loop */
	uint64_t pmu;                /* the PMU's memory samples of the profile's threads */
	int available;               /* 0: no decoder for this machine */
	unsigned char *spinning;     /* by record of the samples file (smp->v): a CPU sample inside a spin loop */
};

/* The profile thread index of each record of a samples file (-1: not the
 * profile's): cpu[i] of smp->v[i], mem[i] of smp->mem[i], watch[i] of
 * smp->watch[i]. */
struct sample_threads {
	const int *cpu, *mem, *watch;
};

/* From m's profile's on-CPU user samples, memory samples and watchpoint
 * counts. */
void cachelines__build(struct cachelines *out, const struct samples *smp, const struct sample_threads *th,
		       const struct model *m);
void cachelines__free(struct cachelines *c);

const char *cachelines__verdict_name(enum line_verdict v);
/* What the watchpoints made of the samples' verdict: "sampled" (no word of
 * the line watched), "confirmed" (their counts alone show the verdict),
 * "watched" (counted, but too few threads yet to show it), "revised" (they
 * make it the other sharing verdict) or "withdrawn" (no sharing). */
const char *cachelines__evidence_name(const struct cache_line *l);
/* Whether two uses' bytes overlap (the same data, or part of it). */
int cachelines__overlap(const struct word_use *a, const struct word_use *b);
/* The variable and member path of the word at this address
 * ("stats[1].misses"), else its address. */
const char *cachelines__word_name(const struct model *m, uint64_t word, char *buf, size_t size);

#endif
