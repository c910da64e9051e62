/* scheduler_compare — seed 000, scene 03: both schedulers, three worker
 * counts, three task sizes. Contention is the ratio between how long a task
 * runs and how long the queue is held: heavy tasks hide a global mutex, light
 * ones expose it.
 */
#include "demo_common.h"
#include "seed000.h"

static const char *const deque_names[] = { "chase-lev", "locked", NULL };
static const wp_policy deque_policy[] = { WP_POLICY_CHASE_LEV, WP_POLICY_LOCKED };

int main(int argc, char **argv)
{
	uint64_t workers = 1, tasks = 2000000, weight = 20;
	int deque = 0, impl = GQ_IMPL_WORKPOOL;
	struct dc_list weights = { 3, { 4, 20, 400 } };
	struct dc_list sweep = { 3, { 1, 4, 16 } };
	struct dc_opt opts[] = {
		DC_OPT_WORKERS(&workers, 1024),
		DC_OPT_UINT("tasks", &tasks, "total tasks per run", 1, 1ull << 32),
		DC_OPT_UINT("weight", &weight, "task weight of a single run (--workers)", 0, 1ull << 32),
		DC_OPT_LIST("weights", &weights, "task weights of the sweep", 0, 1ull << 32),
		DC_OPT_LIST("sweep", &sweep, "worker counts of the sweep", 1, 1024),
		DC_OPT_CHOICE("deque", &deque, "work stealing's deque", deque_names),
		DC_OPT_CHOICE("impl", &impl, "the global queue's implementation", gq_impl_names),
		DC_OPT_END,
	};
	struct dc_prog prog = {
		.name = "scheduler_compare",
		.summary = "Global queue vs local queues + stealing across task weights and worker counts.",
		.seed = "seed 000, scene 03 (weight x workers table)",
		.examples = "  scheduler_compare                        # weights 4, 20, 400 x workers 1, 4, 16\n"
			    "  scheduler_compare --workers 4 --weight 4 # one cell, one line\n",
		.opts = opts,
	};
	dc_parse(&prog, argc, argv);
	wp_policy policy = deque_policy[deque];

	if (dc_given(&prog, "workers")) {
		struct s0_run g = gq_run((enum gq_impl)impl, (unsigned)workers, tasks, weight);
		struct s0_run s = s0_pool_run(policy, (unsigned)workers, tasks, weight);
		s0_verify(prog.name, &g, g.checksum);
		s0_verify(prog.name, &s, g.checksum);
		printf("scheduler compare: workers=%llu tasks=%llu weight=%llu global-q=%.2fM/s "
		       "local+steal=%.2fM/s ratio=%.2fx\n",
		       (unsigned long long)workers, (unsigned long long)tasks,
		       (unsigned long long)weight, s0_throughput(&g) / 1e6, s0_throughput(&s) / 1e6,
		       s0_throughput(&s) / s0_throughput(&g));
		return 0;
	}

	printf("tasks per run: %llu\n", (unsigned long long)tasks);
	printf("(global queue: %s; stealing deque: %s)\n\n", gq_impl_names[impl], deque_names[deque]);
	printf("weight   workers   global q   local+steal   ratio\n");
	for (size_t wi = 0; wi < weights.n; wi++) {
		uint64_t expect = 0;
		for (size_t i = 0; i < sweep.n; i++) {
			struct s0_run g = gq_run((enum gq_impl)impl, (unsigned)sweep.v[i], tasks,
						 weights.v[wi]);
			struct s0_run s = s0_pool_run(policy, (unsigned)sweep.v[i], tasks, weights.v[wi]);
			if (i == 0)
				expect = g.checksum;
			s0_verify(prog.name, &g, expect);
			s0_verify(prog.name, &s, expect);
			printf("%6llu   %7llu   %7.2fM   %10.2fM   %5.2fx\n",
			       (unsigned long long)weights.v[wi], (unsigned long long)sweep.v[i],
			       s0_throughput(&g) / 1e6, s0_throughput(&s) / 1e6,
			       s0_throughput(&s) / s0_throughput(&g));
			fflush(stdout);
		}
		putchar('\n');
	}
	printf("every run verified: all tasks executed, checksums equal per weight\n");
	return 0;
}
