/* thread.c — per-thread state and the thread lifecycle wrappers.
 *
 * A thread's state is created by its creator inside pthread_create (so the
 * start routine, creator and creation cost are known before it runs) and
 * installed by the trampoline it starts in. The main thread's is made by the
 * constructor; any other thread the shim meets without state (one made before
 * the shim was loaded, or by clone()) gets one on its first call, marked
 * untracked. A thread-specific key's destructor records how the thread ended;
 * the state itself is kept for the profile.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "shim.h"

__thread struct cv_thread *cv__self __attribute__((tls_model("initial-exec")));
__thread unsigned cv__busy __attribute__((tls_model("initial-exec")));
/* The calling thread's state even while the guard hides it in cv__self. */
static __thread struct cv_thread *my_state __attribute__((tls_model("initial-exec")));

static struct cv_thread *all_threads;
static uint32_t nthreads;

/* Live threads by pthread_t, for pthread_detach and pthread_setname_np on
 * another thread: a handle is reused once its thread exited, so only live
 * threads may match, and scanning every thread ever made would grow without
 * bound. Both the creator (right after pthread_create) and the thread itself
 * add it; its exit removes it for good. */
#define CV_LIVE_BUCKETS 1024u
static struct cv_thread *live[CV_LIVE_BUCKETS];
static cv_spinlock_t live_lock;

static unsigned live_bucket(pthread_t th)
{
	return (unsigned)(((uint64_t)th * 0x9E3779B97F4A7C15ull) >> 54) & (CV_LIVE_BUCKETS - 1);
}

static void live_add(struct cv_thread *t)
{
	cv__spin_lock(&live_lock);
	if (!t->live && !t->gone) {
		unsigned b = live_bucket(t->self);
		t->live_next = live[b];
		live[b] = t;
		t->live = true;
	}
	cv__spin_unlock(&live_lock);
}

static void live_remove(struct cv_thread *t)
{
	cv__spin_lock(&live_lock);
	if (t->live)
		for (struct cv_thread **pp = &live[live_bucket(t->self)]; *pp; pp = &(*pp)->live_next)
			if (*pp == t) {
				*pp = t->live_next;
				break;
			}
	t->live = false;
	t->gone = true;
	cv__spin_unlock(&live_lock);
}

static struct cv_thread *thread_alloc(void)
{
	struct cv_thread *t = cv__alloc(sizeof(struct cv_thread));
	if (t)
		cv__trace_thread(t);
	return t;
}

