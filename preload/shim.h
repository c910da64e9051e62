/* shim.h — internals shared by the files of libconvoy.so.
 *
 * Banners name the file that defines what follows. Everything here is hidden
 * (-fvisibility=hidden); only the interposed functions in exports.map leave
 * the library.
 */
#ifndef CONVOY_SHIM_H
#define CONVOY_SHIM_H

#include <errno.h>
#include <pthread.h>
#if defined(__x86_64__) && defined(__LP64__)   /* not x32: its pointers are 4 bytes */
#include <emmintrin.h>
#endif
#include <semaphore.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <threads.h>
#include <time.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "convoy/profile.h"

/* The interposed functions, each at the start of a 64-byte line: where a
 * fast path lies relative to lines and fetch windows then no longer moves
 * with unrelated code (a change to the semaphore paths cost
 * pthread_cond_signal's untouched code 0.3 ns a call, 15 rounds, for the
 * 80 bytes it moved; with this, 0.0). About 3 KiB of padding. */
#define CV_EXPORT   __attribute__((visibility("default"), aligned(64)))
#define CV_LIKELY(x)   __builtin_expect(!!(x), 1)
#define CV_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define CV_COLD     __attribute__((noinline, cold))
#define CV_NOINLINE __attribute__((noinline))
/* Zero-initialised buffers of 2 KiB and more: the linker puts .lbss after
 * the shim's other zero-initialised data, so that its small variables
 * (about 5 KiB) share the .data page and one more instead of lying between
 * the buffers, a page each; page aligned, so that a buffer's first bytes
 * are one page, not two (a page fault costs about 9 us on the development
 * VM: docs/performance.md, "Start and exit"). Pages never touched cost
 * nothing. Only GCC on x86-64 makes .lbss a zero-filled (NOBITS) section;
 * elsewhere it would be zeros in the file, so the buffers stay in .bss. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CV_LARGE_BSS __attribute__((section(".lbss"), aligned(4096)))
#else
#define CV_LARGE_BSS
#endif
#define CV_CACHELINE 64

/* Relaxed accessors: counters are written by their own thread and read, racily
 * but without tearing, by the thread that writes the profile. */
#define CV_LOAD(p)      __atomic_load_n((p), __ATOMIC_RELAXED)
#define CV_STORE(p, v)  __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define CV_BUMP(p, v)   CV_STORE((p), CV_LOAD(p) + (v))   /* single writer */

/* *p = max(*p, v), single writer: stored only when v is larger. */
static inline void cv__store_max(uint64_t *p, uint64_t v)
{
	if (v > CV_LOAD(p))
		CV_STORE(p, v);
}

/* ---- real.c: the functions we wrap, resolved once ------------------------ */

#define CV_REAL_FUNCS(X)                                                            \
	X(pthread_mutex_init, int, (pthread_mutex_t *, const pthread_mutexattr_t *))     \
	X(pthread_mutex_destroy, int, (pthread_mutex_t *))                                \
	X(pthread_mutex_lock, int, (pthread_mutex_t *))                                   \
	X(pthread_mutex_trylock, int, (pthread_mutex_t *))                                \
	X(pthread_mutex_timedlock, int, (pthread_mutex_t *, const struct timespec *))     \
	X(pthread_mutex_clocklock, int, (pthread_mutex_t *, clockid_t, const struct timespec *)) \
	X(pthread_mutex_unlock, int, (pthread_mutex_t *))                                 \
	X(pthread_cond_init, int, (pthread_cond_t *, const pthread_condattr_t *))         \
	X(pthread_cond_destroy, int, (pthread_cond_t *))                                  \
	X(pthread_cond_wait, int, (pthread_cond_t *, pthread_mutex_t *))                  \
	X(pthread_cond_timedwait, int, (pthread_cond_t *, pthread_mutex_t *, const struct timespec *)) \
	X(pthread_cond_clockwait, int, (pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *)) \
	X(pthread_cond_signal, int, (pthread_cond_t *))                                   \
	X(pthread_cond_broadcast, int, (pthread_cond_t *))                                \
	X(pthread_create, int, (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *)) \
	X(pthread_join, int, (pthread_t, void **))                                        \
	X(pthread_tryjoin_np, int, (pthread_t, void **))                                  \
	X(pthread_timedjoin_np, int, (pthread_t, void **, const struct timespec *))       \
	X(pthread_detach, int, (pthread_t))                                               \
	X(pthread_exit, void, (void *))                                                   \
	X(pthread_setname_np, int, (pthread_t, const char *))                            \
	X(pthread_rwlock_init, int, (pthread_rwlock_t *, const pthread_rwlockattr_t *)) \
	X(pthread_rwlock_destroy, int, (pthread_rwlock_t *))                              \
	X(pthread_rwlock_rdlock, int, (pthread_rwlock_t *))                               \
	X(pthread_rwlock_tryrdlock, int, (pthread_rwlock_t *))                            \
	X(pthread_rwlock_timedrdlock, int, (pthread_rwlock_t *, const struct timespec *)) \
	X(pthread_rwlock_clockrdlock, int, (pthread_rwlock_t *, clockid_t, const struct timespec *)) \
	X(pthread_rwlock_wrlock, int, (pthread_rwlock_t *))                               \
	X(pthread_rwlock_trywrlock, int, (pthread_rwlock_t *))                            \
	X(pthread_rwlock_timedwrlock, int, (pthread_rwlock_t *, const struct timespec *)) \
	X(pthread_rwlock_clockwrlock, int, (pthread_rwlock_t *, clockid_t, const struct timespec *)) \
	X(pthread_rwlock_unlock, int, (pthread_rwlock_t *))                               \
	X(pthread_spin_init, int, (pthread_spinlock_t *, int))                            \
	X(pthread_spin_destroy, int, (pthread_spinlock_t *))                              \
	X(pthread_spin_lock, int, (pthread_spinlock_t *))                                 \
	X(pthread_spin_trylock, int, (pthread_spinlock_t *))                              \
	X(pthread_spin_unlock, int, (pthread_spinlock_t *))                               \
	X(pthread_barrier_init, int, (pthread_barrier_t *, const pthread_barrierattr_t *, unsigned)) \
	X(pthread_barrier_destroy, int, (pthread_barrier_t *))                            \
	X(pthread_barrier_wait, int, (pthread_barrier_t *))                               \
	X(sem_init, int, (sem_t *, int, unsigned))                                        \
	X(sem_destroy, int, (sem_t *))                                                    \
	X(sem_wait, int, (sem_t *))                                                       \
	X(sem_trywait, int, (sem_t *))                                                    \
	X(sem_timedwait, int, (sem_t *, const struct timespec *))                         \
	X(sem_clockwait, int, (sem_t *, clockid_t, const struct timespec *))              \
	X(sem_post, int, (sem_t *))                                                       \
	X(syscall, long, (long, ...))                                                     \
	X(_Fork, pid_t, (void))                                                           \
	X(execve, int, (const char *, char *const[], char *const[]))                    \
	X(execvpe, int, (const char *, char *const[], char *const[]))                   \
	X(fexecve, int, (int, char *const[], char *const[]))                            \
	X(execveat, int, (int, const char *, char *const[], char *const[], int))        \
	X(posix_spawn, int, (pid_t *, const char *, const posix_spawn_file_actions_t *,  \
			     const posix_spawnattr_t *, char *const[], char *const[]))      \
	X(posix_spawnp, int, (pid_t *, const char *, const posix_spawn_file_actions_t *, \
			      const posix_spawnattr_t *, char *const[], char *const[]))     \
	X(_exit, void, (int))                                                            \
	X(sigaction, int, (int, const struct sigaction *, struct sigaction *))           \
	X(siginterrupt, int, (int, int))                                                 \
	X(sigaltstack, int, (const stack_t *, stack_t *))                                \
	X(prctl, int, (int, ...))

/* The one read-mostly block of the fast paths: what they take themselves,
 * then the real functions, line-aligned so that nothing written shares its
 * lines (the flags, pthread_mutex_lock and pthread_mutex_unlock share the
 * first). Written at start-up only. */
struct cv_real {
	uint32_t take_normal;          /* mutex.c takes normal mutexes itself (real.c says when) */
	uint32_t cond_in_libc;         /* the real condvar signal and broadcast are glibc's */
	uint32_t take_spin;            /* spin.c takes spinlocks itself (real.c says when) */
	uint32_t take_rwlock;          /* rwlock.c takes uncontended rwlocks itself (real.c says when) */
	uint32_t take_sem;             /* sem.c takes semaphores with a token itself (real.c says when) */
	uint32_t cancel_word;          /* glibc's cancelhandling in its thread descriptor (real.c), or 0 */
	uint32_t tid_word;             /* glibc's tid in its thread descriptor (real.c), or 0 */
#define CV_X(name, ret, args) ret (*name) args;
	CV_REAL_FUNCS(CV_X)
#undef CV_X
	/* The C library's own clock_gettime, for the shim's clock reads
	 * (cv__clock_gettime): never another definition, which may take a
	 * lock (libfaketimeMT's, a program's own virtual clock) that comes
	 * back into the shim as it reads the clock. NULL: not known (before
	 * real.c resolved it, or the next definition is an interposer's). */
	int (*clock_gettime)(clockid_t, struct timespec *);
} __attribute__((aligned(CV_CACHELINE)));
extern struct cv_real cv__real;
/* glibc's spinlock on x86 is 1 when free and `lock decl` takes it (spin.c). */
#if defined(__x86_64__) || defined(__i386__)
#define CV_SPIN_DECREMENTS 1
#else
#define CV_SPIN_DECREMENTS 0
#endif
void cv__resolve_real(void);
/* take_normal, take_spin, take_rwlock and take_sem: set once ready (cv__take_init), and again
 * on the process's first thread (pthread_create, cv__take_threads),
 * around a fork, and when the shim goes off or on again (cv__off;
 * cv__take_update). */
void cv__take_init(void);
void cv__take_threads(void);
void cv__take_after_fork(void);    /* init.c: in the child */
void cv__take_update(void);

/* ---- alloc.c: memory that never goes back to the program's allocator ------ *
 * Lock-free and async-signal-safe. */

/* Zeroed, 16-byte aligned, 64-byte (line) aligned when size is a multiple
 * of 64 (records and thread states: a line is never split between two
 * threads' blocks); NULL when out of memory. */
void *cv__alloc(size_t size);
void cv__free(void *p, size_t size);   /* size: what was asked of cv__alloc */

/* The first touch of a fresh anonymous page should be a write. A page first
 * read is mapped to the kernel's shared zero page, and the write that comes
 * later must replace that mapping and flush the TLB of every CPU that runs
 * one of the program's threads: an interprocessor interrupt each time (on
 * the development VM they were most of the shim's cost in `pigz -p 2`:
 * docs/performance.md, "Fresh pages"). cv__alloc writes every page of a
 * block it carves; the large sparse tables (a mapping of their own past
 * 64 KiB, whose pages are touched only as entries fill) call
 * cv__touch_for_write on an entry before its first read (the lock-order
 * edges, probed on every nested acquisition, only until the page is known
 * written). Adding zero changes nothing; it is a locked instruction. */
static inline void cv__touch_for_write(void *entry)
{
	__atomic_fetch_add((uintptr_t *)entry, 0, __ATOMIC_RELAXED);
}
/* Every page of [p, p + len) written (mapped first in one system call,
 * where the kernel can: alloc.c): a block fresh from cv__alloc (zero) that
 * no other thread sees yet. */
void cv__touch_pages(void *p, size_t len);
/* The pages of [p, p + len) mapped in one system call, contents unchanged
 * (alloc.c); nothing once the shim is off. */
void cv__populate_pages(const void *p, size_t len);

/* fn(arg) with size bytes of stack below its frame. With here_if_room, on
 * the caller's stack where it has them by its bounds (alloc.c, room_here:
 * the thread's own stack, or an alternate signal stack's); only for the
 * destructor's write, never a snapshot's or a fatal signal's: a
 * coroutine's stack carved from a frame on the thread's stack lies within
 * those bounds and may end sooner (a hang snapshot's handler on such a
 * stack wrote past its end; a normal exit there needs nearly as much stack
 * natively). Else on a stack of the shim's own with a guard page below
 * (one kept for the calls, else mapped for the call and unmapped after:
 * alloc.c), for work that would not fit on the caller's (a small
 * thread's, a coroutine's, an alternate signal stack's; one carved from
 * the thread's own stack has live frames below it). Every signal but the
 * faults is blocked meanwhile, on either stack: a program's handler would
 * find a stack it did not size, and one with SA_ONSTACK, arriving while
 * the caller was on the alternate stack, would be placed at its top (the
 * kernel sees the stack pointer outside it) over the live frames below.
 * So fn must not wait for the program. False, fn not run, where no stack
 * could be had. errno is the caller's again on return. */
bool cv__call_with_stack(void (*fn)(void *), void *arg, size_t size, bool here_if_room);
void cv__own_stack_after_fork(void);   /* the fork child (init.c) */
/* Every signal but the faults, which must still reach their handlers. */
void cv__all_but_faults(sigset_t *set);

