/* cases.c — one conformance case per interposed function.
 *
 * `cases NAME` runs NAME's case and prints one line per observation: each
 * return value with its name, errno after the call (or "kept" when the call
 * left the caller's sentinel alone), and the side effects (the mutex word's
 * owner and flag bits, recursion counts, semaphore values, who holds a lock
 * as seen by another thread, how many waiters were woken). test_conformance
 * runs each case natively and under LD_PRELOAD=libconvoy.so and compares
 * the lines exactly. Nothing here depends on timing: deadlines are already
 * expired or invalid, and every other thread is ordered by semaphores and
 * joins, with all printing done by main after the join.
 *
 * The list of cases is generated from CV_REAL_FUNCS (preload/shim.h), the
 * table the shim resolves its real functions from: adding a function to the
 * table without writing case_NAME here fails the build. The names the shim
 * exports beside that table (the C11 ones, and the exec, exit and signal
 * variants, and libgomp's entry points) are in C11_FUNCS, OTHER_FUNCS and
 * GOMP_FUNCS below, and test_conformance
 * checks that every name preload/exports.map exports has a case.
 * `cases --list` prints the names.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <omp.h>
#include <pthread.h>
#include <semaphore.h>
#include <spawn.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

/* glibc's __owner values for a robust mutex whose owner died (nptl/pthreadP.h). */
#define OWNER_INCONSISTENT     0x7fffffff
#define OWNER_NOTRECOVERABLE   0x7ffffffe

#define SENTINEL 4242   /* errno before every call: "kept" when it is still there */

static const char *err_name(int e)
{
	if (e == 0)
		return "OK";
	const char *n = strerrorname_np(e);
	return n ? n : "?";
}

/* rc with its error name when it is an error number (the pthread and C11
 * functions' convention; named is false for counts and syscall results). */
static void show(const char *label, long rc, int err, bool named)
{
	printf("%s: %ld", label, rc);
	if (named)
		printf(" %s", rc >= 0 && rc < 4096 ? err_name((int)rc) : "?");
	if (err == SENTINEL)
		printf(", errno kept\n");
	else
		printf(", errno %s\n", err_name(err));
}

/* Calls expr with errno set to the sentinel; prints its value and errno. */
#define CALL_AS(label, expr, named)                       \
	({                                                \
		errno = SENTINEL;                         \
		long call_rc_ = (long)(expr);             \
		int call_err_ = errno;                    \
		show((label), call_rc_, call_err_, named); \
		errno = 0;                                \
		call_rc_;                                 \
	})
#define CALL(label, expr)  CALL_AS(label, expr, true)    /* returns an error number */
#define CALLN(label, expr) CALL_AS(label, expr, false)   /* returns a count, a flag, -1 */

#define MUST(expr)                                                                       \
	do {                                                                             \
		int must_rc_ = (expr);                                                   \
		if (must_rc_ != 0) {                                                     \
			fprintf(stderr, "cases: %s:%d: %s: %s\n", __FILE__, __LINE__, #expr, \
				err_name(must_rc_));                                     \
			exit(99);                                                        \
		}                                                                        \
	} while (0)

static const struct timespec expired = { 0, 0 };             /* 1970: long past on every clock */
static const struct timespec bad_nsec = { 0, 1000000000 };   /* EINVAL where it is checked */

/* ---- mutex state ----------------------------------------------------------- */

/* The lock word, the owner and the counts, with this thread's tid as "self":
 * the shim must leave glibc's representation exactly as glibc makes it. */
static void mutex_state(const char *label, const pthread_mutex_t *m)
{
	int word = m->__data.__lock, owner = m->__data.__owner, tid = gettid();
	char w[64];
	if (word != 0 && (word & FUTEX_TID_MASK) == tid)
		snprintf(w, sizeof(w), "self|%#x", (unsigned)word & ~FUTEX_TID_MASK);
	else if ((word & FUTEX_TID_MASK) > 2)
		snprintf(w, sizeof(w), "other|%#x", (unsigned)word & ~FUTEX_TID_MASK);
	else
		snprintf(w, sizeof(w), "%d", word);
	printf("%s: word %s, owner %s, count %u, nusers %u\n", label, w,
	       owner == 0 ? "none" : owner == tid ? "self" : owner == OWNER_INCONSISTENT ? "inconsistent" :
	       owner == OWNER_NOTRECOVERABLE ? "notrecoverable" : "other",
	       m->__data.__count, m->__data.__nusers);
}

/* Another thread's view: its trylock's result (and an unlock if it got it). */
static void *other_trylock(void *arg)
{
	int rc = pthread_mutex_trylock(arg);
	if (rc == 0 || rc == EOWNERDEAD) {
		if (rc == EOWNERDEAD)
			pthread_mutex_consistent(arg);
		pthread_mutex_unlock(arg);
	}
	return (void *)(long)rc;
}

static void other_view(const char *label, pthread_mutex_t *m)
{
	pthread_t t;
	void *rc;
	MUST(pthread_create(&t, NULL, other_trylock, m));
	MUST(pthread_join(t, &rc));
	printf("%s: other thread's trylock %s\n", label, err_name((int)(long)rc));
}

enum { NORMAL, ERRORCHECK, RECURSIVE, ROBUST, PI, ROBUST_PI, PSHARED, NKINDS };
static const char *const kind_name[NKINDS] = { "normal", "errorcheck", "recursive", "robust", "pi",
					       "robust-pi", "pshared" };

static void mutex_init_kind(pthread_mutex_t *m, int kind)
{
	pthread_mutexattr_t a;
	MUST(pthread_mutexattr_init(&a));
	switch (kind) {
	case ERRORCHECK: MUST(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK)); break;
	case RECURSIVE:  MUST(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE)); break;
	case ROBUST:     MUST(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST)); break;
	case PI:         MUST(pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT)); break;
	case ROBUST_PI:
		MUST(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST));
		MUST(pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT));
		break;
	case PSHARED:    MUST(pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED)); break;
	}
	MUST(pthread_mutex_init(m, &a));
	pthread_mutexattr_destroy(&a);
}

/* Memory another process sees: for the PTHREAD_PROCESS_SHARED cases. */
static void *shared_page(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("cases: mmap");
		exit(99);
	}
	return p;
}

/* Runs fn in a child process; its lines come first (flushed), then its status. */
static void in_child(const char *label, void (*fn)(void *), void *arg)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		fn(arg);
		fflush(stdout);
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	printf("%s: child %s %d\n", label, WIFEXITED(status) ? "exited" : "killed",
	       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

/* A thread that locks m and ends without unlocking it (robust: owner died). */
static void *lock_and_die(void *m)
{
	pthread_mutex_lock(m);
	return NULL;
}

static void abandon(pthread_mutex_t *m)
{
	pthread_t t;
	MUST(pthread_create(&t, NULL, lock_and_die, m));
	MUST(pthread_join(t, NULL));
}

/* ---- pthread_mutex_* ------------------------------------------------------- */

static void case_pthread_mutex_init(void)
{
	pthread_mutex_t m;
	for (int k = 0; k < NKINDS; k++) {
		char l[64];
		snprintf(l, sizeof(l), "init %s", kind_name[k]);
		mutex_init_kind(&m, k);   /* through the wrapper; then the state it made */
		mutex_state(l, &m);
		printf("%s: kind %#x\n", l, (unsigned)m.__data.__kind);
		CALL("destroy", pthread_mutex_destroy(&m));
	}
	pthread_mutexattr_t a;
	MUST(pthread_mutexattr_init(&a));
	CALL("init with attr", pthread_mutex_init(&m, &a));
	CALL("init with NULL attr", pthread_mutex_init(&m, NULL));
	mutex_state("after init", &m);
	/* A priority-protect mutex whose ceiling is out of range. */
	MUST(pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_PROTECT));
	pthread_mutexattr_setprioceiling(&a, 0);
	CALL("init prio-protect", pthread_mutex_init(&m, &a));
}

static void case_pthread_mutex_destroy(void)
{
	for (int k = 0; k < NKINDS; k++) {
		pthread_mutex_t m;
		mutex_init_kind(&m, k);
		printf("%s:\n", kind_name[k]);
		CALL("lock", pthread_mutex_lock(&m));
		CALL("destroy while locked", pthread_mutex_destroy(&m));
		mutex_state("after failed destroy", &m);
		CALL("unlock", pthread_mutex_unlock(&m));
		CALL("destroy", pthread_mutex_destroy(&m));
		CALL("init again", pthread_mutex_init(&m, NULL));
		CALL("destroy again", pthread_mutex_destroy(&m));
	}
}

static void case_pthread_mutex_lock(void)
{
	for (int k = 0; k < NKINDS; k++) {
		pthread_mutex_t m;
		mutex_init_kind(&m, k);
		printf("%s:\n", kind_name[k]);
		CALL("lock", pthread_mutex_lock(&m));
		mutex_state("held", &m);
		other_view("held", &m);
		if (k == ERRORCHECK || k == RECURSIVE) {   /* the others deadlock, as asked */
			CALL("relock by owner", pthread_mutex_lock(&m));
			mutex_state("after relock", &m);
			if (k == RECURSIVE)
				CALL("unlock inner", pthread_mutex_unlock(&m));
		}
		CALL("unlock", pthread_mutex_unlock(&m));
		mutex_state("released", &m);
		other_view("released", &m);
		pthread_mutex_destroy(&m);
	}
	/* Robust: the owner died; the next locker is told and repairs it, or not. */
	for (int k = ROBUST; k <= ROBUST_PI; k += ROBUST_PI - ROBUST) {
		pthread_mutex_t m;
		mutex_init_kind(&m, k);
		printf("%s, owner died:\n", kind_name[k]);
		abandon(&m);
		CALL("lock", pthread_mutex_lock(&m));
		mutex_state("after EOWNERDEAD", &m);
		CALL("consistent", pthread_mutex_consistent(&m));
		CALL("unlock", pthread_mutex_unlock(&m));
		abandon(&m);
		CALL("lock", pthread_mutex_lock(&m));
		CALL("unlock without consistent", pthread_mutex_unlock(&m));
		mutex_state("unrecoverable", &m);
		CALL("lock unrecoverable", pthread_mutex_lock(&m));
		CALL("destroy", pthread_mutex_destroy(&m));
	}
}

