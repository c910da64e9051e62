/* cachelines.h — cache lines located without a PMU: each CPU sample's
 * instruction decoded (Capstone, x86-64), its data address computed from the
 * sampled registers, and the accesses aggregated by 64-byte line, 8-byte
 * word and thread (docs/findings.md, "Cache lines from CPU samples"). */
#ifndef CONVOY_CACHELINES_H
#define CONVOY_CACHELINES_H

#include <stddef.h>
#include <stdint.h>

struct model;
struct samples;

#define CACHE_LINE 64

enum line_verdict {
	LINE_PRIVATE,        /* one thread, or nobody writes it */
	LINE_FALSE_SHARING,  /* different words of it written by different threads */
	LINE_TRUE_SHARING,   /* one word written by one thread and used by others */
};

/* One thread's sampled accesses to one word (8 bytes) of a line. */
struct word_use {
	uint64_t word;               /* address, 8-byte aligned */
	int thread;                  /* index in the profile */
	uint64_t reads, writes;      /* samples */
};

struct cache_line {
	uint64_t addr;               /* 64-byte aligned */
	uint64_t samples;            /* sampled accesses to it */
	struct word_use *uses;       /* by word, then thread */
	size_t nuses;
	enum line_verdict verdict;
	int threads, writers;
	int sync_object;             /* a lock or other sync object of the profile lies on it */
};

struct cachelines {
	struct cache_line *v;        /* most samples first */
	size_t n;
	uint64_t decoded;            /* samples whose data address was computed */
	uint64_t undecoded;          /* user-code samples without one (no memory operand, no code, ...) */
	int available;               /* 0: no decoder for this machine */
};

/* From m's profile's on-CPU user samples; thread[i] is sample i's thread
 * index (-1: not the profile's). */
void cachelines__build(struct cachelines *out, const struct samples *smp, const int *thread, const struct model *m);
void cachelines__free(struct cachelines *c);

const char *cachelines__verdict_name(enum line_verdict v);
/* The variable and member path of a word ("stats[1].misses"), else its address. */
const char *cachelines__word_name(const struct model *m, uint64_t word, char *buf, size_t size);

#endif