/* Give t its index and make it visible to the profile writer. */
static void thread_publish(struct cv_thread *t)
{
	t->index = __atomic_fetch_add(&nthreads, 1, __ATOMIC_RELAXED);
	t->all_next = __atomic_load_n(&all_threads, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&all_threads, &t->all_next, t, true,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}

/* Install t as the calling thread's state. A thread created through our
 * pthread_create was published by its creator already, so that
 * pthread_detach or pthread_setname_np right after the create find it. */
static void thread_attach(struct cv_thread *t, bool publish)
{
	t->self = pthread_self();
	t->start_ns = cv__now_ns();
	/* tid last: a profile written meanwhile takes a thread with a tid as
	 * started, so its start time must already be there. */
	__atomic_store_n(&t->tid, gettid(), __ATOMIC_RELEASE);
	live_add(t);
	if (publish)
		thread_publish(t);
	my_state = t;
	cv__self = t;
	pthread_setspecific(cv__process.exit_key, t);   /* key index < 32: no allocation */
}

struct cv_thread *cv__threads(void) { return __atomic_load_n(&all_threads, __ATOMIC_ACQUIRE); }
uint32_t cv__thread_count(void) { return __atomic_load_n(&nthreads, __ATOMIC_RELAXED); }

struct cv_thread *cv__thread_slow(void)
{
	if (cv__busy)
		return NULL;
	if (CV_UNLIKELY(!__atomic_load_n(&cv__process.ready, __ATOMIC_ACQUIRE)))
		cv__init();
	if (cv__process.disabled || !cv__process.ready)
		return NULL;
	if (my_state)
		return cv__self = my_state;
	struct cv_thread *t = thread_alloc();
	if (!t)
		return NULL;
	t->flags = CV_THREAD_UNTRACKED;
	thread_attach(t, true);
	return t;
}

/* Called by cv__init on the thread that loads the shim (the main thread). */
void cv__thread_init_main(void)
{
	struct cv_thread *t = thread_alloc();
	if (!t)
		return;
	t->flags = CV_THREAD_MAIN;
	thread_attach(t, true);
	t->start_ns = cv__process.start_ns;
}

/* ---- how a thread ended ------------------------------------------------- */

static ssize_t read_small_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

#define CV_SCHEDSTAT_MIN_LIFE_NS 2000000u   /* 2 ms */

static uint64_t status_field(const char *status, const char *key)
{
	const char *p = strstr(status, key);
	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/* schedstat: time on the CPU, time runnable but waiting for one, and the
 * number of times it was scheduled in (all in ns / counts since it started). */
static void read_schedstat(struct cv_thread *t, const char *path)
{
	char buf[128];
	unsigned long long on_cpu, delay, slices;
	if (read_small_file(path, buf, sizeof(buf)) > 0 &&
	    sscanf(buf, "%llu %llu %llu", &on_cpu, &delay, &slices) == 3) {
		t->run_delay_ns = delay;
		t->timeslices = slices;
		t->flags |= CV_THREAD_RUNQ;
	}
}

/* The calling thread, from the inside. */
static void finish_self(struct cv_thread *t)
{
	struct timespec ts;
	struct rusage ru;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
		t->cpu_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (getrusage(RUSAGE_THREAD, &ru) == 0) {
		t->voluntary_cs = (uint64_t)ru.ru_nvcsw;
		t->involuntary_cs = (uint64_t)ru.ru_nivcsw;
		t->minor_faults = (uint64_t)ru.ru_minflt;
		t->major_faults = (uint64_t)ru.ru_majflt;
	}
	/* Opening procfs costs 30–75 µs here, more than a short thread's whole
	 * life: read the run-queue delay only when it is at most a few per cent
	 * of the thread's lifetime. A short thread's delay stays unmeasured. */
	if (t->end_ns - t->start_ns >= CV_SCHEDSTAT_MIN_LIFE_NS)
		read_schedstat(t, "/proc/thread-self/schedstat");
	prctl(PR_GET_NAME, t->name, 0, 0, 0);
}

/* Another thread that is still running, from /proc and its CPU clock. */
static void finish_other(struct cv_thread *t)
{
	char path[64], buf[2048];
	struct timespec ts;
	/* The kernel's per-thread CPU clock id: ~tid << 3 | CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED. */
	clockid_t clock = (clockid_t)((~(unsigned)t->tid << 3) | 6);
	if (clock_gettime(clock, &ts) == 0)
		t->cpu_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", t->tid);
	if (read_small_file(path, buf, sizeof(buf)) > 0) {
		t->voluntary_cs = status_field(buf, "\nvoluntary_ctxt_switches:");
		t->involuntary_cs = status_field(buf, "\nnonvoluntary_ctxt_switches:");
	}
	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", t->tid);
	read_schedstat(t, path);
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", t->tid);
	if (read_small_file(path, buf, sizeof(buf)) > 0) {
		/* Fields after the ")" that ends comm: state is 3; minflt 10, majflt 12. */
		const char *p = strrchr(buf, ')');
		unsigned long long minflt, majflt;
		if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %llu %*u %llu", &minflt, &majflt) == 2) {
			t->minor_faults = minflt;
			t->major_faults = majflt;
		}
	}
	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", t->tid);
	if (read_small_file(path, buf, CV_NAME_MAX + 1) > 0) {
		buf[strcspn(buf, "\n")] = '\0';
		memcpy(t->name, buf, CV_NAME_MAX - 1);
	}
}

void cv__thread_finish(struct cv_thread *t)
{
	int saved_errno = errno;
	t->end_ns = cv__now_ns();
	if (t == my_state)
		finish_self(t);
	else
		finish_other(t);
	errno = saved_errno;
}

/* The key destructor runs after the start routine returned or pthread_exit
 * unwound, and after C++ thread_local destructors. Lock operations that other
 * key destructors make afterwards are still counted: the state stays live. */
void cv__thread_exit_key(void *arg)
{
	struct cv_thread *t = arg, *saved = cv__guard_enter();
	live_remove(t);
	cv__thread_finish(t);
	t->flags |= CV_THREAD_EXITED;
	cv__guard_leave(saved);
}

/* ---- fork ---------------------------------------------------------------- */

/* In the child only the forking thread exists, and it starts the child's own
 * profile: a fresh thread list with one thread, index 0. */
void cv__threads_after_fork(struct cv_thread *parent_state)
{
	all_threads = NULL;
	nthreads = 0;
	memset(live, 0, sizeof(live));
	cv__spin_unlock(&live_lock);
	struct cv_thread *t = thread_alloc();
	my_state = NULL;
	cv__self = NULL;
	if (!t)
		return;
	t->flags = CV_THREAD_MAIN;
	if (parent_state)
		memcpy(t->name, parent_state->name, CV_NAME_MAX);
	thread_attach(t, true);
}

/* ---- wrappers ------------------------------------------------------------ */

static void *trampoline(void *arg)
{
	struct cv_thread *t = arg;
	thread_attach(t, false);
	return t->start_routine(t->start_arg);
}

static struct cv_thread *thread_by_handle(pthread_t th)
{
	struct cv_thread *found = NULL;
	cv__spin_lock(&live_lock);
	for (struct cv_thread *t = live[live_bucket(th)]; t; t = t->live_next)
		if (pthread_equal(t->self, th)) {
			found = t;
			break;
		}
	cv__spin_unlock(&live_lock);
	return found;
}

CV_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
			     void *(*start_routine)(void *), void *arg)
{
	struct cv_thread *self = cv__self ? cv__self : cv__thread_slow();
	if (!self)
		return cv__real.pthread_create(th, attr, start_routine, arg);
	int saved_errno = errno;
	struct cv_thread *child = thread_alloc();
	errno = saved_errno;
	if (!child)
		return cv__real.pthread_create(th, attr, start_routine, arg);
	int detach = PTHREAD_CREATE_JOINABLE;
	if (attr && pthread_attr_getdetachstate(attr, &detach) == 0 && detach == PTHREAD_CREATE_DETACHED)
		child->flags |= CV_THREAD_DETACHED;
	child->start_routine = start_routine;
	child->start_arg = arg;
	child->creator_tid = self->tid;

	thread_publish(child);   /* tid 0 until it runs: the profile skips it until then */
	uint64_t t0 = cv__now_ns();
	int rc = cv__real.pthread_create(th, attr, trampoline, child);
	uint64_t elapsed = cv__now_ns() - t0;
	if (rc == 0) {
		child->self = *th;   /* the child stores the same; set here for a detach right away */
		live_add(child);
		CV_STORE(&child->create_ns, elapsed);
		CV_BUMP(&self->threads_created, 1);
	}
	/* On failure the child never runs, keeps tid 0, and is never reported. */
	return rc;
}