static void pshared_child_lock(void *arg)
{
	pthread_mutex_t *m = arg;
	CALL("child trylock held by parent", pthread_mutex_trylock(m));
}

static void case_pthread_mutex_trylock(void)
{
	for (int k = 0; k < NKINDS; k++) {
		pthread_mutex_t m;
		mutex_init_kind(&m, k);
		printf("%s:\n", kind_name[k]);
		CALL("trylock free", pthread_mutex_trylock(&m));
		mutex_state("held", &m);
		CALL("trylock by owner", pthread_mutex_trylock(&m));
		mutex_state("after trylock by owner", &m);
		if (k == RECURSIVE)
			CALL("unlock inner", pthread_mutex_unlock(&m));
		CALL("unlock", pthread_mutex_unlock(&m));
		pthread_mutex_destroy(&m);
	}
	pthread_mutex_t *pm = shared_page();
	mutex_init_kind(pm, PSHARED);
	CALL("lock shared", pthread_mutex_lock(pm));
	in_child("pshared", pshared_child_lock, pm);
	CALL("unlock shared", pthread_mutex_unlock(pm));
	pthread_mutex_t m;
	mutex_init_kind(&m, ROBUST);
	abandon(&m);
	CALL("trylock, owner died", pthread_mutex_trylock(&m));
	mutex_state("after EOWNERDEAD", &m);
}

typedef int (*timed_fn)(pthread_mutex_t *, const struct timespec *);

static int clocklock_realtime(pthread_mutex_t *m, const struct timespec *ts)
{
	return pthread_mutex_clocklock(m, CLOCK_REALTIME, ts);
}

static int clocklock_monotonic(pthread_mutex_t *m, const struct timespec *ts)
{
	return pthread_mutex_clocklock(m, CLOCK_MONOTONIC, ts);
}

struct holder { pthread_mutex_t *m; sem_t locked, release; };

/* Another thread holds m while the caller's timed locks run. */
static void *hold_until_posted(void *arg)
{
	struct holder *h = arg;
	pthread_mutex_lock(h->m);
	sem_post(&h->locked);
	while (sem_wait(&h->release) != 0)
		;
	pthread_mutex_unlock(h->m);
	return NULL;
}

static void timed_cases(timed_fn fn)
{
	for (int k = 0; k < NKINDS; k++) {
		pthread_mutex_t m;
		mutex_init_kind(&m, k);
		printf("%s:\n", kind_name[k]);
		CALL("free, expired deadline", fn(&m, &expired));
		mutex_state("held", &m);
		CALL("by owner, expired deadline", fn(&m, &expired));
		if (k == RECURSIVE)
			CALL("unlock inner", pthread_mutex_unlock(&m));
		CALL("unlock", pthread_mutex_unlock(&m));
		struct holder h = { .m = &m };
		sem_init(&h.locked, 0, 0);
		sem_init(&h.release, 0, 0);
		pthread_t t;
		MUST(pthread_create(&t, NULL, hold_until_posted, &h));
		while (sem_wait(&h.locked) != 0)
			;
		CALL("held by other, expired deadline", fn(&m, &expired));
		CALL("held by other, invalid deadline", fn(&m, &bad_nsec));
		mutex_state("still the other's", &m);
		sem_post(&h.release);
		MUST(pthread_join(t, NULL));
		CALL("free, invalid deadline", fn(&m, &bad_nsec));
		pthread_mutex_unlock(&m);
		pthread_mutex_destroy(&m);
	}
	pthread_mutex_t m;
	mutex_init_kind(&m, ROBUST);
	abandon(&m);
	CALL("robust, owner died", fn(&m, &expired));
	mutex_state("after EOWNERDEAD", &m);
}

static void case_pthread_mutex_timedlock(void)
{
	timed_cases(pthread_mutex_timedlock);
}

static void case_pthread_mutex_clocklock(void)
{
	printf("CLOCK_REALTIME:\n");
	timed_cases(clocklock_realtime);
	printf("CLOCK_MONOTONIC:\n");
	timed_cases(clocklock_monotonic);
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	CALL("CLOCK_PROCESS_CPUTIME_ID", pthread_mutex_clocklock(&m, CLOCK_PROCESS_CPUTIME_ID, &expired));
	CALL("clock -1", pthread_mutex_clocklock(&m, -1, &expired));
	mutex_state("after bad clocks", &m);
}

static void *other_unlock(void *m)
{
	return (void *)(long)pthread_mutex_unlock(m);
}

static void case_pthread_mutex_unlock(void)
{
	for (int k = 0; k < NKINDS; k++) {
		pthread_mutex_t m;
		mutex_init_kind(&m, k);
		printf("%s:\n", kind_name[k]);
		if (k != NORMAL && k != PSHARED)   /* unlocking a free normal mutex is undefined */
			CALL("unlock free", pthread_mutex_unlock(&m));
		MUST(pthread_mutex_lock(&m));
		if (k == ERRORCHECK || k == RECURSIVE || k == ROBUST || k == ROBUST_PI) {
			pthread_t t;
			void *rc;
			MUST(pthread_create(&t, NULL, other_unlock, &m));
			MUST(pthread_join(t, &rc));
			printf("unlock by other thread: %s\n", err_name((int)(long)rc));
		}
		CALL("unlock", pthread_mutex_unlock(&m));
		mutex_state("released", &m);
		pthread_mutex_destroy(&m);
	}
}

/* ---- pthread_cond_* -------------------------------------------------------- */

struct waiter {
	pthread_mutex_t *m;
	pthread_cond_t *c;
	int *ready;        /* set under m just before waiting */
	int *go;           /* the predicate */
	int rc;
};

static void *cond_waiter(void *arg)
{
	struct waiter *w = arg;
	pthread_mutex_lock(w->m);
	(*w->ready)++;
	while (!*w->go) {
		w->rc = pthread_cond_wait(w->c, w->m);
		if (w->rc != 0)
			break;
	}
	pthread_mutex_unlock(w->m);
	return NULL;
}

/* n waiters, all inside pthread_cond_wait (each released m there) on return. */
static void start_waiters(pthread_t *t, struct waiter *w, int n, pthread_mutex_t *m, pthread_cond_t *c,
			  int *ready, int *go)
{
	for (int i = 0; i < n; i++) {
		w[i] = (struct waiter){ m, c, ready, go, -1 };
		MUST(pthread_create(&t[i], NULL, cond_waiter, &w[i]));
	}
	for (;;) {
		pthread_mutex_lock(m);
		if (*ready == n)
			return;   /* m held: they are all in the wait */
		pthread_mutex_unlock(m);
		sched_yield();
	}
}

static void case_pthread_cond_init(void)
{
	pthread_cond_t c;
	pthread_condattr_t a;
	MUST(pthread_condattr_init(&a));
	CALL("init NULL attr", pthread_cond_init(&c, NULL));
	CALL("destroy", pthread_cond_destroy(&c));
	MUST(pthread_condattr_setclock(&a, CLOCK_MONOTONIC));
	CALL("init monotonic", pthread_cond_init(&c, &a));
	clockid_t clk;
	pthread_condattr_getclock(&a, &clk);
	printf("attr clock: %d\n", (int)clk);
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&m);
	CALL("timedwait on monotonic, expired", pthread_cond_timedwait(&c, &m, &expired));
	pthread_mutex_unlock(&m);
	CALL("destroy", pthread_cond_destroy(&c));
	MUST(pthread_condattr_setpshared(&a, PTHREAD_PROCESS_SHARED));
	CALL("init pshared", pthread_cond_init(&c, &a));
	CALL("destroy", pthread_cond_destroy(&c));
}

static void case_pthread_cond_destroy(void)
{
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	CALL("destroy static", pthread_cond_destroy(&c));
	CALL("init", pthread_cond_init(&c, NULL));
	pthread_cond_signal(&c);
	CALL("destroy after an unwaited signal", pthread_cond_destroy(&c));
}

static void cond_wait_errors(int (*wait)(pthread_cond_t *, pthread_mutex_t *))
{
	for (int k = 0; k < NKINDS; k++) {
		pthread_mutex_t m;
		pthread_cond_t c = PTHREAD_COND_INITIALIZER;
		int ready = 0, go = 0;
		mutex_init_kind(&m, k);
		printf("%s:\n", kind_name[k]);
		if (k == ERRORCHECK || k == ROBUST || k == ROBUST_PI)
			CALL("wait without the mutex", wait(&c, &m));
		pthread_t t;
		struct waiter w;
		start_waiters(&t, &w, 1, &m, &c, &ready, &go);
		go = 1;
		CALL("signal one waiter", pthread_cond_signal(&c));
		pthread_mutex_unlock(&m);
		MUST(pthread_join(t, NULL));
		printf("waiter's wait: %s\n", err_name(w.rc));
		mutex_state("after", &m);
		pthread_mutex_destroy(&m);
	}
}

static int plain_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	return pthread_cond_wait(c, m);
}

static void case_pthread_cond_wait(void)
{
	cond_wait_errors(plain_wait);
}

static void timedwait_cases(int (*wait)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *))
{
	for (int k = 0; k < NKINDS; k++) {
		pthread_mutex_t m;
		pthread_cond_t c = PTHREAD_COND_INITIALIZER;
		mutex_init_kind(&m, k);
		printf("%s:\n", kind_name[k]);
		MUST(pthread_mutex_lock(&m));
		CALL("expired deadline", wait(&c, &m, &expired));
		mutex_state("re-acquired", &m);
		CALL("invalid deadline", wait(&c, &m, &bad_nsec));
		mutex_state("still held", &m);
		CALL("unlock", pthread_mutex_unlock(&m));
		if (k == ERRORCHECK || k == ROBUST || k == PI)
			CALL("without the mutex, expired", wait(&c, &m, &expired));
		pthread_mutex_destroy(&m);
	}
}

