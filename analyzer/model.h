/* model.h — a profile summed per object and per thread (model.c). */
#ifndef CONVOY_MODEL_H
#define CONVOY_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "convoy/profile.h"

struct profile;
struct profile_object;
struct syms;

struct object_row {
	const struct profile_object *obj;
	char name[256];
	char type[64];          /* mutexes: "normal", "recursive robust", ... */
	struct cv_stats total;
	size_t nthreads;        /* threads that used it */
};

struct model {
	const struct profile *p;
	struct object_row *rows;     /* rows[id] */
	struct object_row **locks;   /* mutexes, most wait first */
	size_t nlocks;
	struct object_row **conds;
	size_t nconds;
	uint64_t *thread_lock_wait, *thread_cond_wait;   /* per thread index */
	uint64_t total_lock_wait, total_thread_ns;
	double wall_ns;
};

void model__build(struct model *m, const struct profile *p, struct syms *syms);
void model__free(struct model *m);

const char *kind_name(uint32_t kind);
const char *exit_text(uint32_t reason);   /* enum cv_exit_reason */

#endif
