/* global_queue — seed 000, scene 01: the scheduler everyone writes first.
 *
 * One FIFO of task seeds behind one mutex, N workers. Every worker, before
 * every task, tries the lock; a failed try_lock is counted (that count IS the
 * contention the seed is about) and the worker then blocks in the ordinary
 * lock, pops one seed and runs the short arithmetic task outside the lock.
 *
 * Two implementations of the same shape, chosen with --impl:
 *   workpool  workpool's WP_POLICY_GLOBAL (the default): one FIFO behind one
 *             mutex, trylock first and a failure counted, then lock.
 *   port      the seed's appendix ported directly, below: the queue is filled
 *             before the clock starts, thread creation and join are inside it,
 *             each worker keeps a local wrapping sum and adds it to a shared
 *             sink at the end, and a worker exits when the queue is empty.
 */
#include "demo_common.h"
#include "seed000.h"

#include <convoy.h>
#include <stdatomic.h>
#include <stdlib.h>

/* Rust's Mutex<VecDeque<u64>>: the lock word and the deque header share a
 * line, exactly as in the seed. */
struct gq_queue {
	pthread_mutex_t lock;
	uint64_t *items;
	uint64_t head, tail;
};

struct gq_shared {
	struct gq_queue queue;
	uint64_t weight;
	_Alignas(DC_CACHE_LINE) _Atomic uint64_t contended;
	_Alignas(DC_CACHE_LINE) _Atomic uint64_t sink;
	_Atomic uint64_t executed;
};

static bool gq_pop(struct gq_queue *q, uint64_t *seed)
{
	if (q->head == q->tail)
		return false;
	*seed = q->items[q->head++];
	return true;
}

static void *gq_worker(void *arg)
{
	struct gq_shared *s = arg;
	uint64_t local_sum = 0, executed = 0, seed;
	for (;;) {
		bool got;
		/* try_lock failing IS the contention this demo is about. */
		if (pthread_mutex_trylock(&s->queue.lock) != 0) {
			atomic_fetch_add_explicit(&s->contended, 1, memory_order_relaxed);
			pthread_mutex_lock(&s->queue.lock);
		}
		got = gq_pop(&s->queue, &seed);
		pthread_mutex_unlock(&s->queue.lock);
		if (!got)
			break;
		local_sum += dc_task(s->weight, seed);
		executed++;
	}
	atomic_fetch_add_explicit(&s->sink, local_sum, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->executed, executed, memory_order_relaxed);
	return NULL;
}

const char *const gq_impl_names[] = { "workpool", "port", NULL };

static struct s0_run gq_port_run(unsigned workers, uint64_t tasks, uint64_t weight)
{
	struct gq_shared *s = aligned_alloc(DC_CACHE_LINE, sizeof *s);
	pthread_t *threads = calloc(workers, sizeof *threads);
	if (!s || !threads)
		dc_die("global_queue", "out of memory");
	*s = (struct gq_shared){ .weight = weight };
	pthread_mutex_init(&s->queue.lock, NULL);
	CONVOY_NAME(&s->queue.lock, "queue");
	s->queue.items = dc_alloc_large("global_queue", tasks * sizeof *s->queue.items);
	for (uint64_t i = 0; i < tasks; i++)
		s->queue.items[i] = i;
	s->queue.tail = tasks;

	uint64_t start = dc_now_ns();
	for (unsigned w = 0; w < workers; w++)
		dc_spawn("global_queue", &threads[w], gq_worker, s);
	for (unsigned w = 0; w < workers; w++)
		dc_join("global_queue", threads[w]);
	struct s0_run r = {
		.elapsed_ns = dc_now_ns() - start,
		.tasks = tasks,
		.executed = atomic_load(&s->executed),
		.contended = atomic_load(&s->contended),
		.checksum = atomic_load(&s->sink),
	};
	pthread_mutex_destroy(&s->queue.lock);
	free(s->queue.items);
	free(s);
	free(threads);
	return r;
}

struct s0_run gq_run(enum gq_impl impl, unsigned workers, uint64_t tasks, uint64_t weight)
{
	if (impl == GQ_IMPL_PORT)
		return gq_port_run(workers, tasks, weight);
	return s0_pool_run(WP_POLICY_GLOBAL, workers, tasks, weight);
}