static int timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts)
{
	return pthread_cond_timedwait(c, m, ts);
}

static int clockwait_mono(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts)
{
	return pthread_cond_clockwait(c, m, CLOCK_MONOTONIC, ts);
}

static void case_pthread_cond_timedwait(void)
{
	timedwait_cases(timedwait);
}

static void case_pthread_cond_clockwait(void)
{
	timedwait_cases(clockwait_mono);
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	pthread_mutex_lock(&m);
	CALL("CLOCK_REALTIME, expired", pthread_cond_clockwait(&c, &m, CLOCK_REALTIME, &expired));
	CALL("CLOCK_PROCESS_CPUTIME_ID", pthread_cond_clockwait(&c, &m, CLOCK_PROCESS_CPUTIME_ID, &expired));
	CALL("clock -1", pthread_cond_clockwait(&c, &m, -1, &expired));
	mutex_state("held throughout", &m);
	pthread_mutex_unlock(&m);
}

static void case_pthread_cond_signal(void)
{
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	CALL("signal, nobody waiting", pthread_cond_signal(&c));
	int ready = 0, go = 0;
	pthread_t t[2];
	struct waiter w[2];
	start_waiters(t, w, 2, &m, &c, &ready, &go);
	CALL("signal with two waiters", pthread_cond_signal(&c));
	/* The woken waiter finds go == 0 and waits again; one more signal
	 * with the predicate set lets one of them out. */
	go = 1;
	CALL("signal again", pthread_cond_signal(&c));
	CALL("signal the last", pthread_cond_signal(&c));
	pthread_mutex_unlock(&m);
	for (int i = 0; i < 2; i++)
		MUST(pthread_join(t[i], NULL));
	printf("waiters' waits: %s %s\n", err_name(w[0].rc), err_name(w[1].rc));
	mutex_state("mutex after", &m);
}

static void case_pthread_cond_broadcast(void)
{
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	CALL("broadcast, nobody waiting", pthread_cond_broadcast(&c));
	int ready = 0, go = 0;
	pthread_t t[3];
	struct waiter w[3];
	start_waiters(t, w, 3, &m, &c, &ready, &go);
	go = 1;
	CALL("broadcast to three", pthread_cond_broadcast(&c));
	pthread_mutex_unlock(&m);
	for (int i = 0; i < 3; i++)
		MUST(pthread_join(t[i], NULL));
	printf("waiters' waits: %s %s %s\n", err_name(w[0].rc), err_name(w[1].rc), err_name(w[2].rc));
	/* A cancelled waiter runs its cleanup with the mutex re-acquired. */
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&m, &a);
	ready = 0, go = 0;
	start_waiters(t, w, 1, &m, &c, &ready, &go);
	CALL("cancel a waiter", pthread_cancel(t[0]));
	pthread_mutex_unlock(&m);
	void *ret;
	MUST(pthread_join(t[0], &ret));
	printf("waiter canceled: %s\n", ret == PTHREAD_CANCELED ? "yes" : "no");
	/* Its cleanup (none: cond_waiter pushes none) left the mutex locked by a dead thread. */
	mutex_state("mutex after the cancelled wait", &m);
}

/* ---- threads --------------------------------------------------------------- */

static void *echo(void *arg)
{
	return arg;
}

static void *wait_for_post(void *arg)
{
	while (sem_wait(arg) != 0)
		;
	return (void *)7;
}

static void case_pthread_create(void)
{
	pthread_t t;
	void *ret;
	CALL("create", pthread_create(&t, NULL, echo, (void *)42));
	CALL("join", pthread_join(t, &ret));
	printf("returned: %ld\n", (long)ret);
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	sem_t s;
	sem_init(&s, 0, 0);
	CALL("create detached", pthread_create(&t, &a, wait_for_post, &s));
	CALL("join detached", pthread_join(t, NULL));
	sem_post(&s);
	pthread_attr_destroy(&a);
	pthread_attr_init(&a);
	pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&a, SCHED_OTHER);
	struct sched_param p = { .sched_priority = 0 };
	pthread_attr_setschedparam(&a, &p);
	CALL("create explicit SCHED_OTHER", pthread_create(&t, &a, echo, NULL));
	pthread_join(t, NULL);
	pthread_attr_destroy(&a);
	/* Inside the thread, before it returns: its own attributes. */
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 1 << 20);
	CALL("create 1 MiB stack", pthread_create(&t, &a, echo, NULL));
	pthread_join(t, NULL);
	pthread_attr_destroy(&a);
}

static void *join_self(void *arg)
{
	return (void *)(long)pthread_join(pthread_self(), NULL);
}

static void case_pthread_join(void)
{
	pthread_t t;
	void *ret;
	MUST(pthread_create(&t, NULL, join_self, NULL));
	CALL("join", pthread_join(t, &ret));
	printf("its self-join: %s\n", err_name((int)(long)ret));
	MUST(pthread_create(&t, NULL, echo, (void *)5));
	CALL("join, NULL result", pthread_join(t, NULL));
	sem_t s;
	sem_init(&s, 0, 0);
	MUST(pthread_create(&t, NULL, wait_for_post, &s));
	sem_post(&s);
	CALL("join a thread that waited", pthread_join(t, &ret));
	printf("returned: %ld\n", (long)ret);
}

static void case_pthread_tryjoin_np(void)
{
	sem_t s;
	sem_init(&s, 0, 0);
	pthread_t t;
	void *ret = NULL;
	MUST(pthread_create(&t, NULL, wait_for_post, &s));
	CALL("tryjoin running", pthread_tryjoin_np(t, &ret));
	sem_post(&s);
	while (pthread_tryjoin_np(t, &ret) == EBUSY)
		sched_yield();
	printf("joined at last: %ld\n", (long)ret);
	CALL("tryjoin self", pthread_tryjoin_np(pthread_self(), NULL));
}

static void case_pthread_timedjoin_np(void)
{
	sem_t s;
	sem_init(&s, 0, 0);
	pthread_t t;
	void *ret = NULL;
	MUST(pthread_create(&t, NULL, wait_for_post, &s));
	CALL("timedjoin running, expired", pthread_timedjoin_np(t, &ret, &expired));
	sem_post(&s);
	CALL("timedjoin, no deadline", pthread_timedjoin_np(t, &ret, NULL));
	printf("returned: %ld\n", (long)ret);
	CALL("timedjoin self", pthread_timedjoin_np(pthread_self(), NULL, &expired));
}

static void case_pthread_detach(void)
{
	/* Static: the detached thread may still be leaving sem_wait after the
	 * post, when this frame is gone (a stack semaphore made it abort in
	 * glibc's futex code now and then). */
	static sem_t s;
	sem_init(&s, 0, 0);
	pthread_t t;
	MUST(pthread_create(&t, NULL, wait_for_post, &s));
	CALL("detach", pthread_detach(t));
	CALL("detach again", pthread_detach(t));
	CALL("join detached", pthread_join(t, NULL));
	sem_post(&s);
	MUST(pthread_create(&t, NULL, echo, NULL));
	MUST(pthread_join(t, NULL));
}

static int exit_cleanup_ran;

static void exit_cleanup(void *arg)
{
	exit_cleanup_ran = 1;
}

static void *exits(void *arg)
{
	pthread_cleanup_push(exit_cleanup, NULL);
	pthread_exit(arg);
	pthread_cleanup_pop(0);
	return NULL;
}

static void main_exits(void *arg)
{
	pthread_exit(NULL);   /* the last thread: the process exits 0 */
}

static void case_pthread_exit(void)
{
	pthread_t t;
	void *ret;
	MUST(pthread_create(&t, NULL, exits, (void *)9));
	CALL("join", pthread_join(t, &ret));
	printf("exit value %ld, cleanup ran: %s\n", (long)ret, exit_cleanup_ran ? "yes" : "no");
	in_child("main thread exits", main_exits, NULL);
}

static void case_pthread_setname_np(void)
{
	char name[32];
	CALL("set 15 chars", pthread_setname_np(pthread_self(), "abcdefghijklmno"));
	pthread_getname_np(pthread_self(), name, sizeof(name));
	printf("name: %s\n", name);
	CALL("set 16 chars", pthread_setname_np(pthread_self(), "abcdefghijklmnop"));
	pthread_getname_np(pthread_self(), name, sizeof(name));
	printf("name: %s\n", name);
	sem_t s;
	sem_init(&s, 0, 0);
	pthread_t t;
	MUST(pthread_create(&t, NULL, wait_for_post, &s));
	CALL("set another thread's", pthread_setname_np(t, "worker"));
	pthread_getname_np(t, name, sizeof(name));
	printf("its name: %s\n", name);
	sem_post(&s);
	pthread_join(t, NULL);
}

/* ---- pthread_rwlock_* ------------------------------------------------------ */

struct rw_probe { pthread_rwlock_t *l; int rd, wr; };

static void *rw_probe_fn(void *arg)
{
	struct rw_probe *p = arg;
	p->rd = pthread_rwlock_tryrdlock(p->l);
	if (p->rd == 0)
		pthread_rwlock_unlock(p->l);
	p->wr = pthread_rwlock_trywrlock(p->l);
	if (p->wr == 0)
		pthread_rwlock_unlock(p->l);
	return NULL;
}

static void rw_view(const char *label, pthread_rwlock_t *l)
{
	struct rw_probe p = { .l = l };
	pthread_t t;
	MUST(pthread_create(&t, NULL, rw_probe_fn, &p));
	MUST(pthread_join(t, NULL));
	printf("%s: other thread's tryrdlock %s, trywrlock %s; readers %u, writer %s\n", label, err_name(p.rd),
	       err_name(p.wr), l->__data.__readers >> 3, l->__data.__cur_writer == gettid() ? "self" :
	       l->__data.__cur_writer ? "other" : "none");
}

