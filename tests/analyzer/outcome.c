/* outcome.c — `convoy run` and `convoy scale` explain a command whatever its
 * end: a non-zero exit, a signal, or a hang their --timeout stopped. */
#include <signal.h>
#include <string.h>

#include "testutil.h"

static void run_convoy(struct tu_proc *p, const char *const argv[])
{
	struct tu_opts o = { .timeout_s = 60 };
	tu_run(p, &o, argv);
}

Test(outcome, run_explains_a_command_that_exits_3, .timeout = 60)
{
	struct tu_proc p;
	run_convoy(&p, (const char *[]){ tu_convoy(), "run", "--json", "-o", tu_tmpdir(), "--", tu_prog("exit_status"),
					 "3", NULL });
	tu_assert_exit(&p, 3, "convoy run keeps the command's status");
	json_object *root = json_tokener_parse(p.out);
	cr_assert(root, "no JSON report: %s", p.out);
	json_object *proc = tu_get(root, "process");
	cr_assert_eq(tu_int(proc, "exit_status"), 3);
	cr_assert(!tu_bool(proc, "timed_out"));
	cr_assert(tu_lock(root, "exit_lock"), "the report has the program's lock");
}

Test(outcome, run_explains_a_hang_stopped_by_timeout, .timeout = 60)
{
	struct tu_proc p;
	run_convoy(&p, (const char *[]){ tu_convoy(), "run", "--timeout", "1", "-o", tu_tmpdir(), "--",
					 tu_prog("lock_ring"), NULL });
	cr_assert(p.exited && p.code == 128 + SIGTERM, "convoy run: exit %d signal %d\n%s", p.code, p.sig, p.err);
	cr_assert(strstr(p.out, "convoy report: "), "no report:\n%s\n%s", p.out, p.err);
	cr_assert(strstr(p.out, "ran past --timeout (1 s)"), "the report does not say it timed out:\n%s", p.out);
}

Test(outcome, scale_explains_runs_that_hang, .timeout = 120)
{
	struct tu_proc p;
	run_convoy(&p, (const char *[]){ tu_convoy(), "scale", "--json", "--timeout", "1", "--threads", "2", "-o",
					 tu_tmpdir(), "--", tu_prog("lock_ring"), "{threads}", NULL });
	tu_assert_exit(&p, 0, "convoy scale explains a hung run");
	json_object *root = json_tokener_parse(p.out);
	cr_assert(root, "no JSON: %s\n%s", p.out, p.err);
	json_object *run = json_object_array_get_idx(tu_array(root, "runs"), 0);
	cr_assert(tu_bool(run, "timed_out"));
	cr_assert_eq(tu_int(run, "signal"), SIGTERM);
}
