/* primitives.h — rwlocks, spinlocks, semaphores, barriers, futexes and the
 * cost of parking and waking, rendered in the report (primitives.c). The
 * model sums them (model.h). */
#ifndef CONVOY_PRIMITIVES_H
#define CONVOY_PRIMITIVES_H

#include <json-c/json.h>
#include <stdio.h>

#include "model.h"
#include "report.h"

/* Text: the line(s) under a rwlock, spinlock or futex row of the locks table. */
void prims__text_lock_detail(const struct object_row *r, FILE *out);
/* Text: the park/wake section (the families' own tables: families.c). */
void prims__text_park(const struct model *m, const struct report_options *o, FILE *out);

/* JSON: the "park_wake" section, the whole process's. */
json_object *prims__json_park_wake(const struct model *m);
/* JSON: a thread's park/wake numbers and its waits by kind. */
void prims__json_thread(json_object *o, const struct model *m, size_t thread);

#endif