static const char *const rw_kind_name[] = { "prefer-reader", "prefer-writer-nonrecursive", "pshared" };

static void rw_init_kind(pthread_rwlock_t *l, int k)
{
	pthread_rwlockattr_t a;
	pthread_rwlockattr_init(&a);
	if (k == 1)
		pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	if (k == 2)
		pthread_rwlockattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	MUST(pthread_rwlock_init(l, &a));
	pthread_rwlockattr_destroy(&a);
}

static void case_pthread_rwlock_init(void)
{
	pthread_rwlock_t l;
	for (int k = 0; k < 3; k++) {
		pthread_rwlockattr_t a;
		pthread_rwlockattr_init(&a);
		if (k == 1)
			pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		if (k == 2)
			pthread_rwlockattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
		printf("%s:\n", rw_kind_name[k]);
		CALL("init", pthread_rwlock_init(&l, &a));
		printf("flags %u, shared %u\n", (unsigned)l.__data.__flags, (unsigned)l.__data.__shared);
		rw_view("fresh", &l);
		CALL("destroy", pthread_rwlock_destroy(&l));
	}
	CALL("init NULL attr", pthread_rwlock_init(&l, NULL));
}

static void case_pthread_rwlock_destroy(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	CALL("destroy static", pthread_rwlock_destroy(&l));
	CALL("init", pthread_rwlock_init(&l, NULL));
	CALL("destroy", pthread_rwlock_destroy(&l));
}

static void rd_cases(const char *name, int (*rd)(pthread_rwlock_t *))
{
	for (int k = 0; k < 3; k++) {
		pthread_rwlock_t l;
		rw_init_kind(&l, k);
		printf("%s %s:\n", name, rw_kind_name[k]);
		CALL("read", rd(&l));
		rw_view("read-held", &l);
		CALL("read again", rd(&l));
		rw_view("read-held twice", &l);
		CALL("unlock", pthread_rwlock_unlock(&l));
		CALL("unlock", pthread_rwlock_unlock(&l));
		MUST(pthread_rwlock_wrlock(&l));
		CALL("read while self writes", rd(&l));
		CALL("unlock", pthread_rwlock_unlock(&l));
		rw_view("free", &l);
		pthread_rwlock_destroy(&l);
	}
}

static void wr_cases(const char *name, int (*wr)(pthread_rwlock_t *))
{
	for (int k = 0; k < 3; k++) {
		pthread_rwlock_t l;
		rw_init_kind(&l, k);
		printf("%s %s:\n", name, rw_kind_name[k]);
		CALL("write", wr(&l));
		rw_view("write-held", &l);
		CALL("write again", wr(&l));
		CALL("unlock", pthread_rwlock_unlock(&l));
		MUST(pthread_rwlock_rdlock(&l));
		CALL("write while self reads", pthread_rwlock_trywrlock(&l));
		CALL("unlock", pthread_rwlock_unlock(&l));
		rw_view("free", &l);
		pthread_rwlock_destroy(&l);
	}
}

static int rd_expired(pthread_rwlock_t *l) { return pthread_rwlock_timedrdlock(l, &expired); }
static int wr_expired(pthread_rwlock_t *l) { return pthread_rwlock_timedwrlock(l, &expired); }
static int crd_expired(pthread_rwlock_t *l) { return pthread_rwlock_clockrdlock(l, CLOCK_MONOTONIC, &expired); }
static int cwr_expired(pthread_rwlock_t *l) { return pthread_rwlock_clockwrlock(l, CLOCK_MONOTONIC, &expired); }

/* Timed forms against a lock another thread holds for writing. */
struct rw_holder { pthread_rwlock_t *l; sem_t held, release; };

static void *rw_hold(void *arg)
{
	struct rw_holder *h = arg;
	pthread_rwlock_wrlock(h->l);
	sem_post(&h->held);
	while (sem_wait(&h->release) != 0)
		;
	pthread_rwlock_unlock(h->l);
	return NULL;
}

static void rw_timed_contended(int (*lock)(pthread_rwlock_t *, clockid_t, const struct timespec *))
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	struct rw_holder h = { .l = &l };
	sem_init(&h.held, 0, 0);
	sem_init(&h.release, 0, 0);
	pthread_t t;
	MUST(pthread_create(&t, NULL, rw_hold, &h));
	while (sem_wait(&h.held) != 0)
		;
	CALL("write-held by other, expired", lock(&l, CLOCK_REALTIME, &expired));
	CALL("write-held by other, invalid", lock(&l, CLOCK_REALTIME, &bad_nsec));
	CALL("write-held by other, monotonic expired", lock(&l, CLOCK_MONOTONIC, &expired));
	CALL("write-held by other, bad clock", lock(&l, CLOCK_PROCESS_CPUTIME_ID, &expired));
	sem_post(&h.release);
	MUST(pthread_join(t, NULL));
	rw_view("after", &l);
}

static int timedrd(pthread_rwlock_t *l, clockid_t c, const struct timespec *ts)
{
	return c == CLOCK_REALTIME ? pthread_rwlock_timedrdlock(l, ts) : pthread_rwlock_clockrdlock(l, c, ts);
}

static int timedwr(pthread_rwlock_t *l, clockid_t c, const struct timespec *ts)
{
	return c == CLOCK_REALTIME ? pthread_rwlock_timedwrlock(l, ts) : pthread_rwlock_clockwrlock(l, c, ts);
}

static void case_pthread_rwlock_rdlock(void) { rd_cases("rdlock", pthread_rwlock_rdlock); }
static void case_pthread_rwlock_tryrdlock(void) { rd_cases("tryrdlock", pthread_rwlock_tryrdlock); }
static void case_pthread_rwlock_timedrdlock(void)
{
	rd_cases("timedrdlock expired", rd_expired);
	rw_timed_contended(timedrd);
}
static void case_pthread_rwlock_clockrdlock(void)
{
	rd_cases("clockrdlock expired", crd_expired);
	rw_timed_contended(timedrd);
}
static void case_pthread_rwlock_wrlock(void) { wr_cases("wrlock", pthread_rwlock_wrlock); }
static void case_pthread_rwlock_trywrlock(void) { wr_cases("trywrlock", pthread_rwlock_trywrlock); }
static void case_pthread_rwlock_timedwrlock(void)
{
	wr_cases("timedwrlock expired", wr_expired);
	rw_timed_contended(timedwr);
}
static void case_pthread_rwlock_clockwrlock(void)
{
	wr_cases("clockwrlock expired", cwr_expired);
	rw_timed_contended(timedwr);
}

static void case_pthread_rwlock_unlock(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	MUST(pthread_rwlock_rdlock(&l));
	MUST(pthread_rwlock_rdlock(&l));
	CALL("unlock one of two reads", pthread_rwlock_unlock(&l));
	rw_view("one read left", &l);
	CALL("unlock the other", pthread_rwlock_unlock(&l));
	MUST(pthread_rwlock_wrlock(&l));
	CALL("unlock write", pthread_rwlock_unlock(&l));
	rw_view("free", &l);
}

/* ---- pthread_spin_* -------------------------------------------------------- */

static void *spin_try_other(void *arg)
{
	int rc = pthread_spin_trylock(arg);
	if (rc == 0)
		pthread_spin_unlock(arg);
	return (void *)(long)rc;
}

static void spin_view(const char *label, pthread_spinlock_t *s)
{
	pthread_t t;
	void *rc;
	MUST(pthread_create(&t, NULL, spin_try_other, (void *)s));
	MUST(pthread_join(t, &rc));
	printf("%s: word %d, other thread's trylock %s\n", label, *(volatile int *)s, err_name((int)(long)rc));
}

static void case_pthread_spin_init(void)
{
	pthread_spinlock_t s;
	CALL("init private", pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE));
	spin_view("fresh", &s);
	CALL("init shared", pthread_spin_init(&s, PTHREAD_PROCESS_SHARED));
	spin_view("fresh shared", &s);
}

static void case_pthread_spin_destroy(void)
{
	pthread_spinlock_t s;
	pthread_spin_init(&s, 0);
	CALL("destroy", pthread_spin_destroy(&s));
}

static void case_pthread_spin_lock(void)
{
	pthread_spinlock_t s;
	pthread_spin_init(&s, 0);
	CALL("lock", pthread_spin_lock(&s));
	spin_view("held", &s);
	CALL("unlock", pthread_spin_unlock(&s));
	spin_view("released", &s);
}

static void spin_child(void *arg)
{
	CALL("child trylock held by parent", pthread_spin_trylock(arg));
}

static void case_pthread_spin_trylock(void)
{
	pthread_spinlock_t s;
	pthread_spin_init(&s, 0);
	CALL("trylock free", pthread_spin_trylock(&s));
	CALL("trylock held by self", pthread_spin_trylock(&s));
	spin_view("held", &s);
	CALL("unlock", pthread_spin_unlock(&s));
	pthread_spinlock_t *ps = shared_page();
	pthread_spin_init(ps, PTHREAD_PROCESS_SHARED);
	pthread_spin_lock(ps);
	in_child("pshared", spin_child, (void *)ps);
	CALL("unlock shared", pthread_spin_unlock(ps));
}

static void case_pthread_spin_unlock(void)
{
	pthread_spinlock_t s;
	pthread_spin_init(&s, 0);
	pthread_spin_lock(&s);
	CALL("unlock", pthread_spin_unlock(&s));
	spin_view("released", &s);
}

/* ---- pthread_barrier_* ----------------------------------------------------- */

static void *barrier_arrive(void *arg)
{
	return (void *)(long)pthread_barrier_wait(arg);
}

static void case_pthread_barrier_init(void)
{
	pthread_barrier_t b;
	CALL("count 0", pthread_barrier_init(&b, NULL, 0));
	CALL("count 1", pthread_barrier_init(&b, NULL, 1));
	CALL("destroy", pthread_barrier_destroy(&b));
	pthread_barrierattr_t a;
	pthread_barrierattr_init(&a);
	pthread_barrierattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	CALL("count 3, pshared", pthread_barrier_init(&b, &a, 3));
	CALL("destroy", pthread_barrier_destroy(&b));
	CALL("count UINT_MAX", pthread_barrier_init(&b, NULL, UINT_MAX));
}