#ifndef DEMO_NO_MAIN
int main(int argc, char **argv)
{
	uint64_t workers = 1, tasks = 2000000, weight = 20;
	bool check = false;
	int impl = GQ_IMPL_WORKPOOL;
	struct dc_list sweep = { 5, { 1, 2, 4, 8, 16 } };
	struct dc_opt opts[] = {
		DC_OPT_WORKERS(&workers, 1024),
		DC_OPT_UINT("tasks", &tasks, "total tasks per run", 1, 1ull << 32),
		DC_OPT_UINT("weight", &weight, "iterations of arithmetic inside one task", 0, 1ull << 32),
		DC_OPT_CHOICE("impl", &impl, "workpool's global FIFO, or the seed's code ported directly",
			      gq_impl_names),
		DC_OPT_LIST("sweep", &sweep, "worker counts of the sweep", 1, 1024),
		DC_OPT_FLAG("check", &check, "also compute the serial sum after the run and compare"),
		DC_OPT_END,
	};
	struct dc_prog prog = {
		.name = "global_queue",
		.summary = "One mutex-protected FIFO shared by every worker; counts failed try_locks.",
		.seed = "seed 000, scene 01 (the global queue table)",
		.details = "Every worker takes the queue lock before every task. The lock is held\n"
			   "for one pop, but with short tasks it is entered every few tens of ns,\n"
			   "so adding the second worker makes the same work slower.",
		.examples = "  global_queue                        # the seed's table, workers 1..16\n"
			    "  global_queue --workers 2            # one run, one result line\n"
			    "  global_queue --weight 400           # heavy tasks hide the mutex\n"
			    "  global_queue --impl port            # the seed's appendix, ported directly\n"
			    "  convoy scale --threads 1,2,4 -- build/demos/global_queue --workers {threads}\n",
		.opts = opts,
	};
	dc_parse(&prog, argc, argv);

	if (dc_given(&prog, "workers")) {
		struct s0_run r = gq_run((enum gq_impl)impl, (unsigned)workers, tasks, weight);
		char d[32];
		s0_verify(prog.name, &r, check ? s0_serial_checksum(tasks, weight) : r.checksum);
		printf("global queue: impl=%s workers=%llu tasks=%llu weight=%llu time=%s tasks/s=%.2fM "
		       "lock-waits=%llu checksum=%016llx",
		       gq_impl_names[impl], (unsigned long long)workers, (unsigned long long)tasks,
		       (unsigned long long)weight, dc_fmt_duration(d, sizeof d, r.elapsed_ns),
		       s0_throughput(&r) / 1e6, (unsigned long long)r.contended,
		       (unsigned long long)r.checksum);
		printf("%s\n", check ? " check=ok" : "");
		return 0;
	}

	printf("global queue: %llu tasks of weight %llu each\n", (unsigned long long)tasks,
	       (unsigned long long)weight);
	if (impl != GQ_IMPL_WORKPOOL)
		printf("(implementation: %s)\n", gq_impl_names[impl]);
	putchar('\n');
	printf("workers      time   tasks/s   speedup   lock waits\n");
	double baseline = 0;
	uint64_t expect = check ? s0_serial_checksum(tasks, weight) : 0;
	for (size_t i = 0; i < sweep.n; i++) {
		struct s0_run r = gq_run((enum gq_impl)impl, (unsigned)sweep.v[i], tasks, weight);
		char d[32];
		if (i == 0 && !check)
			expect = r.checksum;
		s0_verify(prog.name, &r, expect);
		if (i == 0)
			baseline = s0_throughput(&r);
		printf("%7llu   ", (unsigned long long)sweep.v[i]);
		dc_print_right(stdout, dc_fmt_duration(d, sizeof d, r.elapsed_ns), 7);
		printf("   %7.2fM   %6.2fx   %10llu\n", s0_throughput(&r) / 1e6,
		       s0_throughput(&r) / baseline, (unsigned long long)r.contended);
		fflush(stdout);
	}
	printf("\nevery run's checksum: %016llx (%s)\n", (unsigned long long)expect,
	       check ? "equal to the serial sum" : "equal across runs");
	return 0;
}
#endif