/* ---- lock.c: the shim's own lock (never the program's pthread functions) -- *
 * Taken only inside the reentrancy guard (cv__guard_enter), and only in a
 * critical section, where no signal handler of the program runs: each lock
 * is one, and a stretch that takes several (or captures a stack) may be one
 * as a whole, so that a program with handlers blocks signals once for it.
 * Sections nest. A holder works on memory the shim already has: no
 * cv__alloc (a fresh page is a fault, a batch of them a system call) and no
 * system call, since a waiter spins briefly and then yields its CPU, which
 * on a busy machine is a time slice, milliseconds (pigz -p 2 yielded so in
 * 14 runs of 100, up to 5 ms lost in one: docs/performance.md). Memory is had
 * before the lock and the need looked at again under it. The exceptions
 * make only rare paths wait: the start-up's lock (init.c), the module map's
 * re-read after a dlopen (modules.c), an ended thread's merge into the
 * merged row, which only other ending threads wait for (thread.c), and a
 * handler's installation, whose table entry and sigaction change together
 * (signals.c). */

typedef struct { int locked; } cv_spinlock_t;
void cv__critical_enter(void);
void cv__critical_leave(void);
void cv__spin_lock(cv_spinlock_t *l);     /* enters a section */
/* The same, the lock word set to owner (nonzero), by which the holder's
 * own thread can tell it holds the lock (signals.c: a handler that
 * interrupted its holder). */
void cv__spin_lock_as(cv_spinlock_t *l, int owner);
void cv__spin_unlock(cv_spinlock_t *l);   /* leaves it */
/* The same in the trampoline's deferral (signals.c, rearm), which may have
 * interrupted another section's or guard's end before its release: the
 * signals deferred wait for that release. Released here, inside the
 * handler, they would be unblocked in its mask, which its return puts
 * back: blocked for good (helper-142, helper-144). */
void cv__spin_unlock_deferring(cv_spinlock_t *l);
/* Fork child: a lock another thread held at the fork is free (that thread
 * is gone; the child's own sections were left before the fork). */
static inline void cv__spin_reset(cv_spinlock_t *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELAXED);
}
void cv__critical_after_fork(void);
/* This thread's sections (nested); signals.c's trampoline reads it. */
extern __thread unsigned cv__sections;
/* signals.c, futex.c: the program is about to install a signal handler
 * that the trampoline does not wrap (a raw system call's, one installed
 * before the shim started); from now on sections block signals. */
void cv__program_handler_coming(void);

/* ---- signals.c: the program's handlers, behind the shim's trampoline ------ */

/* sigaction for the program (lifecycle.c's wrapper calls it). */
int cv__program_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
/* SIGCHLD ignored now (SIG_IGN or SA_NOCLDWAIT: the kernel reaps children
 * unseen); past_exec: ignored in a way an exec keeps (SIG_IGN alone). */
bool cv__sigchld_ignored(bool past_exec);
/* lifecycle.c: the program's sigaction, fatal signals' bookkeeping first. */
int cv__sigaction(int sig, const struct sigaction *act, struct sigaction *old);
/* The signals that came inside a section or the closed reentrancy guard,
 * one bit each: deferred to the end of the outermost (the trampoline). */
extern __thread uint64_t cv__deferred_signals;
/* The end of a section, or of the guard or its closed stretch: those
 * signals now go, unless the thread is still inside the other. Returns
 * the signals it let go, one bit each. */
uint64_t cv__release_deferred(void);
/* The end of the outermost section or guard: the signals deferred there
 * go, then (the thread in neither) a snapshot request that waited for the
 * guard's end or for them (lifecycle.c); released after it, they would go
 * on the writer's stack of the shim's. */
void cv__deferred_run(void);
/* lock.c: the program has a handler the trampoline does not wrap. */
bool cv__unwrapped_handlers(void);
void cv__signals_after_fork(void);
/* lifecycle.c: this is the process the shim started in, or a fork child
 * it reset (not a vfork child), and it profiles. */
bool cv__profiling_here(void);

/* ---- objects.c: synchronisation objects and per-thread records ------------ */

/* One object: one generation of one address, in two lines. The first is
 * read-mostly: what a cache hit tests (`addr` and `retired`, written once
 * at destroy or re-init) and what the registry's chain walks read, so that
 * a read lock or a semaphore's token taken without waiting reads one line
 * of its object. The second holds what operations write: `last_owner`
 * (which the mutex, write-lock and spinlock fast paths also read), the
 * condvar waiter word (which a signal's fast path also reads) and the wake
 * stamps, written only on slow paths (first use by a thread, an owner
 * change, a condvar wait, a wake that found a waiter), and the profile
 * writer's `dump_id`. */
struct cv_obj {
	const void     *addr;
	uint32_t        id;
	uint32_t        kind;          /* enum cv_obj_kind */
	uint32_t        generation;
	uint32_t        flags;         /* CV_MUTEX_* */
	int             merged;        /* objects.c: retired past the cap, its records fold into the kind's aggregate */
	uint32_t        refs;          /* objects.c: records of it, plus one while it is being merged */
	int             retired;       /* set by destroy/re-init; records move to a new object */
	uint32_t        map_gen;       /* stacks.c: module-map generation at first use (written once) */
	uint64_t        held_seed;     /* the hash of a held set of it alone (cv__obj_number) */
	const char     *name;          /* convoy_name_object(), or NULL */
	struct cv_obj  *hash_next;     /* registry bucket chain (live and newest retired) */

	/* The operations' line. */
	uint32_t        dump_id __attribute__((aligned(CV_CACHELINE)));
					/* output.c: 1 + its id in the profile, 0 until written */
	/* Call stacks (stacks.c): the init or first-use stack, claimed once. */
	uint32_t        first_stack;   /* stack id; 0 while none */
	struct cv_thread *last_owner;  /* locks: written only when the owner changes (cv__note_owner) */
	/* Park/wake (park.c), written only on slow paths: by a signal, post or
	 * wake that found a waiter, and by barrier arrivals. */
	uint64_t        wake_ns;       /* CLOCK_MONOTONIC just before the last such wake */
	uint32_t        wake_kind;     /* condvar: CV_WAKE_SIGNAL or CV_WAKE_BROADCAST */
	int             stack_claimed; /* stacks.c: first_stack is being or was captured */
	uint32_t        cond_mutex;    /* condvar: 1 + the id of the mutex its last wait named (its monitor; written by
					* waits), 0: none. An id, not a pointer: a mutex merged past the objects cap goes
					* back to the allocator, and another object may have its memory by the write */
	uint32_t        barrier_count; /* barrier: the count given to pthread_barrier_init; 0 for any other
					* object (the shared out-of-memory object too: nothing sets it), so
					* barrier arrivals never touch a condvar's state below */
	/* One kind's state: an object has one kind (a use as another makes a
	 * new object: objects.c, object_get). */
	union {
		uint64_t cond_state;   /* condvar: waiting << 32 | signalled-not-yet-woken */
		struct {
			uint64_t barrier_arrivals;     /* barrier: arrivals since init */
			uint64_t barrier_first_ns;     /* barrier: first arrival of round barrier_first_round - 1 */
			uint64_t barrier_first_round;
		};
	};
};
_Static_assert(offsetof(struct cv_obj, retired) < CV_CACHELINE && offsetof(struct cv_obj, dump_id) == CV_CACHELINE &&
		       sizeof(struct cv_obj) == 2 * CV_CACHELINE,
	       "cv_obj: one read-mostly line with what a hit tests, then the operations' line");

/* What one thread did to one object: a record, in two lines only its
 * thread writes (line aligned), with the counters that an object used
 * without waiting needs; the rest (struct cv_rec_more) is made at the
 * record's first wait, wake, failed trylock or futex or barrier event
 * (cv__rec_more): most records never need it, and a program that makes
 * locks by the hundred thousand has a record of 128 bytes for each lock
 * each thread used. obj and acquisitions, which the fast paths use, share
 * the first line; the sampled hold times, in TSC ticks (converted when
 * the profile is written), and the list the second. In memory a signal
 * or broadcast that found no waiter is counted in signals_unwaited or
 * broadcasts_unwaited only, and a reader's acquisition in rd_acquisitions
 * only (the file's counts include them: output.c). */
struct cv_rec {
	struct cv_obj  *obj;
	uint64_t        acquisitions, rd_acquisitions, trylocks, handoffs;
	uint64_t        signals_unwaited, broadcasts_unwaited;
	struct cv_rec_more *more;      /* NULL until needed (cv__rec_more) */

	struct cv_rec  *next, *prev;   /* the thread's list of records (output.c walks next) */
	uint64_t        hold_samples, hold_ticks, max_hold_ticks;
	/* stacks.c: this thread's waits on the object by call stack. */
	struct cv_stack_acc *stack_accs;
	uint32_t        stack_seen;    /* waits offered to the sampler */
	uint32_t        nstack_accs;
	uint32_t        object, thread;   /* its ids in the profile being written (output.c) */
} __attribute__((aligned(CV_CACHELINE)));
_Static_assert(sizeof(struct cv_rec) == 2 * CV_CACHELINE && offsetof(struct cv_rec, next) == CV_CACHELINE,
	       "cv_rec: two lines, the fast paths' first");

/* The rest of a record's counters, struct cv_stats's of the same names
 * (include/convoy/profile.h), each a sum or a maximum: this list makes
 * the struct, the profile writer's copy and a fold's sums. */
#define CV_REC_MORE_FIELDS(SUM, MAX)                                                                          \
	SUM(contended) SUM(trylock_failures) SUM(waits) SUM(wait_ns) MAX(max_wait_ns) SUM(timeouts)          \
	SUM(signals) SUM(broadcasts) SUM(rd_contended) SUM(rd_waits) SUM(rd_wait_ns) MAX(rd_max_wait_ns)     \
	MAX(wr_max_wait_ns) SUM(wr_behind_readers) SUM(wr_behind_readers_ns) SUM(wakeups)                    \
	SUM(wake_latency_ns) MAX(max_wake_latency_ns) SUM(futile_wakes) SUM(futile_after_broadcast)          \
	SUM(broadcast_woken) SUM(interrupts) SUM(futex_woken) SUM(futex_eagain) SUM(requeues) SUM(requeued) \
	SUM(pi_ops) SUM(wake_ops) SUM(rounds) SUM(imbalance_ns) MAX(max_imbalance_ns)
struct cv_rec_more {
#define CV_X(f) uint64_t f;
	CV_REC_MORE_FIELDS(CV_X, CV_X)
#undef CV_X
	uint64_t        hist[CV_HIST_BUCKETS];   /* the file's wait_hist */
};

struct cv_slot { const void *addr; struct cv_rec *rec; };

/* lockorder.c: one lock a thread holds (mutex, rwlock or spinlock). */
#define CV_HELD_BITS 4
#define CV_HELD_MAX (1u << CV_HELD_BITS)
struct cv_held {
	/* The lock's address, with bit 0 flipped when its unlock must test
	 * more than this key: pushed without CV_HELD_FAST_UNLOCK
	 * (cv__held_key). Whether it is a lock's: cv__held_is. */
	uintptr_t      key;
	struct cv_obj *obj;
	const void    *pc;             /* return address of the call that acquired it */
	/* The shim's stack pointer then (cv__sp: it marks the frames live
	 * then), with the CV_LOCK_* flags in its two low bits:
	 * one store less per push (cv__held_sp, cv__held_flags). */
	uintptr_t      sp_flags;
	/* The fast paths' lock-order memo (cv__order_unchecked): the hash
	 * of the objects in this slot and every slot below it (cv__held_hash),
	 * and the hashes of such a held set plus each of the three locks last
	 * taken on top of it whose order edges from all of them were looked up
	 * (0: none), the newest first. */
	uint64_t       prefix;
	uint64_t       checked_keys[3];
} __attribute__((aligned(CV_CACHELINE)));   /* a push writes one line */

#define CV_HELD_FLAGS_MASK 3u   /* a stack pointer is a multiple of 4 even on i386 */
_Static_assert(((CV_LOCK_READ | CV_LOCK_TRY) & ~CV_HELD_FLAGS_MASK) == 0, "cv_held: the flags fit below the sp");

/* A push's flag beside the CV_LOCK_* ones, kept in the slot's key, not
 * with them: the lock's family's fast unlock may release it with the key
 * as its one test of the thread (cv__held_not_fast_top), the one load of
 * the held slot it makes anyway. The lock tested the rest: for a mutex,
 * a normal or adaptive one in a process where mutex.c releases such
 * mutexes itself, whose hold is not being timed (mutex.c,
 * mutex_unlock); for a spinlock, or an rwlock taken for reading or
 * writing, one taken while the shim takes them itself (spin.c,
 * rwlock.c). */
#define CV_HELD_FAST_UNLOCK 0x100u
_Static_assert((CV_HELD_FAST_UNLOCK & CV_HELD_FLAGS_MASK) == 0, "cv_held: the fast-unlock flag is the key's");

/* The key a push of the lock at addr with these flags stores: the address
 * as it is for a fast unlock, with bit 0 flipped for any other. Flipped,
 * not set: a lock may sit at an odd address (in a packed struct), whose
 * key would otherwise read as a fast one's. That way round, the fast
 * paths' pushes and unlocks use the address with no instruction more (an
 * instruction in each cost the spinlock pair 0.27 ns, 11 rounds). */
