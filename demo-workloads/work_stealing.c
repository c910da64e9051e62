/* work_stealing — seed 000, scene 02: the same workload, one queue per worker.
 *
 * The tasks are dealt out to the workers' deques up front (task i to worker
 * i mod N, as in the seed), then each worker takes work from its own end and
 * touches another worker's deque only when its own is dry. The deques are
 * workpool's: --deque locked is the seed's shape (a mutex around each deque;
 * a thief takes half of a random victim's deque), --deque chase-lev is the
 * lock-free Chase-Lev deque (a thief takes from the top with one CAS).
 * The last column counts steal operations.
 */
#include "demo_common.h"
#include "seed000.h"

static const char *const deque_names[] = { "chase-lev", "locked", NULL };
static const wp_policy deque_policy[] = { WP_POLICY_CHASE_LEV, WP_POLICY_LOCKED };

int main(int argc, char **argv)
{
	uint64_t workers = 1, tasks = 2000000, weight = 20;
	int deque = 0;
	bool check = false;
	struct dc_list sweep = { 5, { 1, 2, 4, 8, 16 } };
	struct dc_opt opts[] = {
		DC_OPT_WORKERS(&workers, 1024),
		DC_OPT_UINT("tasks", &tasks, "total tasks per run", 1, 1ull << 32),
		DC_OPT_UINT("weight", &weight, "iterations of arithmetic inside one task", 0, 1ull << 32),
		DC_OPT_CHOICE("deque", &deque, "workpool's per-worker deque", deque_names),
		DC_OPT_LIST("sweep", &sweep, "worker counts of the sweep", 1, 1024),
		DC_OPT_FLAG("check", &check, "also compute the serial sum and compare"),
		DC_OPT_END,
	};
	struct dc_prog prog = {
		.name = "work_stealing",
		.summary = "One deque per worker; a worker steals only when its own deque is dry.",
		.seed = "seed 000, scene 02 (the local queues + stealing table)",
		.details = "Same tasks, same worker counts as global_queue; the only change is who\n"
			   "has to agree with whom before each task.",
		.examples = "  work_stealing                          # the seed's table, workers 1..16\n"
			    "  work_stealing --workers 2              # one run, one result line\n"
			    "  work_stealing --deque locked           # the seed's mutex deques\n"
			    "  convoy scale --threads 1,2,4 -- build/demos/work_stealing --workers {threads}\n",
		.opts = opts,
	};
	dc_parse(&prog, argc, argv);
	wp_policy policy = deque_policy[deque];

	if (dc_given(&prog, "workers")) {
		struct s0_run r = s0_pool_run(policy, (unsigned)workers, tasks, weight);
		char d[32];
		s0_verify(prog.name, &r, check ? s0_serial_checksum(tasks, weight) : r.checksum);
		printf("local queues + stealing: deque=%s workers=%llu tasks=%llu weight=%llu time=%s "
		       "tasks/s=%.2fM steals=%llu stolen-tasks=%llu checksum=%016llx%s\n",
		       deque_names[deque], (unsigned long long)workers, (unsigned long long)tasks,
		       (unsigned long long)weight, dc_fmt_duration(d, sizeof d, r.elapsed_ns),
		       s0_throughput(&r) / 1e6, (unsigned long long)r.contended,
		       (unsigned long long)r.stolen, (unsigned long long)r.checksum,
		       check ? " check=ok" : "");
		return 0;
	}

	printf("local queues + stealing: %llu tasks of weight %llu each\n",
	       (unsigned long long)tasks, (unsigned long long)weight);
	printf("(deque: %s)\n\n", deque_names[deque]);
	printf("workers      time   tasks/s   speedup   steals\n");
	double baseline = 0;
	uint64_t expect = check ? s0_serial_checksum(tasks, weight) : 0;
	for (size_t i = 0; i < sweep.n; i++) {
		struct s0_run r = s0_pool_run(policy, (unsigned)sweep.v[i], tasks, weight);
		char d[32];
		if (i == 0 && !check)
			expect = r.checksum;
		s0_verify(prog.name, &r, expect);
		if (i == 0)
			baseline = s0_throughput(&r);
		printf("%7llu   ", (unsigned long long)sweep.v[i]);
		dc_print_right(stdout, dc_fmt_duration(d, sizeof d, r.elapsed_ns), 7);
		printf("   %7.2fM   %6.2fx   %6llu\n", s0_throughput(&r) / 1e6,
		       s0_throughput(&r) / baseline, (unsigned long long)r.contended);
		fflush(stdout);
	}
	printf("\nevery run's checksum: %016llx (%s)\n", (unsigned long long)expect,
	       check ? "equal to the serial sum" : "equal across runs");
	return 0;
}
