/* order_memo_signal.c — run under libconvoy.so (tests/shim/fastpath.c): a
 * signal handler that returns holding a lock, delivered at each
 * instruction the shim executes while it looks up a lock's order edges
 * and remembers them (preload/shim.h, cv__lock_attempt_remembered).
 *
 * The lock-order memo says "the edges from this held set to o were looked
 * up", so that the next acquisition of o on top of the same set skips the
 * lookup. A handler that runs between the lookup and the memo and returns
 * holding x changes the set: a memo made for the set with x would claim
 * x -> o, never looked up, and hide it for as long as the memo lives.
 *
 * The program forks a child that it traces. The child warms up: a -> o is
 * a known edge, o's record is in the shim's caches. Then, trial k: with a
 * held, it takes o, whose memo on a's slot the three other locks taken
 * since pushed out, so the shim looks the edges up and remembers them; the
 * tracer single-steps that call and delivers SIGUSR1 at the k-th
 * instruction inside libconvoy.so. The handler locks a mutex of its own
 * for the trial (oms_x<k>) and returns holding it. The child then lets o
 * go and takes it again, which must look up oms_x<k> -> o, and takes a
 * lock new to it, oms_y<k>, which says whether oms_x<k> was in the held
 * set then (the edge oms_x<k> -> oms_y<k>). The trials end with the first
 * one whose call had fewer than k steps in the shim.
 *
 * The test reads the report: wherever oms_x<k> was in the set then, the
 * edge oms_x<k> -> o must be there too. (A handler that interrupts the
 * push of a lock between the read of the held count and the slot's claim,
 * and returns holding its own lock, loses that lock from the set: its
 * edges are missed, a limit of the shim's lock-free held set, lockorder.c.)
 *
 * Exit 0 and "ok: N trials" when every trial ran; 1 otherwise; 77 when
 * ptrace is not allowed here.
 */
#include <stdbool.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>

#include <convoy.h>

#include "progs.h"

#define MAX_TRIALS 2000   /* far more than the instructions of the shim's lookup */

static pthread_mutex_t oms_a = PTHREAD_MUTEX_INITIALIZER, oms_o = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t evict[3] = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
				    PTHREAD_MUTEX_INITIALIZER };
static pthread_mutex_t x[MAX_TRIALS], y[MAX_TRIALS];   /* zero: PTHREAD_MUTEX_INITIALIZER */

/* Read and written by the tracer (the same addresses in its traced child:
 * a fork). */
static volatile long armed, done, trial, in_handler;
static volatile char took[MAX_TRIALS];

static void handler(int sig)
{
	(void)sig;
	in_handler = 1;
	if (pthread_mutex_lock(&x[trial]) == 0)
		took[trial] = 1;   /* and kept: the handler returns holding it */
	in_handler = 0;
	raise(SIGURG);   /* the tracer lets the trial run on */
}

static void named(pthread_mutex_t *m, const char *prefix, long k)
{
	char name[32];
	snprintf(name, sizeof name, "%s%ld", prefix, k);
	convoy_name_object(m, name);
}

/* a held; o's memo on a's slot pushed out by the three other locks taken
 * on top of a since (three memos a slot). */
static void round_of(long k, bool traced_round)
{
	pthread_mutex_lock(&oms_a);
	if (traced_round) {
		named(&x[k], "oms_x", k);
		named(&y[k], "oms_y", k);
		trial = k;
		raise(SIGSTOP);   /* the tracer single-steps from here */
		armed = 1;
	}
	pthread_mutex_lock(&oms_o);
	armed = 0;
	pthread_mutex_unlock(&oms_o);
	pthread_mutex_lock(&oms_o);   /* on top of a and, if the handler ran, x[k] */
	pthread_mutex_unlock(&oms_o);
	if (traced_round) {
		pthread_mutex_lock(&y[k]);   /* new: its edges are looked up */
		pthread_mutex_unlock(&y[k]);
		if (took[k])
			pthread_mutex_unlock(&x[k]);
	}
	for (int i = 0; i < 3; i++) {
		pthread_mutex_lock(&evict[i]);
		pthread_mutex_unlock(&evict[i]);
	}
	pthread_mutex_unlock(&oms_a);
}

static void *nothing(void *arg)
{
	return arg;
}

