/* order_memo_signal.c — run under libconvoy.so (tests/shim/fastpath.c):
 * signal handlers that change the held set while the shim looks up a
 * lock's order edges and remembers them (preload/shim.h,
 * cv__lock_attempt_remembered, cv__order_checked).
 *
 * The lock-order memo says "the edges from this held set to o were looked
 * up", so that the next acquisition of o on top of the same set skips the
 * lookup. A handler that runs during the lookup and returns holding x
 * changes the set: a memo made for the set with x would claim x -> o,
 * never looked up, and hide it for as long as the memo lives.
 *
 * The program forks a child that it traces. The child warms up: a -> o is
 * a known edge, o's record is in the shim's caches.
 *
 * `order_memo_signal` (sweep): trial k, with a held, takes o, whose memo on
 * a's slot the three other locks taken since pushed out, so the shim looks
 * the edges up and remembers them. The tracer runs that call to and
 * delivers SIGUSR1 at its k-th instruction inside libconvoy.so. The
 * handler locks a mutex of its own for the trial (oms_x<k>) and returns
 * holding it. The child then lets o go and takes it again, which must look
 * up oms_x<k> -> o, and takes a lock new to it, oms_y<k>, which says
 * whether oms_x<k> was in the held set then (the edge oms_x<k> ->
 * oms_y<k>). Each trial's call begins in the same state (o at home in
 * the shim's mutex cache, in a pair of entries no other lock of the
 * program's maps to; no hold-time sample: CONVOY_HOLD_SAMPLE=1073741824), and the tracer
 * checks that trial k's signal lands where the k-th step in the shim of an
 * unsignalled first trial was (the same occurrence of the same
 * instruction, at the same stack depth, inside the call): so every
 * instruction of that call gets a signal in one trial. The trials end
 * after the first trial's count of steps (the last round runs
 * untraced). Wherever oms_x<k> was in the set then, the report must have
 * oms_x<k> -> o.
 *
 * `order_memo_signal aba`: with a and L held, the call that takes o gets
 * two signals: the first handler, at the entry of the shim's lookup
 * (cv__lockorder_attempt, found in libconvoy.so's symbol table), releases
 * L; the second, as the lookup returns, takes L back. The set after the
 * lookup is the set before it, but the lookup read it without L. The
 * report must have L -> o (the child's second acquisition of o under a
 * and L looks it up) wherever it has L -> aba_y (L was in the set).
 *
 * (A handler that interrupts the push or pop of a lock between the read of
 * the held count and its store changes the set in ways this does not
 * test, a limit of the shim's lock-free held set: lockorder.c.)
 *
 * White-box (preload/shim.h, cv__way): the locks are picked from pools by
 * their cache entry. With o's entry or its partner shared, whether o was
 * still cached depended on where the address layout put the others, and
 * the calls' paths with it (helper-78: 16 of 64 runs diverged; helper-79:
 * 4 of 10 once a displaced record could go over one at home).
 *
 * Exit 0 and "ok: ..." when every trial ran as said; 1 otherwise; 77 when
 * ptrace is not allowed here.
 */
#include <sys/user.h>

#include <convoy.h>

#include "progs.h"
#include "shimtrace.h"

#include "../../preload/shim.h"

#define MAX_TRIALS 2000   /* far more than the instructions of the shim's lookup */

/* Zero: PTHREAD_MUTEX_INITIALIZER. o is pool[0]; every other lock is one
 * whose cache entry is not in o's pair (not_os). */
static pthread_mutex_t pool[16], spare[5 * MAX_TRIALS];
static size_t spares;   /* spare[] taken so far */
static pthread_mutex_t *oms_o, *oms_a, *evict[3], *aba_l, *aba_y, *x[MAX_TRIALS], *y[MAX_TRIALS];

/* Read and written by the tracer (the same addresses in its traced child:
 * a fork). */
static volatile long armed, done, trial, holds_l;
static volatile char took[MAX_TRIALS];
static bool aba;

static void handler(int sig)
{
	(void)sig;
	if (aba) {
		if (holds_l)
			pthread_mutex_unlock(aba_l);
		else
			pthread_mutex_lock(aba_l);
		holds_l = !holds_l;
	} else if (pthread_mutex_lock(x[trial]) == 0) {
		took[trial] = 1;   /* and kept: the handler returns holding it */
	}
	raise(SIGURG);   /* the tracer goes on */
}

/* The index of addr's entry in the shim's mutex cache. */
static unsigned way_of(const void *addr)
{
	static struct cv_way ways[CV_MUTEX_WAYS];
	return (unsigned)(cv__way(ways, addr) - ways);
}

/* The next mutex of from[*next..n) whose cache entry is neither o's nor
 * its partner: a record filled there would move the one it displaced over
 * o (objects.c, cache_fill). */
static pthread_mutex_t *not_os(pthread_mutex_t *from, size_t n, size_t *next)
{
	while (*next < n && way_of(&from[*next]) >> 1 == way_of(oms_o) >> 1)
		++*next;
	if (*next == n) {
		fprintf(stderr, "order_memo_signal: too few mutexes outside o's cache entry\n");
		exit(1);
	}
	return &from[(*next)++];
}

