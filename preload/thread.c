/* thread.c — per-thread state and the thread lifecycle wrappers.
 *
 * A thread's state is created by its creator inside pthread_create (so the
 * start routine, creator and creation cost are known before it runs) and
 * installed by the trampoline it starts in. The main thread's is made by the
 * constructor; any other thread the shim meets without state (one made before
 * the shim was loaded, or by clone()) gets one on its first call, marked
 * untracked. The trampoline records how the thread ended, through a
 * cancellation cleanup handler that runs whether the start routine returns,
 * calls pthread_exit or is cancelled: no pthread key (a program may need all
 * PTHREAD_KEYS_MAX of them) and nothing from the program's heap (the
 * shim's own allocator keeps the thread's row). Untracked threads are
 * finished when the profile is written. What an ended thread did is kept
 * for the profile ("bounded memory" below).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "shim.h"

__thread struct cv_thread *cv__self __attribute__((tls_model("initial-exec"))) = CV_INERT;
__thread pid_t cv__tid __attribute__((tls_model("initial-exec")));

pid_t cv__tid_slow(void)
{
	return cv__tid = cv__gettid();
}
__thread unsigned cv__busy __attribute__((tls_model("initial-exec")));
__thread int cv__guard_errno __attribute__((tls_model("initial-exec")));
__thread int cv__snapshot_pending __attribute__((tls_model("initial-exec")));
__thread int cv__guard_cancel_type __attribute__((tls_model("initial-exec")));
/* shim.h: the thread's own state, also while the guard hides it. */
__thread struct cv_thread *cv__my_state __attribute__((tls_model("initial-exec")));
/* The thread's end was recorded: what it does afterwards (C++ thread_local
 * and key destructors) goes uncounted, so its lookup table and unwind
 * buffer can go back at once. */
static __thread bool ended __attribute__((tls_model("initial-exec")));

static struct cv_thread *all_threads;
static uint32_t nthreads;

/* Live threads by pthread_t, for pthread_detach and pthread_setname_np on
 * another thread: a handle is reused once its thread exited, so only live
 * threads may match, and scanning every thread ever made would grow without
 * bound. Both the creator (right after pthread_create) and the thread itself
 * add it; its exit removes it for good. */
#define CV_LIVE_BUCKETS 1024u
static struct cv_thread *live[CV_LIVE_BUCKETS] CV_LARGE_BSS;
static cv_spinlock_t live_lock;

/* A thread created through our pthread_create is added by its trampoline:
 * the creator never reads the handle the real create stored in *th, since
 * the child may already have freed the memory *th points into (a detached
 * worker that frees its job struct). A pthread_detach that finds no live
 * thread while some created thread has not attached yet may be for one of
 * them: it is parked in pending_detach, which the trampoline checks. The
 * table is small; when it is full the flag is lost, never the program's
 * detach. Entries left when no thread is waiting to attach are stale (a
 * detach of a thread that had already exited) and are cleared. */
#define CV_PENDING_DETACH 64u
static pthread_t pending_detach[CV_PENDING_DETACH];   /* 0: free */
static uint32_t unattached;                            /* created, trampoline not run yet */

static unsigned live_bucket(pthread_t th)
{
	return (unsigned)(((uint64_t)th * 0x9E3779B97F4A7C15ull) >> 54) & (CV_LIVE_BUCKETS - 1);
}