static int traced(void)
{
	struct sigaction sa = { .sa_handler = handler };
	MUST(sigaction(SIGUSR1, &sa, NULL));
	pthread_t t;   /* glibc's multi-threaded path, which the shim takes over */
	MUST(pthread_create(&t, NULL, nothing, NULL));
	MUST(pthread_join(t, NULL));
	for (int i = 0; i < 10; i++)
		round_of(0, false);
	long k;
	for (k = 1; k < MAX_TRIALS && !done; k++)
		round_of(k, true);
	return k == MAX_TRIALS;   /* the lookup never ended */
}

/* libconvoy.so's executable mapping in pid. */
static bool shim_code(pid_t pid, unsigned long *lo, unsigned long *hi)
{
	char path[64], line[512];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	bool found = false;
	while (f && !found && fgets(line, sizeof line, f))
		found = strstr(line, "libconvoy.so") && strstr(line, " r-xp ") && sscanf(line, "%lx-%lx", lo, hi) == 2;
	if (f)
		fclose(f);
	return found;
}

static long peek(pid_t pid, volatile long *addr)
{
	return ptrace(PTRACE_PEEKDATA, pid, (void *)addr, NULL);
}

/* Resumes pid (how: PTRACE_CONT or PTRACE_SINGLESTEP) with sig, and
 * waits until it stops with `until`, passing any other signal on. False
 * when it ended. */
static bool resume_until(pid_t pid, enum __ptrace_request how, int sig, int until, int *status)
{
	for (;;) {
		if (ptrace(how, pid, NULL, (void *)(long)sig) != 0 || waitpid(pid, status, 0) < 0 ||
		    !WIFSTOPPED(*status))
			return false;
		if (WSTOPSIG(*status) == until)
			return true;
		sig = WSTOPSIG(*status);
	}
}

/* Trial k, the child stopped at its start: single steps until the k-th
 * instruction inside the shim while armed, where SIGUSR1 is delivered.
 * 1 when it was, 0 when the call ended first (no later trial has more
 * steps), -1 when the child ended. */
static int one_trial(pid_t pid, long k, unsigned long lo, unsigned long hi, int *status)
{
	long steps = 0;
	while (peek(pid, &armed) == 0)   /* through raise's return to the call */
		if (!resume_until(pid, PTRACE_SINGLESTEP, 0, SIGTRAP, status))
			return -1;
	while (peek(pid, &armed) == 1) {
		struct user_regs_struct regs;
		if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) != 0)
			return -1;
		if (regs.rip >= lo && regs.rip < hi && ++steps == k)
			return resume_until(pid, PTRACE_CONT, SIGUSR1, SIGURG, status) ? 1 : -1;
		if (!resume_until(pid, PTRACE_SINGLESTEP, 0, SIGTRAP, status))
			return -1;
	}
	return 0;
}

int main(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
			_exit(77);
		raise(SIGSTOP);
		int rc = traced();
		fflush(stdout);
		_exit(rc);
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return 1;
	if (!WIFSTOPPED(status)) {
		printf("ptrace is not allowed here\n");
		return 77;
	}
	unsigned long lo, hi;
	if (!shim_code(pid, &lo, &hi)) {
		printf("libconvoy.so is not loaded: run this under the shim\n");
		kill(pid, SIGKILL);
		return 1;
	}
	long k = 1;
	int rc = -1;
	while (resume_until(pid, PTRACE_CONT, 0, SIGSTOP, &status) &&   /* to trial k's start */
	       (rc = one_trial(pid, k, lo, hi, &status)) == 1)
		k++;
	/* Trial k had no signal: the child ends after it. */
	if (rc == 0 && (ptrace(PTRACE_POKEDATA, pid, (void *)&done, (void *)1L) != 0 ||
			ptrace(PTRACE_CONT, pid, NULL, NULL) != 0 || waitpid(pid, &status, 0) < 0))
		return 1;
	if (WIFSIGNALED(status)) {
		printf("the traced program was killed by signal %d (%s) in trial %ld\n", WTERMSIG(status),
		       strsignal(WTERMSIG(status)), k);
		return 1;
	}
	if (rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		printf("the traced program failed (status %#x) in trial %ld\n", status, k);
		kill(pid, SIGKILL);
		return 1;
	}
	printf("ok: %ld trials, a signal at each instruction of the shim's lookup and memo\n", k - 1);
	return 0;
}
