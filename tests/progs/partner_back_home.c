/* partner_back_home.c — run under libconvoy.so (tests/shim/fastpath.c): a
 * lock found in the partner of its own entry of the shim's cache goes back
 * to that entry (preload/shim.h, cv__ways_miss_n), so that its later
 * acquisitions take the fast path again.
 *
 * White-box (preload/shim.h, cv__way_n): from a pool of rwlocks, A and B
 * hash to one entry of the thread's rwlock cache; R, the reference, to a
 * pair of entries of its own. A is read-locked, then B, whose fill takes
 * A's entry and moves A to the entry's partner. Then, in three rounds:
 *
 *   retired: B is destroyed (its entry emptied); A's next read lock finds
 *            A in the partner beside an empty entry, and moves it home;
 *   unused:  B is made again and taken once (A back in the partner), then
 *            left alone while A is read-locked over two windows of
 *            CV_PARTNER_WINDOW finds in the partner (the first takes B's
 *            uses, the second sees them unchanged): A goes home at the
 *            last;
 *   rare:    A, at home, is taken twice for each time B, in the partner,
 *            is, over five of B's windows: A stays at home (each of A's
 *            pairs is measured);
 *   sem:     a semaphore S1 waited for and posted at home, then from the
 *            partner of the semaphore cache's fixed entry beside a live S2
 *            (the control), then after S2 was destroyed: home again (the
 *            semaphores' rule: only beside a retired record, preload/sem.c).
 *
 * A forked, traced child does the locking; before and after each measured
 * rdlock+unlock it stops itself, and the tracer single-steps the call and
 * counts the instructions executed inside libconvoy.so. R's pair, warm and
 * at home, is the fast path's count. A's first acquisition from the
 * partner in the unused round must count more (the control: the steps tell
 * the paths apart); A's pair after each round, exactly R's.
 * Counts, not timings. Run with CONVOY_HOLD_SAMPLE=1073741824: a pair
 * whose hold is sampled takes another path.
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

#define RARE_ROUNDS (5 * (int)CV_PARTNER_WINDOW)   /* the rare round's: A, A, B */

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

static sem_t s1, s2;

static void sem_pair(sem_t *s)
{
	if (sem_wait(s) != 0 || sem_post(s) != 0)
		_exit(3);
}

static void sem_measured(sem_t *s)
{
	raise(SIGSTOP);
	sem_pair(s);
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
	measured(a);   /* the control: the window's first find in the partner */
	for (unsigned i = 2; i < 2 * CV_PARTNER_WINDOW; i++)
		pair(a);
	pair(a);   /* the second window's last, b unused: home */
	measured(a);

	for (int i = 0; i < RARE_ROUNDS; i++) {   /* b, in the partner, used and rare */
		measured(a);
		measured(a);
		pair(b);
	}

	if (sem_init(&s1, 0, 1) != 0 || sem_init(&s2, 0, 1) != 0)
		return 3;
	for (int i = 0; i < 4; i++)
		sem_pair(&s1);
	sem_measured(&s1);   /* at home */
	sem_pair(&s2);   /* s1 to the partner */
	sem_measured(&s1);   /* the control */
	if (sem_destroy(&s2) != 0)
		return 3;
	sem_pair(&s1);   /* found beside a retired entry: home */
	sem_measured(&s1);
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
					     "A from the partner", "A after two windows there", "A beside a rare lock" };
	enum { N = sizeof(what) / sizeof(what[0]) };
	long steps[N], rare_away = 0;
	for (int i = 0; i < N - 1 + 2 * RARE_ROUNDS; i++) {
		long n = count_steps(pid, lo, hi);
		if (n < 0) {
			printf("the traced child ended before measure %d\n", i);
			return 1;
		}
		if (i < N)
			steps[i] = n;
		if (i >= N - 1 && n != steps[0] && !rare_away++)
			steps[N - 1] = n;   /* the rare round's first pair off the fast path */
	}
	long sem[3];   /* at home, from the partner, home again */
	for (int i = 0; i < 3; i++)
		if ((sem[i] = count_steps(pid, lo, hi)) < 0) {
			printf("the traced child ended before the semaphores' measure %d\n", i);
			return 1;
		}
	int status;
	if (ptrace(PTRACE_CONT, pid, NULL, NULL) != 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		printf("the traced child failed (status %#x)\n", status);
		return 1;
	}
	bool ok = steps[0] > 0 && steps[1] == steps[0] && steps[2] > steps[0] && steps[3] == steps[0] &&
		  !rare_away && sem[0] > 0 && sem[1] > sem[0] && sem[2] == sem[0];
	printf("%s: instructions in the shim for one rdlock+unlock:", ok ? "ok" : "wrong");
	for (int i = 0; i < N; i++)
		printf(" %s %ld,", what[i], steps[i]);
	printf(" %ld of its %d pairs not; for one sem_wait+sem_post: at home %ld, from the partner %ld, "
	       "after the semaphore at home was destroyed %ld\n", rare_away, 2 * RARE_ROUNDS, sem[0], sem[1], sem[2]);
	return ok ? 0 : 1;
}
