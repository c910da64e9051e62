/* test_demos — every seed demo's command-line contract and verified results.
 *
 * Each test runs a built demo (DEMO_BIN_DIR/<name>) as a child process with
 * small sizes and checks its exit status and what it printed: counts, sums and
 * table shapes, never timings (those live in `make bench-demos`). Each test
 * runs in its own Criterion process with a timeout.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef DEMO_BIN_DIR
#error "build with -DDEMO_BIN_DIR='\"/abs/path/build/demos\"'"
#endif

struct out {
	int status; /* exit status, or 128 + signal */
	char *stdout_text, *stderr_text;
};

static char *slurp(int fd)
{
	off_t size = lseek(fd, 0, SEEK_END);
	char *buf = malloc((size_t)size + 1);
	cr_assert(buf != NULL);
	ssize_t got = pread(fd, buf, (size_t)size, 0);
	cr_assert(got == size, "short read of captured output");
	buf[size] = '\0';
	close(fd);
	return buf;
}

/* Runs DEMO_BIN_DIR/name with the NULL-terminated arguments. */
static struct out run_demo(const char *name, ...)
{
	char path[4096], *argv[32];
	int n = 0;
	va_list ap;
	snprintf(path, sizeof path, "%s/%s", DEMO_BIN_DIR, name);
	argv[n++] = path;
	va_start(ap, name);
	for (const char *a; (a = va_arg(ap, const char *)) != NULL && n < 31;)
		argv[n++] = (char *)a;
	va_end(ap);
	argv[n] = NULL;