static inline uintptr_t cv__held_key(const void *addr, uint32_t flags)
{
	return (uintptr_t)addr ^ ((flags & CV_HELD_FAST_UNLOCK) == 0);
}

/* Whether slot h holds the lock at addr, whatever its flag (two locks'
 * addresses never differ in bit 0 alone: a lock is more than a byte). */
static inline bool cv__held_is(const struct cv_held *h, const void *addr)
{
	return ((CV_LOAD(&h->key) ^ (uintptr_t)addr) & ~(uintptr_t)1) == 0;
}

static inline uintptr_t cv__held_sp(const struct cv_held *h)
{
	return h->sp_flags & ~(uintptr_t)CV_HELD_FLAGS_MASK;
}

static inline uint32_t cv__held_flags(const struct cv_held *h)
{
	return (uint32_t)(h->sp_flags & CV_HELD_FLAGS_MASK);
}

/* The stack pointer: one register read, for the held set's pushes. */
static inline uintptr_t cv__sp(void)
{
#if defined(__x86_64__) && defined(__LP64__)   /* not x32: its pointers are 4 bytes */
	uintptr_t sp;
	__asm__ volatile("mov %%rsp, %0" : "=r"(sp));
	return sp;
#else
	return (uintptr_t)__builtin_frame_address(0);
#endif
}

#if defined(__x86_64__) && defined(__LP64__)
/* glibc's descriptor of the calling thread, where tcbhead_t's self word
 * (%fs:0x10) holds it: pthread_self() without the call (real.c checks that
 * they agree before anything reads through it). */
static inline const char *cv__thread_self(void)
{
	const char *self;
	__asm__("mov %%fs:0x10, %0" : "=r"(self));
	return self;
}
#endif

#define CV_MAX_COUNTERS 16
struct cv_named_counter {
	const char *key;               /* the caller's pointer, compared first */
	const char *name;              /* our copy */
	int64_t     value;
	uint32_t    kind;              /* enum cv_counter_kind */
};

/* Two words at p (16-byte aligned) stored or loaded with one instruction
 * on x86-64: a signal handler, which runs between two instructions, sees
 * both halves of one store; and a load right after a store of the pair is
 * forwarded from it (two 8-byte stores are not forwarded to one 16-byte
 * load: the acquisition after each cache fill stalled, lockpair semwait2
 * 16.6 -> 21.4 ns). Elsewhere two plain accesses: the callers check what
 * they read (cv__way_miss) or use it as a bound only (stacks.c,
 * on_alt_stack). */
static inline void cv__pair_store(void *p, uintptr_t a, uintptr_t b)
{
#if defined(__x86_64__) && defined(__LP64__)   /* not x32: its pointers are 4 bytes */
	__m128i v = _mm_set_epi64x((long long)b, (long long)a);
	__asm__ volatile("movdqa %1, %0" : "=m"(*(__m128i *)p) : "x"(v));
#else
	CV_STORE(&((uintptr_t *)p)[0], a);
	CV_STORE(&((uintptr_t *)p)[1], b);
#endif
}

static inline void cv__pair_load(const void *p, uintptr_t *a, uintptr_t *b)
{
#if defined(__x86_64__) && defined(__LP64__)
	__m128i v;
	__asm__ volatile("movdqa %1, %0" : "=x"(v) : "m"(*(const __m128i *)p));
	*a = (uintptr_t)_mm_cvtsi128_si64(v);
	*b = (uintptr_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v));
#else
	*a = CV_LOAD(&((const uintptr_t *)p)[0]);
	*b = CV_LOAD(&((const uintptr_t *)p)[1]);
#endif
}

/* One entry of a thread's caches: a record and its object (the object's
 * address is the key: cv__way_miss). */
#define CV_WAYS 4u          /* entries of the condvar, spinlock and futex caches */
#define CV_SEM_WAYS 8u      /* sem_aside */
#define CV_PINS 2u          /* cv_thread.pinned (struct cv_pin): a wait, and a signal handler's inside it */
#define CV_MUTEX_WAYS 64u   /* mutex_cache */
#define CV_RWLOCK_WAYS 64u  /* rwlock_cache */
#define CV_L2_WAYS 2048u    /* entries of a second cache (cv_thread.l2) */
#define CV_L2_AFTER 256u    /* made at this many refills of the first from the table, */
#define CV_L2_RECORDS 64u   /* by a thread with more records than this (a first cache's entries) */
enum { CV_L2_MUTEX, CV_L2_RWLOCK, CV_L2_FAMILIES };   /* the families that have one */
#define CV_WAYS_OK(n) (((n) & ((n) - 1)) == 0 && (n) >= 2)
_Static_assert(CV_WAYS_OK(CV_WAYS) && CV_WAYS_OK(CV_MUTEX_WAYS) && CV_WAYS_OK(CV_RWLOCK_WAYS) &&
		       CV_WAYS_OK(CV_L2_WAYS),
	       "a cache is a power of two of entries, in pairs (cv__way, cv__way_partner)");
struct cv_way {
	struct cv_rec *rec;
	struct cv_obj *obj;
} __attribute__((aligned(16)));   /* never across two lines; cv__way_miss reads it whole */

/* An alternate signal stack, (lo, hi]; hi 0: none. Written and read
 * whole (cv__pair_store, cv__pair_load): a signal handler that comes
 * between two halves would see a stack that never was. */
struct cv_alt_note {
	uintptr_t lo, hi;
} __attribute__((aligned(16)));

/* Per-thread state. The profile reports every thread, including the ones
 * that have exited; past CV_THREADS_KEPT ended threads, later ones are
 * merged into one "merged threads" row and their state is recycled
 * (thread.c). */
struct cv_thread {
	/* Line 0, what the mutex fast path reads (mutex.c). Only this thread
	 * writes the state's lines (the profile writer reads them racily). */
	uint32_t        inert;         /* 1 only in cv__inert: every call takes the slow path */
	/* lockorder.c: the locks it holds, oldest first (written only by the
	 * thread, read racily by the profile writer). */
	uint32_t        nheld;
	uint32_t        held_untracked;   /* held past CV_HELD_MAX */
	pid_t           tid;
	/* Caches per object family (below: a few entries for condvars,
	 * spinlocks and futex words, many for mutexes and rwlocks, a fixed
	 * entry and its partner for semaphores), then an open-addressing table
	 * keyed by address. An empty entry holds cv__nil_rec and its object
	 * (at address NULL, retired), so a hit is tested without a branch
	 * (cv__way_miss). */
	/* The one mutex whose hold time is being sampled, if any (the unlock
	 * reads hold_addr; the other two only a sampled hold uses). */
	const void     *hold_addr;
	/* CONVOY_HOLD_SAMPLE - 1: a mutex acquisition whose record's count
	 * has these bits clear times its hold (mutex.c). A copy of the
	 * configuration in the line the fast path reads anyway: read from
	 * cv__real it kept that block's address in a register, one more than
	 * the fast path has free (docs/performance.md, "Trylock, the hold
	 * mask and the thread's addresses"). */
	uint64_t        hold_mask;
	/* cond.c: the condvar of the last wait this thread returned from
	 * (futile wakes, below), cleared by every signal and broadcast: in the
	 * line the lock fast paths read (a signal's own reads only the condvar
	 * cache, line 1), so that a signal with no waiter writes no line of the
	 * state that a lock around it does not keep at hand. */
	const void     *cw_cond;
	/* Line 1: the condvar cache (cv__way). */
	struct cv_way   cond_cache[CV_WAYS] __attribute__((aligned(CV_CACHELINE)));
	/* Line 2 on: the held set. */
	struct cv_held  held[CV_HELD_MAX] __attribute__((aligned(CV_CACHELINE)));
	struct cv_rec  *hold_rec;
	/* A contended mutex acquisition's wait, counted after the lock was
	 * taken and left (mutex.c, wait_pending): 1 while one is pending, then
	 * its record, its mutex, when it began and ended, and the wake stamp
	 * it found. */
	uint32_t        wait_pending;
	struct cv_pending_wait {
		struct cv_rec *rec;
		const void    *addr;
		uint64_t       t0, now, sent;
	} pending;
	uint64_t        hold_start;
	struct cv_slot *table;
	uint32_t        table_mask, table_used;
	uint32_t        index;
	uint32_t        dump_index;    /* output.c: its index in the profile */
	/* lockorder.c: the wait it is blocked in, if any (set on contended
	 * paths only). */
	struct cv_obj  *waiting_obj;
	struct cv_obj  *waiting_mutex;    /* a condvar wait's mutex */
	const void     *waiting_pc;
	uint64_t        waiting_since_ns;
	/* Where the waiting frame keeps waiting_since_ns: it holds it while
	 * the wait is live; a frame left by siglongjmp out of a handler, its
	 * end never run, is reused or gone (lockorder.c, wait_frame_live). */
	const uint64_t *waiting_since_at;
	uint32_t        waiting_flags;
	/* thread.c: the join it is blocked in, if any (apart from waiting_*: a
	 * signal handler may lock a mutex during the join). The joined thread
	 * is found by its handle when the profile is written: at the join it may
	 * not have started yet. */
	pthread_t       joining_handle;
	uint32_t        joining;          /* 1 while blocked in the join */
	uint32_t        joining_flags;    /* CV_WAIT_TIMED */
	uint64_t        joining_since_ns;
	const void     *joining_pc;
	/* The other caches (objects.c fills them; barriers are slow by nature
	 * and use the table). A lock missed in its cache costs a look in the
	 * table and the slow path's bookkeeping, 12 to 15 ns more than a hit.
	 * Programs take more mutexes and rwlocks in turn than a few entries
	 * hold: OpenSSL 3 a dozen read locks, hundreds of thousands of times
	 * as python's ssl module or node starts (with eight rwlock entries,
	 * 192,000 of python's 410,000 acquisitions missed; docs/performance.md,
	 * "Rwlocks, spinlocks and futex words in turn" and "Many locks in
	 * turn"), a table with a lock a bucket more. So 64 entries each (four
	 * a line; a lock reads its own only), which put the state in the
	 * allocator's 4 KiB class. They come last: placed between line 1 and
	 * the held set, which then began at line 18, they made a mutex taken
	 * alone 0.85 ns dearer, for reasons not found. A line of CV_WAYS
	 * entries for spinlocks and futex words. Semaphores have a fixed entry
	 * and its partner (cv__sem_rec), which the fast paths test, not a
	 * hashed one: the hashed entry cost their uncontended pair 2.8 ns more
	 * on the AMD guest (sem_trywait and sem_post: 6.4 -> 9.2 ns; a fixed
	 * entry of the same line 6.7), where the mutex, rwlock and spinlock
	 * paths paid nothing measurable; then CV_SEM_WAYS hashed entries
	 * aside. */
	struct cv_way   rwlock_cache[CV_RWLOCK_WAYS] __attribute__((aligned(CV_CACHELINE)));
	struct cv_way   mutex_cache[CV_MUTEX_WAYS] __attribute__((aligned(CV_CACHELINE)));
	struct cv_way   spin_cache[CV_WAYS] __attribute__((aligned(CV_CACHELINE)));
	struct cv_way   futex_cache[CV_WAYS] __attribute__((aligned(CV_CACHELINE)));
	struct cv_way   sem_cache[2];
	struct cv_rec  *pinned[CV_PINS];   /* struct cv_pin: condvar waits */
	struct cv_rec  *barrier_pinned;    /* cv__pinned: a barrier wait's */
	struct cv_way   sem_aside[CV_SEM_WAYS] __attribute__((aligned(CV_CACHELINE)));
	/* Second caches of mutexes and of rwlocks (CV_L2_*: objects.c,
	 * cache_fill and l2_wanted; mutex.c, locked_l2; rwlock.c,
	 * rw_locked_more), each CV_L2_WAYS entries in a block of its own, made
	 * once the family's first cache had to be refilled from the table
	 * CV_L2_AFTER times (l2_refills) with no lock held, by a thread with
	 * more than CV_L2_RECORDS records: a thread that takes more locks in
	 * turn than the first holds (a table's lock per bucket) finds them
	 * there instead of in the table. Used, and filled, with no lock held
	 * only (under another lock, the lock-order memo's miss sends the
	 * acquisition to the slow path anyway). NULL until then, in cv__inert
	 * and in a thread the shim did not see start (CV_THREAD_UNTRACKED: its
	 * end is not seen either). Only the thread writes them; freed at its
	 * end. */
	struct cv_way  *l2[CV_L2_FAMILIES];
	uint32_t        l2_refills[CV_L2_FAMILIES];
	/* Futile condvar wakes (cond.c): the last wait this thread returned from
	 * (cw_cond, in line 0), and its mutex record's acquisitions then.
	 * Waiting again on the same condvar with that count unchanged means the
	 * mutex was never released. */
	uint32_t        cw_broadcast;  /* the last wake sent on cw_cond was a broadcast */
	struct cv_rec  *cw_mutex_rec;
	uint64_t        cw_mutex_acq;
	/* gomp.c: the runtime table of the OpenMP region this thread runs a
	 * share of (NULL outside one). */
	const void     *omp_runtime;

	struct cv_rec  *recs;
	struct cv_thread *all_next;
	struct cv_thread *live_next;   /* thread.c: live threads by pthread_t */
	bool            live, gone;    /* in that table; exited (never to be re-added) */
	bool            listed;        /* on the all_next list (a recycled state stays on it) */