static void pick_locks(void)
{
	size_t next = 1;
	oms_o = &pool[0];
	oms_a = not_os(pool, 16, &next);
	for (int i = 0; i < 3; i++)
		evict[i] = not_os(pool, 16, &next);
	aba_l = not_os(pool, 16, &next);
	aba_y = not_os(pool, 16, &next);
	convoy_name_object(oms_o, "oms_o");
	convoy_name_object(oms_a, "oms_a");
}

static void named(pthread_mutex_t *m, const char *prefix, long k)
{
	char name[32];
	snprintf(name, sizeof name, "%s%ld", prefix, k);
	convoy_name_object(m, name);
}

/* a held, o's cache entry filled; o's memo on a's slot pushed out by the
 * three other locks taken on top of a at the end of the round before
 * (three memos a slot). */
static void round_of(long k, bool traced_round)
{
	if (traced_round) {
		x[k] = not_os(spare, sizeof spare / sizeof spare[0], &spares);
		y[k] = not_os(spare, sizeof spare / sizeof spare[0], &spares);
		named(x[k], "oms_x", k);
		named(y[k], "oms_y", k);
		trial = k;
	}
	pthread_mutex_lock(oms_o);
	pthread_mutex_unlock(oms_o);
	pthread_mutex_lock(oms_a);
	if (traced_round) {
		raise(SIGSTOP);   /* the tracer single-steps from here */
		armed = 1;
	}
	pthread_mutex_lock(oms_o);
	armed = 0;
	pthread_mutex_unlock(oms_o);
	pthread_mutex_lock(oms_o);   /* on top of a and, if the handler ran, x[k] */
	pthread_mutex_unlock(oms_o);
	if (traced_round) {
		pthread_mutex_lock(y[k]);   /* new: its edges are looked up */
		pthread_mutex_unlock(y[k]);
		if (took[k])
			pthread_mutex_unlock(x[k]);
	}
	for (int i = 0; i < 3; i++) {
		pthread_mutex_lock(evict[i]);
		pthread_mutex_unlock(evict[i]);
	}
	pthread_mutex_unlock(oms_a);
}

/* a -> o and a -> L known; L -> o never taken before the traced call. */
static void aba_round(void)
{
	convoy_name_object(aba_l, "aba_l");
	convoy_name_object(aba_y, "aba_y");
	for (int i = 0; i < 5; i++) {
		pthread_mutex_lock(oms_a);
		pthread_mutex_lock(oms_o);
		pthread_mutex_unlock(oms_o);
		pthread_mutex_lock(aba_l);
		pthread_mutex_unlock(aba_l);
		pthread_mutex_unlock(oms_a);
	}
	pthread_mutex_lock(oms_a);
	pthread_mutex_lock(aba_l);
	holds_l = 1;
	raise(SIGSTOP);
	armed = 1;
	pthread_mutex_lock(oms_o);   /* the two signals */
	armed = 0;
	pthread_mutex_unlock(oms_o);
	pthread_mutex_lock(oms_o);   /* under a and L again: must look up L -> o */
	pthread_mutex_lock(aba_y);   /* L in the set: L -> y */
	pthread_mutex_unlock(aba_y);
	pthread_mutex_unlock(oms_o);
	if (holds_l)
		pthread_mutex_unlock(aba_l);
	pthread_mutex_unlock(oms_a);
}

static void *nothing(void *arg)
{
	return arg;
}

static int traced(void)
{
	struct sigaction sa = { .sa_handler = handler };
	MUST(sigaction(SIGUSR1, &sa, NULL));
	pick_locks();
	pthread_t t;   /* glibc's multi-threaded path, which the shim takes over */
	MUST(pthread_create(&t, NULL, nothing, NULL));
	MUST(pthread_join(t, NULL));
	for (int i = 0; i < 10; i++)
		round_of(0, false);
	if (aba) {
		aba_round();
		return 0;
	}
	long k;
	for (k = 0; k < MAX_TRIALS && !done; k++)   /* trial 0: the tracer's reference */
		round_of(k, true);
	return k == MAX_TRIALS;   /* the lookup never ended */
}

static struct step {
	unsigned long long pc, sp;
} ref[1 << 16];   /* trial 0's instructions in the shim, and the stack pointer at each */
static long nref;

/* Trial k, the child stopped at its start: on to the k-th instruction
 * inside the shim while armed, where SIGUSR1 is delivered; trial 0
 * single-steps the call and notes its instructions in ref instead. Trial
 * k runs to the occurrence of that instruction that trial 0 had there
 * under a breakpoint (shimtrace.h, run_on_to; stepping to it made the
 * trials' steps grow as k squared: 105,000 steps, 6 s of the kernel's
 * time), and checks that it is still inside the call, with the stack
 * pointer trial 0 had. 1
 * when the signal was delivered (or trial 0 ended), 0 when the call had
 * fewer than k instructions (no later trial has more), 2 when its path
 * left trial 0's, -1 when the child ended. */
