/* forge.h — profiles written record by record (include/convoy/profile.h),
 * with a valid count and checksum, so that a test decides every value a
 * report reads: hostile ones (hostile.c), or ones no run of a program
 * makes on demand (two runs of one futex word in two classes: golden.c). */
#ifndef CONVOY_TESTS_FORGE_H
#define CONVOY_TESTS_FORGE_H

#include <stddef.h>
#include <stdint.h>

#include "convoy/profile.h"

struct forge {
	unsigned char *buf;
	size_t len, cap;
	uint64_t records;
};

/* Appends n bytes as they are. */
void forge_put(struct forge *f, const void *data, size_t n);
/* Appends one record: its header, the fixed part, then the tail. */
void forge_record(struct forge *f, uint32_t type, const void *fixed, size_t fixed_len, const void *tail,
		  size_t tail_len);
/* A process record named comm, from 1 s to 2 s. */
void forge_begin(struct forge *f, const char *comm);
struct cv_thread_rec forge_thread(uint32_t index, const char *name);
void forge_add_thread(struct forge *f, const struct cv_thread_rec *t);
/* The object o (its name_len set here) named name, and threads 0 and 1's
 * records of it: st, or a contended mutex's numbers (NULL). */
void forge_add_object(struct forge *f, struct cv_object o, const char *name, const struct cv_stats *st);
/* Object id of this kind at an address of its own (0x1000 + 64 * id),
 * generation 0, no flags: forge_add_lock's. */
struct cv_object forge_object(uint32_t id, uint32_t kind);
/* A mutex named name that threads 0 and 1 fought over. */
void forge_add_lock(struct forge *f, uint32_t id, const char *name, const struct cv_stats *st);
/* Writes the end record (count and checksum) and the file NAME.convoy in
 * the test's directory; returns its path. With FORGE_KEEP=DIR, a copy goes
 * to DIR/TEST-NAME.convoy (DIR/TEST.convoy from forge_write): how the
 * fuzzer's regression inputs (tests/fuzz/regressions) were made. */
char *forge_write_as(struct forge *f, const char *name);
/* forge_write_as(f, "forged"). */
char *forge_write(struct forge *f);
/* forge_begin, then threads 0 ("main") and 1 (thread_name). */
void forge_two_threads(struct forge *f, const char *comm, const char *thread_name);
/* A well-formed profile: two threads and one contended lock. */
void forge_ordinary(struct forge *f, const char *comm, const char *thread_name, const char *lock_name);

#endif