static int joined(struct cv_thread *self, uint64_t t0, int rc)
{
	CV_BUMP(&self->join_wait_ns, cv__now_ns() - t0);
	if (rc == 0)
		CV_BUMP(&self->joins, 1);
	return rc;
}

CV_EXPORT int pthread_join(pthread_t th, void **ret)
{
	struct cv_thread *self = cv__self ? cv__self : cv__thread_slow();
	if (!self)
		return cv__real.pthread_join(th, ret);
	uint64_t t0 = cv__now_ns();
	return joined(self, t0, cv__real.pthread_join(th, ret));
}

CV_EXPORT int pthread_tryjoin_np(pthread_t th, void **ret)
{
	struct cv_thread *self = cv__self ? cv__self : cv__thread_slow();
	if (!self)
		return cv__real.pthread_tryjoin_np(th, ret);
	uint64_t t0 = cv__now_ns();
	return joined(self, t0, cv__real.pthread_tryjoin_np(th, ret));
}

CV_EXPORT int pthread_timedjoin_np(pthread_t th, void **ret, const struct timespec *abstime)
{
	struct cv_thread *self = cv__self ? cv__self : cv__thread_slow();
	if (!self)
		return cv__real.pthread_timedjoin_np(th, ret, abstime);
	uint64_t t0 = cv__now_ns();
	return joined(self, t0, cv__real.pthread_timedjoin_np(th, ret, abstime));
}

CV_EXPORT int pthread_detach(pthread_t th)
{
	struct cv_thread *self = cv__self ? cv__self : cv__thread_slow();
	int rc = cv__real.pthread_detach(th);
	if (self && rc == 0) {
		struct cv_thread *t = pthread_equal(th, self->self) ? self : thread_by_handle(th);
		if (t)
			__atomic_fetch_or(&t->flags, CV_THREAD_DETACHED, __ATOMIC_RELAXED);
	}
	return rc;
}

CV_EXPORT void pthread_exit(void *ret)
{
	struct cv_thread *self = cv__self ? cv__self : cv__thread_slow();
	if (self)
		__atomic_fetch_or(&self->flags, CV_THREAD_PTHREAD_EXIT, __ATOMIC_RELAXED);
	cv__real.pthread_exit(ret);
	__builtin_unreachable();
}

CV_EXPORT int pthread_setname_np(pthread_t th, const char *name)
{
	struct cv_thread *self = cv__self ? cv__self : cv__thread_slow();
	int rc = cv__real.pthread_setname_np(th, name);
	if (self && rc == 0) {
		struct cv_thread *t = pthread_equal(th, self->self) ? self : thread_by_handle(th);
		if (t)
			strncpy(t->name, name, CV_NAME_MAX - 1);
	}
	return rc;
}
