/* real.c — the real pthread functions, resolved once.
 *
 * dlsym(RTLD_NEXT) finds the next definition after libconvoy.so (normally
 * libc's). The condvar functions are resolved with dlvsym(..., "GLIBC_2.3.2"):
 * plain dlsym may return the old-ABI implementation on some ports, and the two
 * disagree about pthread_cond_t's layout.
 *
 * The mutex functions start out pointing at libc's exported aliases so that a
 * lock taken while dlsym itself runs (a malloc interposer that locks, say) has a
 * real function to call before resolution has finished.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>

#include "shim.h"

extern int __pthread_mutex_init(pthread_mutex_t *, const pthread_mutexattr_t *);
extern int __pthread_mutex_destroy(pthread_mutex_t *);
extern int __pthread_mutex_lock(pthread_mutex_t *);
extern int __pthread_mutex_trylock(pthread_mutex_t *);
extern int __pthread_mutex_unlock(pthread_mutex_t *);

struct cv_real cv__real = {
	.pthread_mutex_init = __pthread_mutex_init,
	.pthread_mutex_destroy = __pthread_mutex_destroy,
	.pthread_mutex_lock = __pthread_mutex_lock,
	.pthread_mutex_trylock = __pthread_mutex_trylock,
	.pthread_mutex_unlock = __pthread_mutex_unlock,
};

static void *find(const char *name, const char *version)
{
	void *p = NULL;
	if (version)
		p = dlvsym(RTLD_NEXT, name, version);
	if (!p)
		p = dlsym(RTLD_NEXT, name);
	return p;
}

/* Every pthread_cond_* that has two ABIs gets the new one; clockwait
 * (GLIBC_2.30) has one. A lookup that fails is not free: glibc formats
 * the error in memory from malloc, and in a program that never calls
 * malloc (/bin/true) that first call made the heap. */
static const char *cond_version(const char *name)
{
	return __builtin_strncmp(name, "pthread_cond_", 13) == 0 &&
	       __builtin_strcmp(name, "pthread_cond_clockwait") != 0 ? "GLIBC_2.3.2" : NULL;
}

/* The shim does some of glibc's work itself, skipping the call: the test
 * for no waiter of a condvar signal or broadcast (cond.c), the lock and
 * unlock of a normal mutex (mutex.c) and of a spinlock (spin.c), the
 * uncontended lock of a rwlock (rwlock.c), a semaphore's token (sem.c). Only when the next definition is
 * glibc's own: another interposer after the shim (a sanitizer's runtime,
 * a second tracer) gets every call. glibc's own is told by where it lies:
 * inside libc.so.6's mapping, found with dl_iterate_phdr (a
 * dlopen("libc.so.6", RTLD_NOLOAD) to ask dlvsym put the search list
 * glibc builds for it in the program's heap, from malloc). */
struct libc_range {
	uintptr_t lo, hi;
};

static int find_libc(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	const char *slash = info->dlpi_name ? __builtin_strrchr(info->dlpi_name, '/') : NULL;
	const char *base = slash ? slash + 1 : info->dlpi_name;
	if (!base || __builtin_strcmp(base, "libc.so.6") != 0)
		return 0;
	struct libc_range *r = arg;
	r->lo = UINTPTR_MAX;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
		r->lo = a < r->lo ? a : r->lo;
		r->hi = b > r->hi ? b : r->hi;
	}
	return 1;
}

static bool mutex_in_libc, spin_in_libc, rwlock_in_libc, sem_in_libc;

static bool in_libc(const struct libc_range *libc, const void *fn)
{
	return (uintptr_t)fn >= libc->lo && (uintptr_t)fn < libc->hi;
}

