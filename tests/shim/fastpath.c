/* The fast paths' promise (issue 11): an uncontended acquisition writes
 * nothing another thread reads. Counted by hardware watchpoints on the
 * lines other threads read (tests/progs/fastpath_writes.c says which), not
 * timed, so the result does not depend on the machine's load. */
#include "testutil.h"

Test(fastpath, an_uncontended_acquisition_writes_only_its_threads_lines, .timeout = 300)
{
	struct tu_proc p;
	tu_run_shim(&p, tu_tmpdir(), "fastpath_writes", NULL);
	if (p.exited && p.code == 77)
		cr_skip_test("%s", p.out);
	cr_assert(p.exited && p.code == 0, "fastpath_writes (exit %d, signal %d):\n%s%s", p.code, p.sig, p.out,
		  p.err);
	cr_assert(strstr(p.out, "ok: ") == p.out, "%s", p.out);
}