	/* Lifecycle, written by the thread itself (and its creator before start). */
	void         *(*start_routine)(void *);
	void           *start_arg;
	pthread_t       self;
	pid_t           creator_tid;
	uint32_t        flags;         /* CV_THREAD_* */
	uint64_t        create_ns, start_ns, end_ns, cpu_ns;
	uint64_t        voluntary_cs, involuntary_cs;
	uint64_t        join_wait_ns, joins, threads_created;
	uint64_t        run_delay_ns, timeslices, minor_faults, major_faults;
	char            name[CV_NAME_MAX];
	/* annotate.c: CV_MAX_COUNTERS of them, made on the thread's first
	 * counter (few threads have one: inside, they would put the state
	 * past the allocator's 4 KiB class); set before ncounters is first
	 * raised. */
	struct cv_named_counter *counters;
	uint32_t        ncounters;
	struct cv_stack_state *stk;    /* stacks.c: unwind buffer and sampler state, made on first use */
	/* Its stack (thread.c): the lowest address it may use, never below
	 * the real one; 0 when unknown. stacks.c captures only with room.
	 * stack_hi, the address its frames stay below, only for a stack the C
	 * library mapped for a thread it created (one mapping, the thread's
	 * alone; not the main thread's, whose range may hold other mappings,
	 * nor one the program gave): stacks.c keeps a capture for the next
	 * only when all its frames lie between (on the main thread, only one
	 * that ends in _start's frame: stacks.c, keepable). stack_top, where any bound
	 * above is known (the main thread's, a stack the program gave): a
	 * stack pointer outside [stack_lo, stack_top] is on another stack (a
	 * coroutine's, an alternate signal stack), whose room is unknown. */
	uintptr_t       stack_lo, stack_hi, stack_top;
	/* The alternate signal stack set with SS_AUTODISARM that the last
	 * handler of the program's to run on one ran on (signals.c,
	 * note_disarmed_stack; cv__pair_store). */
	struct cv_alt_note disarmed;
	size_t          stack_size;    /* pthread_create -> trampoline: the size asked for */
	int             created;       /* thread.c: CV_CREATE_*, who may recycle it */
	uint32_t        fork_generation;   /* thread.c: the process image it was made in */
	struct cv_thread *pool_next;   /* thread.c: recycled states, still on the all_next list */
	struct cv_trace_ring *trace;   /* trace.c: this thread's events, when trace mode is on */
} __attribute__((aligned(CV_CACHELINE)));
_Static_assert(sizeof(struct cv_thread) <= 4096, "cv_thread: in the allocator's 4 KiB class (counters)");
_Static_assert(offsetof(struct cv_thread, cw_cond) + sizeof(void *) <= CV_CACHELINE &&
	       offsetof(struct cv_thread, held) == 2 * CV_CACHELINE,
	       "cv_thread: the fast paths' fields in line 0, the held set from line 2");

/* The calling thread's state, never NULL: &cv__inert means "take the slow
 * path" (the shim is not initialised yet or is disabled, this thread has no
 * state yet, or the shim itself is running: the reentrancy guard installs
 * cv__inert and raises cv__busy). The fast paths read cv__self and fold
 * "inert" into their one test through cv__inert.inert; everything else asks
 * cv__current(), NULL for the inert state. cv__inert is const: nothing may
 * write it (a write would fault, not corrupt). */
extern __thread struct cv_thread *cv__self;
/* The thread's own state, also while the guard hides it (thread.c); NULL
 * before it has one and once its end is recorded. Also for what a signal
 * handler notes about the thread's own stack (signals.c,
 * note_disarmed_stack; stacks.c). */
extern __thread struct cv_thread *cv__my_state;
extern __thread unsigned cv__busy;
extern const struct cv_thread cv__inert;
extern const struct cv_rec cv__nil_rec;    /* an empty cache's record; its object is retired */
#define CV_INERT ((struct cv_thread *)&cv__inert)
/* The calling thread's kernel id, kept in TLS when it attaches (0 before,
 * and in a fork child until it attaches or asks): the kernel is asked only
 * then. Also a thread without a state of its own (cv__inert) has it. */
extern __thread pid_t cv__tid;
pid_t cv__tid_slow(void);
/* Whether sp is on t's own stack, within the bounds known (thread.c). */
static inline bool cv__on_thread_stack(const struct cv_thread *t, uintptr_t sp)
{
	return t->stack_lo && t->stack_top && sp >= t->stack_lo && sp <= t->stack_top;
}
static inline pid_t cv__thread_tid(void)
{
	pid_t tid = cv__tid;
	return CV_LIKELY(tid) ? tid : cv__tid_slow();
}

#define CV_NIL_REC ((struct cv_rec *)&cv__nil_rec)

/* Every line of [p, p + bytes) asked for at once (p NULL: none): a slow
 * path about to read a cold record or object whole. */
static inline void cv__prefetch_lines(const void *p, size_t bytes)
{
	for (size_t at = 0; p && at < bytes; at += CV_CACHELINE)
		__builtin_prefetch((const char *)p + at);
}

/* An address hashed for the slow paths' tables (the registry's shards and
 * chains, a thread's table of records, the init-stack table, the
 * unwinder's table): every bit mixed (splitmix64's finalizer), so that
 * any bits index. A multiplicative hash alone (address times the
 * golden ratio, the caches' cv__way_n) gathers the addresses malloc hands
 * out in a run into a few places. Over the addresses glibc's malloc gave
 * to semaphores made one after another (CPython's locks, a program's
 * per-request objects; a model of the tables in Python): 50,000 took 3.6
 * probes an insert in a thread's table of 131,072 slots (indexed by the
 * product's middle bits), where the mixed hash takes 1.3; 20,000 in the
 * registry's 16,384 chains took 3.2 steps a find against 1.6. The caches
 * keep the multiplicative hash, which spreads an array of locks (a
 * striped table) perfectly: mixed, the second cache took lockpair's
 * `striped` (1,024 mutexes of an array) from 36 to 50 ns a pair, though
 * 1,000 malloc'd locks met in 320 of its 2,048 entries against 790. */
