/* callstacks.h — the call stacks of a profile: per object, symbolized, named.
 *
 * A profile's stack-wait records say how long each thread waited on each
 * object from each call stack (sampled estimates: docs/profile-format.md).
 * These functions sum them per object, turn a stack into display frames, find
 * its call site (the innermost frame of the program's own code), and name
 * objects that no symbol names after the code that made them. */
#ifndef CONVOY_CALLSTACKS_H
#define CONVOY_CALLSTACKS_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct profile;
struct profile_object;
struct syms;
struct sym_frame;

struct stack_sum {
	uint32_t stack;              /* 0: waits whose stack could not be captured */
	uint64_t samples, waits, wait_ns;
};

/* An object's waits by stack, every thread summed, most wait first. The
 * caller frees *out. */
size_t callstacks__object(const struct profile *p, uint32_t object, struct stack_sum **out);

/* A stack's frames for display, innermost first: inlined frames expanded,
 * the shim's frames and the runtime's outermost ones (start_thread, _start)
 * left out. The caller frees the array; the frames belong to s. */
size_t callstacks__frames(struct syms *s, uint32_t stack, const struct sym_frame ***out);

/* The innermost frame in the program's own code (not the shim, libc,
 * libstdc++ or a system header inlined into it); NULL if none. */
const struct sym_frame *callstacks__site(struct syms *s, uint32_t stack);

/* The name of an object from its address: the variable and member path
 * ("pool.queue_lock"), else "<kind>@<site>" from the stack that made it or,
 * without one, the stack it was waited on from most ("mutex@make_pool
 * (pool.c:42)"), else "<kind>@<module>+0x<offset>" inside a module. NULL if
 * none of these applies. */
const char *callstacks__object_name(struct syms *s, const struct profile_object *o, const char *kind,
				char *buf, size_t size);

/* Report helpers. Text: the object's top n stacks (n <= 0: none), each frame
 * on its own line under indent; verbose shows every frame. */
void callstacks__text(FILE *out, struct syms *s, uint32_t object, uint64_t object_wait_ns, int n, int verbose,
		  const char *indent);
/* JSON: adds "site", "first_use" and "stacks" (at most n; n < 0: all) to obj. */
void callstacks__json(json_object *obj, struct syms *s, uint32_t object, int n);

#endif