static int one_trial(pid_t pid, long k, unsigned long lo, unsigned long hi, int *status)
{
	while (peek(pid, &armed) == 0)   /* through raise's return to the call */
		if (!resume_until(pid, PTRACE_SINGLESTEP, 0, SIGTRAP, status))
			return -1;
	if (k == 0) {
		for (struct user_regs_struct regs; peek(pid, &armed) == 1;) {
			if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) != 0)
				return -1;
			bool again = nref && same_step(ref[nref - 1].pc, ref[nref - 1].sp, regs.rip, regs.rsp);
			if (regs.rip >= lo && regs.rip < hi && !again && nref < (long)(sizeof ref / sizeof ref[0]))
				ref[nref++] = (struct step){ regs.rip, regs.rsp };
			if (!resume_until(pid, PTRACE_SINGLESTEP, 0, SIGTRAP, status))
				return -1;
		}
		return 1;
	}
	if (k > nref)
		return 0;
	const struct step at = ref[k - 1];
	long occurrence = 0, hits = 0;
	for (long i = 0; i < k; i++)
		occurrence += ref[i].pc == at.pc;
	int arrived;
	while ((arrived = run_on_to(pid, at.pc, SIGSTOP, status)) == 1 && ++hits < occurrence)
		continue;
	if (arrived != 1)
		return arrived;   /* 2: the next trial's start (SIGSTOP), this one never got there */
	struct user_regs_struct regs;
	if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) != 0)
		return -1;
	if (peek(pid, &armed) != 1 || regs.rsp != at.sp)
		return 2;
	return resume_until(pid, PTRACE_CONT, SIGUSR1, SIGURG, status) ? 1 : -1;
}

/* The aba case: SIGUSR1 at the lookup's entry and again at its return
 * address. */
static bool two_signals(pid_t pid, unsigned long lookup, int *status)
{
	unsigned long long back = 0;
	while (peek(pid, &armed) == 0)
		if (!resume_until(pid, PTRACE_SINGLESTEP, 0, SIGTRAP, status))
			return false;
	while (peek(pid, &armed) == 1) {
		struct user_regs_struct regs;
		if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) != 0)
			return false;
		if (!back && regs.rip == lookup) {
			back = (unsigned long long)peek(pid, (void *)regs.rsp);   /* its return address */
			if (!resume_until(pid, PTRACE_CONT, SIGUSR1, SIGURG, status))
				return false;
		} else if (back && regs.rip == back) {
			return resume_until(pid, PTRACE_CONT, SIGUSR1, SIGURG, status);
		}
		if (!resume_until(pid, PTRACE_SINGLESTEP, 0, SIGTRAP, status))
			return false;
	}
	printf("the call ended before the lookup %s\n", back ? "returned" : "began");
	return false;
}

int main(int argc, char **argv)
{
	aba = argc > 1 && !strcmp(argv[1], "aba");
	pid_t pid = traced_child(traced);
	if (pid <= 0) {
		printf("%s\n", pid ? "fork or waitpid failed" : "ptrace is not allowed here");
		return pid ? 1 : 77;
	}
	int status;
	unsigned long lo = 0, hi = 0, base = 0;
	char so[400];
	if (!shim_mapping(pid, &lo, &hi, &base, so, sizeof so)) {
		printf("libconvoy.so is not loaded: run this under the shim\n");
		kill(pid, SIGKILL);
		return 1;
	}
	long k = 0;
	int rc = -1;
	if (aba) {
		GElf_Sym lookup;
		if (!shim_symbol(so, "cv__lockorder_attempt", &lookup)) {
			printf("no cv__lockorder_attempt in %s's symbol table\n", so);
			kill(pid, SIGKILL);
			return 1;
		}
		if (!resume_until(pid, PTRACE_CONT, 0, SIGSTOP, &status) || !two_signals(pid, base + lookup.st_value, &status) ||
		    ptrace(PTRACE_CONT, pid, NULL, NULL) != 0 || waitpid(pid, &status, 0) < 0) {
			kill(pid, SIGKILL);
			return 1;
		}
		rc = 0;
	} else {
		while (resume_until(pid, PTRACE_CONT, 0, SIGSTOP, &status) &&   /* to trial k's start */
		       (rc = one_trial(pid, k, lo, hi, &status)) == 1)
			k++;
		if (rc == 2) {
			printf("trial %ld left the reference trial's path in the shim before its signal\n", k);
			kill(pid, SIGKILL);
			return 1;
		}
		/* Trial k had no signal: the child ends after it. */
		if (rc == 0 && (ptrace(PTRACE_POKEDATA, pid, (void *)&done, (void *)1L) != 0 ||
				ptrace(PTRACE_CONT, pid, NULL, NULL) != 0 || waitpid(pid, &status, 0) < 0))
			return 1;
	}
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
	if (aba)
		printf("ok: two signals, at the lookup's entry and at its return\n");
	else
		printf("ok: %ld trials, a signal at each of the %ld instructions of the shim's call\n", k - 1, nref);
	return 0;
}
