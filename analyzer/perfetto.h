/* perfetto.h — `convoy export --perfetto`: Chrome trace-event JSON. */
#ifndef CONVOY_PERFETTO_H
#define CONVOY_PERFETTO_H

#include <stdio.h>

struct analysis;

/* Writes the trace of a (diagnosed first if it is not); 0, or -1 after one
 * error line. */
int perfetto__write(struct analysis *a, FILE *out);

#endif
