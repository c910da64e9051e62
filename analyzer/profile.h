/* profile.h — a profile file, read and validated (format: convoy/profile.h). */
#ifndef CONVOY_ANALYZER_PROFILE_H
#define CONVOY_ANALYZER_PROFILE_H

#include <stddef.h>

#include "convoy/profile.h"

struct profile_module {
	struct cv_module m;
	const unsigned char *build_id;   /* m.build_id_len bytes, inside the file image */
	char *path;
};

struct profile_object {
	struct cv_object o;
	char *name;                      /* convoy_name_object(), or NULL */
};

struct profile_counter {
	struct cv_counter c;
	char *name;
};

struct profile_stack {
	struct cv_stack_rec s;
	uint64_t *pcs;                   /* s.depth return addresses, innermost first */
};

struct profile_thread_state {
	struct cv_thread_state s;
	struct cv_held_lock *held;       /* s.nheld */
};

struct profile_trace {
	struct cv_trace_rec t;
	struct cv_trace_event *events;   /* t.nevents, oldest first */
};

struct profile {
	char *path;
	struct cv_process process;
	char *cmdline;                   /* arguments joined by spaces */
	char *exe;
	struct profile_module *modules;
	size_t nmodules;
	struct profile_object *objects;  /* objects[i].o.id == i */
	size_t nobjects;
	struct cv_stats *stats;
	size_t nstats;
	struct cv_thread_rec *threads;   /* threads[i].index == i */
	size_t nthreads;
	struct profile_counter *counters;
	size_t ncounters;
	struct profile_stack *stacks;    /* stacks[i].s.id == i + 1 (id 0: no stack) */
	size_t nstacks;
	struct cv_stack_wait *stack_waits;   /* each names an object, a thread and 0 or a stack */
	size_t nstack_waits;
	struct cv_lock_order lock_order;     /* zero when the profile has no lock-order record */
	int has_lock_order;                  /* the shim recorded lock order (edges may be none) */
	struct cv_lock_edge *edges;          /* lock-order edges */
	size_t nedges;
	struct profile_thread_state *thread_states;   /* held locks and waits at the write */
	size_t nthread_states;
	struct profile_trace *traces;    /* trace mode: at most one per thread */
	size_t ntraces;
	/* Waits still in progress at the write (thread_states), added to stats as
	 * waits up to then: how many, and their time. */
	size_t inflight_waits;
	uint64_t inflight_wait_ns;
};

/* Reads and validates path. On failure returns NULL after printing one line
 * saying what is wrong with the file. */
struct profile *profile__load(const char *path);
/* The same for a profile already in memory (size bytes at data, which the
 * result does not keep); path only names it in the error line. */
struct profile *profile__parse(const unsigned char *data, size_t size, const char *path);
void profile__free(struct profile *p);

/* Whether path is a regular file that starts with a profile's magic (a
 * FIFO or device is not opened for reading). */
int profile__has_magic(const char *path);

#endif
