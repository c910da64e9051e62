/* partner_back_home.c — run under libconvoy.so (tests/shim/fastpath.c): a
 * lock found in the partner of its own entry of the shim's cache goes back
 * to that entry (preload/shim.h, cv__ways_miss_n), so that its later
 * acquisitions take the fast path again.
 *
 * White-box (preload/shim.h, cv__way_n): from a pool of rwlocks, A and B
 * hash to one entry of the thread's rwlock cache; R, the reference, to a
 * pair of entries of its own. A is read-locked, then B, whose fill takes
 * A's entry and moves A to the entry's partner. Then, in two rounds:
 *
 *   retired: B is destroyed (its entry emptied); A's next read lock finds
 *            A in the partner beside an empty entry;
 *   unused:  B is made again and taken once (A back in the partner), then
 *            left alone while A is read-locked CV_PARTNER_HITS_MAX times.
 *
 * A forked, traced child does the locking; before and after each measured
 * rdlock+unlock it stops itself, and the tracer single-steps the call and
 * counts the instructions executed inside libconvoy.so. R's pair, warm and
 * at home, is the fast path's count. A's first acquisition from the
 * partner in the unused round must count more (the control: the steps tell
 * the paths apart); A's next pair after each round's moves, exactly R's.
 * Counts, not timings. Run with CONVOY_HOLD_SAMPLE=1073741824: a pair
 * whose hold is sampled takes another path.
 *
 * Exit 0 and "ok: ..." when the counts are as said; 1 otherwise; 77 when
 * ptrace is not allowed here.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shimtrace.h"

#include "../../preload/shim.h"

static pthread_rwlock_t pool[1024], *a, *b, *r;

/* p's entry in the thread's rwlock cache. */
static unsigned entry_of(const void *p)
{
	static struct cv_way cache[CV_RWLOCK_WAYS];
	return (unsigned)(cv__way_n(cache, CV_RWLOCK_WAYS, p) - cache);
}

/* a, b in one entry; r in a pair of entries of its own. */
static bool pick(void)
{
	a = &pool[0];
	for (size_t i = 1; i < sizeof(pool) / sizeof(pool[0]) && (!b || !r); i++) {
		unsigned e = entry_of(&pool[i]);
		if (!b && e == entry_of(a))
			b = &pool[i];
		else if (!r && e >> 1 != entry_of(a) >> 1)
			r = &pool[i];
	}
	return b && r;
}

static void pair(pthread_rwlock_t *rw)
{
	if (pthread_rwlock_rdlock(rw) != 0 || pthread_rwlock_unlock(rw) != 0)
		_exit(3);
}

/* One pair of rw, between two stops: the tracer counts its steps. */
static void measured(pthread_rwlock_t *rw)
{
	raise(SIGSTOP);
	pair(rw);
	raise(SIGSTOP);
}

static void *nothing(void *arg)
{
	return arg;
}

static int child(void)
{
	pthread_t t;   /* glibc's multi-threaded path, as a thread profiler sees it */
	if (pthread_create(&t, NULL, nothing, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 2;
	for (int i = 0; i < 4; i++)
		pair(r);
	measured(r);   /* the fast path */

	pair(a);
	pair(b);   /* a to the partner */
	if (pthread_rwlock_destroy(b) != 0)
		return 3;
	pair(a);   /* found beside a retired entry: home */
	measured(a);

	if (pthread_rwlock_init(b, NULL) != 0)
		return 3;
	pair(b);   /* a to the partner again */
	measured(a);   /* the control: from the partner */
	for (unsigned i = 2; i < CV_PARTNER_HITS_MAX; i++)
		pair(a);
	pair(a);   /* the last hit there: home */
	measured(a);
	return 0;
}

/* Steps inside [lo, hi) from one stop of pid to its next; -1 when it ended. */
static long count_steps(pid_t pid, unsigned long lo, unsigned long hi)
{
	int status, sig = 0;
	if (!resume_until(pid, PTRACE_CONT, 0, SIGSTOP, &status))
		return -1;
	long steps = 0;
	for (;;) {
		int r = resume_once(pid, PTRACE_SINGLESTEP, &sig, SIGSTOP, &status);
		if (r < 0)
			return -1;
		if (r == 2)
			return steps;
		struct user_regs_struct regs;
		if (r == 1 && ptrace(PTRACE_GETREGS, pid, NULL, &regs) == 0 && regs.rip >= lo && regs.rip < hi)
			steps++;
	}
}

int main(void)
{
	if (!pick()) {
		printf("no two rwlocks of the pool in one cache entry\n");
		return 1;
	}
	pid_t pid = traced_child(child);
	if (pid <= 0) {
		printf("%s\n", pid ? "fork or waitpid failed" : "ptrace is not allowed here");
		return pid ? 1 : 77;
	}
	unsigned long lo, hi;
	if (!shim_mapping(pid, &lo, &hi, NULL, NULL, 0)) {
		printf("libconvoy.so is not loaded: run this under the shim\n");
		kill(pid, SIGKILL);
		return 1;
	}
	static const char *const what[] = { "R at home", "A after its entry's lock was destroyed",
					     "A from the partner", "A after its last hit there" };
	long steps[4];
	for (int i = 0; i < 4; i++)
		if ((steps[i] = count_steps(pid, lo, hi)) < 0) {
			printf("the traced child ended before step %d\n", i);
			return 1;
		}
	int status;
	if (ptrace(PTRACE_CONT, pid, NULL, NULL) != 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		printf("the traced child failed (status %#x)\n", status);
		return 1;
	}
	bool ok = steps[0] > 0 && steps[1] == steps[0] && steps[2] > steps[0] && steps[3] == steps[0];
	printf("%s: instructions in the shim for one rdlock+unlock:", ok ? "ok" : "wrong");
	for (int i = 0; i < 4; i++)
		printf(" %s %ld%s", what[i], steps[i], i < 3 ? "," : "\n");
	return ok ? 0 : 1;
}