static void case_pthread_barrier_destroy(void)
{
	pthread_barrier_t b;
	pthread_barrier_init(&b, NULL, 2);
	CALL("destroy unused", pthread_barrier_destroy(&b));
	pthread_barrier_init(&b, NULL, 1);
	pthread_barrier_wait(&b);
	CALL("destroy after a round", pthread_barrier_destroy(&b));
}

static void case_pthread_barrier_wait(void)
{
	pthread_barrier_t b;
	pthread_barrier_init(&b, NULL, 1);
	CALLN("count 1 is the serial thread", pthread_barrier_wait(&b) == PTHREAD_BARRIER_SERIAL_THREAD);
	pthread_barrier_destroy(&b);
	pthread_barrier_init(&b, NULL, 4);
	for (int round = 0; round < 3; round++) {
		pthread_t t[3];
		for (int i = 0; i < 3; i++)
			MUST(pthread_create(&t[i], NULL, barrier_arrive, &b));
		long rc = pthread_barrier_wait(&b);
		int serial = rc == PTHREAD_BARRIER_SERIAL_THREAD, zero = rc == 0;
		for (int i = 0; i < 3; i++) {
			void *trc;
			pthread_join(t[i], &trc);
			serial += (long)trc == PTHREAD_BARRIER_SERIAL_THREAD;
			zero += (long)trc == 0;
		}
		printf("round %d: %d serial, %d zero of 4\n", round, serial, zero);
	}
	pthread_barrier_destroy(&b);
	pthread_barrierattr_t a;
	pthread_barrierattr_init(&a);
	pthread_barrierattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_barrier_t *pb = shared_page();
	MUST(pthread_barrier_init(pb, &a, 2));
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		pthread_barrier_wait(pb);
		_exit(0);
	}
	long rc = pthread_barrier_wait(pb);
	int st;
	waitpid(pid, &st, 0);
	printf("pshared: parent and child met (%s), child status %d\n",
	       rc == PTHREAD_BARRIER_SERIAL_THREAD || rc == 0 ? "ok" : err_name((int)rc), st);
}

/* ---- sem_* ----------------------------------------------------------------- */

static void sem_state(const char *label, sem_t *s)
{
	int v = -1;
	sem_getvalue(s, &v);
	printf("%s: value %d\n", label, v);
}

static void case_sem_init(void)
{
	sem_t s;
	CALLN("init 0", sem_init(&s, 0, 0));
	sem_state("fresh", &s);
	CALLN("init SEM_VALUE_MAX", sem_init(&s, 0, SEM_VALUE_MAX));
	sem_state("fresh", &s);
	CALLN("init SEM_VALUE_MAX + 1", sem_init(&s, 0, (unsigned)SEM_VALUE_MAX + 1));
	CALLN("init pshared 3", sem_init(&s, 1, 3));
	sem_state("fresh", &s);
}

static void case_sem_destroy(void)
{
	sem_t s;
	sem_init(&s, 0, 1);
	CALLN("destroy", sem_destroy(&s));
}

static void *sem_poster(void *arg)
{
	sem_post(arg);
	return NULL;
}

/* cancel_at_sem_wait's semaphores: go lets the thread on once the
 * request is pending, token is the one it then waits for (value 1). */
static sem_t cancel_go, cancel_token;

/* Cancellation disabled while the request comes, enabled before a
 * sem_wait that would find a token: sem_wait is a cancellation point
 * whether it blocks or not, so the thread ends there, token untaken. */
static void *cancel_at_sem_wait(void *arg)
{
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	sem_post(arg);
	while (sem_wait(&cancel_go) != 0)
		;
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	sem_wait(&cancel_token);
	return (void *)1;
}

/* sem_wait is a cancellation point: a request that came while
 * cancellation was disabled ends the thread at its next sem_wait, token
 * or not; one that comes while it sleeps there ends it too. */
static void sem_wait_is_a_cancellation_point(void)
{
	sem_t ready, blocked;
	sem_init(&ready, 0, 0);
	sem_init(&blocked, 0, 0);
	sem_init(&cancel_go, 0, 0);
	sem_init(&cancel_token, 0, 1);
	pthread_t t;
	void *ret;
	MUST(pthread_create(&t, NULL, cancel_at_sem_wait, &ready));
	while (sem_wait(&ready) != 0)
		;
	CALL("cancel, disabled", pthread_cancel(t));
	sem_post(&cancel_go);
	MUST(pthread_join(t, &ret));
	int value;
	sem_getvalue(&cancel_token, &value);
	printf("the thread: %s; the token's semaphore: %d\n", ret == PTHREAD_CANCELED ? "cancelled" : "returned", value);
	MUST(pthread_create(&t, NULL, wait_for_post, &blocked));
	CALL("cancel, blocked in sem_wait", pthread_cancel(t));
	MUST(pthread_join(t, &ret));
	printf("the thread: %s\n", ret == PTHREAD_CANCELED ? "cancelled" : "returned");
}

static void case_sem_wait(void)
{
	sem_t s;
	sem_init(&s, 0, 2);
	CALLN("wait 2", sem_wait(&s));
	CALLN("wait 1", sem_wait(&s));
	sem_state("after", &s);
	pthread_t t;
	MUST(pthread_create(&t, NULL, sem_poster, &s));
	CALLN("wait for a post", sem_wait(&s));
	pthread_join(t, NULL);
	sem_state("after", &s);
	sem_wait_is_a_cancellation_point();
}

static void sem_child_post(void *arg)
{
	CALLN("child post", sem_post(arg));
}

static void case_sem_trywait(void)
{
	sem_t s;
	sem_init(&s, 0, 1);
	CALLN("trywait 1", sem_trywait(&s));
	CALLN("trywait 0", sem_trywait(&s));
	sem_state("after", &s);
	sem_t *ps = shared_page();
	sem_init(ps, 1, 0);
	in_child("pshared", sem_child_post, ps);
	CALLN("trywait after the child's post", sem_trywait(ps));
}

static void case_sem_timedwait(void)
{
	sem_t s;
	sem_init(&s, 0, 1);
	CALLN("available, expired", sem_timedwait(&s, &expired));
	CALLN("empty, expired", sem_timedwait(&s, &expired));
	CALLN("empty, invalid", sem_timedwait(&s, &bad_nsec));
	sem_post(&s);
	CALLN("available, invalid", sem_timedwait(&s, &bad_nsec));
	sem_state("after", &s);
}

static void case_sem_clockwait(void)
{
	sem_t s;
	sem_init(&s, 0, 1);
	CALLN("available, monotonic expired", sem_clockwait(&s, CLOCK_MONOTONIC, &expired));
	CALLN("empty, monotonic expired", sem_clockwait(&s, CLOCK_MONOTONIC, &expired));
	CALLN("empty, realtime expired", sem_clockwait(&s, CLOCK_REALTIME, &expired));
	CALLN("empty, invalid", sem_clockwait(&s, CLOCK_MONOTONIC, &bad_nsec));
	CALLN("empty, bad clock", sem_clockwait(&s, CLOCK_PROCESS_CPUTIME_ID, &expired));
	CALLN("empty, clock -1", sem_clockwait(&s, -1, &expired));
	sem_state("after", &s);
}

static void case_sem_post(void)
{
	sem_t s;
	sem_init(&s, 0, 0);
	CALLN("post", sem_post(&s));
	sem_state("after", &s);
	sem_init(&s, 0, SEM_VALUE_MAX);
	CALLN("post at SEM_VALUE_MAX", sem_post(&s));
	sem_state("after", &s);
	/* The first post makes the semaphore's record; the next ones find it
	 * in the thread's cache: the shim's own post (sem.c posted_here), then
	 * one at the limit, left to glibc. */
	sem_init(&s, 0, SEM_VALUE_MAX - 2);
	CALLN("post to SEM_VALUE_MAX - 1", sem_post(&s));
	CALLN("post to SEM_VALUE_MAX", sem_post(&s));
	CALLN("post at SEM_VALUE_MAX, again", sem_post(&s));
	sem_state("after", &s);
}

/* ---- _Fork ------------------------------------------------------------------ */

static void *nothing(void *arg)
{
	return arg;
}

/* A process with threads forks with _Fork (no atfork handlers); the child
 * locks a normal mutex and reports whether glibc's owner field names it. */
static void case__Fork(void)
{
	pthread_t th;
	MUST(pthread_create(&th, NULL, nothing, NULL));
	MUST(pthread_join(th, NULL));
	fflush(stdout);
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pid_t pid = _Fork();
	if (pid == 0) {
		pthread_mutex_lock(&m);
		int mine = m.__data.__owner == gettid();
		pthread_mutex_unlock(&m);
		_exit(mine ? 7 : 8);
	}
	int status;
	waitpid(pid, &status, 0);
	printf("_Fork: child exited %d (7: the owner was the child)\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* ---- syscall --------------------------------------------------------------- */

static void case_syscall(void)
{
	CALLN("getpid matches", syscall(SYS_getpid) == getpid());
	CALLN("gettid matches", syscall(SYS_gettid) == gettid());
	CALLN("close -1", syscall(SYS_close, -1));
	CALLN("no such call", syscall(100000));
	CALLN("write 3 bytes to /dev/null fd", ({
		     int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		     long n = syscall(SYS_write, fd, "abc", 3);
		     close(fd);
		     n;
	     }));
	char buf[8] = "";
	CALLN("read from a bad address", syscall(SYS_read, 0, NULL, 0));
	CALLN("getcwd too small", syscall(SYS_getcwd, buf, 1));
	CALLN("six arguments: mmap", ({
		     void *p = (void *)syscall(SYS_mmap, NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		     long ok = p != MAP_FAILED;
		     munmap(p, 4096);
		     ok;
	     }));
	/* Futexes, through the shim's own path. */
	int word = 1;
	struct timespec zero = { 0, 0 };
	CALLN("futex wake, nobody", syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0));
	CALLN("futex wait, value changed", syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0));
	CALLN("futex wait, zero timeout", syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 1, &zero, NULL, 0));
	CALLN("futex bad op", syscall(SYS_futex, &word, 99, 1, NULL, NULL, 0));
	CALLN("futex NULL address", syscall(SYS_futex, NULL, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0));
	CALLN("futex wait bitset 0", syscall(SYS_futex, &word, FUTEX_WAIT_BITSET_PRIVATE, 1, NULL, NULL, 0));
	CALLN("futex requeue, nobody", syscall(SYS_futex, &word, FUTEX_CMP_REQUEUE_PRIVATE, 1, 1, &zero, 1));
	int pi = 0;
	CALLN("futex trylock_pi", syscall(SYS_futex, &pi, FUTEX_TRYLOCK_PI_PRIVATE, 0, NULL, NULL, 0));
	printf("pi word owner: %s\n", (pi & FUTEX_TID_MASK) == gettid() ? "self" : "other");
	CALLN("futex unlock_pi", syscall(SYS_futex, &pi, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0));
	printf("pi word: %d\n", pi);
}