static inline uint64_t cv__addr_hash(const void *addr)
{
	uint64_t x = (uintptr_t)addr;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

static inline struct cv_thread *cv__current(void)
{
	struct cv_thread *t = cv__self;
	return t == CV_INERT ? NULL : t;
}

void cv__caches_clear(struct cv_thread *t);   /* objects.c: every family's cache empty */

struct cv_rec *cv__lookup_slow(struct cv_thread *t, const void *addr, uint32_t kind);
/* Uses of objects left unrecorded past the cap of (object, thread) records. */
uint32_t cv__uses_unrecorded(void);
/* Uses of objects counted only in part or not at all, out of memory. */
uint32_t cv__uses_without_memory(void);
void cv__forget_object(const void *addr, uint32_t kind);   /* after a successful destroy */
/* After a successful init (stacks.c, which captures the init stack with no
 * frame of its own between the wrapper and the unwinder): the object at addr
 * ends, and the next use makes a new one. */
void cv__object_init(const void *addr, uint32_t kind);
/* Its two steps, inside the guard. ending: the calling thread holds the
 * lock at addr no more (a destroy or init of a held lock ends the hold),
 * and false when the live object stands for later generations (the
 * thread's own record tells; no lock), so nothing changes and no init
 * stack is wanted. end: otherwise, in a critical section; true when the
 * live object stays after all. */
bool cv__object_ending(struct cv_thread *t, const void *addr, uint32_t kind);
bool cv__object_end(struct cv_thread *t, const void *addr, uint32_t kind);
/* The live object at addr, made as one of kind (CV_OBJ_UNKNOWN: of
 * whatever kind its first use gives it, as convoy_name_object's); NULL out
 * of memory. */
struct cv_obj *cv__object_of(const void *addr, uint32_t kind);
void cv__objects_after_fork(void);
void cv__records_thread_end(struct cv_thread *t);           /* its table goes back; records stay */
/* Folds every record of src (an ended thread) into dst's record of the same
 * object, and gives src's records back; false (nothing changed) when dst
 * is out of memory. Caller holds the lock that serialises dst. */
bool cv__records_merge(struct cv_thread *dst, struct cv_thread *src);

/* The entries of a cache array of struct cv_thread's (an array, not a
 * pointer to one: the build fails on a pointer), so that its size is said
 * once, where it is declared. */
#define CV_NWAYS(cache)                                                                                     \
	((uint32_t)(sizeof(cache) / sizeof((cache)[0]) +                                                 \
		    0 * sizeof(struct { _Static_assert(!__builtin_types_compatible_p(__typeof__(cache),       \
										  __typeof__(&(cache)[0])),     \
						 "CV_NWAYS of a pointer"); int unused; })))

/* addr's entry in a cache of `ways` entries (a power of two, a constant
 * at every fast path): a multiplicative hash, so that objects side by side
 * in an array or a struct fall in different entries. cv__way: of a cache
 * array. */
static inline struct cv_way *cv__way_n(struct cv_way *cache, uint32_t ways, const void *addr)
{
	return &cache[((uintptr_t)addr * 0x9E3779B97F4A7C15ull) >> (64 - __builtin_ctz(ways))];
}
#define cv__way(cache, addr) cv__way_n((cache), CV_NWAYS(cache), (addr))

/* A cache entry's record and object, and zero when they are addr's: the
 * object is at addr and live (a retired object, destroyed or re-initialised
 * elsewhere, misses; so does every empty entry, whose object is retired,
 * and every entry of cv__inert). A signal handler may refill the entry at any
 * instruction (its lock of another address in the same entry, or a failed
 * trylock of this one, missed), so the record and the object must come
 * from one fill: on x86-64 one 16-byte load reads both (a handler runs
 * between two instructions, and only the thread itself writes its caches);
 * elsewhere, the record's object must be the entry's (a record's object
 * and an object's address never change while they live, so a record and
 * an object read from two fills never pass). No pointer is followed out
 * of the record before it passes: a handler's lookup may free a record
 * whose object was merged away (objects.c, rec_fold), and a freed block's
 * first word, the record's obj, is the allocator's link (what else is read
 * from a freed record or object only decides a miss: the shim's memory
 * stays mapped). Use *r and *o, never the entry again. */
static inline uintptr_t cv__way_miss(const struct cv_way *w, const void *addr, struct cv_rec **r, struct cv_obj **o)
{
	uintptr_t rec, obj;
	cv__pair_load(w, &rec, &obj);
	*r = (struct cv_rec *)rec;
	*o = (struct cv_obj *)obj;
	uintptr_t miss = ((uintptr_t)CV_LOAD(&(*o)->addr) ^ (uintptr_t)addr) | (unsigned)CV_LOAD(&(*o)->retired);
#if !(defined(__x86_64__) && defined(__LP64__))   /* two loads: from one fill? */
	miss |= (uintptr_t)CV_LOAD(&(*r)->obj) ^ (uintptr_t)*o;
#endif
	return miss;
}

/* Fills w whole, as cv__way_miss reads it (cv__pair_store). */
static inline void cv__way_set(struct cv_way *w, struct cv_rec *r, struct cv_obj *o)
{
	cv__pair_store(w, (uintptr_t)r, (uintptr_t)o);
}

/* The other entry of w's pair in a cache: a record is found in
 * its own entry (cv__way, the fast paths' one test) or in that entry's
 * partner, where a lookup moves the record it displaces (objects.c,
 * cache_fill). Two locks whose addresses hash to one entry, taken in turn,
 * then both stay cached: node's OpenSSL takes two such rwlocks 183,000
 * times each. */
static inline struct cv_way *cv__way_partner(struct cv_way *cache, const struct cv_way *w)
{
	return &cache[(uint32_t)(w - cache) ^ 1];
}

/* The bit of a cv__ways_miss_n answer that says the record was found in
 * the partner beside a retired record: a miss all the same (a cache
 * entry's pointers, and so cv__way_miss's answers, leave the top bit
 * clear: 48 bits on x86-64 and arm64, as alloc.c's free lists assume). */
#define CV_WAYS_ASIDE_BIT (sizeof(uintptr_t) * 8 - 1)
#define CV_WAYS_ASIDE ((uintptr_t)1 << CV_WAYS_ASIDE_BIT)

/* Whether a cv__ways_miss_n answer is a miss of both entries. */
static inline bool cv__ways_none(uintptr_t miss)
{
	return (miss << 1) != 0;
}

/* cv__way_miss over addr's entry in one of a thread's first caches, then
 * its partner. A find in the partner beside a retired record in the entry
 * (a lock destroyed, an entry emptied) is a miss all the same
 * (CV_WAYS_ASIDE set): the caller's slow path finds the record in the
 * thread's table and fills it into its entry, where the fast paths look
 * (objects.c, fill_pair, which moves nothing retired to the partner).
 * Else a lock that a short-lived one's fill had moved to the partner
 * missed the fast paths' one entry at every use until another fill
 * there: openssl verify took 116,000 to 173,000 of its 403,000 read locks
 * so (docs/performance.md, "Back to its own entry"). The entry object's
 * retired flag is read again here: it only decides a miss.
 * cv__ways_miss: of a cache array. */
static inline uintptr_t cv__ways_miss_n(struct cv_way *cache, uint32_t ways, const void *addr, struct cv_rec **r,
					struct cv_obj **o)
{
	struct cv_way *w = cv__way_n(cache, ways, addr);
	if (!cv__way_miss(w, addr, r, o))
		return 0;
	uintptr_t aside = (uintptr_t)CV_LOAD(&(*o)->retired) << CV_WAYS_ASIDE_BIT;   /* retired is 0 or 1 */
	return cv__way_miss(cv__way_partner(cache, w), addr, r, o) | aside;
}
#define cv__ways_miss(cache, addr, r, o) cv__ways_miss_n((cache), CV_NWAYS(cache), (addr), (r), (o))

/* cv__way_miss over addr's entry in a second cache (cv_thread.l2), then
 * its partner: no fast path tests a second cache, so a find in its
 * partner is a find, whatever the entry holds. */
static inline uintptr_t cv__l2_miss(struct cv_way *l2, const void *addr, struct cv_rec **r, struct cv_obj **o)
{
	struct cv_way *w = cv__way_n(l2, CV_L2_WAYS, addr);
	return cv__way_miss(w, addr, r, o) && cv__way_miss(cv__way_partner(l2, w), addr, r, o);
}

/* The record of thread t for the object at addr, from the cache of its
 * family (cache_ways entries), else from the guarded lookup. */
static inline struct cv_rec *cv__cached_rec(struct cv_way *cache, uint32_t cache_ways, const void *addr, uint32_t kind,
					    struct cv_thread *t)
{
	struct cv_rec *r;
	struct cv_obj *o;
	return CV_LIKELY(!cv__ways_miss_n(cache, cache_ways, addr, &r, &o)) ? r : cv__lookup_slow(t, addr, kind);
}

/* t's second cache of a family (CV_L2_*, CV_L2_WAYS entries in pairs,
 * as a first cache's), NULL while it has none. */
static inline struct cv_way *cv__l2(const struct cv_thread *t, int family)
{
	return __atomic_load_n(&t->l2[family], __ATOMIC_ACQUIRE);
}

static inline struct cv_rec *cv__mutex_rec(struct cv_thread *t, const void *addr)
{
	return cv__cached_rec(t->mutex_cache, CV_NWAYS(t->mutex_cache), addr, CV_OBJ_MUTEX, t);
}

static inline struct cv_rec *cv__cond_rec(struct cv_thread *t, const void *addr)
{
	return cv__cached_rec(t->cond_cache, CV_NWAYS(t->cond_cache), addr, CV_OBJ_COND, t);
}

static inline struct cv_rec *cv__rwlock_rec(struct cv_thread *t, const void *addr)
{
	return cv__cached_rec(t->rwlock_cache, CV_NWAYS(t->rwlock_cache), addr, CV_OBJ_RWLOCK, t);
}

static inline struct cv_rec *cv__spin_rec(struct cv_thread *t, const void *addr)
{
	return cv__cached_rec(t->spin_cache, CV_NWAYS(t->spin_cache), addr, CV_OBJ_SPIN, t);
}

/* A semaphore's record in t's cache: its fixed entry, sem_cache[0], which
 * the fast paths test alone, or that entry's partner, where a fill moves
 * the record it displaces (objects.c, sem_fill), or CV_SEM_WAYS hashed
 * entries aside (in pairs), where a fill moves the partner's. A program
 * that waits on two semaphores in turn (a producer's "empty" and "full")
 * finds both in the first two: with the fixed entry alone each of its
 * waits looked in the thread's table and filled the entry again
 * (`semwait2` 14.8 ns a pair, 5.7 natively); one that takes a few more in
 * turn (CPython's locks are semaphores) finds them aside: without them,
 * `semwait4` took 26.5 ns a pair, 8.3 natively, each a look in the table.
 * A find past the fixed entry while it holds a retired record (a destroyed
 * semaphore, or none) is a miss: the slow path's fill puts the record in
 * the fixed entry, where the fast paths find it again. */
static inline uintptr_t cv__sem_partner_miss(struct cv_thread *t, const void *addr, struct cv_rec **r,
					     struct cv_obj **o)
{
	uintptr_t home_retired = (unsigned)CV_LOAD(&CV_LOAD(&t->sem_cache[0].obj)->retired);
	uintptr_t miss = cv__way_miss(&t->sem_cache[1], addr, r, o);
	if (miss)
		miss = cv__ways_miss(t->sem_aside, addr, r, o);
	return miss | home_retired;
}
_Static_assert(CV_NWAYS(((struct cv_thread *)0)->sem_cache) == 2,
	       "the semaphores' fixed entry and its partner (objects.c, sem_fill)");

static inline struct cv_rec *cv__sem_rec(struct cv_thread *t, const void *addr)
{
	struct cv_rec *r;
	struct cv_obj *o;
	if (CV_LIKELY(!cv__way_miss(&t->sem_cache[0], addr, &r, &o)) || !cv__sem_partner_miss(t, addr, &r, &o))
		return r;
	return cv__lookup_slow(t, addr, CV_OBJ_SEM);
}

/* glibc's first cleanup list (libc exports it for old binaries), the one
 * its own pthread_cond_wait registers on: a cancellation's unwind runs and
 * unlinks the handlers it passes, and so does a longjmp past them
 * (__pthread_cleanup_upto). pthread_cleanup_push in C built without
 * -fexceptions would register a jump buffer instead, which stays the
 * thread's current one after a signal handler longjmps out of the wait, or
 * while the program's own handlers run on after ours: a later
 * pthread_exit or cancellation then jumps into a frame long gone. */
extern void _pthread_cleanup_push(struct _pthread_cleanup_buffer *buf, void (*routine)(void *), void *arg);
extern void _pthread_cleanup_pop(struct _pthread_cleanup_buffer *buf, int execute);

/* A record kept from folding away (objects.c, rec_retire) across a wait
 * that uses it after the program may destroy its object: a condvar's
 * waiter, woken, retakes the mutex inside the wait while the broadcaster
 * destroys the condvar (legal), and a barrier's threads count after the
 * real wait, which a destroy only waits for. Past the objects cap the
 * destroyed object is merged, and a signal handler's lookup on the waiting
 * thread that grew its table folded the record and freed it under the
 * wait: the wait was counted on whatever the memory became (helper-139).
 *
 * A condvar wait's pin takes one of the thread's CV_PINS slots (none when
 * every one is taken: a handler's wait inside a handler's) and is released
 * by cv__pin_drop, or by glibc's cleanup list when the wait's frame ends
 * otherwise (a cancellation, a handler's longjmp out of it), as the wait's
 * own leave is (cond.c): a slot left taken would leave later waits
 * unpinned (helper-140). The slot is named in the pin before it is taken
 * and freed before the pin leaves the list, so that a jump between any two
 * instructions frees it once (helper-141). */
struct cv_pin {
	struct _pthread_cleanup_buffer buf;
	struct cv_thread *t;
	int slot;
};

static inline void cv__pin_release(void *arg)
{
	struct cv_pin *p = arg;
	int slot = p->slot;
	if (slot >= 0)
		p->t->pinned[slot] = NULL;
}

/* p in the caller's frame, until cv__pin_drop in the same frame. */
static inline __attribute__((always_inline)) void cv__pin_hold(struct cv_pin *p, struct cv_thread *t,
							       struct cv_rec *r)
{
	p->t = t;
	p->slot = -1;
	_pthread_cleanup_push(&p->buf, cv__pin_release, p);
	for (uint32_t i = 0; i < CV_PINS; i++)
		if (!t->pinned[i]) {
			p->slot = (int)i;
			__atomic_signal_fence(__ATOMIC_SEQ_CST);   /* named before taken */
			t->pinned[i] = r;
			break;
		}
}

static inline __attribute__((always_inline)) void cv__pin_drop(struct cv_pin *p)
{
	cv__pin_release(p);
	p->slot = -1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);   /* freed before the pin leaves the list */
	_pthread_cleanup_pop(&p->buf, 0);
}

/* A barrier wait pins its record in a slot of its own, with no cleanup:
 * glibc's barrier wait registers none, and one of the shim's left on the
 * list by a wait the program leaves some other way (setcontext out of a
 * handler, a coroutine's switch) made the thread's pthread_exit call a
 * dead frame's (helper-141). A slot left set by a jump out of the wait
 * keeps one record from folding until the thread's next barrier wait. */
static inline void cv__barrier_pin(struct cv_thread *t, struct cv_rec *r)
{
	t->barrier_pinned = r;
}

static inline bool cv__pinned(const struct cv_thread *t, const struct cv_rec *r)
{
	bool pinned = t->barrier_pinned == r;
	for (uint32_t i = 0; i < CV_PINS; i++)
		pinned |= t->pinned[i] == r;
	return pinned;
}

static inline struct cv_rec *cv__futex_rec(struct cv_thread *t, const void *addr)
{
	return cv__cached_rec(t->futex_cache, CV_NWAYS(t->futex_cache), addr, CV_OBJ_FUTEX, t);
}

/* A lock of any kind was just acquired by t: when another thread held it
 * last, ownership moved (a hand-off, counted on t's record). Called inside
 * the critical section just entered, so exact for a correctly used lock;
 * last_owner is written only when the owner changes, so a lock that stays
 * with one thread keeps its object's line shared. mutex.c. */
void cv__owner_changed(struct cv_thread *t, struct cv_rec *r);
static inline void cv__note_owner(struct cv_thread *t, struct cv_rec *r)
{
	if (CV_UNLIKELY(CV_LOAD(&r->obj->last_owner) != t))
		cv__owner_changed(t, r);
}

/* ---- c11.c, mutex.c: C11 <threads.h> ------------------------------------ */

/* glibc's thrd_err_map (nptl/thrd_priv.h): a pthread error as a thrd_ code. */
static inline int cv__thrd_err_map(int rc)
{
	switch (rc) {
	case 0:         return thrd_success;
	case ENOMEM:    return thrd_nomem;
	case ETIMEDOUT: return thrd_timedout;
	case EBUSY:     return thrd_busy;
	default:        return thrd_error;
	}
}

/* ---- futex.c: the shim's own system calls --------------------------------- *
 * Every system call the shim makes for itself goes straight to the kernel
 * (cv__sys6), never through the C library's wrapper, for two reasons. The
 * program, or a library preloaded after the shim, may define the wrapper
 * itself: a clock_gettime, syscall() or mmap that takes a lock (libfaketimeMT,
 * tcmalloc's mmap hooks, a test harness's virtual clock) would come back
 * into the shim from inside its bookkeeping or a signal handler, and
 * deadlock or recurse (helper-127, helper-128). And glibc's open, read,
 * write, close and nanosleep are cancellation points, which the shim must
 * never be: a pending pthread_cancel acted on inside it would unwind the
 * thread out of its bookkeeping, perhaps holding one of its locks (the
 * guard below leaves the cancellation state alone). These return and set
 * errno as glibc's wrappers do. Elsewhere than x86-64 cv__sys6 is the next
 * syscall(). */
long cv__sys6(long n, long a1, long a2, long a3, long a4, long a5, long a6);
static inline long cv__sys(long n, long a1, long a2, long a3, long a4)
{
	return cv__sys6(n, a1, a2, a3, a4, 0, 0);
}
static inline int cv__open(const char *path, int flags, int mode)
{
	return (int)cv__sys(SYS_openat, AT_FDCWD, (long)path, flags, mode);
}
static inline ssize_t cv__read(int fd, void *buf, size_t len)
{
	return cv__sys(SYS_read, fd, (long)buf, (long)len, 0);
}
static inline ssize_t cv__write(int fd, const void *buf, size_t len)
{
	return cv__sys(SYS_write, fd, (long)buf, (long)len, 0);
}
static inline int cv__close(int fd)
{
	return (int)cv__sys(SYS_close, fd, 0, 0, 0);
}
static inline int cv__nanosleep(const struct timespec *pause)
{
	return (int)cv__sys(SYS_nanosleep, (long)pause, 0, 0, 0);
}
static inline pid_t cv__getpid(void)
{
	return (pid_t)cv__sys(SYS_getpid, 0, 0, 0, 0);
}
static inline pid_t cv__gettid(void)
{
	return (pid_t)cv__sys(SYS_gettid, 0, 0, 0, 0);
}
static inline pid_t cv__getppid(void)
{
	return (pid_t)cv__sys(SYS_getppid, 0, 0, 0, 0);
}
static inline void cv__yield(void)
{
	cv__sys(SYS_sched_yield, 0, 0, 0, 0);
}
static inline void *cv__mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)cv__sys6(SYS_mmap, (long)addr, (long)len, prot, flags, fd, (long)off);
}
static inline int cv__munmap(void *addr, size_t len)
{
	return (int)cv__sys(SYS_munmap, (long)addr, (long)len, 0, 0);
}
static inline int cv__mprotect(void *addr, size_t len, int prot)
{
	return (int)cv__sys(SYS_mprotect, (long)addr, (long)len, prot, 0);
}
static inline int cv__madvise(void *addr, size_t len, int advice)
{
	return (int)cv__sys(SYS_madvise, (long)addr, (long)len, advice, 0);
}
static inline int cv__fstat(int fd, struct stat *st)
{
	return (int)cv__sys(SYS_fstat, fd, (long)st, 0, 0);
}
static inline int cv__stat(const char *path, struct stat *st)
{
	return (int)cv__sys(SYS_newfstatat, AT_FDCWD, (long)path, (long)st, 0);
}
static inline int cv__unlink(const char *path)
{
	return (int)cv__sys(SYS_unlinkat, AT_FDCWD, (long)path, 0, 0);
}
static inline int cv__linkat(int from_dir, const char *from, int to_dir, const char *to, int flags)
{
	return (int)cv__sys6(SYS_linkat, from_dir, (long)from, to_dir, (long)to, flags, 0);
}
static inline int cv__renameat2(int from_dir, const char *from, int to_dir, const char *to, unsigned flags)
{
	return (int)cv__sys6(SYS_renameat2, from_dir, (long)from, to_dir, (long)to, flags, 0);
}
static inline ssize_t cv__readlink(const char *path, char *buf, size_t size)
{
	return cv__sys(SYS_readlinkat, AT_FDCWD, (long)path, (long)buf, (long)size);
}
static inline int cv__getrusage(int who, struct rusage *ru)
{
	return (int)cv__sys(SYS_getrusage, who, (long)ru, 0, 0);
}
static inline int cv__getrlimit(int resource, struct rlimit *rl)
{
	return (int)cv__sys(SYS_prlimit64, 0, resource, 0, (long)rl);
}
/* sigprocmask's, and pthread_sigmask's but for its return (-1 and errno):
 * like glibc's, it never blocks the two signals glibc keeps for itself
 * (SIGCANCEL and SIGSETXID, 32 and 33: a blocked SIGSETXID would hold up
 * another thread's setuid()). */
