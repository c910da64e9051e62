/* model.h — a profile summed per object and per thread (model.c). */
#ifndef CONVOY_MODEL_H
#define CONVOY_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "convoy/profile.h"

struct profile;
struct profile_object;
struct syms;

/* How time blocked on an object counts in the speedup stack (stack.c). */
enum wait_class {
	WAIT_NONE,      /* no blocking time of its own */
	WAIT_LOCK,      /* waiting for another thread to release it */
	WAIT_PARK,      /* parked until another thread wakes it: condvars, ... */
	WAIT_BARRIER,   /* waiting for the other threads of a round */
};
enum wait_class wait_class_of(uint32_t kind);   /* enum cv_obj_kind */

struct object_row {
	const struct profile_object *obj;
	char name[256];
	char type[64];          /* mutexes: "normal", "recursive robust", ... */
	struct cv_stats total;
	size_t nthreads;        /* threads that used it */
	double typical_hold_ns; /* hold time averaged per acquisition over threads (0: no sample) */
};

struct model {
	const struct profile *p;
	struct object_row *rows;     /* rows[id] */
	struct object_row **locks;   /* mutexes, most wait first */
	size_t nlocks;
	struct object_row **conds;
	size_t nconds;
	/* Per thread index: time blocked, by wait class. */
	uint64_t *thread_lock_wait, *thread_cond_wait, *thread_barrier_wait;
	uint64_t total_lock_wait, total_thread_ns;
	double wall_ns;
};

void model__build(struct model *m, const struct profile *p, struct syms *syms);
void model__free(struct model *m);

const char *kind_name(uint32_t kind);
const char *exit_text(uint32_t reason);   /* enum cv_exit_reason */

#endif