/* ---- exec, spawn, _exit ------------------------------------------------------ */

extern char **environ;

/* The program every successful exec runs: its arguments and one variable,
 * printed by the new image, then its exit status printed by the parent. */
static char *const sh_argv[] = { "sh", "-c", "echo \"new image: $0 $1, CV_CONF=$CV_CONF\"; exit 5", "zero", "one", NULL };
static char *const sh_envp[] = { "CV_CONF=given", "PATH=/usr/bin:/bin", NULL };

static void do_execve(void *arg)
{
	execve("/bin/sh", sh_argv, sh_envp);
	_exit(99);
}

static void case_execve(void)
{
	CALLN("no such file", execve("/nonexistent/x", sh_argv, sh_envp));
	CALLN("not executable", execve("/etc/passwd", sh_argv, sh_envp));
	CALLN("a directory", execve("/", sh_argv, sh_envp));
	in_child("execve /bin/sh", do_execve, NULL);
}

static void do_execv(void *arg)
{
	setenv("CV_CONF", "inherited", 1);
	execv("/bin/sh", sh_argv);
	_exit(99);
}

static void case_execv(void)
{
	CALLN("no such file", execv("/nonexistent/x", sh_argv));
	in_child("execv /bin/sh", do_execv, NULL);
}

static void do_execvpe(void *arg)
{
	execvpe("sh", sh_argv, sh_envp);
	_exit(99);
}

static void case_execvpe(void)
{
	CALLN("not on PATH", execvpe("no-such-program-cv", sh_argv, sh_envp));
	CALLN("empty name", execvpe("", sh_argv, sh_envp));
	in_child("execvpe sh", do_execvpe, NULL);
}

static void do_execvp(void *arg)
{
	setenv("CV_CONF", "inherited", 1);
	execvp("sh", sh_argv);
	_exit(99);
}

static void case_execvp(void)
{
	CALLN("not on PATH", execvp("no-such-program-cv", sh_argv));
	in_child("execvp sh", do_execvp, NULL);
}

static void do_execl(void *arg)
{
	setenv("CV_CONF", "inherited", 1);
	execl("/bin/sh", "sh", "-c", sh_argv[2], "zero", "one", (char *)NULL);
	_exit(99);
}

static void case_execl(void)
{
	CALLN("no such file", execl("/nonexistent/x", "x", (char *)NULL));
	in_child("execl /bin/sh", do_execl, NULL);
}

static void do_execle(void *arg)
{
	execle("/bin/sh", "sh", "-c", sh_argv[2], "zero", "one", (char *)NULL, sh_envp);
	_exit(99);
}

static void case_execle(void)
{
	CALLN("no such file", execle("/nonexistent/x", "x", (char *)NULL, sh_envp));
	in_child("execle /bin/sh", do_execle, NULL);
}

static void do_execlp(void *arg)
{
	setenv("CV_CONF", "inherited", 1);
	execlp("sh", "sh", "-c", sh_argv[2], "zero", "one", (char *)NULL);
	_exit(99);
}

static void case_execlp(void)
{
	CALLN("not on PATH", execlp("no-such-program-cv", "x", (char *)NULL));
	in_child("execlp sh", do_execlp, NULL);
}

static void do_fexecve(void *arg)
{
	int fd = open("/bin/sh", O_RDONLY | O_CLOEXEC);
	fexecve(fd, sh_argv, sh_envp);
	_exit(99);
}

static void case_fexecve(void)
{
	CALLN("bad fd", fexecve(-1, sh_argv, sh_envp));
	int fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
	CALLN("not executable", fexecve(fd, sh_argv, sh_envp));
	close(fd);
	in_child("fexecve /bin/sh", do_fexecve, NULL);
}

static void do_execveat(void *arg)
{
	int dir = open("/bin", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	execveat(dir, "sh", sh_argv, sh_envp, 0);
	_exit(99);
}

static void case_execveat(void)
{
	CALLN("bad dirfd", execveat(-1, "sh", sh_argv, sh_envp, 0));
	CALLN("bad flags", execveat(AT_FDCWD, "/bin/sh", sh_argv, sh_envp, 0x40000000));
	CALLN("empty path without AT_EMPTY_PATH", execveat(AT_FDCWD, "", sh_argv, sh_envp, 0));
	in_child("execveat /bin + sh", do_execveat, NULL);
}

static void spawn_cases(const char *name, int (*spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
							 const posix_spawnattr_t *, char *const[], char *const[]),
			const char *prog)
{
	pid_t pid = 0;
	int status;
	fflush(stdout);
	errno = SENTINEL;
	int rc = spawn(&pid, prog, NULL, NULL, sh_argv, sh_envp), err = errno;
	if (rc == 0)
		waitpid(pid, &status, 0);   /* its line first, then ours: one order in every run */
	show(name, rc, err, true);
	if (rc == 0)
		printf("spawned child: exit %d\n", WEXITSTATUS(status));
	CALL("no such program", spawn(&pid, "/nonexistent/x", NULL, NULL, sh_argv, sh_envp));
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/nonexistent/dir/out", O_WRONLY | O_CREAT, 0600);
	CALL("a file action that fails", spawn(&pid, prog, &fa, NULL, sh_argv, sh_envp));
	posix_spawn_file_actions_destroy(&fa);
}

static void case_posix_spawn(void)
{
	spawn_cases("posix_spawn /bin/sh", posix_spawn, "/bin/sh");
}

static void case_posix_spawnp(void)
{
	spawn_cases("posix_spawnp sh", posix_spawnp, "sh");
}

/* What is still in stdio's buffer is lost, as _exit promises. */
static void exit_unflushed(void *arg)
{
	printf("buffered, never flushed");
	((void (*)(int))arg)(3);
}

static void case__exit(void)
{
	in_child("_exit(3)", exit_unflushed, (void *)_exit);
}

static void case__Exit(void)
{
	in_child("_Exit(3)", exit_unflushed, (void *)_Exit);
}

/* ---- signal dispositions --------------------------------------------------- */

static volatile sig_atomic_t handled;

static void on_signal(int sig)
{
	handled = sig;
}

/* The disposition the program sees: the shim's own fatal-signal handlers
 * must not show. */
static void disposition(const char *label, int sig)
{
	struct sigaction sa;
	errno = SENTINEL;
	int rc = sigaction(sig, NULL, &sa);
	const char *h = sa.sa_handler == SIG_DFL ? "SIG_DFL" : sa.sa_handler == SIG_IGN ? "SIG_IGN" :
			sa.sa_handler == on_signal ? "on_signal" : "other";
	printf("%s: %d, handler %s, flags %#x, %s\n", label, rc, h,
	       (unsigned)sa.sa_flags & ~0x04000000u /* SA_RESTORER: libc's own */,
	       errno == SENTINEL ? "errno kept" : err_name(errno));
}

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

static void sigaction_cases(sigaction_fn act)
{
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGTERM };
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
		char l[48];
		snprintf(l, sizeof(l), "%s at start", sigabbrev_np(fatal[i]));
		disposition(l, fatal[i]);
	}
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART }, old;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR2);
	CALLN("install for SIGUSR1", act(SIGUSR1, &sa, &old));
	printf("old: %s\n", old.sa_handler == SIG_DFL ? "SIG_DFL" : "other");
	disposition("SIGUSR1", SIGUSR1);
	raise(SIGUSR1);
	printf("handled: %d\n", (int)handled);
	CALLN("install for SIGSEGV", act(SIGSEGV, &sa, &old));
	printf("old: %s\n", old.sa_handler == SIG_DFL ? "SIG_DFL" : "other");
	disposition("SIGSEGV", SIGSEGV);
	sa.sa_handler = SIG_DFL;
	CALLN("back to SIG_DFL", act(SIGSEGV, &sa, &old));
	printf("old: %s\n", old.sa_handler == on_signal ? "on_signal" : "other");
	disposition("SIGSEGV", SIGSEGV);
	CALLN("SIGKILL", act(SIGKILL, &sa, NULL));
	CALLN("SIGSTOP", act(SIGSTOP, &sa, NULL));
	CALLN("signal 0", act(0, &sa, NULL));
	CALLN("signal 65", act(65, &sa, NULL));
	sa.sa_handler = SIG_IGN;
	CALLN("ignore SIGABRT", act(SIGABRT, &sa, NULL));
	disposition("SIGABRT", SIGABRT);
}

/* Exported by glibc (what some libraries call), and interposed. */
extern int __sigaction(int, const struct sigaction *, struct sigaction *);

static void case_sigaction(void) { sigaction_cases(sigaction); }
static void case___sigaction(void) { sigaction_cases(__sigaction); }

typedef sighandler_t (*signal_fn)(int, sighandler_t);