	int ofd = memfd_create("stdout", 0), efd = memfd_create("stderr", 0);
	cr_assert(ofd >= 0 && efd >= 0, "memfd_create: %s", strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	cr_assert(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(ofd, 1);
		dup2(efd, 2);
		execv(path, argv);
		dprintf(2, "exec %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		cr_assert(errno == EINTR, "waitpid: %s", strerror(errno));
	struct out o = {
		.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
		.stdout_text = slurp(ofd),
		.stderr_text = slurp(efd),
	};
	return o;
}

static int count_lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Parses the unsigned number after `key` (e.g. "counter=") in s. */
static unsigned long long value_of(const char *s, const char *key)
{
	const char *p = strstr(s, key);
	cr_assert(p != NULL, "no '%s' in:\n%s", key, s);
	return strtoull(p + strlen(key), NULL, 10);
}

#define ASSERT_OK(o)                                                                       \
	cr_assert_eq((o).status, 0, "exit status %d, expected 0\nstdout:\n%s\nstderr:\n%s", \
		     (o).status, (o).stdout_text, (o).stderr_text)
#define ASSERT_HAS(o, needle)                                                    \
	cr_assert(strstr((o).stdout_text, (needle)) != NULL, "stdout lacks '%s':\n%s", \
		  (needle), (o).stdout_text)
#define ASSERT_ONE_LINE(o) \
	cr_assert_eq(count_lines((o).stdout_text), 1, "expected one result line:\n%s", (o).stdout_text)

/* ---- the command-line contract, for every demo ----------------------------- */

/* Names inline, not pointers: Criterion re-executes the binary for each test,
 * so a parameter must not point into the parent's address space. */
struct demo_name {
	char s[32];
};

static struct demo_name all_demos[] = {
	{ "global_queue" }, { "work_stealing" }, { "scheduler_compare" }, { "racy_counter" },
	{ "atomic_scaling" }, { "cas_retry" }, { "false_sharing" }, { "mutex_vs_atomic" },
	{ "deadlock" }, { "thread_per_task" }, { "granularity" }, { "worker_count" },
	{ "imbalance" }, { "backpressure" }, { "nested_submit" }, { "cancel" }, { "futures" },
	{ "barrier" }, { "pingpong" },
};

ParameterizedTestParameters(cli, help)
{
	return cr_make_param_array(struct demo_name, all_demos,
				   sizeof all_demos / sizeof all_demos[0]);
}

ParameterizedTest(struct demo_name *demo, cli, help, .timeout = 10)
{
	const char *const *name = &(const char *){ demo->s };
	struct out o = run_demo(*name, "--help", NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "usage: ");
	ASSERT_HAS(o, "--workers N");
	ASSERT_HAS(o, "examples:");
}

ParameterizedTestParameters(cli, unknown_option)
{
	return cr_make_param_array(struct demo_name, all_demos,
				   sizeof all_demos / sizeof all_demos[0]);
}

ParameterizedTest(struct demo_name *demo, cli, unknown_option, .timeout = 10)
{
	const char *const *name = &(const char *){ demo->s };
	struct out o = run_demo(*name, "--no-such-option", NULL);
	cr_assert_eq(o.status, 2, "%s: exit %d, expected 2", *name, o.status);
	cr_assert_eq(count_lines(o.stderr_text), 1, "%s: expected one error line:\n%s", *name,
		     o.stderr_text);
	cr_assert(strstr(o.stderr_text, "--no-such-option") != NULL, "error does not name it: %s",
		  o.stderr_text);
	cr_assert_str_empty(o.stdout_text, "%s printed to stdout:\n%s", *name, o.stdout_text);
}

ParameterizedTestParameters(cli, bad_workers)
{
	return cr_make_param_array(struct demo_name, all_demos,
				   sizeof all_demos / sizeof all_demos[0]);
}

ParameterizedTest(struct demo_name *demo, cli, bad_workers, .timeout = 10)
{
	const char *const *name = &(const char *){ demo->s };
	static const char *const bad[] = { "0", "two", "-1", "" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct out o = run_demo(*name, "--workers", bad[i], NULL);
		cr_assert_eq(o.status, 2, "%s --workers '%s': exit %d, expected 2", *name, bad[i],
			     o.status);
		cr_assert_eq(count_lines(o.stderr_text), 1, "expected one error line:\n%s",
			     o.stderr_text);
		cr_assert(strstr(o.stderr_text, "--workers") != NULL, "error does not name --workers: %s",
			  o.stderr_text);
	}
	struct out o = run_demo(*name, "--workers", NULL);
	cr_assert_eq(o.status, 2, "%s --workers (no value): exit %d", *name, o.status);
	o = run_demo(*name, "stray", NULL);
	cr_assert_eq(o.status, 2, "%s stray: exit %d", *name, o.status);
}

/* ---- seed 000 ------------------------------------------------------------------ */

Test(seed000, global_queue_workpool_two_workers, .timeout = 30)
{
	struct out o = run_demo("global_queue", "--workers", "2", "--tasks", "20000", "--check", NULL);
	ASSERT_OK(o);
	ASSERT_ONE_LINE(o);
	ASSERT_HAS(o, "impl=workpool workers=2 tasks=20000 weight=20");
	ASSERT_HAS(o, "check=ok");
}

Test(seed000, global_queue_port_two_workers, .timeout = 30)
{
	struct out o = run_demo("global_queue", "--impl", "port", "--workers", "2", "--tasks", "20000",
				"--check", NULL);
	ASSERT_OK(o);
	ASSERT_ONE_LINE(o);
	ASSERT_HAS(o, "impl=port workers=2");
	ASSERT_HAS(o, "check=ok");
}

Test(seed000, global_queue_sweep_table, .timeout = 30)
{
	struct out o = run_demo("global_queue", "--tasks", "10000", "--sweep", "1,2,4", "--check", NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "global queue: 10000 tasks of weight 20 each\n\n");
	ASSERT_HAS(o, "workers      time   tasks/s   speedup   lock waits\n      1   ");
	ASSERT_HAS(o, "\n      4   ");
	ASSERT_HAS(o, "1.00x");
	ASSERT_HAS(o, "equal to the serial sum");
}

Test(seed000, work_stealing_both_deques, .timeout = 30)
{
	static const char *const deques[] = { "chase-lev", "locked" };
	for (int i = 0; i < 2; i++) {
		struct out o = run_demo("work_stealing", "--deque", deques[i], "--workers", "2",
					"--tasks", "20000", "--check", NULL);
		ASSERT_OK(o);
		ASSERT_ONE_LINE(o);
		ASSERT_HAS(o, "check=ok");
		ASSERT_HAS(o, "workers=2 tasks=20000");
	}
}

Test(seed000, work_stealing_sweep_table, .timeout = 30)
{
	struct out o = run_demo("work_stealing", "--tasks", "10000", "--sweep", "1,2,16", "--check",
				NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "local queues + stealing: 10000 tasks of weight 20 each\n");
	ASSERT_HAS(o, "workers      time   tasks/s   speedup   steals\n      1   ");
	ASSERT_HAS(o, "\n     16   ");
}

Test(seed000, one_worker_never_steals_or_waits, .timeout = 30)
{
	struct out o = run_demo("work_stealing", "--workers", "1", "--tasks", "5000", NULL);
	ASSERT_OK(o);
	cr_assert_eq(value_of(o.stdout_text, "steals="), 0);
	o = run_demo("global_queue", "--workers", "1", "--tasks", "5000", NULL);
	ASSERT_OK(o);
	cr_assert_eq(value_of(o.stdout_text, "lock-waits="), 0);
}

Test(seed000, weight_changes_the_checksum_not_the_count, .timeout = 30)
{
	struct out a = run_demo("global_queue", "--workers", "2", "--tasks", "3000", "--weight", "4",
				"--check", NULL);
	struct out b = run_demo("global_queue", "--workers", "2", "--tasks", "3000", "--weight", "400",
				"--check", NULL);
	ASSERT_OK(a);
	ASSERT_OK(b);
	cr_assert(strcmp(strstr(a.stdout_text, "checksum="), strstr(b.stdout_text, "checksum=")) != 0);
}

Test(seed000, scheduler_compare, .timeout = 30)
{
	struct out o = run_demo("scheduler_compare", "--workers", "2", "--tasks", "20000", NULL);
	ASSERT_OK(o);
	ASSERT_ONE_LINE(o);
	ASSERT_HAS(o, "workers=2 tasks=20000 weight=20");
	o = run_demo("scheduler_compare", "--tasks", "5000", "--weights", "4,400", "--sweep", "1,2",
		     NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "weight   workers   global q   local+steal   ratio\n");
	ASSERT_HAS(o, "\n     4         1 ");
	ASSERT_HAS(o, "\n   400         2 ");
	ASSERT_HAS(o, "every run verified");
}

/* ---- seed 003: atomics and sharing ------------------------------------------- */

Test(seed003, racy_counter_atomic_is_exact, .timeout = 30)
{
	struct out o = run_demo("racy_counter", "--workers", "2", "--variant", "atomic", NULL);
	ASSERT_OK(o);
	ASSERT_ONE_LINE(o);
	cr_assert_eq(value_of(o.stdout_text, "counter="), 2000000);
	cr_assert_eq(value_of(o.stdout_text, "lost="), 0);
}

Test(seed003, racy_counter_variants_run_and_never_overcount, .timeout = 30)
{
	static const char *const variants[] = { "unoptimised", "folded", "volatile" };
	for (int i = 0; i < 3; i++) {
		struct out o = run_demo("racy_counter", "--workers", "2", "--variant", variants[i],
					"--increments", "200000", NULL);
		ASSERT_OK(o);
		/* Lost updates have no lower bound a test may count on: a thread
		 * preempted between its load and its store (a busy machine) wipes
		 * out whatever the other added meanwhile. */
		unsigned long long c = value_of(o.stdout_text, "counter=");
		cr_assert(c > 0 && c <= 400000, "%s: counter %llu outside (0, 2n]", variants[i], c);
		cr_assert_eq(value_of(o.stdout_text, "lost="), 400000 - c, "%s: lost is 2n - counter", variants[i]);
	}
	struct out o = run_demo("racy_counter", "--workers", "2", "--variant", "folded", "--together",
				NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "together=yes");
}

Test(seed003, racy_counter_sweep, .timeout = 30)
{
	struct out o = run_demo("racy_counter", "--increments", "10000", "--runs", "2", NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "unoptimised (-O0");
	ASSERT_HAS(o, "folded, threads released together, 2 runs:");
	ASSERT_HAS(o, "atomic (atomic_fetch_add), 2 runs:\n20000  20000\n exact=2");
}

Test(seed003, racy_counter_variant_needs_workers, .timeout = 10)
{
	struct out o = run_demo("racy_counter", "--variant", "folded", NULL);
	cr_assert_eq(o.status, 2);
	cr_assert_eq(count_lines(o.stderr_text), 1);
	o = run_demo("racy_counter", "--workers", "2", "--variant", "fast", NULL);
	cr_assert_eq(o.status, 2);
	cr_assert(strstr(o.stderr_text, "'fast' is not one of") != NULL, "%s", o.stderr_text);
}

Test(seed003, atomic_scaling_counts_exactly, .timeout = 30)
{
	struct out o = run_demo("atomic_scaling", "--workers", "2", "--total", "1000001", NULL);
	ASSERT_OK(o);
	ASSERT_ONE_LINE(o);
	cr_assert_eq(value_of(o.stdout_text, "counter="), 1000001);
	o = run_demo("atomic_scaling", "--total", "200000", "--sweep", "1,3", NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "plain non-atomic +=");
	ASSERT_HAS(o, "2 threads, SAME atomic");
	ASSERT_HAS(o, "\n 3 threads ");
	ASSERT_HAS(o, "every count exact: 200000");
}

Test(seed003, cas_retry, .timeout = 30)
{
	struct out o = run_demo("cas_retry", "--workers", "2", "--increments", "100000", NULL);
	ASSERT_OK(o);
	ASSERT_ONE_LINE(o);
	cr_assert_eq(value_of(o.stdout_text, "counter="), 200000);
	o = run_demo("cas_retry", "--workers", "1", "--increments", "100000", NULL);
	ASSERT_OK(o);
	cr_assert_eq(value_of(o.stdout_text, "retries="), 0, "one thread cannot fail a CAS");
	o = run_demo("cas_retry", "--increments", "10000", "--sweep", "1,2", NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "1 threads: retries=0,          0.0% of CAS attempts failed");
	ASSERT_HAS(o, "\n2 threads: retries=");
}

Test(seed003, false_sharing_offsets_and_residues, .timeout = 30)
{
	struct out o = run_demo("false_sharing", "--workers", "2", "--offset", "8", "--increments",
				"100000", NULL);
	ASSERT_OK(o);
	ASSERT_ONE_LINE(o);
	ASSERT_HAS(o, "offset=8 base%128=0 second%128=8 ");
	o = run_demo("false_sharing", "--workers", "3", "--offset", "64", "--increments", "100000",
		     NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "offset=64 base%128=0 second%128=64 ");
	o = run_demo("false_sharing", "--workers", "2", "--offset", "12", NULL);
	cr_assert_eq(o.status, 2);
	cr_assert(strstr(o.stderr_text, "multiple of 8") != NULL, "%s", o.stderr_text);
}

Test(seed003, false_sharing_sweep_table, .timeout = 30)
{
	struct out o = run_demo("false_sharing", "--increments", "20000", "--runs", "3", "--offsets",
				"8,64,192", NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "base address modulo 128: 0\n\n");
	ASSERT_HAS(o, "offset    second address mod 128    min    median    max\n");
	ASSERT_HAS(o, "\n     8                         8 ");
	ASSERT_HAS(o, "\n   192                        64 ");
}

Test(seed003, mutex_vs_atomic, .timeout = 30)
{
	struct out o = run_demo("mutex_vs_atomic", "--workers", "2", "--increments", "100000", NULL);
	ASSERT_OK(o);
	ASSERT_ONE_LINE(o);
	cr_assert_eq(value_of(o.stdout_text, "counter="), 200000);
	ASSERT_HAS(o, "mutex/atomic=");
	o = run_demo("mutex_vs_atomic", "--increments", "10000", NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "atomic  2 threads ");
	ASSERT_HAS(o, "counter=20000\nmutex   2 threads ");
	ASSERT_HAS(o, "mutex / atomic = ");
}

/* ---- seed 003: locks, pools, futures --------------------------------------------- */

Test(seed003, deadlock_is_reported, .timeout = 20)
{
	struct out o = run_demo("deadlock", "--workers", "2", "--hold-ms", "20", "--timeout-ms", "300",
				NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "A_got_L1=1 A_got_L2=0  B_got_L2=1 B_got_L1=0");
	ASSERT_HAS(o, "classic deadlock, A waits on L2 (held by B), B waits on L1 (held by A)");
	o = run_demo("deadlock", "--workers", "3", "--hold-ms", "20", "--timeout-ms", "300", NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "cyclic deadlock");
}

Test(seed003, deadlock_fixed_order_finishes, .timeout = 20)
{
	struct out o = run_demo("deadlock", "--workers", "2", "--fixed", "--hold-ms", "10", NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "finished cleanly");
	cr_assert(strstr(o.stdout_text, "WATCHDOG") == NULL, "%s", o.stdout_text);
	/* The default's two runs share the watchdog's limit: the fixed run must
	 * finish within it on a busy machine too (200 ms did not, once, in CI). */
	o = run_demo("deadlock", "--hold-ms", "10", "--timeout-ms", "2000", NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "classic deadlock");
	ASSERT_HAS(o, "(same order as A now)");
}

Test(seed003, thread_per_task, .timeout = 30)
{
	struct out o = run_demo("thread_per_task", "--workers", "2", "--tasks", "200", NULL);
	ASSERT_OK(o);
	ASSERT_ONE_LINE(o);
	ASSERT_HAS(o, "tasks=200 sum=19900\n");
	o = run_demo("thread_per_task", "--tasks", "100", "--runs", "2", NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "dispatch fresh-threads-ms=");
	ASSERT_HAS(o, "every sum = 4950");
}

Test(seed003, granularity, .timeout = 30)
{
	struct out o = run_demo("granularity", "--workers", "2", "--tasks", "1000", "--total", "1000000",
				NULL);
	ASSERT_OK(o);
	ASSERT_ONE_LINE(o);
	ASSERT_HAS(o, "iterations-per-task=1000 ");
	ASSERT_HAS(o, "(equals serial)");
	o = run_demo("granularity", "--total", "400000", "--sweep", "4,4000", "--runs", "2", NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "tasks      iterations per task    min ms    median ms    max ms\n");
	ASSERT_HAS(o, "\n      4                 100,000 ");
	ASSERT_HAS(o, "\n  4,000                     100 ");
}

Test(seed003, worker_count, .timeout = 30)
{
	struct out o = run_demo("worker_count", "--workers", "2", "--total", "2000000", "--check", NULL);
	ASSERT_OK(o);
	ASSERT_ONE_LINE(o);
	ASSERT_HAS(o, "per-worker=1000000 ");
	ASSERT_HAS(o, "check=ok");
	o = run_demo("worker_count", "--total", "1000000", "--sweep", "1,3", "--runs", "2", "--check",
		     NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "workers    min    median    max\n      1 ");
	ASSERT_HAS(o, "equalled the serial computation");
}

Test(seed003, imbalance_stealing_off_keeps_everything_on_worker_0, .timeout = 30)
{
	struct out o = run_demo("imbalance", "--workers", "2", "--tasks", "8", "--task-ms", "1",
				"--stealing", "off", NULL);
	ASSERT_OK(o);
	ASSERT_ONE_LINE(o);
	ASSERT_HAS(o, "steal=off ");
	ASSERT_HAS(o, "steals=0 ");
	ASSERT_HAS(o, "executed=8,0\n");
}

Test(seed003, imbalance_stealing_on_spreads_work, .timeout = 30)
{
	static const char *const deques[] = { "locked", "chase-lev" };
	for (int i = 0; i < 2; i++) {
		struct out o = run_demo("imbalance", "--workers", "4", "--tasks", "40", "--task-ms", "5",
					"--stealing", "on", "--deque", deques[i], NULL);
		ASSERT_OK(o);
		/* 40 tasks of 5 ms: worker 0 cannot run them all before others steal. */
		unsigned long long first = value_of(o.stdout_text, "executed=");
		cr_assert(first < 40, "%s: worker 0 ran all 40:\n%s", deques[i], o.stdout_text);
		cr_assert(value_of(o.stdout_text, "steals=") > 0, "%s", o.stdout_text);
	}
}

Test(seed003, backpressure, .timeout = 30)
{
	struct out o = run_demo("backpressure", "--workers", "2", "--tasks", "12", "--task-ms", "2",
				NULL);
	ASSERT_OK(o);
	ASSERT_ONE_LINE(o);
	cr_assert_leq(value_of(o.stdout_text, "max-queued="), 4);
	cr_assert_eq(value_of(o.stdout_text, "sum="), 66);
	/* Twelve 2 ms tasks, two workers, room for four: the producer must wait. */
	cr_assert_gt(value_of(o.stdout_text, "blocked-submissions="), 0, "%s", o.stdout_text);
	o = run_demo("backpressure", "--task-ms", "1", NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "backpressure max-queued=");
	ASSERT_HAS(o, " sum=190\n");
}

/* With helping the run completes in a millisecond; the watchdog gets 10 s
 * (not the default second: on a busy machine a worker may not run for that
 * long, and the demo then says STARVED), so only a real starvation fails. */
Test(seed003, nested_submit_with_helping_completes, .timeout = 30)
{
	struct out o = run_demo("nested_submit", "--workers", "1", "--helping", "on", "--timeout-ms", "10000", NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "completed parents=1 ");
	ASSERT_HAS(o, "value=8 ");
	o = run_demo("nested_submit", "--workers", "2", "--helping", "on", "--timeout-ms", "10000", NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "completed parents=2 ");
}

Test(seed003, nested_submit_without_helping_starves, .timeout = 30)
{
	struct out o = run_demo("nested_submit", "--workers", "1", "--helping", "off", "--timeout-ms",
				"300", NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "STARVED after 300 ms: 1 of 1 parents still waiting");
	ASSERT_HAS(o, "WATCHDOG: pool starved");
	o = run_demo("nested_submit", "--workers", "2", "--helping", "off", "--timeout-ms", "300",
		     NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "helping=off workers=2 ");
	/* The default's two runs share the limit: its helping run must finish
	 * within it on a busy machine too. */
	o = run_demo("nested_submit", "--timeout-ms", "3000", NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "helping=off workers=1 STARVED");
	ASSERT_HAS(o, "helping=on workers=1 completed parents=1 ");
}

Test(seed003, cancel, .timeout = 30)
{
	struct out o = run_demo("cancel", "--workers", "2", "--delay-ms", "1", NULL);
	ASSERT_OK(o);
	ASSERT_ONE_LINE(o);
	ASSERT_HAS(o, "cancel-requested=yes second-request=no task-observed=2/2 ");
	ASSERT_HAS(o, "queued-task=cancelled-unrun");
	o = run_demo("cancel", NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "cancel-requested=yes task-observed=yes\n");
}

Test(seed003, futures, .timeout = 30)
{
	struct out o = run_demo("futures", "--workers", "2", NULL);
	ASSERT_OK(o);
	ASSERT_ONE_LINE(o);
	ASSERT_HAS(o, "future-value=42 future-error=task failed");
	ASSERT_HAS(o, "counter=2 drain-completed=12 last-value=11 submit-after-shutdown=refused");
	o = run_demo("futures", NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "future-value=42\nfuture-exception=task failed");
	ASSERT_HAS(o, "drain-completed=12 last-value=11\n");
}

/* ---- seed 002 ------------------------------------------------------------------- */

Test(seed002, barrier_counts_parks_and_wakes, .timeout = 30)
{
	static const char *const spins[] = { "0", "10" };
	for (int i = 0; i < 2; i++) {
		struct out o = run_demo("barrier", "--workers", "2", "--iterations", "2000",
					"--idle-spin", spins[i], NULL);
		ASSERT_OK(o);
		ASSERT_ONE_LINE(o);
		ASSERT_HAS(o, "iterations=2000 ");
		/* Every park was ended by exactly one wake. */
		cr_assert_eq(value_of(o.stdout_text, "parks="), value_of(o.stdout_text, "wakes="),
			     "%s", o.stdout_text);
	}
	struct out o = run_demo("barrier", "--workers", "1", "--iterations", "1000", NULL);
	ASSERT_OK(o);
	cr_assert_eq(value_of(o.stdout_text, "parks="), 0, "a lone worker never waits");
}

Test(seed002, barrier_sweep_table, .timeout = 30)
{
	struct out o = run_demo("barrier", "--iterations", "500", "--sweep", "1,2", "--spins", "0,10",
				NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "\tw=1\tw=2\n");
	ASSERT_HAS(o, "\nidle-spin 0\t");
	ASSERT_HAS(o, "\nidle-spin 10\t");
}

Test(seed002, pingpong_token_arrives, .timeout = 30)
{
	struct out o = run_demo("pingpong", "--workers", "2", "--iterations", "3001", "--idle-spin", "0",
				NULL);
	ASSERT_OK(o);
	ASSERT_ONE_LINE(o);
	cr_assert_eq(value_of(o.stdout_text, "token="), 3001);
	cr_assert_eq(value_of(o.stdout_text, "parks="), value_of(o.stdout_text, "wakes="));
	o = run_demo("pingpong", "--iterations", "300", "--sweep", "1,3", "--spins", "0", NULL);
	ASSERT_OK(o);
	ASSERT_HAS(o, "\tw=1\tw=3\tparks/round at w=3\n");
}
