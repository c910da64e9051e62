/* deadlock — seed 003, "locks introduce a failure mode atomics don't have".
 *
 * N threads, N locks (at least two). Thread i (A, B, ...) takes lock L(i+1),
 * waits at a barrier until every thread holds its first lock (so the cycle
 * forms however the threads are scheduled), holds it `hold` ms more, then
 * reaches for the next thread's lock: a wait-for cycle, and the program stops. A watchdog
 * reports each thread's state `timeout` ms after the cycle formed (after the
 * start, with --fixed), names the cycle it finds in that state, and ends the process (exit status 0: the hang is the
 * demonstration). With --fixed every thread takes the lower-numbered lock
 * first, the cycle cannot form, and the run finishes cleanly.
 *
 * With no --workers the seed's two runs (opposite order, then fixed) each run
 * in a child process, so the frozen one can be killed without losing the rest.
 */
#include "demo_common.h"

#include <convoy.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 64

struct scene {
	unsigned threads, locks;
	bool fixed;
	uint64_t hold_ns;
	uint64_t start_ns;
	pthread_mutex_t lock[MAX_THREADS];
	_Atomic int holder[MAX_THREADS];  /* thread index holding lock k, or -1 */
	_Atomic bool got_first[MAX_THREADS], got_second[MAX_THREADS];
	unsigned first[MAX_THREADS], second[MAX_THREADS]; /* lock indices per thread */
	pthread_mutex_t print_lock;
	pthread_barrier_t all_hold_first; /* opposite order only: fixed would wait on it forever */
};

struct arg {
	struct scene *s;
	unsigned index;
};

static void thread_name(unsigned i, char *buf, size_t n)
{
	if (i < 26)
		snprintf(buf, n, "%c", 'A' + i);
	else
		snprintf(buf, n, "T%u", i);
}

static void *worker(void *p)
{
	const struct arg *a = p;
	struct scene *s = a->s;
	unsigned i = a->index, f = s->first[i], g = s->second[i];
	char me[12];
	thread_name(i, me, sizeof me);

	pthread_mutex_lock(&s->lock[f]);
	atomic_store(&s->holder[f], (int)i);
	atomic_store(&s->got_first[i], true);
	pthread_mutex_lock(&s->print_lock);
	printf("%s: holds L%u, wants L%u%s\n", me, f + 1, g + 1,
	       s->fixed && i > 0 ? " (same order as A now)" : "");
	fflush(stdout);
	pthread_mutex_unlock(&s->print_lock);
	if (!s->fixed)
		pthread_barrier_wait(&s->all_hold_first);
	dc_sleep_ns(s->hold_ns);

	pthread_mutex_lock(&s->lock[g]);
	atomic_store(&s->holder[g], (int)i);
	atomic_store(&s->got_second[i], true);

	atomic_store(&s->holder[g], -1);
	pthread_mutex_unlock(&s->lock[g]);
	atomic_store(&s->holder[f], -1);
	pthread_mutex_unlock(&s->lock[f]);
	return NULL;
}

/* The watchdog's report: every thread's state, then the wait-for cycle that
 * state contains (thread waits on its second lock, held by another thread). */
static void report(void *p)
{
	struct scene *s = p;
	char name[12], other[12];
	pthread_mutex_lock(&s->print_lock);
	printf("WATCHDOG: %.3gs elapsed, still frozen. state:",
	       dc_ms(dc_now_ns() - s->start_ns) / 1000.0);
	for (unsigned i = 0; i < s->threads; i++) {
		thread_name(i, name, sizeof name);
		printf("%s %s_got_L%u=%d %s_got_L%u=%d", i ? " " : "", name, s->first[i] + 1,
		       atomic_load(&s->got_first[i]), name, s->second[i] + 1,
		       atomic_load(&s->got_second[i]));
	}
	putchar('\n');

	/* Follow waits-on edges from thread 0 until a thread repeats. */
	int waits_for[MAX_THREADS];
	for (unsigned i = 0; i < s->threads; i++) {
		bool waiting = atomic_load(&s->got_first[i]) && !atomic_load(&s->got_second[i]);
		waits_for[i] = waiting ? atomic_load(&s->holder[s->second[i]]) : -1;
	}
	int seen[MAX_THREADS];
	memset(seen, 0, sizeof seen);
	int t = 0;
	while (t >= 0 && !seen[t]) {
		seen[t] = 1;
		t = waits_for[t];
	}
	if (t < 0) {
		printf("WATCHDOG: no wait-for cycle in this state; still frozen. killing.\n");
	} else {
		printf("WATCHDOG: %s deadlock,", s->threads == 2 ? "classic" : "cyclic");
		int start = t;
		do {
			thread_name((unsigned)t, name, sizeof name);
			thread_name((unsigned)waits_for[t], other, sizeof other);
			printf("%s %s waits on L%u (held by %s)", t == start ? "" : ",", name,
			       s->second[t] + 1, other);
			t = waits_for[t];
		} while (t != start);
		printf(". killing.\n");
	}
	fflush(stdout);
	pthread_mutex_unlock(&s->print_lock);
}

/* One run in this process; returns only if it finished (the watchdog exits
 * the process otherwise). */
