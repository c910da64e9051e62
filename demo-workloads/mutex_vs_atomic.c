/* mutex_vs_atomic — seed 003, "locks and deadlock", first half: the same
 * shared counter incremented with atomic_fetch_add and with a plain long
 * guarded by a pthread mutex around each ++. Both must end exact; the
 * mutex's price is the ratio.
 */
#include "demo_common.h"

#include <convoy.h>
#include <stdatomic.h>
#include <stdlib.h>

enum kind { K_BOTH, K_ATOMIC, K_MUTEX };
static const char *const kind_names[] = { "both", "atomic", "mutex", NULL };

static _Alignas(DC_CACHE_LINE) _Atomic long atomic_counter;
/* The seed's mutex and its long, side by side as a struct would put them. */
static struct {
	_Alignas(DC_CACHE_LINE) pthread_mutex_t lock;
	long value;
} guarded = { PTHREAD_MUTEX_INITIALIZER, 0 };

static uint64_t increments;

static void *atomic_worker(void *arg)
{
	for (uint64_t i = 0; i < increments; i++)
		atomic_fetch_add_explicit(&atomic_counter, 1, memory_order_relaxed);
	return NULL;
}

static void *mutex_worker(void *arg)
{
	for (uint64_t i = 0; i < increments; i++) {
		pthread_mutex_lock(&guarded.lock);
		guarded.value++;
		pthread_mutex_unlock(&guarded.lock);
	}
	return NULL;
}

/* Returns wall ns; checks the final count. */
static uint64_t run(enum kind k, unsigned workers)
{
	pthread_t *t = calloc(workers, sizeof *t);
	if (!t)
		dc_die("mutex_vs_atomic", "out of memory");
	atomic_store(&atomic_counter, 0);
	guarded.value = 0;
	uint64_t start = dc_now_ns();
	for (unsigned i = 0; i < workers; i++)
		dc_spawn("mutex_vs_atomic", &t[i], k == K_ATOMIC ? atomic_worker : mutex_worker, NULL);
	for (unsigned i = 0; i < workers; i++)
		dc_join("mutex_vs_atomic", t[i]);
	uint64_t ns = dc_now_ns() - start;
	free(t);
	long got = k == K_ATOMIC ? atomic_load(&atomic_counter) : guarded.value;
	if ((uint64_t)got != workers * increments)
		dc_die("mutex_vs_atomic", "%s counter %ld, expected %llu", kind_names[k], got,
		       (unsigned long long)(workers * increments));
	return ns;
}

static void row(enum kind k, unsigned workers, uint64_t ns)
{
	printf("%-6s  %u threads   %6.2f ns/op   counter=%llu\n", kind_names[k], workers,
	       (double)ns / (double)(workers * increments),
	       (unsigned long long)(workers * increments));
	fflush(stdout);
}

int main(int argc, char **argv)
{
	uint64_t workers = 2, n = 20000000;
	int kind = K_BOTH;
	struct dc_opt opts[] = {
		DC_OPT_WORKERS(&workers, 1024),
		DC_OPT_CHOICE("kind", &kind, "which counter(s) to run", kind_names),
		DC_OPT_UINT("increments", &n, "increments per thread", 1, 1ull << 36),
		DC_OPT_END,
	};
	struct dc_prog prog = {
		.name = "mutex_vs_atomic",
		.summary = "A shared counter via atomic_fetch_add vs a mutex around ++: both exact, the mutex's cost as a ratio.",
		.seed = "seed 003, \"When one operation isn't enough: locks\" (atomic vs mutex, 2 threads)",
		.examples = "  mutex_vs_atomic                          # the seed's two rows and ratio\n"
			    "  mutex_vs_atomic --workers 4 --kind mutex # one run of the mutex counter\n",
		.opts = opts,
	};
	dc_parse(&prog, argc, argv);
	increments = n;
	CONVOY_NAME(&guarded.lock, "counter_lock");
	unsigned w = (unsigned)workers;

	if (dc_given(&prog, "workers")) {
		printf("mutex vs atomic: workers=%u increments=%llu", w, (unsigned long long)n);
		uint64_t a = 0, m = 0;
		if (kind != K_MUTEX) {
			a = run(K_ATOMIC, w);
			printf(" atomic=%.2fns/op", (double)a / (double)(w * n));
		}
		if (kind != K_ATOMIC) {
			m = run(K_MUTEX, w);
			printf(" mutex=%.2fns/op", (double)m / (double)(w * n));
		}
		if (kind == K_BOTH)
			printf(" mutex/atomic=%.1fx", (double)m / (double)a);
		printf(" counter=%llu\n", (unsigned long long)(w * n));
		return 0;
	}
	if (dc_given(&prog, "kind"))
		dc_usage_error(&prog, "--kind chooses a single run: add --workers N");
	uint64_t a = run(K_ATOMIC, w);
	row(K_ATOMIC, w, a);
	uint64_t m = run(K_MUTEX, w);
	row(K_MUTEX, w, m);
	printf("mutex / atomic = %.1fx\n", (double)m / (double)a);
	return 0;
}