int cv__sigmask(int how, const sigset_t *set, sigset_t *old);
static inline int cv__sigpending(sigset_t *set)
{
	return (int)cv__sys(SYS_rt_sigpending, (long)set, _NSIG / 8, 0, 0);
}

/* process_vm_readv of this process's own memory: the kernel says EFAULT
 * for a hole or a guard page instead of faulting. Through the calling
 * thread's id, which is alive: the process's id names the main thread,
 * and fails (ESRCH) once it has called pthread_exit (helper-114). */
static inline ssize_t cv__read_own_memory(const struct iovec *local, unsigned long nlocal,
					   const struct iovec *remote, unsigned long nremote)
{
	return cv__sys6(SYS_process_vm_readv, cv__thread_tid(), (long)local, (long)nlocal, (long)remote, (long)nremote, 0);
}

/* ---- thread.c: thread state and lifecycle --------------------------------- */

/* Slow-path entry: returns the calling thread's state, creating it (and
 * initialising the shim) if needed; NULL while the shim itself is running or
 * when it is disabled, in which case the caller just calls the real function. */
struct cv_thread *cv__thread_slow(void);
void cv__thread_resume(void);   /* init.c: a fork's parent, out of the guard */
struct cv_thread *cv__threads(void);                   /* all threads, newest first */
/* A thread that ended, as the profile has it, once its state went back to
 * be reused by a later thread (thread.c, thread_retire): 4 KiB of caches
 * kept a thread for nothing but these few lines. */
struct cv_ended_thread {
	struct cv_ended_thread *next;   /* cv__ended_threads(), newest first; push-only */
	struct cv_rec          *recs;   /* its records, final */
	uint32_t                index;  /* its state's index (cv_thread.index) */
	struct cv_thread_rec    row;    /* its row, but row.index, its place in a profile */
};
struct cv_ended_thread *cv__ended_threads(void);
/* A profile's writer, named: waits (bounded) for merges of ended threads
 * in flight on other threads. */
void cv__threads_settle(void);
/* t's row (but row->index), as of now where it is still running. */
void cv__thread_row(const struct cv_thread *t, uint64_t now, struct cv_thread_rec *row);
uint32_t cv__thread_count(void);
void cv__thread_finish(struct cv_thread *t);           /* end time, CPU, switches */
/* Up to size - 1 bytes of a (/proc) file, NUL-terminated: their count, or -1. */
ssize_t cv__read_small_file(const char *path, char *buf, size_t size);
/* The calling thread's name (the kernel's comm) into name, NUL-padded. */
void cv__thread_name(char name[CV_NAME_MAX]);
void cv__threads_after_fork(void);   /* init.c: the child's list, the forking thread's state copied */
/* init.c: a fork through syscall(), with the shim's fork handlers around it. */
long cv__syscall_fork(long (*sys)(long, long, long, long, long, long, long), long n, long a1, long a2,
		      long a3, long a4, long a5, long a6);

/* lifecycle.c: a seccomp filter's install through syscall() (SYS_seccomp, or
 * SYS_prctl with PR_SET_SECCOMP): the profile is written before it. */
long cv__seccomp_call(long (*sys)(long, long, long, long, long, long, long), long n, long a1, long a2,
		      long a3, long a4, long a5, long a6);

/* Reentrancy guard. Every shim-internal action that takes one of the shim's
 * locks, changes the thread's own tables, unwinds, or calls out (/proc,
 * output) runs inside it. Inside, the thread looks untracked: a wrapped call
 * made from there finds cv__self NULL and cv__busy raised and calls the
 * real function, recording nothing (cv__thread_slow). cv__busy goes up
 * before cv__self is hidden and comes down after it is restored, so a
 * handler in between sees one or the other; the signal fences keep the
 * compiler from moving the stores. The outermost guard saves and restores
 * errno, so nothing the shim does inside shows in it.
 *
 * The guard is closed to the program's signal handlers behind the
 * trampoline: their signals wait for its end, as for a section's
 * (signals.c), so none can siglongjmp out of the shim's bookkeeping,
 * leave it half done and the guard raised for good (the thread untracked
 * from then on: signal_longjmp's 1,000 later locks were lost). Not where
 * the program has a handler the trampoline does not wrap (lock.c,
 * cv__program_handler_coming): one of those that jumped out would leave
 * the others waiting for ever; they run inside, untracked, as does a
 * fault's handler (signals.c, run_now, which opens the guard for it). The
 * fork window, where glibc waits for stdio's and
 * malloc's locks other threads hold and libraries' atfork handlers run,
 * opens it (cv__guard_open): the handlers run there as outside,
 * untracked, and one that jumps away leaves the thread untracked. (The
 * profile's writer, which waits for other threads' merges, blocks signals
 * itself: output.c, cv__call_with_stack.)
 *
 * It leaves the cancellation state alone: nothing inside is a cancellation
 * point (the shim's own I/O is cv__open and the rest above, and glibc's
 * other cancellable calls are made as system calls too; the test
 * trust::the_shim_calls_no_cancellation_point_of_glibcs lists what it
 * imports), so a pending
 * pthread_cancel is acted on where the program would act on it, never
 * inside the shim's bookkeeping, and a handler that siglongjmps out of a
 * guarded call leaves the state as the program set it. The type is made
 * deferred inside, and restored last: glibc 2.36's SIGCANCEL handler acts
 * on an asynchronous type at any instruction (a program's own, or glibc's
 * around a blocking call that a signal handler interrupted to call us),
 * which would unwind the shim's bookkeeping; restored after cv__busy is
 * down, so a cancellation that arrived meanwhile takes effect there, with
 * the shim's state consistent, and pthread_setcanceltype, acting on it,
 * sets the thread's result to PTHREAD_CANCELED (NPTL's tst-cancel30). */
extern __thread int cv__guard_errno;
extern __thread int cv__guard_cancel_type;
/* A snapshot request (lifecycle.c) that came while this thread was inside
 * the guard: written when the outermost guard is left. */
extern __thread int cv__snapshot_pending;
void cv__snapshot_deferred(void);

/* cv__self = the thread's own state (cv__my_state), or cv__inert when
 * inert or it has none; returns it. Not a state saved before: where a
 * signal handler forked meanwhile and this is the child, its thread has a
 * state of its own since (thread.c, cv__threads_after_fork), and the
 * saved one is the parent's, on no list of the child's: what the child
 * did then went uncounted (helper-89: a child of 3 in 10 forked from a
 * handler lost all its locks so). Looked at again after the store: a
 * fork between the load and the store left the parent's there (1 child
 * in 60, its first lock lost). */
static inline struct cv_thread *cv__install_own(bool inert)
{
	for (;;) {
		struct cv_thread *own = cv__my_state, *t = !inert && own ? own : CV_INERT;
		cv__self = t;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (CV_LIKELY(cv__my_state == own))
			return t;
	}
}

/* cv__busy's top bit, the rest its depth: the guard is open (above). */
#define CV_GUARD_OPEN (1u << 31)

/* Inside the guard, and it is closed (signals.c defers and releases by it). */
static inline bool cv__guard_closed(void)
{
	unsigned busy = cv__busy;
	return busy && !(busy & CV_GUARD_OPEN);
}

/* The guard's core, and alone the quiet guard, for guarded code that calls
 * nothing and leaves errno alone: the thread's state hidden and cv__busy
 * raised, so that a signal handler that locks meanwhile changes none of
 * the thread's tables, caches or records. Without the whole guard's save
 * of errno and its two calls for the cancellation type: 2.5 to 3.7 ns of
 * the 14 to 17 ns that a lock missed in its cache and found in the
 * thread's table paid (objects.c, cv__lookup_slow; 256 and 1,024 mutexes
 * or rwlocks in turn). The cancellation type stays as it is: a
 * cancellation that unwinds this (an asynchronous type, the program's
 * own, under which POSIX allows no lock function, or glibc's around a
 * blocking call that a signal handler interrupted) leaves the thread as
 * inside the guard, its later calls untracked, its end still recorded
 * (thread.c: thread_ended has its state from the trampoline). Code that
 * no cancellation may leave halfway needs the whole guard. Returns what
 * cv__self held. */
static inline struct cv_thread *cv__guard_enter_quiet(void)
{
	cv__busy++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);   /* busy before self is hidden */
	struct cv_thread *saved = cv__self;
	cv__self = CV_INERT;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);   /* hidden before the guarded code */
	return saved;
}
static inline void cv__guard_leave_quiet(struct cv_thread *saved)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);   /* the guarded code before self returns */
	cv__install_own(!saved || saved == CV_INERT);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);   /* self back before busy drops */
	/* The outermost leave drops the open bit with the depth, in one store. */
	unsigned depth = (cv__busy & ~CV_GUARD_OPEN) - 1;
	bool outer = depth == 0;
	cv__busy = outer ? 0 : depth | (cv__busy & CV_GUARD_OPEN);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);   /* a request or a signal that saw busy raised is seen below */
	if (CV_UNLIKELY(outer && (cv__deferred_signals | (uint64_t)cv__snapshot_pending)))
		cv__deferred_run();
}

/* Opens the guard the thread is in, if any (above); returns what
 * cv__guard_close puts back. */
static inline unsigned cv__guard_open_quiet(void)
{
	unsigned was = cv__busy & CV_GUARD_OPEN;
	if (cv__busy)
		cv__busy |= CV_GUARD_OPEN;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return was;
}
/* The same, and releases what its closed stretch deferred. */
static inline unsigned cv__guard_open(void)
{
	unsigned was = cv__guard_open_quiet();
	cv__release_deferred();
	return was;
}
/* Puts back the open bit cv__guard_open found (was), before the guard's
 * leave: a guard inside an open one stays open. */
static inline void cv__guard_close(unsigned was)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	cv__busy = (cv__busy & ~CV_GUARD_OPEN) | was;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* The whole guard: the quiet one, errno saved and restored by the
 * outermost, the cancellation type deferred inside it and restored last.
 * Returns the thread's state, NULL for none. */
static inline struct cv_thread *cv__guard_enter(void)
{
	int err = errno;
	bool outer = cv__busy == 0;
	struct cv_thread *saved = cv__guard_enter_quiet();
	if (outer) {
		cv__guard_errno = err;
		pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &cv__guard_cancel_type);
	}
	return saved == CV_INERT ? NULL : saved;
}
static inline void cv__guard_leave(struct cv_thread *saved)
{
	bool outer = (cv__busy & ~CV_GUARD_OPEN) == 1;
	bool async = outer && cv__guard_cancel_type == PTHREAD_CANCEL_ASYNCHRONOUS;
	if (outer)
		errno = cv__guard_errno;
	cv__guard_leave_quiet(saved);
	if (async)
		pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
}

/* ---- lockorder.c: held locks, lock-order edges, blocked waits -------------- *
 * (docs/profile-format.md, "Lock order"). Around every mutex, rwlock and
 * spinlock acquisition: cv__lock_attempt before a call that may block (it does
 * nothing unless the thread already holds a lock), cv__held_push after any
 * success, cv__held_pop before the unlock. */

/* The lock-order edges into o from each lock t holds, looked up (a new
 * one recorded with the call stack). Returns the hash of the held set as
 * the lookup read it, slot by slot (cv__held_hash's), for the fast paths'
 * memo (cv__order_checked); 0 when it did not look up the edges from
 * every lock of it: a slot being filled, a lock not known, no edge table. */
uint64_t cv__lockorder_attempt(struct cv_thread *t, struct cv_obj *o, const void *pc, uint32_t flags);
void cv__held_overflow(struct cv_thread *t);
void cv__lockorder_after_fork(void);   /* init.c: in the child */
void cv__held_forget(struct cv_thread *t, const void *addr);   /* a destroy or init of the lock at addr */
void cv__held_release_slow(struct cv_thread *t, const void *addr);
void cv__lockorder_write(void *w);                                /* output.c: after the threads */
uint32_t cv__dumped(uint32_t id);   /* output.c: the object's index in the profile being written, or UINT32_MAX */
/* output.c: the index in the profile being written of the thread whose
 * cv_thread.index this is; the merged threads' row for one merged since;
 * else (not running at the snapshot, or made since) UINT32_MAX. */
