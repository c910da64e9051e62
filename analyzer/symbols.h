/* symbols.h — addresses recorded in a profile, named with elfutils (libdwfl)
 * from the module map the profile carries. */
#ifndef CONVOY_SYMBOLS_H
#define CONVOY_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

struct profile;
struct syms;

struct syms *syms__load(const struct profile *p);   /* never NULL; may know nothing */
void syms__free(struct syms *s);

/* The symbol containing addr ("queue_lock", "pool+8"), written to buf;
 * NULL when no symbol covers it (heap, stack, stripped). */
const char *syms__name(struct syms *s, uint64_t addr, char *buf, size_t size);

/* The file:line of addr, when DWARF has it; NULL otherwise. */
const char *syms__source(struct syms *s, uint64_t addr, char *buf, size_t size);

#endif