static void run(unsigned threads, bool fixed, uint64_t hold_ms, uint64_t timeout_ms)
{
	static struct scene s;
	struct arg args[MAX_THREADS];
	pthread_t t[MAX_THREADS];
	s.threads = threads;
	s.locks = threads < 2 ? 2 : threads;
	s.fixed = fixed;
	s.hold_ns = hold_ms * 1000000ull;
	pthread_mutex_init(&s.print_lock, NULL);
	if (!fixed)
		dc_check("deadlock", pthread_barrier_init(&s.all_hold_first, NULL, threads), "pthread_barrier_init");
	for (unsigned k = 0; k < s.locks; k++) {
		static char names[MAX_THREADS][12];
		pthread_mutex_init(&s.lock[k], NULL);
		snprintf(names[k], sizeof names[k], "L%u", k + 1);
		CONVOY_NAME(&s.lock[k], names[k]);
		atomic_store(&s.holder[k], -1);
	}
	for (unsigned i = 0; i < threads; i++) {
		unsigned f = i % s.locks, g = (i + 1) % s.locks;
		s.first[i] = fixed && g < f ? g : f;
		s.second[i] = fixed && g < f ? f : g;
		atomic_store(&s.got_first[i], false);
		atomic_store(&s.got_second[i], false);
	}
	s.start_ns = dc_now_ns();
	struct dc_watchdog *w = NULL;
	if (fixed)
		w = dc_watchdog_start("deadlock", timeout_ms * 1000000ull, report, &s, 0);
	for (unsigned i = 0; i < threads; i++) {
		args[i] = (struct arg){ &s, i };
		dc_spawn("deadlock", &t[i], worker, &args[i]);
		char name[12];
		thread_name(i, name, sizeof name);
		dc_name_thread(t[i], "%s", name);
	}
	if (!fixed) {
		/* The hang is timed from the moment the cycle has formed (every
		 * thread holds its first lock, which the barrier makes sure of):
		 * threads slow to start on a busy machine are not a hang, and
		 * the report then always finds the cycle. */
		for (unsigned i = 0; i < threads; i++)
			while (!atomic_load(&s.got_first[i]))
				dc_sleep_ns(1000000);
		w = dc_watchdog_start("deadlock", timeout_ms * 1000000ull, report, &s, 0);
	}
	for (unsigned i = 0; i < threads; i++)
		dc_join("deadlock", t[i]);
	dc_watchdog_cancel(w);
	if (!fixed)
		pthread_barrier_destroy(&s.all_hold_first);
	printf("finished cleanly (no deadlock this run) in %.3f s\n",
	       dc_ms(dc_now_ns() - s.start_ns) / 1000.0);
}

/* The sweep runs each scene in a child so the frozen one can be ended. */
struct scene_args {
	unsigned threads;
	bool fixed;
	uint64_t hold_ms, timeout_ms;
};

static void scene_child(void *p)
{
	const struct scene_args *a = p;
	run(a->threads, a->fixed, a->hold_ms, a->timeout_ms);
}

static void run_child(unsigned threads, bool fixed, uint64_t hold_ms, uint64_t timeout_ms)
{
	struct scene_args a = { threads, fixed, hold_ms, timeout_ms };
	uint64_t start = dc_now_ns();
	dc_run_child("deadlock", scene_child, &a);
	printf("(whole run: %.3f s)\n", dc_ms(dc_now_ns() - start) / 1000.0);
}

int main(int argc, char **argv)
{
	uint64_t workers = 2, hold = 50, timeout = 2000;
	bool fixed = false;
	struct dc_opt opts[] = {
		DC_OPT_WORKERS(&workers, MAX_THREADS),
		DC_OPT_FLAG("fixed", &fixed, "every thread takes the lower-numbered lock first"),
		DC_OPT_UINT("hold-ms", &hold, "ms each thread holds its first lock before the second", 0, 60000),
		DC_OPT_UINT("timeout-ms", &timeout, "ms the cycle stands before the watchdog reports it and ends the run", 1, 3600000),
		DC_OPT_END,
	};
	struct dc_prog prog = {
		.name = "deadlock",
		.summary = "Threads take two locks in opposite order and freeze; a watchdog reports the cycle.",
		.seed = "seed 003, \"When one operation isn't enough: locks and deadlock\"",
		.details = "Exits 0 after the watchdog's report: the hang is the demonstration.",
		.examples = "  deadlock                        # the seed's two runs: frozen, then fixed\n"
			    "  deadlock --workers 2            # one run that deadlocks (watchdog at 2 s)\n"
			    "  deadlock --workers 3 --fixed    # one order for everyone: finishes\n"
			    "  convoy run -- build/demos/deadlock --workers 2 --timeout-ms 500\n",
		.opts = opts,
	};
	dc_parse(&prog, argc, argv);

	if (dc_given(&prog, "workers")) {
		run((unsigned)workers, fixed, hold, timeout);
		return 0;
	}
	if (fixed)
		dc_usage_error(&prog, "--fixed chooses a single run: add --workers N");
	run_child((unsigned)workers, false, hold, timeout);
	putchar('\n');
	run_child((unsigned)workers, true, hold, timeout);
	return 0;
}
