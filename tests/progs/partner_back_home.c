/* partner_back_home.c — run under libconvoy.so (tests/shim/fastpath.c): a
 * lock that a short-lived lock's fill moved to the partner of its own
 * entry of the shim's cache goes back to that entry once the short-lived
 * one is destroyed (preload/shim.h, cv__ways_miss_n: a find in the
 * partner beside a retired record is a miss, whose fill puts it home), so
 * that its later acquisitions take the fast path again.
 *
 * White-box (preload/shim.h, cv__way_n): from a pool of rwlocks, A and B
 * hash to one entry of the thread's rwlock cache; R, the reference, to a
 * pair of entries of its own. A is read-locked, then B, whose fill takes
 * A's entry and moves A to the entry's partner; A's next pair comes from
 * the partner (the control: the steps tell the paths apart). B is
 * destroyed, A taken once (the slow path's fill): A's next pair is the
 * fast path's. The same with two semaphores, whose cache is one fixed
 * entry and its partner.
 *
 * A forked, traced child does the locking; before and after each measured
 * pair it stops itself, and the tracer single-steps the pair and counts
 * the instructions executed inside libconvoy.so: R's pair, warm and at
 * home, is the fast path's count. Counts, not timings. Run with
 * CONVOY_HOLD_SAMPLE=1073741824: a pair whose hold is sampled takes
 * another path.
 *
 * Exit 0 and "ok: ..." when the counts are as said; 1 otherwise; 77 when
 * ptrace is not allowed here.
 */
#include <pthread.h>
#include <semaphore.h>
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

static void pair(void *rw)
{
	if (pthread_rwlock_rdlock(rw) != 0 || pthread_rwlock_unlock(rw) != 0)
		_exit(3);
}

static sem_t s1, s2;

static void sem_pair(void *s)
{
	if (sem_wait(s) != 0 || sem_post(s) != 0)
		_exit(3);
}

/* One pair of lock, between two stops: the tracer counts its steps. */
static void measured(void (*op)(void *), void *lock)
{
	raise(SIGSTOP);
	op(lock);
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
	measured(pair, r);   /* the fast path */
	pair(a);
	pair(b);   /* a to the partner */
	measured(pair, a);   /* the control */
	if (pthread_rwlock_destroy(b) != 0)
		return 3;
	pair(a);   /* beside a retired record: a miss, filled home */
	measured(pair, a);

	if (sem_init(&s1, 0, 1) != 0 || sem_init(&s2, 0, 1) != 0)
		return 3;
	for (int i = 0; i < 4; i++)
		sem_pair(&s1);
	measured(sem_pair, &s1);   /* at home */
	sem_pair(&s2);   /* s1 to the partner */
	measured(sem_pair, &s1);   /* the control */
	if (sem_destroy(&s2) != 0)
		return 3;
	sem_pair(&s1);   /* beside a retired record: a miss, filled home */
	measured(sem_pair, &s1);
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
	static const char *const what[] = { "a read lock at home", "from the partner", "after the lock at home was destroyed",
					     "a semaphore at home", "from the partner", "after the semaphore at home was destroyed" };
	enum { N = sizeof(what) / sizeof(what[0]) };
	long steps[N];
	for (int i = 0; i < N; i++)
		if ((steps[i] = count_steps(pid, lo, hi)) < 0) {
			printf("the traced child ended before measure %d\n", i);
			return 1;
		}
	int status;
	if (ptrace(PTRACE_CONT, pid, NULL, NULL) != 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		printf("the traced child failed (status %#x)\n", status);
		return 1;
	}
	bool ok = true;
	for (int i = 0; i < N; i += 3)
		ok &= steps[i] > 0 && steps[i + 1] > steps[i] && steps[i + 2] == steps[i];
	printf("%s: instructions in the shim for one pair (rdlock+unlock, then sem_wait+sem_post):", ok ? "ok" : "wrong");
	for (int i = 0; i < N; i++)
		printf(" %s %ld%s", what[i], steps[i], i < N - 1 ? "," : "\n");
	return ok ? 0 : 1;
}
