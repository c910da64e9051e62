/* perfetto.h — `convoy export --perfetto`: Chrome trace-event JSON. */
#ifndef CONVOY_PERFETTO_H
#define CONVOY_PERFETTO_H

#include <stdio.h>

struct profile;

/* Writes the trace; 0, or -1 after one error line. */
int perfetto__write(const struct profile *p, FILE *out);

#endif