uint32_t cv__thread_dumped(uint32_t index);
void cv__lockorder_write_thread(void *w, const struct cv_thread *t);   /* output.c: in write_thread */

static inline void cv__lock_attempt(struct cv_thread *t, struct cv_obj *o, const void *pc, uint32_t flags)
{
	if (CV_UNLIKELY(t->nheld != 0))
		cv__lockorder_attempt(t, o, pc, flags);
}

/* The hash of a held set plus o, from the set's hash (below). Object ids,
 * not addresses: a freed object's memory may come back as another. */
static inline uint64_t cv__held_mix(uint64_t below, const struct cv_obj *o)
{
	uint64_t h = (below ^ ((uint64_t)o->id + 1)) * 0x9E3779B97F4A7C15ull;
	return h ^ (h >> 29);
}

/* The hash of slot k and every slot below it: of exactly the objects in
 * them, in order, or 0 when that is not known. Slot 0's is its object's
 * held_seed, not stored (one store less on every first push). 0 while the
 * slot is being filled or moved (its obj NULL: a signal handler
 * interrupted a push or cv__held_release_slow; obj is read first, and
 * both set it last), and in a slot pushed above such a slot
 * (cv__held_prefix), so that a set is never taken for one that had
 * another lock in its place: no memo is recorded or met with a hash of 0
 * (cv__order_checked, cv__order_unchecked). */
static inline uint64_t cv__held_hash(const struct cv_thread *t, uint32_t k)
{
	const struct cv_obj *o = CV_LOAD(&t->held[k].obj);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!o)
		return 0;
	return k != 0 ? CV_LOAD(&t->held[k].prefix) : CV_LOAD(&o->held_seed);
}

/* The hash of a held set of n slots whose hash is below (none when n is
 * 0) plus o; 0, not known, when below is. */
static inline uint64_t cv__held_hash_over(uint64_t below, uint32_t n, const struct cv_obj *o)
{
	if (n == 0)
		return CV_LOAD(&o->held_seed);
	return below ? cv__held_mix(below, o) : 0;
}

/* The hash of the held set t->held[0..n-1] plus o (0: not known). */
static inline uint64_t cv__held_prefix(const struct cv_thread *t, uint32_t n, const struct cv_obj *o)
{
	return cv__held_hash_over(n != 0 ? cv__held_hash(t, n - 1) : 0, n, o);
}

/* Gives a new object its id, and the hash of a held set of it alone: the
 * first push (cv__held_push_first) reads it from the object's read-mostly
 * line instead of computing it. */
static inline void cv__obj_number(struct cv_obj *o, uint32_t id)
{
	o->id = id;
	o->held_seed = cv__held_mix(0, o);
}

/* Fills slot n (n < CV_HELD_MAX, n == t->nheld; prefix: its hash,
 * cv__held_prefix, not stored for slot 0: cv__held_hash). The slot is claimed before it is filled: a signal
 * handler that locks in between pushes above it, and skips it (and its
 * memo) while its obj is NULL. */
static inline void cv__held_fill(struct cv_thread *t, uint32_t n, struct cv_obj *o, const void *addr,
				 const void *pc, uint32_t flags, uint64_t prefix)
{
	struct cv_held *h = &t->held[n];
	CV_STORE(&h->obj, NULL);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	CV_STORE(&t->nheld, n + 1);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (n != 0)
		CV_STORE(&h->prefix, prefix);
	h->key = cv__held_key(addr, flags);
	h->pc = pc;
	h->sp_flags = (cv__sp() & ~(uintptr_t)CV_HELD_FLAGS_MASK) | (flags & CV_HELD_FLAGS_MASK);
	CV_STORE(&h->obj, o);
}

static inline void cv__held_push_at(struct cv_thread *t, uint32_t n, struct cv_obj *o, const void *addr,
				    const void *pc, uint32_t flags)
{
	cv__held_fill(t, n, o, addr, pc, flags, cv__held_prefix(t, n, o));
}

/* The push of a thread that holds no lock (t->nheld == 0). */
static inline void cv__held_push_first(struct cv_thread *t, struct cv_obj *o, const void *addr, const void *pc,
				       uint32_t flags)
{
	cv__held_fill(t, 0, o, addr, pc, flags, 0);
}

static inline void cv__held_push(struct cv_thread *t, struct cv_obj *o, const void *addr, const void *pc,
				 uint32_t flags)
{
	uint32_t n = t->nheld;
	if (CV_UNLIKELY(n == CV_HELD_MAX)) {
		cv__held_overflow(t);
		return;
	}
	cv__held_push_at(t, n, o, addr, pc, flags);
}

static inline void cv__held_pop(struct cv_thread *t, const void *addr)
{
	uint32_t n = t->nheld;
	if (CV_LIKELY(n != 0 && cv__held_is(&t->held[n - 1], addr) && !t->held_untracked))
		CV_STORE(&t->nheld, n - 1);
	else if (n != 0)
		cv__held_release_slow(t, addr);
}

/* For the unlocks past the fast ones (mutex.c, spin.c, rwlock.c): zero
 * exactly when addr is the top of t's held set (n == t->nheld), pushed
 * without CV_HELD_FAST_UNLOCK (one pushed with it is the fast unlock's
 * own test), and every lock t holds is tracked, so that the pop is one
 * store of n - 1. Branch-free: with n == 0 it reads the last slot, and
 * the n == 0 term says no. */
static inline uintptr_t cv__held_not_top(const struct cv_thread *t, uint32_t n, const void *addr)
{
	return (n == 0) | t->held_untracked | (t->held[(n - 1) % CV_HELD_MAX].key ^ cv__held_key(addr, 0));
}

/* For the fast unlocks (mutex.c, spin.c, rwlock.c): zero exactly when addr
 * is the top of t's held set (n == t->nheld), pushed with
 * CV_HELD_FAST_UNLOCK: the one test of its family's fast unlock. An empty
 * set's n - 1 reads the last slot: the n == 0 term says no. */
static inline uintptr_t cv__held_not_fast_top(const struct cv_thread *t, uint32_t n, const void *addr)
{
	return (n == 0) | (CV_LOAD(&t->held[(n - 1) % CV_HELD_MAX].key) ^ cv__held_key(addr, CV_HELD_FAST_UNLOCK));
}

/* For the fast lock of a thread that holds n > 0 locks (mutex.c,
 * locked_holding_lock; rwlock.c, rw_locked_held; spin.c,
 * spin_locked_held): zero exactly when taking o needs no lock-order lookup,
 * o's edges from this very held set having been looked up before
 * (cv__order_checked: a memo on the top slot is the hash of the set plus
 * o, so a loop that takes A, then B, then lets both go finds it again
 * each time; three memos, so that a loop that takes B, C and D in turn
 * under A does too: OpenSSL 3 under node, 320,000 lookups as it starts),
 * and the held set has room. The newest memo is tested first. *prefix: the
 * hash of the set plus o, the slot's hash once o is pushed
 * (cv__held_fill's prefix): the held slots stay as they are while this
 * thread holds them, so it is made once for both. */
static inline uintptr_t cv__order_unchecked(const struct cv_thread *t, uint32_t n, const struct cv_obj *o,
					    uint64_t *prefix)
{
	const struct cv_held *top = &t->held[(n - 1) % CV_HELD_MAX];
	uint64_t hash = cv__held_hash(t, (n - 1) % CV_HELD_MAX);
	*prefix = cv__held_mix(hash, o);
	const uint64_t *keys = top->checked_keys;
	uintptr_t unchecked = CV_LOAD(&keys[0]) != *prefix;   /* the newest: a loop of one lock under the set */
	if (CV_UNLIKELY(unchecked))
		unchecked = (CV_LOAD(&keys[1]) != *prefix) & (CV_LOAD(&keys[2]) != *prefix);
	return (n >> CV_HELD_BITS) | unchecked |
	       (hash == 0);   /* a slot being filled or moved (a signal handler is running), or not known */
}

/* An acquisition of o that can wait just had its lock-order edges looked
 * up (cv__lockorder_attempt) from the held set whose hash is `looked`, as
 * the lookup read it: remember it on the top slot, keyed by that hash plus
 * o, the oldest of its three memos dropped. The key names what was looked
 * up, however signal handlers changed the set meanwhile (one that returned
 * holding a lock, or having released one, or both in turn): a memo from
 * the set before the lookup, or after it, would claim edges from a lock it
 * never read. Stored only on a top slot whose set has that hash (none
 * when the lookup was not whole, or locks went untracked); each store
 * writes a true key, so a handler that records another memo here in
 * between leaves true ones. */
static inline void cv__order_checked(struct cv_thread *t, const struct cv_obj *o, uint64_t looked)
{
	uint32_t n = CV_LOAD(&t->nheld);
	if (!looked || n == 0 || t->held_untracked || cv__held_hash(t, n - 1) != looked)
		return;
	uint64_t *keys = t->held[n - 1].checked_keys;
	CV_STORE(&keys[2], CV_LOAD(&keys[1]));
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	CV_STORE(&keys[1], CV_LOAD(&keys[0]));
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	CV_STORE(&keys[0], cv__held_mix(looked, o));
}

/* cv__lock_attempt for an acquisition that did not wait, taken off a fast
 * path that keeps the lock-order memo (cv__order_unchecked): the edges
 * are looked up, and remembered on the held set, so that the fast path
 * takes the next acquisition of o on top of the same set. Not when the
 * memo has them already: the fast path was left for another reason (a
 * record not in the thread's cache, an owner change, a hold-time sample),
 * and a program whose locks outnumber the cache's entries comes here for
 * many of its acquisitions (node 20's OpenSSL read locks: 263,000
 * lookups a run before, 32,000 since; docs/performance.md, "Rwlocks,
 * spinlocks and futex words in turn"). */
static inline void cv__lock_attempt_remembered(struct cv_thread *t, struct cv_obj *o, const void *pc, uint32_t flags)
{
	uint32_t n = t->nheld;
	uint64_t prefix;
	if (CV_UNLIKELY(n != 0) && cv__order_unchecked(t, n, o, &prefix))
		cv__order_checked(t, o, cv__lockorder_attempt(t, o, pc, flags));
}

/* A blocking wait on o begins (contended paths only) and ends. since:
 * the waiting frame's own start time, a local of the caller's that keeps
 * its value until the wait returns (its address escapes here, so it
 * stays in the frame's memory). */
static inline void cv__wait_begin(struct cv_thread *t, struct cv_obj *o, struct cv_obj *mutex, uint32_t flags,
				  const void *pc, const uint64_t *since)
{
	t->waiting_mutex = mutex;
	t->waiting_flags = flags;
	t->waiting_pc = pc;
	t->waiting_since_ns = *since;
	t->waiting_since_at = since;
	__atomic_store_n(&t->waiting_obj, o, __ATOMIC_RELEASE);
}

static inline void cv__wait_end(struct cv_thread *t)
{
	CV_STORE(&t->waiting_obj, NULL);
}

/* ---- clock.c ---------------------------------------------------------------- */

/* Every clock the shim reads, through the C library's clock_gettime, else
 * the system call (cv__real.clock_gettime says why). */
static inline int cv__clock_gettime(clockid_t clock, struct timespec *ts)
{
	int (*libc)(clockid_t, struct timespec *) = CV_LOAD(&cv__real.clock_gettime);
	if (CV_LIKELY(libc != NULL))
		return libc(clock, ts);
	return (int)cv__sys(SYS_clock_gettime, clock, (long)ts, 0, 0);
}

/* A clock in ns (0 where the kernel refuses it). */
static inline uint64_t cv__clock_ns(clockid_t clock)
{
	struct timespec ts = { 0, 0 };
	cv__clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t cv__now_ns(void)
{
	return cv__clock_ns(CLOCK_MONOTONIC);
}

/* Hold-time samples and OpenMP lock waits (gomp.c) use the TSC (about 10
 * ns here, against 22 for clock_gettime); output.c calibrates ticks against
 * CLOCK_MONOTONIC over the whole run, gomp.c over the run so far.
 * Elsewhere ticks are nanoseconds. */
static inline uint64_t cv__ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	return cv__now_ns();
#endif
}

/* CLOCK_MONOTONIC and the TSC at one moment: the TSC read on either side
 * of the clock and taken at the midpoint. False, with both set all the
 * same, when the two TSC reads lie more than CV_CLOCK_PAIR_GAP ticks
 * apart (a preemption, an interrupt or a VM exit between them): a pair to
 * make a rate from only when true. */
#define CV_CLOCK_PAIR_GAP 20000u   /* 4 to 10 us at 2 to 5 GHz; a clean pair takes ~100 */
static inline bool cv__clock_pair(uint64_t *ns, uint64_t *ticks)
{
	uint64_t before = cv__ticks();
	*ns = cv__now_ns();
	uint64_t after = cv__ticks();
	*ticks = before + (after - before) / 2;
	return after >= before && after - before <= CV_CLOCK_PAIR_GAP;
}

