/* prim_test.c — see prim_test.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prim_test.h"

char *prim_path(const char *name)
{
	char *s = NULL;
	cr_assert(asprintf(&s, "%s/%s", PRIM_DIR, name) >= 0, "out of memory");
	return s;
}

char *prim_run_profile(const char *const argv[], char **out)
{
	struct tu_proc native, shim;
	char *dir = tu_tmpdir();
	tu_run(&native, NULL, argv);
	struct tu_opts o = { .preload = true, .dir = dir, .quiet = true };
	tu_run(&shim, &o, argv);
	tu_assert_exit(&native, 0, argv[0]);
	tu_assert_exit(&shim, 0, argv[0]);
	cr_assert(strcmp(native.out, shim.out) == 0,
		  "%s: stdout differs.\n--- native\n%s--- under the shim\n%s", argv[0], native.out, shim.out);
	cr_assert(shim.err_len == 0, "%s: stderr under the shim with CONVOY_QUIET=1:\n%s", argv[0], shim.err);
	if (out)
		*out = native.out;
	return tu_only_profile(dir);
}

json_object *prim_run(const char *const argv[], char **out)
{
	return tu_report(prim_run_profile(argv, out));
}

json_object *prim_run_prog(const char *name, char **out)
{
	const char *argv[] = { prim_path(name), NULL };
	return prim_run(argv, out);
}

json_object *prim_row(json_object *report, const char *section, const char *name)
{
	json_object *row = tu_find(tu_array(report, section), "name", name);
	cr_assert(row, "%s[] has no \"%s\": %s", section, name,
		  json_object_to_json_string_ext(tu_array(report, section), JSON_C_TO_STRING_PLAIN));
	return row;
}

json_object *prim_row_where(json_object *report, const char *section, const char *key, const char *value)
{
	return tu_find(tu_array(report, section), key, value);
}