static void signal_cases(signal_fn fn)
{
	handled = 0;
	errno = SENTINEL;
	sighandler_t prev = fn(SIGUSR1, on_signal);
	printf("install: previous %s, %s\n", prev == SIG_DFL ? "SIG_DFL" : prev == on_signal ? "on_signal" : "other",
	       errno == SENTINEL ? "errno kept" : err_name(errno));
	disposition("SIGUSR1", SIGUSR1);
	raise(SIGUSR1);
	printf("handled: %d\n", (int)handled);
	disposition("SIGUSR1 after one delivery", SIGUSR1);
	prev = fn(SIGSEGV, on_signal);
	printf("SIGSEGV: previous %s\n", prev == SIG_DFL ? "SIG_DFL" : "other");
	prev = fn(SIGSEGV, SIG_DFL);
	printf("SIGSEGV back: previous %s\n", prev == on_signal ? "on_signal" : "other");
	errno = SENTINEL;
	prev = fn(SIGKILL, on_signal);
	printf("SIGKILL: %s, errno %s\n", prev == SIG_ERR ? "SIG_ERR" : "accepted", err_name(errno));
	fn(SIGUSR1, SIG_DFL);
}

/* Exported by glibc, no longer declared by its headers. */
extern sighandler_t __sysv_signal(int, sighandler_t);
extern sighandler_t bsd_signal(int, sighandler_t);

static void case_signal(void) { signal_cases(signal); }
static void case_ssignal(void) { signal_cases(ssignal); }
static void case_bsd_signal(void) { signal_cases(bsd_signal); }
static void case_sysv_signal(void) { signal_cases(sysv_signal); }
static void case___sysv_signal(void) { signal_cases(__sysv_signal); }

/* sigset is deprecated, and still interposed: programs call it. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static void case_sigset(void)
{
	signal_cases(sigset);
	errno = SENTINEL;
	sighandler_t prev = sigset(SIGUSR1, SIG_HOLD);
	sigset_t mask;
	sigprocmask(SIG_BLOCK, NULL, &mask);
	printf("SIG_HOLD: previous %s, blocked %d\n", prev == SIG_DFL ? "SIG_DFL" : "other",
	       sigismember(&mask, SIGUSR1));
	prev = sigset(SIGUSR1, on_signal);
	sigprocmask(SIG_BLOCK, NULL, &mask);
	printf("after: previous %s, blocked %d\n", prev == SIG_HOLD ? "SIG_HOLD" : "other",
	       sigismember(&mask, SIGUSR1));
}

/* sigignore: deprecated too; SIG_IGN as sigaction then reads it (for a
 * signal the shim handles too: its view of the program's disposition),
 * and its refusals. */
static void case_sigignore(void)
{
	static const int sigs[] = { SIGUSR1, SIGSEGV, SIGKILL, 0 };
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		errno = SENTINEL;
		int rc = sigignore(sigs[i]);
		printf("sigignore(%d): %d, %s\n", sigs[i], rc, errno == SENTINEL ? "errno kept" : err_name(errno));
		if (rc == 0)
			disposition("after", sigs[i]);
	}
	signal(SIGUSR1, SIG_DFL);
	signal(SIGSEGV, SIG_DFL);
}

/* siginterrupt: the flags it changes in place, and what signal() sets after
 * it (glibc remembers it for signal(); so does the shim). */
static void case_siginterrupt(void)
{
	signal(SIGUSR1, on_signal);
	errno = SENTINEL;
	CALLN("siginterrupt(SIGUSR1, 1)", siginterrupt(SIGUSR1, 1));
	disposition("SIGUSR1 interrupting", SIGUSR1);
	signal(SIGUSR1, on_signal);
	disposition("SIGUSR1 by signal() after", SIGUSR1);
	CALLN("siginterrupt(SIGUSR1, 0)", siginterrupt(SIGUSR1, 0));
	signal(SIGUSR1, on_signal);
	disposition("SIGUSR1 restarting again", SIGUSR1);
	CALLN("siginterrupt(0, 1)", siginterrupt(0, 1));
	CALLN("siginterrupt(SIGKILL, 1)", siginterrupt(SIGKILL, 1));
	signal(SIGUSR1, SIG_DFL);
}

/* sigaltstack: passed through (signals.c notes that the program uses
 * alternate stacks); set, queried, a bad flag, too small, disabled. */
static void case_sigaltstack(void)
{
	static char stack[1 << 16];
	stack_t ss = { .ss_sp = stack, .ss_size = sizeof(stack) }, old;
	errno = SENTINEL;
	CALLN("query", sigaltstack(NULL, &old));
	printf("before: flags %d, size %zu\n", old.ss_flags, old.ss_size);
	CALLN("set", sigaltstack(&ss, NULL));
	CALLN("query after", sigaltstack(NULL, &old));
	printf("after: flags %d, size %zu, ours %d\n", old.ss_flags, old.ss_size, old.ss_sp == stack);
	stack_t bad = { .ss_sp = stack, .ss_size = sizeof(stack), .ss_flags = 0x40 };
	CALLN("bad flag", sigaltstack(&bad, NULL));
	stack_t small = { .ss_sp = stack, .ss_size = 16 };
	CALLN("too small", sigaltstack(&small, NULL));
	stack_t off = { .ss_flags = SS_DISABLE };
	CALLN("disable", sigaltstack(&off, &old));
	printf("was: flags %d, size %zu\n", old.ss_flags, old.ss_size);
	CALLN("raw query", syscall(SYS_sigaltstack, NULL, &old));
	printf("now: flags %d\n", old.ss_flags);
}

/* prctl: interposed for PR_SET_SECCOMP only (lifecycle.c); everything else
 * passes through. A failed install (a bad mode, a filter without
 * no_new_privs) must leave the run profiled as before. */
static void case_prctl(void)
{
	char name[16] = "";
	CALLN("PR_SET_NAME", prctl(PR_SET_NAME, "conformance", 0, 0, 0));
	CALLN("PR_GET_NAME", prctl(PR_GET_NAME, name, 0, 0, 0));
	printf("name: %s\n", name);
	CALLN("PR_GET_SECCOMP", prctl(PR_GET_SECCOMP, 0, 0, 0, 0));
	CALLN("PR_GET_NO_NEW_PRIVS", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
	CALLN("PR_SET_SECCOMP, mode 99", prctl(PR_SET_SECCOMP, 99, 0, 0, 0));
	CALLN("PR_SET_SECCOMP, filter NULL", prctl(PR_SET_SECCOMP, 2, NULL, 0, 0));
	CALLN("option -1", prctl(-1, 0, 0, 0, 0));
	CALLN("syscall SYS_seccomp, bad flags", syscall(SYS_seccomp, 1, ~0ul, NULL));
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;   /* still profiled after them */
	CALL("lock after", pthread_mutex_lock(&m));
	CALL("unlock after", pthread_mutex_unlock(&m));
}

/* ---- C11 (not in CV_REAL_FUNCS: the shim forwards them to its wrappers) ------ */

static void c11_view(const char *label, mtx_t *m)
{
	mutex_state(label, (pthread_mutex_t *)m);
}

static void case_mtx_init(void)
{
	mtx_t m;
	int types[] = { mtx_plain, mtx_timed, mtx_plain | mtx_recursive, mtx_timed | mtx_recursive, 99 };
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		char l[32];
		snprintf(l, sizeof(l), "type %d", types[i]);
		if (CALL(l, mtx_init(&m, types[i])) == thrd_success) {
			printf("kind %#x\n", (unsigned)((pthread_mutex_t *)&m)->__data.__kind);
			mtx_destroy(&m);
		}
	}
}

static void case_mtx_destroy(void)
{
	mtx_t m;
	mtx_init(&m, mtx_plain);
	errno = SENTINEL;
	mtx_destroy(&m);
	show("destroy", 0, errno, true);
}

static void case_mtx_lock(void)
{
	mtx_t m;
	mtx_init(&m, mtx_plain | mtx_recursive);
	CALL("lock", mtx_lock(&m));
	CALL("lock recursive", mtx_lock(&m));
	c11_view("held twice", &m);
	mtx_unlock(&m);
	mtx_unlock(&m);
	c11_view("released", &m);
}

static void case_mtx_trylock(void)
{
	mtx_t m;
	mtx_init(&m, mtx_plain);
	CALL("trylock", mtx_trylock(&m));
	CALL("trylock held", mtx_trylock(&m));
	mtx_unlock(&m);
}

static void case_mtx_timedlock(void)
{
	mtx_t m;
	mtx_init(&m, mtx_timed);
	CALL("free, expired", mtx_timedlock(&m, &expired));
	struct holder h = { .m = (pthread_mutex_t *)&m };
	mtx_unlock(&m);
	sem_init(&h.locked, 0, 0);
	sem_init(&h.release, 0, 0);
	pthread_t t;
	MUST(pthread_create(&t, NULL, hold_until_posted, &h));
	while (sem_wait(&h.locked) != 0)
		;
	CALL("held by other, expired", mtx_timedlock(&m, &expired));
	CALL("held by other, invalid", mtx_timedlock(&m, &bad_nsec));
	sem_post(&h.release);
	pthread_join(t, NULL);
}

static void case_mtx_unlock(void)
{
	mtx_t m;
	mtx_init(&m, mtx_plain);
	mtx_lock(&m);
	CALL("unlock", mtx_unlock(&m));
	c11_view("released", &m);
}

static void case_cnd_init(void)
{
	cnd_t c;
	CALL("init", cnd_init(&c));
	cnd_destroy(&c);
}

static void case_cnd_destroy(void)
{
	cnd_t c;
	cnd_init(&c);
	errno = SENTINEL;
	cnd_destroy(&c);
	show("destroy", 0, errno, true);
}

