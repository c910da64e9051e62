/* test_conformance — every interposed function behaves as glibc's.
 *
 * One test per function of CV_REAL_FUNCS (preload/shim.h), generated from
 * that table, and one per name exported beside it (C11, exec/exit/signal
 * variants): each runs `cases NAME` (cases.c) natively and under the shim
 * and requires identical output lines (return values, errno, side effects),
 * identical exit status, and nothing on stderr. A last test requires a case for every name preload/exports.map
 * exports, so an interposed function cannot be added without one.
 */
#include <string.h>

#include "shim.h"
#include "testutil.h"

static void same_outcome(const char *name)
{
	struct tu_proc native, shim;
	char *dir = tu_tmpdir();
	tu_run_native(&native, "conformance_cases", name, NULL);
	tu_run_shim(&shim, dir, "conformance_cases", name, NULL);
	cr_assert(native.exited && native.code == 0, "%s natively: %s %d; stderr:\n%s", name,
		  native.exited ? "exit" : "signal", native.exited ? native.code : native.sig, native.err);
	cr_assert(native.out_len > 0, "%s: the case printed nothing", name);
	cr_assert(shim.exited, "%s under the shim: killed by signal %d; stdout:\n%s", name, shim.sig, shim.out);
	cr_assert(shim.code == native.code, "%s: exit status under the shim %d, natively %d; stderr:\n%s", name,
		  shim.code, native.code, shim.err);
	cr_assert(strcmp(native.out, shim.out) == 0, "%s: outcomes differ.\n--- native\n%s--- under the shim\n%s",
		  name, native.out, shim.out);
	cr_assert(shim.err_len == 0, "%s: stderr under the shim:\n%s", name, shim.err);
}

#define CV_X(fn, ret, args) \
	Test(conformance, fn, .timeout = 60) { same_outcome(#fn); }
CV_REAL_FUNCS(CV_X)
#undef CV_X

#define EXTRA_X(fn) \
	Test(conformance, fn, .timeout = 60) { same_outcome(#fn); }
EXTRA_X(mtx_init) EXTRA_X(mtx_destroy) EXTRA_X(mtx_lock) EXTRA_X(mtx_trylock) EXTRA_X(mtx_timedlock)
EXTRA_X(mtx_unlock) EXTRA_X(cnd_init) EXTRA_X(cnd_destroy) EXTRA_X(cnd_wait) EXTRA_X(cnd_timedwait)
EXTRA_X(cnd_signal) EXTRA_X(cnd_broadcast)
EXTRA_X(execv) EXTRA_X(execvp) EXTRA_X(execl) EXTRA_X(execle) EXTRA_X(execlp) EXTRA_X(_Exit) EXTRA_X(signal)
EXTRA_X(bsd_signal) EXTRA_X(sysv_signal) EXTRA_X(__sysv_signal) EXTRA_X(ssignal) EXTRA_X(sigset) EXTRA_X(sigignore)
EXTRA_X(__sigaction)
EXTRA_X(GOMP_parallel) EXTRA_X(GOMP_barrier) EXTRA_X(GOMP_loop_end) EXTRA_X(GOMP_sections_end)
EXTRA_X(GOMP_critical_start) EXTRA_X(GOMP_critical_name_start) EXTRA_X(omp_set_lock) EXTRA_X(omp_set_nest_lock)
EXTRA_X(GOMP_parallel_loop_static) EXTRA_X(GOMP_parallel_loop_dynamic) EXTRA_X(GOMP_parallel_loop_nonmonotonic_dynamic)
EXTRA_X(GOMP_parallel_loop_guided) EXTRA_X(GOMP_parallel_loop_nonmonotonic_guided) EXTRA_X(GOMP_parallel_loop_runtime)
EXTRA_X(GOMP_parallel_loop_nonmonotonic_runtime) EXTRA_X(GOMP_parallel_loop_maybe_nonmonotonic_runtime)
EXTRA_X(GOMP_parallel_sections)
#undef EXTRA_X

/* The interposed names: exports.map's global names less the annotation API. */
Test(conformance, every_exported_function_has_a_case, .timeout = 30)
{
	struct tu_proc list;
	tu_run_native(&list, "conformance_cases", "--list", NULL);
	cr_assert(list.exited && list.code == 0, "cases --list failed: %s", list.err);
	size_t len;
	char *map = (char *)tu_read_file(SRC_DIR "/preload/exports.map", &len);
	cr_assert(map, "cannot read preload/exports.map");
	char *global = strstr(map, "global:"), *local = strstr(map, "local:");
	cr_assert(global && local && global < local, "exports.map: no global:/local: sections");
	*local = '\0';
	int n = 0;
	for (char *tok = strtok(global + 7, " \t\n;"); tok; tok = strtok(NULL, " \t\n;")) {
		if (strncmp(tok, "convoy_", 7) == 0)
			continue;
		n++;
		char line[128];
		snprintf(line, sizeof(line), "%s", tok);
		cr_expect(tu_has_line(list.out, line), "%s is exported (interposed) but has no conformance case", tok);
	}
	cr_expect(n >= 60, "only %d interposed names found in exports.map", n);
}
