/* prim_test.h — helpers of the primitives tests (tests/primitives/), on top of
 * tests/common/testutil.h.
 *
 * The programs live in PRIM_DIR (built from tests/primitives/progs/); each
 * test runs its program natively and under the shim, asserts the same
 * output and exit status, and reads the shim run's report.
 */
#ifndef PRIM_TEST_H
#define PRIM_TEST_H

#include "testutil.h"

#ifndef PRIM_DIR
#error "compile with -DPRIM_DIR=\"/abs/build/tests/primitives\""
#endif

/* PRIM_DIR/name, a new string. */
char *prim_path(const char *name);

/* Runs argv[0] (a path) natively and under the shim (CONVOY_QUIET=1, a
 * fresh CONVOY_DIR), asserts identical stdout and exit status 0 and an empty
 * stderr under the shim, and returns the path of the shim run's only
 * profile. *out (when not NULL) gets the native stdout. */
char *prim_run_profile(const char *const argv[], char **out);
/* prim_run_profile, and the parsed `convoy report --json` of the profile. */
json_object *prim_run(const char *const argv[], char **out);
/* prim_run of PRIM_DIR/name with no arguments. */
json_object *prim_run_prog(const char *name, char **out);

/* The row of section[] (locks, condvars, semaphores, ...) with that name,
 * asserted to exist. */
json_object *prim_row(json_object *report, const char *section, const char *name);
/* The first row of section[] whose key has that string value; NULL if none. */
json_object *prim_row_where(json_object *report, const char *section, const char *key, const char *value);

/* An integer field, asserted to equal want, with the row's name in the message. */
#define PRIM_EQ(row, key, want) TU_EQ(tu_int((row), (key)), (want), "%s.%s", tu_str((row), "name"), (key))
#define PRIM_GT(row, key, floor)                                                                   \
	cr_assert(tu_int((row), (key)) > (floor), "%s.%s: got %lld, expected more than %lld",     \
		  tu_str((row), "name"), (key), (long long)tu_int((row), (key)), (long long)(floor))

#endif