static void case_cnd_wait(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	int ready = 0, go = 0;
	pthread_t t;
	struct waiter w;
	start_waiters(&t, &w, 1, &m, &c, &ready, &go);   /* a pthread waiter on the same objects */
	go = 1;
	CALL("cnd_signal to a waiter", cnd_signal((cnd_t *)&c));
	pthread_mutex_unlock(&m);
	pthread_join(t, NULL);
	mtx_t cm;
	cnd_t cc;
	mtx_init(&cm, mtx_plain);
	cnd_init(&cc);
	mtx_lock(&cm);
	CALL("cnd_timedwait expired", cnd_timedwait(&cc, &cm, &expired));
	c11_view("re-acquired", &cm);
	mtx_unlock(&cm);
}

static void case_cnd_timedwait(void)
{
	mtx_t m;
	cnd_t c;
	mtx_init(&m, mtx_timed);
	cnd_init(&c);
	mtx_lock(&m);
	CALL("expired", cnd_timedwait(&c, &m, &expired));
	CALL("invalid", cnd_timedwait(&c, &m, &bad_nsec));
	c11_view("held", &m);
	mtx_unlock(&m);
}

static void case_cnd_signal(void)
{
	cnd_t c;
	cnd_init(&c);
	CALL("signal, nobody", cnd_signal(&c));
}

static void case_cnd_broadcast(void)
{
	cnd_t c;
	cnd_init(&c);
	CALL("broadcast, nobody", cnd_broadcast(&c));
}

/* ---- GCC OpenMP (libgomp) entry points: preload/gomp.c --------------------- */

static void case_GOMP_parallel(void)
{
	int entered = 0, team = 0;
#pragma omp parallel num_threads(3)
	{
#pragma omp atomic
		entered++;
#pragma omp single
		team = omp_get_num_threads();
	}
	printf("parallel: %d entered, team of %d, after it %d thread\n", entered, team, omp_get_num_threads());
}

static void case_GOMP_barrier(void)
{
	int before = 0, seen[2] = { 0, 0 };
#pragma omp parallel num_threads(2)
	{
#pragma omp atomic
		before++;
#pragma omp barrier
		int me = omp_get_thread_num();
#pragma omp atomic read
		seen[me] = before;
	}
	printf("barrier: both saw %d and %d arrivals after it\n", seen[0], seen[1]);
}

static void case_GOMP_loop_end(void)
{
	long sum = 0;
	int after[2] = { 0, 0 };
#pragma omp parallel num_threads(2)
	{
#pragma omp for schedule(dynamic, 7) reduction(+:sum)
		for (int i = 0; i < 1000; i++)
			sum += i;
		after[omp_get_thread_num()] = 1;   /* past the loop's end barrier */
	}
	printf("loop: sum %ld, %d threads past its end\n", sum, after[0] + after[1]);
}

static void case_GOMP_sections_end(void)
{
	int ran[2] = { 0, 0 };
#pragma omp parallel num_threads(2)
	{
#pragma omp sections
		{
#pragma omp section
			ran[0]++;
#pragma omp section
			ran[1]++;
		}
	}
	printf("sections: first ran %d, second ran %d\n", ran[0], ran[1]);
}

static void case_GOMP_critical_start(void)
{
	long n = 0;
#pragma omp parallel num_threads(2)
	for (int i = 0; i < 1000; i++) {
#pragma omp critical
		n++;
	}
	printf("critical: %ld\n", n);
}

static void case_GOMP_critical_name_start(void)
{
	long n = 0;
#pragma omp parallel num_threads(2)
	for (int i = 0; i < 1000; i++) {
#pragma omp critical(conformance_named)
		n++;
	}
	printf("named critical: %ld\n", n);
}

static void case_omp_set_lock(void)
{
	omp_lock_t l;
	omp_init_lock(&l);
	long n = 0;
#pragma omp parallel num_threads(2)
	for (int i = 0; i < 1000; i++) {
		omp_set_lock(&l);
		n++;
		omp_unset_lock(&l);
	}
	omp_set_lock(&l);
	int busy = omp_test_lock(&l);
	omp_unset_lock(&l);
	int free_ = omp_test_lock(&l);
	omp_unset_lock(&l);
	omp_destroy_lock(&l);
	printf("lock: %ld; test while held %d, when free %d\n", n, busy, free_);
}

static void case_omp_set_nest_lock(void)
{
	omp_nest_lock_t l;
	omp_init_nest_lock(&l);
	omp_set_nest_lock(&l);
	omp_set_nest_lock(&l);
	int depth = omp_test_nest_lock(&l);   /* the owner: the new nesting count */
	omp_unset_nest_lock(&l);
	omp_unset_nest_lock(&l);
	omp_unset_nest_lock(&l);
	omp_destroy_nest_lock(&l);
	printf("nest lock: depth %d\n", depth);
}

/* The combined parallel loops: GCC calls the entry point of the loop's
 * schedule (not with a reduction clause; schedule(static) it splits
 * inline, so that one is called as older GCCs called it, through its
 * ABI). */
#define OMP_PRAGMA(...) _Pragma(#__VA_ARGS__)
#define PARALLEL_LOOP_CASE(name, ...)                                                        \
	static void case_##name(void)                                                        \
	{                                                                                    \
		long sum = 0;                                                                \
		OMP_PRAGMA(omp parallel for num_threads(2) __VA_ARGS__)                      \
		for (int i = 0; i < 1000; i++)                                               \
			OMP_PRAGMA(omp atomic) sum += i;                                     \
		printf(#name ": sum %ld\n", sum);                                             \
	}
PARALLEL_LOOP_CASE(GOMP_parallel_loop_dynamic, schedule(monotonic: dynamic, 7))
PARALLEL_LOOP_CASE(GOMP_parallel_loop_nonmonotonic_dynamic, schedule(dynamic, 7))
PARALLEL_LOOP_CASE(GOMP_parallel_loop_guided, schedule(monotonic: guided))
PARALLEL_LOOP_CASE(GOMP_parallel_loop_nonmonotonic_guided, schedule(guided))
PARALLEL_LOOP_CASE(GOMP_parallel_loop_runtime, schedule(monotonic: runtime))
PARALLEL_LOOP_CASE(GOMP_parallel_loop_nonmonotonic_runtime, schedule(nonmonotonic: runtime))
PARALLEL_LOOP_CASE(GOMP_parallel_loop_maybe_nonmonotonic_runtime, schedule(runtime))
#undef PARALLEL_LOOP_CASE
#undef OMP_PRAGMA

void GOMP_parallel_loop_static(void (*fn)(void *), void *data, unsigned num_threads, long start, long end,
			       long incr, long chunk_size, unsigned flags);
bool GOMP_loop_static_next(long *istart, long *iend);
void GOMP_loop_end_nowait(void);

static void static_chunks(void *arg)
{
	long *sum = arg, mine = 0, from, to;
	while (GOMP_loop_static_next(&from, &to))
		for (long i = from; i < to; i++)
			mine += i;
	GOMP_loop_end_nowait();
#pragma omp atomic
	*sum += mine;
}

static void case_GOMP_parallel_loop_static(void)
{
	long sum = 0;
	GOMP_parallel_loop_static(static_chunks, &sum, 2, 0, 1000, 1, 7, 0);
	printf("GOMP_parallel_loop_static: sum %ld\n", sum);
}

static void case_GOMP_parallel_sections(void)
{
	int ran[3] = { 0, 0, 0 };
#pragma omp parallel sections num_threads(2)
	{
#pragma omp section
		ran[0]++;
#pragma omp section
		ran[1]++;
#pragma omp section
		ran[2]++;
	}
	printf("parallel sections: ran %d %d %d\n", ran[0], ran[1], ran[2]);
}

/* Exported beside CV_REAL_FUNCS: the C11 names, and the exec, exit and signal
 * variants lifecycle.c forwards to the table's functions. */
#define OTHER_FUNCS(X)                                                          \
	X(execv) X(execvp) X(execl) X(execle) X(execlp) X(_Exit) X(signal) X(bsd_signal) \
	X(sysv_signal) X(__sysv_signal) X(ssignal) X(sigset) X(sigignore) X(__sigaction)

#define GOMP_FUNCS(X)                                                                      \
	X(GOMP_parallel) X(GOMP_barrier) X(GOMP_loop_end) X(GOMP_sections_end) X(GOMP_critical_start) \
	X(GOMP_critical_name_start) X(omp_set_lock) X(omp_set_nest_lock) X(GOMP_parallel_loop_static)          \
	X(GOMP_parallel_loop_dynamic) X(GOMP_parallel_loop_nonmonotonic_dynamic) X(GOMP_parallel_loop_guided)     \
	X(GOMP_parallel_loop_nonmonotonic_guided) X(GOMP_parallel_loop_runtime)                                  \
	X(GOMP_parallel_loop_nonmonotonic_runtime) X(GOMP_parallel_loop_maybe_nonmonotonic_runtime)              \
	X(GOMP_parallel_sections)

#define C11_FUNCS(X)                                                                      \
	X(mtx_init) X(mtx_destroy) X(mtx_lock) X(mtx_trylock) X(mtx_timedlock) X(mtx_unlock) \
	X(cnd_init) X(cnd_destroy) X(cnd_wait) X(cnd_timedwait) X(cnd_signal) X(cnd_broadcast)

/* ---- the table ------------------------------------------------------------- */

static const struct { const char *name; void (*run)(void); } cases[] = {
#define CV_X(fn, ret, args) { #fn, case_##fn },
	CV_REAL_FUNCS(CV_X)
#undef CV_X
#define C11_X(fn) { #fn, case_##fn },
	C11_FUNCS(C11_X)
	OTHER_FUNCS(C11_X)
	GOMP_FUNCS(C11_X)
#undef C11_X
};

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: cases NAME | --list\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (strcmp(argv[1], "--list") == 0) {
			printf("%s\n", cases[i].name);
		} else if (strcmp(argv[1], cases[i].name) == 0) {
			cases[i].run();
			return 0;
		}
	}
	if (strcmp(argv[1], "--list") == 0)
		return 0;
	fprintf(stderr, "cases: no case %s\n", argv[1]);
	return 2;
}
