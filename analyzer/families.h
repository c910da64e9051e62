/* families.h — the text tables of condition variables, semaphores,
 * barriers and futex words (families.c), each kind one table of columns. */
#ifndef CONVOY_FAMILIES_H
#define CONVOY_FAMILIES_H

#include <stdio.h>

struct model;
struct report_options;

/* Every family's table that has rows, in report order. */
void families__text(const struct model *m, const struct report_options *o, FILE *out);

#endif