static void who_is_next(void)
{
	struct libc_range libc = { 0, 0 };
	dl_iterate_phdr(find_libc, &libc);
#define IN_LIBC(fn) in_libc(&libc, (const void *)cv__real.fn)
	cv__real.cond_in_libc = IN_LIBC(pthread_cond_signal) && IN_LIBC(pthread_cond_broadcast);
	mutex_in_libc = IN_LIBC(pthread_mutex_lock) && IN_LIBC(pthread_mutex_trylock) && IN_LIBC(pthread_mutex_unlock);
	spin_in_libc = IN_LIBC(pthread_spin_lock) && IN_LIBC(pthread_spin_unlock);
	rwlock_in_libc = IN_LIBC(pthread_rwlock_rdlock) && IN_LIBC(pthread_rwlock_wrlock) &&
			 IN_LIBC(pthread_rwlock_unlock);
	sem_in_libc = IN_LIBC(sem_wait) && IN_LIBC(sem_trywait) && IN_LIBC(sem_post);
#undef IN_LIBC
	/* The next clock_gettime after the shim: the program's own comes
	 * before the shim and is passed over; a preloaded one after it is
	 * not, and then the shim reads its clocks by the system call. */
	void *clock = find("clock_gettime", NULL);
	if (in_libc(&libc, clock))
		__atomic_store_n((void **)&cv__real.clock_gettime, clock, __ATOMIC_RELEASE);
}

/* take_rwlock: whether rwlock.c takes an uncontended rwlock itself
 * (glibc's reader fast path, and its writer's from a free write phase),
 * whenever the next definitions are glibc's, a probe finds glibc's words
 * where rwlock.c expects them, and the shim is on.
 *
 * take_sem: whether sem.c takes a semaphore's token itself (glibc's
 * compare-and-swap of one less), on the same conditions.
 *
 * take_spin: whether spin.c takes spinlocks itself: glibc's x86 lock (a
 * decrement from 1), whenever the next definition is glibc's and the shim
 * is on (glibc has no single-threaded shortcut for spinlocks).
 *
 * take_normal: whether mutex.c takes normal mutexes itself. Not in a
 * process that has not created a thread through the shim (glibc's lock is
 * a plain store there, which a compare-and-swap would not beat), nor when
 * the next mutex functions after the shim's are not glibc's, nor while the
 * shim is off, nor while the process forks (cv__process.forking: the
 * child's own atfork handlers that run before the shim's, and a child made
 * by _Fork, then take mutexes with glibc's lock, which writes the child's
 * tid), nor when glibc elides normal
 * mutexes (it marks one for elision on its first lock), nor where glibc's
 * tid is not the shim's (probe_tids). Either way the mutex ends in the
 * same state, so the switch may come at any moment. */
static bool elides, owner_is_tid, threads_made, spin_decrements, rwlock_is_glibcs, sem_is_glibcs;
static cv_spinlock_t take_lock;  /* the inputs and the store of take_normal, together */

static void take_store(void)
{
	bool on = !cv__off() && __atomic_load_n(&cv__process.forking, __ATOMIC_SEQ_CST) == 0;
	__atomic_store_n(&cv__real.take_normal, on && threads_made && mutex_in_libc && !elides && owner_is_tid, __ATOMIC_RELAXED);
	__atomic_store_n(&cv__real.take_spin, on && spin_decrements, __ATOMIC_RELAXED);
	__atomic_store_n(&cv__real.take_rwlock, on && rwlock_is_glibcs, __ATOMIC_RELAXED);
	__atomic_store_n(&cv__real.take_sem, on && sem_is_glibcs, __ATOMIC_RELAXED);
}

void cv__take_update(void)
{
	cv__spin_lock(&take_lock);
	take_store();
	cv__spin_unlock(&take_lock);
}

/* Whether glibc's spinlock is the one spin.c makes itself: 1 when free, 0
 * when taken, 1 again after the unlock (x86's `lock decl` spinlock; a
 * build with the generic one, 0 when free, would wait forever on a
 * decrement from 0). glibc's own functions on a scratch lock. */
static bool spin_format_is_decrement(void)
{
	pthread_spinlock_t probe;
	if (cv__real.pthread_spin_init(&probe, PTHREAD_PROCESS_PRIVATE) != 0 || CV_LOAD(&probe) != 1)
		return false;
	bool taken = cv__real.pthread_spin_lock(&probe) == 0 && CV_LOAD(&probe) == 0;
	cv__real.pthread_spin_unlock(&probe);
	return taken && CV_LOAD(&probe) == 1;
}

/* Whether glibc's rwlock words go as rwlock.c's rd_taken, rd_released and
 * wr_word_taken expect: a read lock adds one reader (8) to a read phase
 * and its unlock takes one away (two readers, then one, then none), a write
 * lock of a free read phase leaves a locked write phase (3) with the
 * writer's tid and __writers_futex 1, its unlock a free write phase (1)
 * with both 0, and a write lock from there the same as the first. glibc's
 * own functions on a scratch lock. */