static void live_add(struct cv_thread *t)
{
	unsigned b = live_bucket(t->self);
	cv__touch_for_write(&live[b]);   /* the table's pages are first touched here, not under the lock (lock.c) */
	cv__spin_lock(&live_lock);
	if (!t->live && !t->gone) {
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

/* The state of the thread a trampoline started, for code after its
 * sigsetjmp, where a local would be kept in the frame (one more word under
 * the program's whole thread); in a fork child, the child's state of the
 * thread that forked. */
static __thread struct cv_thread *started __attribute__((tls_model("initial-exec")));

/* Forks this process image has been through: a state made before the last
 * is the parent's, on the parent's list, and never retired here (a fork
 * from a handler inside a creation or an end would leave one in hand). */
static uint32_t fork_generation;

/* ---- bounded memory: ended threads ---------------------------------------- *
 * The first CV_THREADS_KEPT threads that end are reported one by one. Each
 * is kept as a row of its own (struct cv_ended_thread: its numbers and its
 * records) and its state is recycled for a thread created later: a state
 * is 4 KiB of caches, a fresh page for each thread a program makes and
 * ends, about 7 us on the development VM (docs/performance.md, "A
 * thread's start and end"). A thread that ended holding a lock, or with
 * named counters (convoy_count_*) or a trace ring, keeps its whole state:
 * the profile writes those from it. Each later one is folded into a
 * single "merged threads" state at its end (its records into that state's
 * record of each object, its times and counts into its totals) and its
 * state is recycled alike. A recycled state stays on the all_next list
 * (push-only, read by the profile writer without locks) with tid 0, which
 * the writer skips. A profile's writer waits for merges in flight
 * (cv__threads_settle), so that it reads a merged thread in one place
 * (but a writer inside one of the shim's sections, or after 2 s). A
 * thread is retired by whichever of it and its creator is last done with
 * its state (the creator writes its creation cost after the real create
 * returned, when a short thread may have ended already): see
 * CV_CREATE_*. */
#define CV_THREADS_KEPT 1024u
enum { CV_CREATE_PENDING, CV_CREATE_DONE, CV_CREATE_CHILD_ENDED };
static uint32_t ended_kept;              /* never past CV_THREADS_KEPT + running threads */
static struct cv_ended_thread *ended_threads;
static struct cv_thread *merged_threads; /* made on the first merge */
static struct cv_thread *thread_pool;    /* recycled states, by pool_next; pool_lock */
static cv_spinlock_t merge_lock;         /* merges into merged_threads */
static cv_spinlock_t pool_lock;          /* not merge_lock: a new state is had without waiting for a merge */
/* Merges begun and not finished: a profile's writer waits for them
 * (cv__threads_settle), or it could read a thread both in its state and
 * in the merged threads' records. merging: this thread's own, which a
 * writer in a handler on it does not wait for. */
static uint32_t merges_in_flight;
static __thread bool merging __attribute__((tls_model("initial-exec")));

/* The count and this thread's flag move together, in a section: a
 * handler's exit() or fork() between the two would wait for its own
 * thread's merge, or leave the child's count short. */
static void merge_in_flight(bool begins)
{
	cv__critical_enter();
	if (begins) {
		__atomic_fetch_add(&merges_in_flight, 1, __ATOMIC_SEQ_CST);
		merging = true;
	} else {
		merging = false;
		__atomic_fetch_sub(&merges_in_flight, 1, __ATOMIC_RELEASE);
	}
	cv__critical_leave();
}

static struct cv_thread *thread_alloc(void)
{
	struct cv_thread *saved = cv__guard_enter(), *t;
	cv__spin_lock(&pool_lock);
	if ((t = thread_pool) != NULL && !cv__profile_writing())   /* a writer may be reading it */
		thread_pool = t->pool_next;
	else
		t = NULL;
	cv__spin_unlock(&pool_lock);
	if (t) {
		/* Cleared around all_next: a profile's writer that began since
		 * the look above may be walking the list through it. */
		struct cv_trace_ring *ring = t->trace;
		size_t next = offsetof(struct cv_thread, all_next), past = next + sizeof(t->all_next);
		memset(t, 0, next);
		memset((char *)t + past, 0, sizeof(*t) - past);
		t->listed = true;
		t->trace = ring;
	} else {
		t = cv__alloc(sizeof(struct cv_thread));
	}
	if (t) {
		t->fork_generation = fork_generation;
		t->hold_mask = cv__config.hold_period - 1;   /* cv__init read it first */
		cv__caches_clear(t);
		cv__trace_thread(t);   /* a new ring, or the recycled state's emptied */
	}
	cv__guard_leave(saved);
	return t;
}

/* Give t its index and make it visible to the profile writer. */
static void thread_publish(struct cv_thread *t)
{
	t->index = __atomic_fetch_add(&nthreads, 1, __ATOMIC_RELAXED);
	if (t->listed)
		return;
	t->listed = true;
	t->all_next = __atomic_load_n(&all_threads, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&all_threads, &t->all_next, t, true,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}

static void merge_thread_totals(struct cv_thread *m, const struct cv_thread *t)
{
	if (!m->start_ns || t->start_ns < m->start_ns)
		m->start_ns = t->start_ns;
	if (t->end_ns > m->end_ns)
		m->end_ns = t->end_ns;
	CV_BUMP(&m->create_ns, t->create_ns);
	CV_BUMP(&m->cpu_ns, t->cpu_ns);
	CV_BUMP(&m->voluntary_cs, t->voluntary_cs);
	CV_BUMP(&m->involuntary_cs, t->involuntary_cs);
	CV_BUMP(&m->join_wait_ns, t->join_wait_ns);
	CV_BUMP(&m->joins, t->joins);
	CV_BUMP(&m->threads_created, t->threads_created);
	CV_BUMP(&m->run_delay_ns, t->run_delay_ns);
	CV_BUMP(&m->timeslices, t->timeslices);
	CV_BUMP(&m->minor_faults, t->minor_faults);
	CV_BUMP(&m->major_faults, t->major_faults);
}

struct cv_ended_thread *cv__ended_threads(void) { return __atomic_load_n(&ended_threads, __ATOMIC_ACQUIRE); }

void cv__thread_row(const struct cv_thread *t, uint64_t now, struct cv_thread_rec *row)
{
	*row = (struct cv_thread_rec){
		.tid = t->tid,
		.creator_tid = t->creator_tid,
		.flags = CV_LOAD(&t->flags),
		.start_routine = (uintptr_t)t->start_routine,
		.create_ns = CV_LOAD(&t->create_ns),
		.start_ns = t->start_ns,
		.end_ns = t->end_ns ? t->end_ns : now,
		.cpu_ns = t->cpu_ns,
		.voluntary_cs = t->voluntary_cs,
		.involuntary_cs = t->involuntary_cs,
		.join_wait_ns = CV_LOAD(&t->join_wait_ns),
		.joins = CV_LOAD(&t->joins),
		.threads_created = CV_LOAD(&t->threads_created),
		.run_delay_ns = t->run_delay_ns,
		.timeslices = t->timeslices,
		.minor_faults = t->minor_faults,
		.major_faults = t->major_faults,
	};
	memcpy(row->name, t->name, CV_NAME_MAX);
	row->name[CV_NAME_MAX - 1] = '\0';
}

/* t's row apart from its state, for the caller to recycle that: whether
 * one could be had. */
static bool thread_keep_row(struct cv_thread *t)
{
	struct cv_ended_thread *e = cv__alloc(sizeof(*e));
	if (!e)
		return false;
	e->recs = t->recs;
	e->index = t->index;
	cv__thread_row(t, t->end_ns, &e->row);
	e->next = __atomic_load_n(&ended_threads, __ATOMIC_RELAXED);
	/* The look at the fork generation and the push in one section: a
	 * fork from a handler since the caller looked leaves the row out of
	 * the child's list (its index is the parent's numbering). */
	cv__critical_enter();
	bool ours = t->fork_generation == fork_generation;
	while (ours && !__atomic_compare_exchange_n(&ended_threads, &e->next, e, true, __ATOMIC_RELEASE,
						    __ATOMIC_RELAXED))
		;
	cv__critical_leave();
	if (!ours)
		cv__free(e, sizeof(*e));
	return ours;
}

/* What an object's last_owner names once its owner's state is to be
 * recycled: no thread, so that the thread given the state next counts its
 * first acquisition of such a lock as the hand-off it is (shim.h,
 * cv__note_owner), not as its own lock staying with it. Every object t
 * may own last has a record on t's list. */
static const char ended_owner;

/* Whether t has at most CV_RECYCLE_RECORDS records. A thread with more
 * keeps its whole state when it ends: recycling it would write the line of
 * each of its objects (owners_forget), likely not in this CPU's cache (two
 * threads of 20,000 locks each, tests/bench/buckets: 2 % of its time), for
 * a state of 4 KiB beside records of 128 bytes each. */
#define CV_RECYCLE_RECORDS 32

static bool few_records(const struct cv_thread *t)
{
	unsigned n = 0;
	for (const struct cv_rec *r = t->recs; r; r = r->next)
		if (++n > CV_RECYCLE_RECORDS)
			return false;
	return true;
}

static void owners_forget(struct cv_thread *t)
{
	for (struct cv_rec *r = t->recs; r; r = r->next) {
		struct cv_thread *owner = t;
		if (CV_LOAD(&r->obj->last_owner) == t)   /* the line written only where it must be */
			__atomic_compare_exchange_n(&r->obj->last_owner, &owner,
						    (struct cv_thread *)(uintptr_t)&ended_owner, false, __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED);
	}
}

/* The look at the fork generation under the lock, a section, where no
 * handler of the program runs (nor forks): a parent's state (a fork from
 * a handler since the caller looked) is on the parent's list, not ours,
 * and is left alone. */
static void thread_recycle(struct cv_thread *t)
{
	cv__spin_lock(&pool_lock);
	if (t->fork_generation == fork_generation) {
		__atomic_store_n(&t->tid, 0, __ATOMIC_RELEASE);
		t->pool_next = thread_pool;
		thread_pool = t;
	}
	cv__spin_unlock(&pool_lock);
}

/* After the end of t (inside the guard, t->recs final). */
static void thread_retire(struct cv_thread *t)
{
	if (t->ncounters || t->fork_generation != fork_generation)
		return;
	bool kept = __atomic_load_n(&ended_kept, __ATOMIC_RELAXED) < CV_THREADS_KEPT &&
		    __atomic_fetch_add(&ended_kept, 1, __ATOMIC_RELAXED) < CV_THREADS_KEPT;
	if (kept) {
		/* The row first, then the look for a writer (each side's store,
		 * then a full fence, then its load: output.c's write names
		 * itself before its snapshot): a writer that began before the
		 * look is seen, and the state stays whole (its snapshot may
		 * hold it; the row wins there); one that began after it finds
		 * the row. */
		if (!t->nheld && !t->trace && few_records(t) && thread_keep_row(t) && !cv__profile_writing()) {
			owners_forget(t);
			thread_recycle(t);
		}
		return;
	}
	/* In flight, then the look for a writer (each side's store, a full
	 * fence, its load): a writer that began before the look is seen,
	 * and the state is kept apart (its snapshot may hold it); one that
	 * began after it waits for the merge. */
	merge_in_flight(true);
	if (cv__profile_writing()) {
		merge_in_flight(false);
		return;
	}
	struct cv_thread *m = __atomic_load_n(&merged_threads, __ATOMIC_ACQUIRE), *spare = NULL;
	if (!m && (spare = cv__alloc(sizeof(*spare))) != NULL) {   /* lock.c: not under the lock */
		spare->tid = -1;   /* no thread's: the writer skips only tid 0 */
		spare->flags = CV_THREAD_EXITED | CV_THREAD_UNTRACKED;
		strcpy(spare->name, "merged threads");
	}
	cv__spin_lock(&merge_lock);
	/* A fork from a handler since the look at the start left the
	 * parent's state in hand: not the child's to merge. */
	bool ours = t->fork_generation == fork_generation;
	if (ours && !(m = merged_threads) && spare) {
		thread_publish(spare);
		__atomic_store_n(&merged_threads, spare, __ATOMIC_RELEASE);
		m = spare;
		spare = NULL;
	}
	bool merged = ours && m;
	if (merged)
		owners_forget(t);   /* before its records fold away */
	merged = merged && cv__records_merge(m, t);
	if (merged) {
		merge_thread_totals(m, t);
		/* Out of the profile in the section that put it in the merged
		 * row: a handler's exit() on this thread, which does not wait
		 * for its own merge, sees it in one place. */
		__atomic_store_n(&t->tid, 0, __ATOMIC_RELEASE);
	}
	cv__spin_unlock(&merge_lock);
	cv__free(spare, sizeof(*spare));   /* another thread's came first */
	if (merged)
		thread_recycle(t);
	merge_in_flight(false);
}

/* A merge takes microseconds: a few yields, then sleeps, 2 s at most. A
 * writer inside one of the shim's sections (a handler run there: a fault,
 * a full signal queue) may hold the lock a merge waits for: no wait. */
void cv__threads_settle(void)
{
	if (cv__sections)
		return;
	struct timespec pause = { 0, 1000 * 1000 };
	for (int waits = 0; waits < 2100 && __atomic_load_n(&merges_in_flight, __ATOMIC_ACQUIRE) > (uint32_t)merging;
	     waits++) {
		if (waits < 100)
			cv__yield();
		else
			cv__nanosleep(&pause);
	}
}

static void detach_pending(pthread_t th)
{
	for (unsigned i = 0; i < CV_PENDING_DETACH; i++) {
		pthread_t none = 0;
		if (__atomic_compare_exchange_n(&pending_detach[i], &none, th, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return;
	}
}

/* The trampoline: claim a detach made before the thread attached. */
static void claim_pending_detach(struct cv_thread *t)
{
	bool last = __atomic_sub_fetch(&unattached, 1, __ATOMIC_ACQ_REL) == 0;
	for (unsigned i = 0; i < CV_PENDING_DETACH; i++) {
		pthread_t th = __atomic_load_n(&pending_detach[i], __ATOMIC_RELAXED);
		if (!th)
			continue;
		if (pthread_equal(th, t->self) &&
		    __atomic_compare_exchange_n(&pending_detach[i], &th, 0, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			__atomic_fetch_or(&t->flags, CV_THREAD_DETACHED, __ATOMIC_RELAXED);
		else if (last)
			__atomic_store_n(&pending_detach[i], 0, __ATOMIC_RELAXED);   /* stale */
	}
}

/* ---- stack bounds ------------------------------------------------------- *
 * Where the thread's stack ends, so that stacks.c never unwinds on a stack
 * too short for it (a thread on a PTHREAD_STACK_MIN stack, deep in its own
 * frames). Estimates are never below the real end; pthread_getattr_np would
 * be exact but allocates (its CPU set) and, for the main thread, reads
 * /proc/self/maps. */

/* pthread_create: the child's stack as its attributes give it. A stack the
 * program supplies (pthread_attr_setstack) is known exactly. */
static __attribute__((noinline)) void stack_from_attr(struct cv_thread *child, const pthread_attr_t *attr)
{
	pthread_attr_t dflt;
	void *addr;
	size_t size = 0;
	/* A stack the program gave: its low end, known only when its size was
	 * given too (pthread_attr_setstackaddr alone gives none). Without an
	 * address glibc reports addr + size == 0, whether a size was set or
	 * not: the C library maps the stack. */
	if (attr && pthread_attr_getstack(attr, &addr, &size) == 0 && (uintptr_t)addr + size != 0) {
		child->stack_lo = size ? (uintptr_t)addr : 0;
		child->stack_top = size ? (uintptr_t)addr + size : 0;
		return;
	}
	if (!attr && pthread_attr_init(&dflt) == 0) {
		pthread_attr_getstacksize(&dflt, &size);   /* glibc: the process default */
		pthread_attr_destroy(&dflt);
	} else if (attr) {
		pthread_attr_getstacksize(attr, &size);
	}
	child->stack_size = size;
}

/* The trampoline: glibc places its thread descriptor (pthread_self()) at the
 * top of the block it mapped (of a stack the program gave too), static TLS
 * below it and the frames below that, and the size asked for spans from
 * the top of that block down to the guard. The descriptor is 2,368 bytes
 * in glibc 2.36 x86-64; assuming 4 KiB keeps the estimate above the real
 * end. Elsewhere (static TLS above the descriptor on arm64) the bounds
 * stay unknown. */
static void stack_of_created(struct cv_thread *t)
{
#if defined(__x86_64__)
	if (!t->stack_lo && t->stack_size > 4096) {
		t->stack_lo = (uintptr_t)pthread_self() + 4096 - t->stack_size;
		t->stack_hi = t->stack_top = (uintptr_t)pthread_self();
	}
#endif
}

/* The main thread grows its stack up to RLIMIT_STACK below the top of the
 * [stack] mapping; the file name the kernel wrote for AT_EXECFN sits in its
 * last page. */
static void stack_of_main(struct cv_thread *t)
{
	struct rlimit rl;
	const char *execfn = (const char *)getauxval(AT_EXECFN);
	if (!execfn || cv__getrlimit(RLIMIT_STACK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t top = ((uintptr_t)execfn + strlen(execfn) + page) & ~(page - 1);
	if (top > rl.rlim_cur) {
		t->stack_lo = top - rl.rlim_cur;
		t->stack_top = top;
	}
}

/* Install t as the calling thread's state, tid its kernel id (0: ask the
 * kernel). A thread created through our pthread_create was published by
 * its creator already (publish false). */
static void thread_attach(struct cv_thread *t, bool publish, pid_t tid)
{
	struct cv_thread *saved = cv__guard_enter();   /* live_lock: a handler here must not take it */
	t->self = pthread_self();
	t->start_ns = cv__now_ns();
	/* tid last: a profile written meanwhile takes a thread with a tid as
	 * started, so its start time and its index (a recycled state's is
	 * its last thread's until published) must already be there. */
	if (publish)
		thread_publish(t);
	if (!tid)
		tid = cv__gettid();
	cv__tid = tid;
	__atomic_store_n(&t->tid, tid, __ATOMIC_RELEASE);
	live_add(t);
	if (!publish)
		claim_pending_detach(t);
	cv__my_state = t;
	cv__guard_leave(saved);   /* cv__thread_slow installs it in cv__self when not busy */
}

struct cv_thread *cv__threads(void) { return __atomic_load_n(&all_threads, __ATOMIC_ACQUIRE); }
uint32_t cv__thread_count(void) { return __atomic_load_n(&nthreads, __ATOMIC_RELAXED); }

struct cv_thread *cv__thread_slow(void)
{
	if (cv__busy || ended)
		return NULL;
	if (CV_UNLIKELY(!__atomic_load_n(&cv__process.ready, __ATOMIC_ACQUIRE)))
		cv__init();
	if (cv__process.disabled || !cv__process.ready)
		return NULL;
	if (!cv__my_state) {
		struct cv_thread *t = thread_alloc();
		if (!t)
			return NULL;
		t->flags = CV_THREAD_UNTRACKED;
		thread_attach(t, true, 0);
	}
	/* None, where a handler forked meanwhile and this is a child whose
	 * state could not be had (helper-90: the callers wrote to cv__inert). */
	struct cv_thread *own = cv__install_own(false);
	return own == CV_INERT ? NULL : own;
}

/* The thread's state back in cv__self, as cv__thread_slow puts it back,
 * where a fork's parent step left the guard with none (init.c): out of the
 * guard, a thread that has one. Left inert, its unlocks would find an
 * empty held set and leave the locks it held "held" for good (helper-65:
 * a signal handler that forked; false edges from them, true ones into
 * them skipped). Inside an outer guard (a handler that interrupted the
 * shim) it stays inert, as that guard's leave puts the state back. */
void cv__thread_resume(void)
{
	if (!cv__busy && !ended && cv__my_state)
		cv__install_own(false);
}

/* Called by cv__init on the thread that loads the shim (the main thread). */
void cv__thread_init_main(void)
{
	struct cv_thread *t = thread_alloc();
	if (!t)
		return;
	t->flags = CV_THREAD_MAIN;
	if (cv__gettid() == cv__getpid())
		stack_of_main(t);
	thread_attach(t, true, 0);
	t->start_ns = cv__process.start_ns;
}

/* ---- how a thread ended ------------------------------------------------- */

ssize_t cv__read_small_file(const char *path, char *buf, size_t size)
{
	int fd = cv__open(path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	ssize_t n = cv__read(fd, buf, size - 1);
	cv__close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

/* Through a buffer on the stack: on the development VM the kernel's first
 * write into a page costs about 5 us more than its later ones, even after
 * the program wrote the page (a hypervisor's fault), and a thread's state
 * is a page the kernel has not written yet, while the stack its system
 * calls use is one it has (docs/performance.md, "A thread's start and
 * end"). */
void cv__thread_name(char name[CV_NAME_MAX])
{
	char buf[CV_NAME_MAX] = { 0 };
	prctl(PR_GET_NAME, buf, 0, 0, 0);
	memcpy(name, buf, CV_NAME_MAX);
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
	if (cv__read_small_file(path, buf, sizeof(buf)) > 0 &&
	    sscanf(buf, "%llu %llu %llu", &on_cpu, &delay, &slices) == 3) {
		t->run_delay_ns = delay;
		t->timeslices = slices;
		t->flags |= CV_THREAD_RUNQ;
	}
}

bool cv__usage(int who, struct cv_usage *u)
{
	struct rusage ru;
	if (cv__getrusage(who, &ru) != 0)
		return false;
	u->cpu_ns = ((uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000u +
		     (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec)) * 1000u;
	u->voluntary_cs = (uint64_t)ru.ru_nvcsw;
	u->involuntary_cs = (uint64_t)ru.ru_nivcsw;
	u->minor_faults = (uint64_t)ru.ru_minflt;
	u->major_faults = (uint64_t)ru.ru_majflt;
	return true;
}

static uint64_t less(uint64_t now, uint64_t before)
{
	return now > before ? now - before : 0;
}

void cv__usage_since(struct cv_usage *u, const struct cv_usage *before)
{
	u->cpu_ns = less(u->cpu_ns, before->cpu_ns);
	u->voluntary_cs = less(u->voluntary_cs, before->voluntary_cs);
	u->involuntary_cs = less(u->involuntary_cs, before->involuntary_cs);
	u->minor_faults = less(u->minor_faults, before->minor_faults);
	u->major_faults = less(u->major_faults, before->major_faults);
}

/* What t had used before its profiled life began, as the kernel counts
 * from the task's birth: the thread that started the shim (or, in a fork
 * child, forked: nothing) had some; a thread it saw start, none. */
static const struct cv_usage *used_before(const struct cv_thread *t)
{
	static const struct cv_usage none;
	return t->flags & CV_THREAD_MAIN ? &cv__process.thread_usage_before : &none;
}

/* The calling thread, from the inside. */
static void finish_self(struct cv_thread *t)
{
	/* Its CPU time as getrusage sums it: the kernel splits the thread's
	 * run time into user and system parts that add up to it, each to the
	 * microsecond; its CPU clock as well would be one more system call a
	 * thread, 1.3 us here. */
	struct cv_usage u;
	if (cv__usage(RUSAGE_THREAD, &u)) {
		cv__usage_since(&u, used_before(t));
		t->cpu_ns = u.cpu_ns;
		t->voluntary_cs = u.voluntary_cs;
		t->involuntary_cs = u.involuntary_cs;
		t->minor_faults = u.minor_faults;
		t->major_faults = u.major_faults;
	}
	/* Opening procfs costs 30–75 µs here, more than a short thread's whole
	 * life: read the run-queue delay only when it is at most a few per cent
	 * of the thread's lifetime. A short thread's delay stays unmeasured. */
	if (t->end_ns - t->start_ns >= CV_SCHEDSTAT_MIN_LIFE_NS)
		read_schedstat(t, "/proc/thread-self/schedstat");
	cv__thread_name(t->name);
}

/* Another thread that is still running, from /proc and its CPU clock. Only
 * the profile's writer calls it, one at a time: its buffers are static, for
 * the writer may be on a small stack (a thread's, a signal handler's). */
static void finish_other(struct cv_thread *t)
{
	static char path[64];
	static char buf[2048] CV_LARGE_BSS;
	struct timespec ts;
	const struct cv_usage *before = used_before(t);
	/* The kernel's per-thread CPU clock id: ~tid << 3 | CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED. */
	clockid_t clock = (clockid_t)((~(unsigned)t->tid << 3) | 6);
	if (cv__clock_gettime(clock, &ts) == 0)
		t->cpu_ns = less((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec, before->cpu_ns);
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", t->tid);
	if (cv__read_small_file(path, buf, sizeof(buf)) > 0) {
		t->voluntary_cs = less(status_field(buf, "\nvoluntary_ctxt_switches:"), before->voluntary_cs);
		t->involuntary_cs = less(status_field(buf, "\nnonvoluntary_ctxt_switches:"), before->involuntary_cs);
	}
	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", t->tid);
	read_schedstat(t, path);
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", t->tid);
	if (cv__read_small_file(path, buf, sizeof(buf)) > 0) {
		/* Fields after the ")" that ends comm: state is 3; minflt 10, majflt 12. */
		const char *p = strrchr(buf, ')');
		unsigned long long minflt, majflt;
		if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %llu %*u %llu", &minflt, &majflt) == 2) {
			t->minor_faults = less(minflt, before->minor_faults);
			t->major_faults = less(majflt, before->major_faults);
		}
	}
	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", t->tid);
	if (cv__read_small_file(path, buf, CV_NAME_MAX + 1) > 0) {
		buf[strcspn(buf, "\n")] = '\0';
		memcpy(t->name, buf, CV_NAME_MAX - 1);
	}
}

void cv__thread_finish(struct cv_thread *t)
{
	int saved_errno = errno;
	t->end_ns = cv__now_ns();
	if (t == cv__my_state) {
		cv__wait_count_pending(t);   /* a mutex taken after a wait and not let go through a slow unlock */
		finish_self(t);
	} else {
		finish_other(t);
	}
	errno = saved_errno;
}

/* The trampoline's cleanup handler: after the start routine returned, or
 * while pthread_exit or a cancellation unwinds past the trampoline; before
 * C++ thread_local and key destructors, whose lock operations are no longer
 * counted (see ended). What it did stays for the profile (thread_retire). */
static void thread_ended(void *arg)
{
	struct cv_thread *t = arg;
	if (!t || cv__off())
		return;   /* no system call of ours, and nothing more to write */
	cv__guard_enter();
	live_remove(t);
	CV_STORE(&t->joining, 0);   /* cancelled in a join: the join never returned */
	cv__wait_end(t);            /* or in sem_wait: no thread waits once it has ended */
	cv__thread_finish(t);
	t->flags |= CV_THREAD_EXITED;
	ended = true;
	cv__my_state = NULL;
	cv__records_thread_end(t);
	cv__stacks_thread_end(t);
	int pending = CV_CREATE_PENDING;
	if (!__atomic_compare_exchange_n(&t->created, &pending, CV_CREATE_CHILD_ENDED, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		thread_retire(t);   /* else its creator retires it once done writing */
	cv__guard_leave(NULL);
}

/* ---- fork ---------------------------------------------------------------- */

/* In the child only the forking thread exists, and it starts the child's own
 * profile: a fresh thread list with one thread, index 0. */
void cv__threads_after_fork(void)
{
	struct cv_thread *parent_state = cv__my_state;   /* the forking thread's, in the parent's list */
	cv__tid = 0;   /* the parent's */
	all_threads = NULL;
	nthreads = 0;
	memset(live, 0, sizeof(live));
	cv__spin_reset(&live_lock);
	/* The old list, and the recycled states on it, belong to the parent's profile. */
	ended_kept = 0;
	ended_threads = NULL;
	merged_threads = thread_pool = NULL;
	fork_generation++;
	merges_in_flight = merging;   /* the parent's other threads' are not the child's */
	cv__spin_reset(&merge_lock);
	cv__spin_reset(&pool_lock);
	struct cv_thread *t = thread_alloc();
	cv__my_state = NULL;
	cv__self = CV_INERT;
	if (started)
		started = t;   /* the trampoline's end is now the child's thread's (NULL: none) */
	if (!t)
		return;
	t->flags = CV_THREAD_MAIN;
	if (parent_state) {
		memcpy(t->name, parent_state->name, CV_NAME_MAX);
		t->stack_lo = parent_state->stack_lo;   /* the same stack, whichever thread forked */
		t->stack_hi = parent_state->stack_hi;
		t->stack_top = parent_state->stack_top;
		t->disarmed = parent_state->disarmed;   /* a fork in a handler carries on on its stack */
	}
	thread_attach(t, true, 0);   /* glibc's copy is the parent's after a raw fork */
}

/* ---- wrappers ------------------------------------------------------------ */

/* thread_ended runs when the start routine returns, and when pthread_exit
 * or a cancellation unwinds past here. The cleanup is registered the way
 * pthread_cleanup_push registers it in C built without -fexceptions (as the
 * shim is): glibc longjmps here from the unwinder's stop function; no
 * personality routine runs in this frame. Written out rather than with the
 * macro, which keeps the routine and its argument in this frame, under the
 * program's whole thread. __sigsetjmp is declared with the cancellation
 * buffer's type, as the macro casts it. */
extern int sigsetjmp_cancel(struct __cancel_jmp_buf_tag env[1], int savemask) __asm__("__sigsetjmp")
	__attribute__((returns_twice));

/* Out of line: the trampoline's frame stays under the program's whole
 * thread, so its locals are not kept there. */
static __attribute__((noinline)) void thread_begins(struct cv_thread *t)
{
	stack_of_created(t);
	pid_t tid = 0;   /* ask the kernel */
#if defined(__x86_64__) && defined(__LP64__)
	uint32_t tid_word = CV_LOAD(&cv__real.tid_word);
	if (tid_word)
		tid = CV_LOAD((const pid_t *)(const void *)(cv__thread_self() + tid_word));   /* real.c */
#endif
	thread_attach(t, false, tid);
}


static void *trampoline(void *arg)
{
	if (cv__off()) {   /* a seccomp filter came since its creation */
		struct cv_thread *t = arg;
		return t->start_routine(t->start_arg);
	}
	thread_begins(arg);
	started = arg;
	__pthread_unwind_buf_t cancel_buf;
	if (__builtin_expect(sigsetjmp_cancel(cancel_buf.__cancel_jmp_buf, 0), 0)) {
		thread_ended(started);
		/* glibc's own buffer (start_thread's) is the thread's current one
		 * again, as it is natively: a key or thread_local destructor that
		 * calls pthread_exit after this unwind jumps there, not here. */
		__pthread_unregister_cancel(&cancel_buf);
		__pthread_unwind_next(&cancel_buf);
	}
	__pthread_register_cancel(&cancel_buf);
	void *ret = started->start_routine(started->start_arg);
	__pthread_unregister_cancel(&cancel_buf);
	thread_ended(started);
	return ret;
}

/* The live thread whose handle is th gets flag, and name where one is
 * given, under live_lock: a thread found in the table has not ended, so
 * its state is not yet copied into a row or recycled (thread_ended takes
 * it out of the table first). Whether one was found. */
static bool live_thread_set(pthread_t th, uint32_t flag, const char *name)
{
	bool found = false;
	struct cv_thread *saved = cv__guard_enter();
	cv__spin_lock(&live_lock);
	for (struct cv_thread *t = live[live_bucket(th)]; t; t = t->live_next)
		if (pthread_equal(t->self, th)) {
			if (flag)
				__atomic_fetch_or(&t->flags, flag, __ATOMIC_RELAXED);
			if (name)
				strncpy(t->name, name, CV_NAME_MAX - 1);
			found = true;
			break;
		}
	cv__spin_unlock(&live_lock);
	cv__guard_leave(saved);
	return found;
}

/* The child's state, published, for pthread_create (NULL: none could be
 * had). Out of line, like child_created below: the wrapper's frame is
 * under glibc's whole pthread_create, and a thread on a PTHREAD_STACK_MIN
 * stack may call it deep down (its frame was 128 bytes, 96 now). */
static CV_NOINLINE struct cv_thread *child_prepare(struct cv_thread *self, const pthread_attr_t *attr,
						   void *(*start_routine)(void *), void *arg)
{
	int saved_errno = errno;
	struct cv_thread *child = thread_alloc();
	errno = saved_errno;
	if (!child)
		return NULL;
	int detach = PTHREAD_CREATE_JOINABLE;
	if (attr && pthread_attr_getdetachstate(attr, &detach) == 0 && detach == PTHREAD_CREATE_DETACHED)
		child->flags |= CV_THREAD_DETACHED;
	stack_from_attr(child, attr);
	child->start_routine = start_routine;
	child->start_arg = arg;
	child->creator_tid = self->tid;
	thread_publish(child);   /* tid 0 until it runs: the profile skips it until then */
	__atomic_fetch_add(&unattached, 1, __ATOMIC_ACQ_REL);
	return child;
}

/* After the real pthread_create returned rc, elapsed ns after it was called.
 * Never the pthread_t from here on: the child may have freed it (see
 * pending_detach). */
static CV_NOINLINE int child_created(struct cv_thread *self, struct cv_thread *child, int rc, uint64_t elapsed)
{
	if (rc == 0) {
		CV_STORE(&child->create_ns, elapsed);
		CV_BUMP(&self->threads_created, 1);
		cv__take_threads();
		if (__atomic_exchange_n(&child->created, CV_CREATE_DONE, __ATOMIC_ACQ_REL) == CV_CREATE_CHILD_ENDED) {
			struct cv_thread *saved = cv__guard_enter();
			thread_retire(child);   /* it ended before we were done with it */
			cv__guard_leave(saved);
		}
	} else {
		__atomic_fetch_sub(&unattached, 1, __ATOMIC_ACQ_REL);
		/* The child never ran (tid 0: never reported): its state serves
		 * the next, unless a writer may be reading it. */
		struct cv_thread *saved = cv__guard_enter();
		if (!cv__profile_writing())
			thread_recycle(child);
		cv__guard_leave(saved);
	}
	return rc;
}

CV_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
			     void *(*start_routine)(void *), void *arg)
{
	struct cv_thread *self = cv__current() ?: cv__thread_slow(), *child;
	if (!self || cv__off() || !(child = child_prepare(self, attr, start_routine, arg)))
		return cv__real.pthread_create(th, attr, start_routine, arg);
	uint64_t t0 = cv__now_ns();
	int rc = cv__real.pthread_create(th, attr, trampoline, child);
	return child_created(self, child, rc, cv__now_ns() - t0);
}

/* A blocking join of th begins: recorded for the deadlock graph. */
static void join_begin(struct cv_thread *self, pthread_t th, uint32_t flags, const void *pc, uint64_t t0)
{
	self->joining_handle = th;
	self->joining_flags = flags;
	self->joining_pc = pc;
	self->joining_since_ns = t0;
	__atomic_store_n(&self->joining, 1, __ATOMIC_RELEASE);
}

static int joined(struct cv_thread *self, uint64_t t0, int rc)
{
	CV_STORE(&self->joining, 0);
	CV_BUMP(&self->join_wait_ns, cv__now_ns() - t0);
	if (rc == 0)
		CV_BUMP(&self->joins, 1);
	return rc;
}

CV_EXPORT int pthread_join(pthread_t th, void **ret)
{
	struct cv_thread *self = cv__current() ?: cv__thread_slow();
	if (!self)
		return cv__real.pthread_join(th, ret);
	uint64_t t0 = cv__now_ns();
	join_begin(self, th, 0, __builtin_return_address(0), t0);
	return joined(self, t0, cv__real.pthread_join(th, ret));
}

CV_EXPORT int pthread_tryjoin_np(pthread_t th, void **ret)
{
	struct cv_thread *self = cv__current() ?: cv__thread_slow();
	if (!self)
		return cv__real.pthread_tryjoin_np(th, ret);
	uint64_t t0 = cv__now_ns();
	return joined(self, t0, cv__real.pthread_tryjoin_np(th, ret));
}

CV_EXPORT int pthread_timedjoin_np(pthread_t th, void **ret, const struct timespec *abstime)
{
	struct cv_thread *self = cv__current() ?: cv__thread_slow();
	if (!self)
		return cv__real.pthread_timedjoin_np(th, ret, abstime);
	uint64_t t0 = cv__now_ns();
	join_begin(self, th, CV_WAIT_TIMED, __builtin_return_address(0), t0);
	return joined(self, t0, cv__real.pthread_timedjoin_np(th, ret, abstime));
}

CV_EXPORT int pthread_detach(pthread_t th)
{
	struct cv_thread *self = cv__current() ?: cv__thread_slow();
	int rc = cv__real.pthread_detach(th);
	if (self && rc == 0) {
		if (pthread_equal(th, self->self))
			__atomic_fetch_or(&self->flags, CV_THREAD_DETACHED, __ATOMIC_RELAXED);
		else if (!live_thread_set(th, CV_THREAD_DETACHED, NULL) && __atomic_load_n(&unattached, __ATOMIC_ACQUIRE)) {
			detach_pending(th);
			live_thread_set(th, CV_THREAD_DETACHED, NULL);   /* it may have attached before the entry was there */
		}
	}
	return rc;
}

CV_EXPORT void pthread_exit(void *ret)
{
	struct cv_thread *self = cv__current() ?: cv__thread_slow();
	if (self)
		__atomic_fetch_or(&self->flags, CV_THREAD_PTHREAD_EXIT, __ATOMIC_RELAXED);
	cv__real.pthread_exit(ret);
	__builtin_unreachable();
}

CV_EXPORT int pthread_setname_np(pthread_t th, const char *name)
{
	struct cv_thread *self = cv__current() ?: cv__thread_slow();
	int rc = cv__real.pthread_setname_np(th, name);
	if (self && rc == 0) {
		if (pthread_equal(th, self->self))
			strncpy(self->name, name, CV_NAME_MAX - 1);
		else
			live_thread_set(th, 0, name);
	}
	return rc;
}
