/* process.c — which process `convoy run` and `convoy scale` analyse when the
 * command starts several (a shell, then the program): the one that did the
 * most threaded work, named on stderr, or the one --comm names. */
#include <string.h>

#include "testutil.h"

static void run_convoy(struct tu_proc *p, const char *const argv[])
{
	struct tu_opts o = { .timeout_s = 60 };
	tu_run(p, &o, argv);
	tu_assert_exit(p, 0, argv[1]);
}

Test(process, run_analyses_the_program_a_shell_started, .timeout = 60)
{
	char *prog = tu_prog("count_two_threads"), cmd[4096];
	snprintf(cmd, sizeof(cmd), "%s; true", prog);
	struct tu_proc p;
	run_convoy(&p, (const char *[]){ tu_convoy(), "run", "-o", tu_tmpdir(), "--", "bash", "-c", cmd, NULL });
	cr_assert(strstr(p.out, "convoy report: ") && strstr(p.out, "count_two_threads"), "the report is not the program's:\n%s",
		  p.out);
	cr_assert(strstr(p.err, "convoy: analysing count_two_threa"), "stderr does not say which: %s", p.err);
}

Test(process, run_comm_picks_the_process_named, .timeout = 60)
{
	char *prog = tu_prog("count_two_threads"), cmd[4096];
	snprintf(cmd, sizeof(cmd), "%s; true", prog);
	struct tu_proc p;
	run_convoy(&p, (const char *[]){ tu_convoy(), "run", "--comm", "bash", "-o", tu_tmpdir(), "--", "bash", "-c",
					 cmd, NULL });
	cr_assert(strstr(p.out, "convoy report: bash -c"), "--comm bash did not report bash:\n%s", p.out);
	cr_assert(strstr(p.err, "as --comm asked"), "stderr: %s", p.err);
}

Test(process, scale_through_sh_c_analyses_the_program, .timeout = 120)
{
	char *prog = tu_prog("count_two_threads"), cmd[4096];
	snprintf(cmd, sizeof(cmd), "%s # {threads}", prog);
	struct tu_proc p;
	run_convoy(&p, (const char *[]){ tu_convoy(), "scale", "--json", "--threads", "1", "-o", tu_tmpdir(), "--", "sh",
					 "-c", cmd, NULL });
	json_object *root = json_tokener_parse(p.out);
	cr_assert(root, "no JSON: %s", p.out);
	json_object *run = json_object_array_get_idx(tu_array(root, "runs"), 0);
	cr_assert(strstr(tu_str(run, "profile"), "convoy-count_two_thr"), "analysed %s", tu_str(run, "profile"));
}