static bool rwlock_format_is_glibcs(void)
{
	pthread_rwlock_t p;
	if (cv__real.pthread_rwlock_init(&p, NULL) != 0)
		return false;
	pid_t tid = cv__thread_tid();
	bool ok = p.__data.__readers == 0 && cv__real.pthread_rwlock_rdlock(&p) == 0 && p.__data.__readers == 8 &&
		  cv__real.pthread_rwlock_rdlock(&p) == 0 && p.__data.__readers == 16 &&
		  cv__real.pthread_rwlock_unlock(&p) == 0 && p.__data.__readers == 8 &&
		  cv__real.pthread_rwlock_unlock(&p) == 0 && p.__data.__readers == 0;
	for (int i = 0; ok && i < 2; i++)
		ok = cv__real.pthread_rwlock_wrlock(&p) == 0 && p.__data.__readers == 3 &&
		     p.__data.__cur_writer == tid && p.__data.__writers_futex == 1 &&
		     cv__real.pthread_rwlock_unlock(&p) == 0 && p.__data.__readers == 1 &&
		     p.__data.__cur_writer == 0 && p.__data.__writers_futex == 0;
	cv__real.pthread_rwlock_destroy(&p);
	return ok;
}

/* Whether glibc's semaphore is the 64-bit word sem.c takes a token from
 * (semaphoreP.h: the value in the low half): a value of 2 reads 2, 1
 * after glibc's trywait, 2 again after its post. */
static bool sem_format_is_glibcs(void)
{
	sem_t p;
	uint64_t *word = (uint64_t *)(void *)&p;
	if (sizeof(long) != 8 || cv__real.sem_init(&p, 0, 2) != 0)
		return false;
	bool ok = CV_LOAD(word) == 2 && cv__real.sem_trywait(&p) == 0 && CV_LOAD(word) == 1 &&
		  cv__real.sem_post(&p) == 0 && CV_LOAD(word) == 2;
	cv__real.sem_destroy(&p);
	return ok;
}

/* What glibc's own functions show on scratch locks, again in a fork
 * child. Whether glibc elides normal mutexes: its first lock of one marks
 * it (PTHREAD_MUTEX_ELISION_NP in __kind), which a probe shows whatever
 * spelling of the tunable asked for it (or a CPU without it refused).
 * Whether the tid glibc writes as a mutex's owner and a rwlock's writer is
 * the shim's (cv__tid, which the shim writes there when it takes them):
 * not in the child of a raw SYS_fork or SYS_clone, where glibc's stays
 * the parent's (only _Fork has the kernel write it), and glibc's rwlock
 * compares its writer with it for EDEADLK. */
static void probe_tids(void)
{
	pthread_mutex_t probe = PTHREAD_MUTEX_INITIALIZER;
	owner_is_tid = false;
	/* glibc's own functions (mutex_in_libc), through the resolved
	 * pointers: a call to __pthread_mutex_lock binds to the program's
	 * definition where it has one, and clang's sanitizer runtimes, linked
	 * into the executable, define one whose pointer to glibc's is still
	 * null when the shim starts (helper-111: a SIGSEGV before main). */
	if (mutex_in_libc && cv__real.pthread_mutex_lock(&probe) == 0) {
		elides = CV_LOAD(&probe.__data.__kind) & 0x100;      /* PTHREAD_MUTEX_ELISION_NP */
		owner_is_tid = CV_LOAD(&probe.__data.__owner) == cv__thread_tid();
		cv__real.pthread_mutex_unlock(&probe);
	}
	rwlock_is_glibcs = rwlock_in_libc && rwlock_format_is_glibcs();
}

#if defined(__x86_64__) && defined(__LP64__)
/* The offset of one 32-bit field in glibc's descriptor of a thread, from
 * the description glibc publishes for libthread_db (structs.def: its bits,
 * its count, its offset), where the calling thread's descriptor is at the
 * thread pointer's self word (cv__thread_self) as pthread_self() says: 0
 * where any of it is not so. */
