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

/* A command that makes a PID namespace (unshare -p, a container runtime):
 * the profiles of the processes inside carry its pids, sh's parent is 0,
 * and no chain of parents leads there from the command's pid. Before,
 * convoy run analysed unshare, and --comm said the program wrote no
 * profile (helper-127). Skipped where a PID namespace cannot be made. */
Test(process, run_follows_the_command_into_a_pid_namespace, .timeout = 60)
{
	struct tu_proc probe;
	tu_run(&probe, &(struct tu_opts){ .timeout_s = 30 },
	       (const char *[]){ "/usr/bin/unshare", "-p", "-f", "/bin/true", NULL });
	if (!probe.exited || probe.code != 0)
		cr_skip_test("cannot make a PID namespace here (unshare -p -f true: exit %d, %s): it needs CAP_SYS_ADMIN",
			     probe.code, probe.err);
	char *prog = tu_prog("count_two_threads"), cmd[4096];
	snprintf(cmd, sizeof(cmd), "%s; exit 0", prog);
	for (int named = 0; named < 2; named++) {
		struct tu_proc p;
		struct tu_opts o = { .timeout_s = 60 };
		const char *plain[] = { tu_convoy(), "run", "-o", tu_tmpdir(), "--", "/usr/bin/unshare", "-p", "-f",
					"--mount-proc", "sh", "-c", cmd, NULL };
		const char *comm[] = { tu_convoy(), "run", "--comm", "count_two_threa", "-o", tu_tmpdir(), "--",
				       "/usr/bin/unshare", "-p", "-f", "--mount-proc", "sh", "-c", cmd, NULL };
		tu_run(&p, &o, named ? comm : plain);
		tu_assert_exit(&p, 0, named ? "convoy run --comm" : "convoy run");
		cr_assert(strstr(p.out, "convoy report: ") && strstr(p.out, "count_two_threads"),
			  "%s: the report is not the program's:\n%s\n%s", named ? "--comm" : "plain", p.out, p.err);
	}
}