void cv__record_wait(struct cv_rec *r, uint64_t ns);
/* The histogram bucket of a wait of ns (cv__record_wait's). */
static inline unsigned cv__wait_bucket(uint64_t ns)
{
	unsigned b = ns ? 63u - (unsigned)__builtin_clzll(ns) : 0;
	return b < CV_HIST_BUCKETS ? b : CV_HIST_BUCKETS - 1;
}
/* t's contended mutex acquisition whose wait is still to be counted, if
 * any, counted now (mutex.c): before t's next contended lock blocks, after
 * a slow unlock's release, at t's end, and before its record goes. */
void cv__wait_count_pending(struct cv_thread *t);
/* The profile's writer: s, t's stats of r as read, with t's pending wait
 * on r if one is pending (another thread's, read as it runs). */
void cv__wait_pending_into(const struct cv_thread *t, const struct cv_rec *r, struct cv_stats *s);
/* r's counters past its two lines, its wait histogram among them, made on
 * first need (objects.c; out of memory, a shared sink that is never
 * written out, asked again at the next count). */
struct cv_rec_more *cv__rec_more(struct cv_rec *r);
const struct cv_rec_more *cv__rec_more_kept(const struct cv_rec *r);   /* NULL: none to write */
/* The profile's writer: the object t's record r's counts are written
 * under (t NULL: an ended thread's row), r's own or, for a record of an
 * object merged past the cap that its thread has not folded yet
 * (objects.c, rec_retire), the kind's aggregate, where the fold would put
 * them. A record with wait stacks stays with its object (the file holds
 * one row per object, thread and stack), and so does one a wait still
 * uses (pinned, or the thread's wait in progress: the wait-for graph
 * names its object). */
struct cv_obj *cv__rec_written_under(const struct cv_thread *t, const struct cv_rec *r);
#define CV_NKINDS (CV_OBJ_FUTEX + 1)   /* object kinds, each with its aggregate */

/* ---- park.c: the cost of parking and waking --------------------------------- */

#define CV_WAKE_SIGNAL    1u
#define CV_WAKE_BROADCAST 2u

/* A waker found (or may have found) a waiter on o: stamp the object just
 * before the real wake, so a woken waiter always sees the stamp. */
void cv__wake_sent(struct cv_obj *o, uint32_t kind);
/* A blocking wait on r's object that began at t0 returned woken at now:
 * count one wake-up and its latency if a wake was sent after t0. */
void cv__woken(struct cv_rec *r, uint64_t t0, uint64_t now);
/* The same with the object's stamp read at now (sent), counted later. */
void cv__woken_at(struct cv_rec *r, uint64_t sent, uint64_t t0, uint64_t now);

/* ---- trace.c: trace mode (CONVOY_TRACE=1), slow paths only ----------------- */

extern bool cv__trace_on;                                 /* set once, by cv__init */
void cv__trace_init(void);                                /* cv__init: configuration */
void cv__trace_thread(struct cv_thread *t);               /* a new (or recycled) thread's ring */
void cv__trace_wait(struct cv_obj *o, uint64_t ns);       /* cv__record_wait */
void cv__trace_hold(struct cv_thread *t, struct cv_obj *o, uint64_t end_ticks, uint64_t ticks);
void cv__trace_wake(struct cv_obj *o, uint64_t stamp);    /* cv__wake_sent */
void cv__trace_woken(struct cv_obj *o, uint64_t stamp, uint64_t now);   /* cv__woken */
void cv__trace_write(void *w, struct cv_thread *t, double ns_per_tick); /* output.c */

/* ---- init.c: configuration and process-wide state ------------------------- */

/* Which perf_event_open counters to open (perf.c says why not all). */
enum cv_perf_mode { CV_PERF_OFF, CV_PERF_HW, CV_PERF_ALL };

struct cv_config {
	bool     quiet;              /* CONVOY_QUIET=1 */
	int      perf;               /* CONVOY_PERF: enum cv_perf_mode */
	uint32_t hold_period;        /* CONVOY_HOLD_SAMPLE, a power of two */
	char     dir[4096];          /* CONVOY_DIR made absolute at start; empty: none */
	pid_t    launcher_pid;       /* CONVOY_LAUNCHER_PID, set by convoy run and scale; 0: none */
};
extern struct cv_config cv__config;
void cv__config_read(void);          /* config.c, from cv__init */
/* CONVOY_<name> as 0 or 1 (unset or empty: dflt); any other value gets one
 * warning and dflt. */
bool cv__env_flag(const char *name, bool dflt);

/* CPU time, context switches and page faults, as getrusage counts them. */
struct cv_usage {
	uint64_t cpu_ns, voluntary_cs, involuntary_cs, minor_faults, major_faults;
};
/* thread.c: who's usage (RUSAGE_SELF, RUSAGE_THREAD) so far; false if the
 * kernel said no. cv__usage_since: u less the part before. */
bool cv__usage(int who, struct cv_usage *u);
void cv__usage_since(struct cv_usage *u, const struct cv_usage *before);

struct cv_process_state {
	int      ready;              /* initialised */
	int      disabled;           /* AT_SECURE, a failed start, a seccomp filter: cv__off */
	pid_t    pid;
	/* The parent the profile names: at the start, the kernel's (1 if the
	 * parent had already ended); in a fork child, the process that
	 * forked. Not getppid() at the write: a parent that ends first leaves
	 * its child to init. */
	pid_t    ppid;
	int      forked;
	/* SIGCHLD was ignored (SIG_IGN or SA_NOCLDWAIT) at the start or since,
	 * in this process or, for a fork child, its parent before the fork
	 * (one that ignored it may leave it so for the child): the kernel then
	 * reaps children, made any way, unseen (lifecycle.c, had_a_child). */
	int      sigchld_ignored;
	/* Forks between their prepare and parent (or child) steps, all
	 * threads' (init.c): no stack capture begins (stacks.c) and the shim
	 * takes no lock itself (real.c) while one is. */
	unsigned forking;
	uint64_t start_ns, start_realtime_ns, start_ticks;
	/* What the process and the thread that started the shim had used by
	 * then (init.c, start_clocks): the kernel's counts run from a task's
	 * birth and through exec, so an exec'd image's would include its
	 * predecessors' (a shell's loop before `exec prog`); the profile's
	 * are its own. In a fork child, whose tasks are new, what it used in
	 * its first steps (start_clocks runs in child_steps too). */
	struct cv_usage usage_before, thread_usage_before;
	char     comm[CV_NAME_MAX];
	char     exe[4096];
};
extern struct cv_process_state cv__process;

/* The shim is off: from the start (setuid, a failed start, a seccomp filter
 * already in place), or since the program installed a seccomp filter
 * (lifecycle.c), which may kill the process for any system call the program
 * does not make itself. Threads that had a state still reach the shim's
 * slow paths then; every one of those that would make a system call (a
 * thread's start and end, the allocator's mappings, the spin lock's yield,
 * a stack probe, the fork steps) asks this first and does without. */
static inline bool cv__off(void)
{
	return __atomic_load_n(&cv__process.disabled, __ATOMIC_ACQUIRE);
}

void cv__init(void);

/* ---- lifecycle.c: exec, _exit, quick_exit, fatal signals ------------------- */

void cv__lifecycle_init(void);   /* cv__init: CONVOY_FOLLOW, fatal-signal handlers */

/* ---- perf.c: process-wide perf_event_open counters ------------------------ */

void cv__perf_open(void);
uint32_t cv__perf_read(uint64_t values[CV_PERF_MAX], int *error);   /* valid mask */
void cv__perf_after_fork(void);

/* ---- output.c ------------------------------------------------------------- */

/* Once per process (a fork child's and a retracted profile aside): true when
 * this call published the profile. Every step is async-signal-safe (system
 * calls, and formatting that neither locks nor allocates) except a re-read of
 * the module map, done only for the destructor's reasons. */
bool cv__write_profile(uint32_t exit_reason);
/* Bytes the program will still write to the profile's filesystem after
 * the profile (its buffered stdout and stderr at a normal end): the
 * profile is published only where that much room is left after it. */
void cv__profile_leave_room(uint64_t bytes);
/* A profile is being written. Its writer walks threads, records, objects
 * and their stack lists without locks, so nothing it may reach is freed or
 * recycled meanwhile: what would be is kept instead (a write is rare and
 * short). Either the writer's snapshot, taken after it announced itself,
 * misses what the caller unlinked before asking, or the caller sees it. */
bool cv__profile_writing(void);
/* A snapshot profile of the process as it is now, convoy-<comm>-<pid>.hang
 * (exit reason CV_EXIT_HANG_SNAPSHOT), written on convoy's request at a hang
 * (lifecycle.c) while cv__snapshot_pending is raised (by the caller: a
 * request during the write gets one more after it; several at once, one);
 * the process goes on and its end still writes its profile. Async-signal-safe like cv__write_profile's other ends. Nothing is
 * written once the profile is (or while an exec's is in flight), nor while
 * the thread's stack is short of room (the request stays pending). */
bool cv__write_snapshot(void);
/* An exec that failed: the profile it wrote is removed and the next end of
 * the process writes the whole run again. */
void cv__profile_retract(void);
/* The process is about to die without writing (a fatal signal in a thread
 * that cannot write). If another thread is writing the profile, this waits
 * while that write makes progress; if this thread was writing (the crash is
 * in the writer) or the write stalls for 2 s, the temporary file is removed. */
void cv__profile_settle(void);
/* One record into the profile being written (w: the writer output.c passes to
 * the functions below): the fixed struct, then up to two tails. */
void cv__put_record(void *w, uint32_t type, const void *fixed, size_t fixed_len,
		    const void *tail1, size_t len1, const void *tail2, size_t len2);

/* ---- stacks.c: call stacks with the unwinder linked in (profile-format.md) - *
 * Only ever on slow paths. Any wrapper that times a wait adds one line after
 * cv__record_wait. */
/* Whether the stack this thread is on (its own, an alternate signal stack,
 * another) has need bytes below sp (stacks.c; past 16 KiB, CV_ROOM_MAX,
 * only on a stack whose bounds are known). */
bool cv__stack_room(const struct cv_thread *t, uintptr_t sp, size_t need);
/* Raised once the program has asked for an alternate signal stack
 * (signals.c): until then no thread of it runs on one. */
extern int cv__altstacks;
static inline void cv__altstack_coming(void)
{
	__atomic_store_n(&cv__altstacks, 1, __ATOMIC_RELAXED);
}
/* Raised once the program may have set one with SS_AUTODISARM (signals.c;
 * any raw SYS_sigaltstack, futex.c): the kernel reports none while a
 * handler runs on such a stack, and only the trampoline's note (signals.c,
 * note_disarmed_stack) says where it is. A handler no trampoline runs
 * (installed with a raw rt_sigaction) leaves no note, and the stack may be
 * carved from the thread's own: alloc.c's room_here then trusts no bounds. */
extern int cv__altstacks_autodisarm;
static inline void cv__altstack_autodisarm(void)
{
	__atomic_store_n(&cv__altstacks_autodisarm, 1, __ATOMIC_RELAXED);
}
#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31)   /* linux/signal.h's, whose header conflicts with glibc's signal.h */
#endif
void cv__stacks_init(void);                          /* cv__init: configuration, the module map */
void cv__stack_on_wait(struct cv_thread *t, struct cv_rec *r, uint64_t wait_ns);
void cv__stack_first_use(struct cv_thread *t, struct cv_obj *o);   /* objects.c */
/* lockorder.c, a new lock-order edge: the stack now (0: none), and the
 * stacks the nheld locks held were taken in (held_ids; stacks.c says how
 * they are found). Inside the guard. */
uint32_t cv__stack_capture_held(struct cv_thread *t, const struct cv_held *held, const uint8_t *which, uint32_t n,
				uint32_t *held_ids);
void cv__stack_forget(const void *addr);             /* objects.c: destroy or re-init */
void cv__stacks_write_rec(void *w, const struct cv_rec *r);   /* output.c: after r's stats */
void cv__stacks_write(void *w);                      /* output.c: last, the stack table */
void cv__stacks_fork_wait(void);     /* fork, cv__process.forking raised: no capture in flight */
void cv__stacks_after_fork(void);
void cv__stacks_thread_end(struct cv_thread *t);      /* its unwind buffer goes back */
void cv__stacks_merge_rec(struct cv_rec *dst, struct cv_rec *src);   /* src's per-stack waits into dst */

/* ---- modules.c: the module map, kept across dlopen/dlclose --------------- */

uint32_t cv__modules_refresh(uint64_t *loads);    /* re-read if anything was loaded or unloaded; the generation */
uint32_t cv__modules_gen(void);   /* the last generation read, without a look */
void cv__modules_write(void *w, bool reread);   /* output.c: every module ever seen; reread: look at
						 * what is mapped now (takes the loader's lock) */
void cv__modules_after_fork(void);

/* ---- messages ------------------------------------------------------------- */

/* config.c: one "convoy: " line on fd 2, unless quiet or fd 2 is no longer
 * the file it was at start; at most 10 per process. */
void cv__warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cv__say(const char *line, size_t len);   /* a whole line, under the same rule */
bool cv__stderr_is_terminal(void);   /* config.c */

#endif /* CONVOY_SHIM_H */