static uint32_t descriptor_field(const char *name)
{
	const uint32_t *desc = dlsym(RTLD_NEXT, name);
	if (!desc || desc[0] != 32 || desc[1] != 1 || desc[2] == 0 || desc[2] > 4096 - sizeof(uint32_t))
		return 0;
	return cv__thread_self() == (const char *)pthread_self() ? desc[2] : 0;
}
#endif

/* Where glibc keeps a thread's cancellation state, for sem_wait's
 * cancellation point (sem.c, cancel_may_be_pending): the offset of
 * cancelhandling in its thread descriptor, from the description glibc
 * publishes for libthread_db (nptl_db/structs.def: 32 bits, one of them,
 * at an offset; every glibc with NPTL has it, so the lookup does not
 * fail, which would cost a malloc), where the thread pointer holds the
 * descriptor's address (x86-64: %fs:0x10, tcbhead_t's self), and checked
 * by the bit glibc's pthread_setcancelstate sets in it
 * (CANCELSTATE_BITMASK, bit 0), then clears again. 0 where any of it is
 * not so: sem_wait then always calls glibc's pthread_testcancel. */
static uint32_t cancel_word_probe(void)
{
#if defined(__x86_64__) && defined(__LP64__)
	uint32_t offset = descriptor_field("_thread_db_pthread_cancelhandling");
	if (!offset)
		return 0;
	const int *word = (const int *)(const void *)(cv__thread_self() + offset);
	int old;
	if (pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old) != 0)
		return 0;
	bool disabled = CV_LOAD(word) & 1;
	pthread_setcancelstate(old, NULL);
	bool restored = (CV_LOAD(word) & 1) == (old == PTHREAD_CANCEL_DISABLE);
	return disabled && restored ? offset : 0;
#else
	return 0;
#endif
}

/* Where glibc keeps a thread's kernel id in its descriptor, from the same
 * description (structs.def: tid, 32 bits, one of them), checked against
 * the kernel's answer on the calling thread: thread.c reads there the tid
 * of a thread the shim's trampoline starts (the kernel writes it there
 * before the thread runs, CLONE_PARENT_SETTID), not asking the kernel (a
 * system call a thread, 1 us here). 0 where any of it is not so: gettid. */
static uint32_t tid_word_probe(void)
{
#if defined(__x86_64__) && defined(__LP64__)
	uint32_t offset = descriptor_field("_thread_db_pthread_tid");
	return offset && CV_LOAD((const pid_t *)(const void *)(cv__thread_self() + offset)) == cv__thread_tid()
		       ? offset : 0;
#else
	return 0;
#endif
}

void cv__take_init(void)
{
	probe_tids();
	spin_decrements = CV_SPIN_DECREMENTS && spin_in_libc && spin_format_is_decrement();
	sem_is_glibcs = sem_in_libc && sem_format_is_glibcs();
	cv__real.cancel_word = cancel_word_probe();
	cv__real.tid_word = tid_word_probe();
	cv__take_update();
}

/* In a fork child: one thread, the lock free (another thread may have
 * held it when the parent forked), and glibc's tid probed again. */
void cv__take_after_fork(void)
{
	cv__spin_reset(&take_lock);
	threads_made = false;
	probe_tids();   /* cv__tid is the child's by now (thread.c) */
	take_store();
}

/* The process's first thread: take_normal may come on. */
void cv__take_threads(void)
{
	if (CV_LOAD(&threads_made))
		return;   /* cv__real's line is read by every fast path: not written again */
	cv__spin_lock(&take_lock);
	threads_made = true;
	take_store();
	cv__spin_unlock(&take_lock);
}

void cv__resolve_real(void)
{
	static int done;
	if (__atomic_load_n(&done, __ATOMIC_ACQUIRE))
		return;
	/* Each store is a whole pointer, so a racing second resolver is harmless. */
#define CV_X(fn, ret, args)                                                   \
	do {                                                                  \
		void *p = find(#fn, cond_version(#fn));                       \
		if (!p) {                                                     \
			cv__warn("cannot find the real " #fn "; aborting");  \
			abort();                                              \
		}                                                             \
		__atomic_store_n((void **)&cv__real.fn, p, __ATOMIC_RELEASE); \
	} while (0);
	CV_REAL_FUNCS(CV_X)
#undef CV_X
	who_is_next();
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
}
