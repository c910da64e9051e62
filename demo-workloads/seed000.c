/* seed000.c — seed 000's tasks on workpool (see seed000.h).
 *
 * A task is fn(arg) with the seed in arg: two words in a queue slot, no
 * allocation, like the seed's Vec<u64>. Each worker keeps its wrapping sum in
 * a thread-local slot, as the seed's local_sum, so the task does not write a
 * shared line; the slots are summed after the pool is joined.
 */
#include "demo_common.h"
#include "seed000.h"

#include <stdlib.h>

struct s0_slot {
	_Alignas(DC_CACHE_LINE) uint64_t sum;
	uint64_t executed;
};

/* One run at a time per process; a new generation hands out new slots. */
static struct s0_slot *slots;
static unsigned nslots;
static _Atomic unsigned next_slot;
static _Atomic unsigned generation;
static uint64_t run_weight;

static __thread struct s0_slot *my_slot;
static __thread unsigned my_generation;

static struct s0_slot *slot(void)
{
	unsigned g = atomic_load_explicit(&generation, memory_order_relaxed);
	if (__builtin_expect(my_generation != g, 0)) {
		unsigned i = atomic_fetch_add(&next_slot, 1);
		if (i >= nslots)
			abort(); /* more task-running threads than workers */
		my_slot = &slots[i];
		my_generation = g;
	}
	return my_slot;
}

static void s0_task(void *arg)
{
	struct s0_slot *s = slot();
	s->sum += dc_task(run_weight, (uint64_t)(uintptr_t)arg);
	s->executed++;
}

struct s0_run s0_pool_run(wp_policy policy, unsigned workers, uint64_t tasks, uint64_t weight)
{
	wp_config cfg = wp_config_default();
	cfg.policy = policy;
	cfg.workers = workers;
	cfg.start_paused = true;
	cfg.name = "s0";
	/* Each worker's share fits without growing, as the seed's collect()ed
	 * VecDeques did: growth would copy and fault in twice the memory. */
	uint64_t share = (tasks + workers - 1) / workers;
	cfg.deque_initial = (size_t)(share < (1u << 30) ? share : (1u << 30));

	nslots = workers;
	slots = aligned_alloc(DC_CACHE_LINE, nslots * sizeof *slots);
	if (!slots)
		dc_die("seed000", "out of memory");
	for (unsigned i = 0; i < nslots; i++)
		slots[i] = (struct s0_slot){ 0, 0 };
	atomic_store(&next_slot, 0);
	atomic_fetch_add(&generation, 1);
	run_weight = weight;

	wp_pool *pool;
	dc_check("seed000", wp_pool_create(&pool, &cfg), "wp_pool_create");
	dc_check("seed000", wp_spawn_range(pool, policy == WP_POLICY_GLOBAL ? WP_ANY : WP_DEAL, s0_task, 0,
			     (size_t)tasks),
	      "wp_spawn_range");

	uint64_t start = dc_now_ns();
	dc_check("seed000", wp_start(pool), "wp_start");
	dc_check("seed000", wp_shutdown(pool, WP_SHUTDOWN_DRAIN), "wp_shutdown");
	struct s0_run r = { .elapsed_ns = dc_now_ns() - start, .tasks = tasks };

	wp_pool_stats st;
	dc_check("seed000", wp_pool_stats_get(pool, &st), "wp_pool_stats_get");
	if (policy == WP_POLICY_GLOBAL) {
		r.contended = st.total.lock_contended + st.external_contended;
	} else {
		r.contended = st.total.steals;
		r.stolen = st.total.stolen_tasks;
	}
	wp_pool_destroy(pool);
	for (unsigned i = 0; i < nslots; i++) {
		r.checksum += slots[i].sum;
		r.executed += slots[i].executed;
	}
	free(slots);
	slots = NULL;
	return r;
}

uint64_t s0_serial_checksum(uint64_t tasks, uint64_t weight)
{
	uint64_t sum = 0;
	for (uint64_t i = 0; i < tasks; i++)
		sum += dc_task(weight, i);
	return sum;
}

void s0_verify(const char *name, const struct s0_run *r, uint64_t expect)
{
	if (r->executed != r->tasks)
		dc_die(name, "executed %llu of %llu tasks", (unsigned long long)r->executed,
		       (unsigned long long)r->tasks);
	if (r->checksum != expect)
		dc_die(name, "checksum %016llx differs from %016llx", (unsigned long long)r->checksum,
		       (unsigned long long)expect);
}
