/* cpuprof.h — where on-CPU time went: a process's CPU samples (samples.h)
 * joined to its profile's threads by tid, aggregated by function and call
 * stack, and the time spent spinning inside a lock's implementation
 * attributed to that lock (docs/findings.md, "CPU samples"). */
#ifndef CONVOY_CPUPROF_H
#define CONVOY_CPUPROF_H

#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>

#include "cachelines.h"
#include "samples.h"

struct model;

struct cpu_function {
	char name[256];              /* "pthread_spin_lock", else "module+0xoff", else "0xaddr" */
	uint64_t samples;
	const char *lock_impl;       /* the lock implementation it belongs to, or NULL */
};

struct cpuprof {
	struct samples smp;
	uint64_t samples;            /* on-CPU samples (user and kernel) of the profile's threads */
	uint64_t untracked;          /* ... of tids the profile does not know */
	struct cpu_function *fns;    /* by the program's innermost function, most samples first */
	size_t nfns;
	uint64_t *object_spin;       /* by object id: samples spinning inside that lock's implementation */
	uint64_t lock_spin;          /* all samples inside lock implementations */
	uint64_t lock_spin_unknown;  /* ... whose lock could not be told */
	uint64_t *thread_samples;    /* by thread index */
	uint64_t *thread_spin;       /* by thread index: samples inside a lock implementation or a spin loop */
	struct cachelines lines;     /* the sampled data accesses by cache line */
};

/* The samples beside m's profile, aggregated against m (after model__build).
 * NULL when the run was not sampled or the file is unusable (said). */
struct cpuprof *cpuprof__load(const char *profile_path, const struct model *m);
void cpuprof__free(struct cpuprof *c);

/* The share of the sampled CPU time of the run spent spinning in object id. */
double cpuprof__spin_share(const struct cpuprof *c, uint32_t object);

/* The line with a sharing verdict that took the most samples (at least 1 %
 * of them), or NULL. */
const struct cache_line *cpuprof__top_shared_line(const struct cpuprof *c);
/* The line with a sharing verdict or spun on (LINE_SPIN) that took the most
 * samples (at least 1 % of them), or NULL. */
const struct cache_line *cpuprof__top_line(const struct cpuprof *c);

/* What the run's samples could not measure (about data addresses: no
 * instruction decoder, no PMU memory sampling, no watchpoints; call chains
 * through code without frame pointers: no user stacks), one phrase each;
 * how many. */
#define CPUPROF_UNAVAILABLE_SIZE 400
#define CPUPROF_UNAVAILABLE_MAX 4
int cpuprof__unavailable(const struct cpuprof *c, char what[CPUPROF_UNAVAILABLE_MAX][CPUPROF_UNAVAILABLE_SIZE]);

void cpuprof__text(const struct cpuprof *c, const struct model *m, FILE *out, int limit);
json_object *cpuprof__json(const struct cpuprof *c, const struct model *m, int limit);

#endif
