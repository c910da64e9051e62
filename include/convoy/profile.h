/* convoy/profile.h — the profile file format, shared by the shim (writer) and the
 * analyzer (reader). docs/profile-format.md explains it in prose; this header is
 * the definition. Little-endian, the byte order of the machine that wrote it.
 *
 *   file   := file_header record* end_record
 *   record := cv_rec_header payload (payload padded to 8 bytes)
 *
 * Every record's payload starts with its fixed struct below; some carry a
 * variable tail (strings, build-id bytes) whose length is given in the struct.
 * The record header says how long the fixed struct is, so structs can grow at
 * the end within a version: a reader uses the fields it knows (zero when the
 * writer's struct was shorter) and finds the tail after the writer's struct.
 * A reader skips record types it does not know. The end record carries
 * the number of records before it and the CRC-32 (zlib) of every byte before it,
 * so truncation and corruption are both detected.
 *
 * CV_PROFILE_VERSION changes when an existing field changes meaning or moves; a
 * reader rejects files whose version is newer than its own.
 */
#ifndef CONVOY_PROFILE_H
#define CONVOY_PROFILE_H

#include <stdint.h>

#define CV_PROFILE_MAGIC   "CONVOYPF"     /* 8 bytes, no terminator stored */
#define CV_PROFILE_VERSION 1u
#define CV_PROFILE_EXT     "convoy"       /* convoy-<comm>-<pid>.convoy */
#define CV_SNAPSHOT_EXT    ".hang"        /* convoy-<comm>-<pid>.hang: a snapshot at a hang, same format */

#define CV_HIST_BUCKETS 40   /* wait_hist[i] counts waits of [2^i, 2^(i+1)) ns; i=0 also holds 0 ns */
#define CV_NAME_MAX     16   /* thread names, as the kernel's comm */

struct cv_file_header {
	char     magic[8];
	uint32_t version;
	uint32_t header_size;        /* sizeof(struct cv_file_header) */
	uint64_t flags;              /* none defined yet */
};

struct cv_rec_header {
	uint32_t type;               /* enum cv_rec_type */
	uint32_t size;               /* payload bytes that follow, a multiple of 8 */
	uint32_t fixed;              /* bytes of the payload's fixed struct; its tail starts here */
	uint32_t pad;
};

/* X-macro: record type, value, name. */
#define CV_REC_TYPES(X)          \
	X(CV_REC_PROCESS, 1, "process") \
	X(CV_REC_MODULE,  2, "module")  \
	X(CV_REC_OBJECT,  3, "object")  \
	X(CV_REC_STATS,   4, "stats")   \
	X(CV_REC_THREAD,  5, "thread")  \
	X(CV_REC_COUNTER, 6, "counter") \
	X(CV_REC_STACK,   7, "stack")   \
	X(CV_REC_STACK_WAIT, 8, "stack_wait") \
	X(CV_REC_LOCK_ORDER, 9, "lock_order") \
	X(CV_REC_LOCK_EDGE, 10, "lock_edge") \
	X(CV_REC_THREAD_STATE, 11, "thread_state") \
	X(CV_REC_TRACE,   12, "trace")  \
	X(CV_REC_END,     0x7fffffff, "end")

enum cv_rec_type {
#define CV_X(sym, val, name) sym = val,
	CV_REC_TYPES(CV_X)
#undef CV_X
};

/* Why the process wrote its profile. */
#define CV_EXIT_REASONS(X)                                   \
	X(CV_EXIT_UNKNOWN,       0, "unknown")                    \
	X(CV_EXIT_NORMAL,        1, "returned from main or called exit()") \
	X(CV_EXIT_LAST_THREAD,   2, "last thread called pthread_exit()") \
	X(CV_EXIT_EXEC,          3, "called exec (this profile covers the image it replaced)") \
	X(CV_EXIT_UNDERSCORE,    4, "called _exit() or _Exit()")      \
	X(CV_EXIT_QUICK,         5, "called quick_exit()")            \
	X(CV_EXIT_SIGSEGV,       6, "killed by SIGSEGV")              \
	X(CV_EXIT_SIGBUS,        7, "killed by SIGBUS")               \
	X(CV_EXIT_SIGABRT,       8, "killed by SIGABRT (abort)")      \
	X(CV_EXIT_SIGFPE,        9, "killed by SIGFPE")               \
	X(CV_EXIT_SIGILL,       10, "killed by SIGILL")              \
	X(CV_EXIT_DUMP_SIGNAL,  11, "stopped by convoy run/scale (CONVOY_DUMP_SIGNAL: --timeout, the watchdog, or a signal convoy passed on)") \
	X(CV_EXIT_HANG_SNAPSHOT, 12, "snapshot at a hang; the program went on (convoy run/scale, --on-hang auto or continue)") \
	X(CV_EXIT_SNAPSHOT_SIGNAL, 13, "killed by CONVOY_SNAPSHOT_SIGNAL sent without convoy's mark") \
	X(CV_EXIT_SECCOMP,      14, "installed a seccomp filter (the profile covers the run up to it; nothing after is recorded)") \
	X(CV_EXIT_DUMP_SIGNAL_SENT, 15, "killed by CONVOY_DUMP_SIGNAL (SIGTERM under convoy run/scale) from another process or itself, not from convoy")

/* The sigqueue value that marks CONVOY_SNAPSHOT_SIGNAL as convoy's request for
 * a snapshot profile (docs/lifecycle.md); the signal sent any other way has
 * its default action. */
#define CV_SNAPSHOT_MAGIC 0x636f6e76   /* "conv" */

enum cv_exit_reason {
#define CV_X(sym, val, text) sym = val,
	CV_EXIT_REASONS(CV_X)
#undef CV_X
};

/* Process-wide perf_event_open counters (docs/performance.md says why they
 * are process-wide): name, type, config, whether it needs a hardware PMU. */
#define CV_PERF_EVENTS(X)                                                                      \
	X(CV_PERF_TASK_CLOCK,   "task_clock_ns",    PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 0)       \
	X(CV_PERF_CTX_SWITCHES, "context_switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 0) \
	X(CV_PERF_MIGRATIONS,   "cpu_migrations",   PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 0)   \
	X(CV_PERF_PAGE_FAULTS,  "page_faults",      PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 0)      \
	X(CV_PERF_CYCLES,       "cycles",           PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 1)       \
	X(CV_PERF_INSTRUCTIONS, "instructions",     PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 1)     \
	X(CV_PERF_CACHE_REFS,   "cache_references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, 1) \
	X(CV_PERF_CACHE_MISSES, "cache_misses",     PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, 1)     \
	X(CV_PERF_LLC_LOAD_MISSES, "llc_load_misses", PERF_TYPE_HW_CACHE,                                  \
	  (PERF_COUNT_HW_CACHE_LL | (PERF_COUNT_HW_CACHE_OP_READ << 8) | (PERF_COUNT_HW_CACHE_RESULT_MISS << 16)), 1)

enum cv_perf_event {
#define CV_X(sym, name, type, config, hw) sym,
	CV_PERF_EVENTS(CV_X)
#undef CV_X
	CV_PERF_COUNT
};
#define CV_PERF_MAX 16

/* The shim's cap of (object, thread) records: uses past it are counted
 * only in cv_process.uses_unrecorded. */
#define CV_RECORDS_MAX 262144u

/* CV_REC_PROCESS: exactly one, first. Tail: cmdline (args separated by NUL,
 * cmdline_len bytes) then exe path (exe_len bytes, no terminator). */
struct cv_process {
	int32_t  pid, ppid;
	uint64_t start_realtime_ns;  /* CLOCK_REALTIME when the shim started */
	uint64_t start_ns, end_ns;   /* CLOCK_MONOTONIC: shim start, profile write */
	uint32_t exit_reason;        /* enum cv_exit_reason */
	uint32_t hold_sample_period; /* hold time measured on 1 in this many acquisitions */
	uint32_t nthreads, nobjects;
	uint32_t forked;             /* 1: this process is a fork child; start_ns is the fork */
	uint32_t cmdline_len, exe_len;
	/* Uses (lock calls, waits, ...) of objects by threads that had no
	 * record of them once the shim's cap of (object, thread) records
	 * (CV_RECORDS_MAX) was reached: not counted anywhere else (at most
	 * UINT32_MAX; 0 in profiles written before 2026-12-06). */
	uint32_t uses_unrecorded;
	char     comm[CV_NAME_MAX];
	uint32_t ncpus;              /* CPUs online */
	uint32_t cpus_allowed;       /* CPUs in the process's affinity mask */
	uint32_t perf_valid;         /* bit e: perf[e] was counted */
	int32_t  perf_error;         /* errno from opening a hardware counter; 0 if counted */
	uint64_t perf[CV_PERF_MAX];  /* enum cv_perf_event: totals over every thread */
	/* getrusage(RUSAGE_SELF) as the write begins (so are perf[]): every
	 * thread, including exited ones. */
	uint64_t cpu_ns;
	uint64_t voluntary_cs, involuntary_cs;
	uint64_t minor_faults, major_faults;
	/* Uses of objects the shim counted only in part, or not at all, for
	 * want of memory (its mmap refused: an address-space limit, the
	 * machine's memory), at least: each use that found no record made,
	 * and each record whose counters of waits, wakes and failed trylocks
	 * could not be made, once (its later uses may have been counted in
	 * part too). At most UINT32_MAX; 0 in profiles written before
	 * 2026-12-07. */
	uint32_t uses_without_memory;
	uint32_t pad;
};

/* CV_REC_MODULE: one per object the shim ever saw loaded (at start, after a
 * dlopen, at write time; docs/profile-format.md "Modules"). Addresses in the
 * process map to file addresses as addr - load_bias. Tail: build-id bytes
 * (build_id_len), then path (path_len, no terminator; empty for the vdso).
 *
 * The module map has generations: it starts at 0 and goes up by one each time
 * the shim finds modules gone (dlclose), so an address range reused by a later
 * library is told apart. A module was mapped for generations map_gen <= g <
 * unload_gen (unload_gen 0: still mapped at write time); stacks and objects
 * carry the generation they were recorded in. */
struct cv_module {
	uint64_t load_bias;          /* dl_iterate_phdr's dlpi_addr */
	uint64_t start, end;         /* lowest and highest address of its PT_LOAD segments */
	uint32_t build_id_len, path_len;
	uint32_t is_main;            /* the executable */
	uint32_t pad;
	uint32_t map_gen;            /* generation in which it was first seen */
	uint32_t unload_gen;         /* generation in which it was found gone; 0: still loaded */
};

/* Object kinds and mutex properties. */
#define CV_OBJ_KINDS(X)            \
	X(CV_OBJ_UNKNOWN, 0, "unknown") \
	X(CV_OBJ_MUTEX,   1, "mutex")   \
	X(CV_OBJ_COND,    2, "condvar")   \
	X(CV_OBJ_RWLOCK,  3, "rwlock")    \
	X(CV_OBJ_SPIN,    4, "spinlock")  \
	X(CV_OBJ_BARRIER, 5, "barrier")   \
	X(CV_OBJ_SEM,     6, "semaphore") \
	X(CV_OBJ_FUTEX,   7, "futex")

enum cv_obj_kind {
#define CV_X(sym, val, name) sym = val,
	CV_OBJ_KINDS(CV_X)
#undef CV_X
};

/* cv_object.flags for mutexes: the type (low 2 bits, as PTHREAD_MUTEX_*) and: */
#define CV_MUTEX_TYPE_MASK  0x3u  /* 0 normal, 1 recursive, 2 errorcheck, 3 adaptive */
#define CV_MUTEX_ROBUST     0x10u
#define CV_MUTEX_PI         0x20u
#define CV_MUTEX_PP         0x40u
#define CV_MUTEX_PSHARED    0x80u
#define CV_MUTEX_C11        0x100u /* used through C11 mtx_* (glibc's mtx_t is a pthread mutex) */

/* cv_object.flags for rwlocks: glibc's kind (PTHREAD_RWLOCK_PREFER_*) in the low 2 bits. */
#define CV_RWLOCK_KIND_MASK 0x3u   /* 0 prefer reader, 1 prefer writer, 2 prefer writer nonrecursive */

/* cv_object.flags for futexes: the values waits expected (FUTEX_WAIT's val). */
#define CV_FUTEX_WAIT_2     0x1u   /* a wait expected 2: the "locked, contended" state of glibc's
				    * lowlevellock and Rust's std Mutex */
#define CV_FUTEX_WAIT_OTHER 0x2u   /* a wait expected another value: a sequence or park word */
#define CV_FUTEX_PI         0x4u   /* PI operations (FUTEX_LOCK_PI, ...) were used on it */

/* cv_object.flags for condvars. */
#define CV_COND_MUTEXES_VARY 0x1u  /* waits named more than one mutex: monitor is the last one */

/* CV_REC_OBJECT: one synchronisation object (one generation of one address).
 * Tail: the name given with convoy_name_object(), name_len bytes. */
struct cv_object {
	uint32_t id;                 /* referenced by cv_stats.object */
	uint32_t kind;               /* enum cv_obj_kind */
	uint64_t addr;
	uint32_t generation;         /* 0 for the first object at addr, +1 per re-init */
	uint32_t flags;              /* CV_MUTEX_* for mutexes */
	uint32_t retired;            /* destroyed (or re-initialised) before the write */
	uint32_t name_len;
	uint32_t first_stack;        /* cv_stack_rec.id of its init, else first use; 0: none */
	uint32_t map_gen;            /* module-map generation when it was created */
	/* Appended (a writer without it reads as 0): a condvar's monitor, the
	 * mutex its waits named (pthread_cond_wait(c, m)), as 1 + that mutex's
	 * cv_object.id; 0: never waited on, or not a condvar. */
	uint32_t monitor;
	uint32_t pad;
};

/* CV_REC_STATS: what one thread did to one object. Fields that do not apply to
 * the object's kind are zero. */
struct cv_stats {
	uint32_t object;             /* cv_object.id */
	uint32_t thread;             /* cv_thread.index */
	/* mutexes */
	uint64_t acquisitions;       /* successful lock, timedlock, clocklock, trylock */
	uint64_t contended;          /* acquisitions that found the lock held and waited */
	uint64_t trylocks;           /* the program's own trylock calls */
	uint64_t trylock_failures;   /* ... that returned EBUSY */
	uint64_t handoffs;           /* acquisitions whose previous owner was another thread */
	uint64_t hold_samples;       /* sampled acquisitions */
	uint64_t hold_ns;            /* their total hold time */
	uint64_t max_hold_ns;
	/* mutexes and condvars: time blocked */
	uint64_t waits;              /* mutex: times blocked (acquired or timed out); condvar: wait calls */
	uint64_t wait_ns;
	uint64_t max_wait_ns;
	uint64_t timeouts;           /* ETIMEDOUT from timed waits */
	/* condvars */
	uint64_t signals, broadcasts;   /* all of them (in the shim's memory, all but the _unwaited
	                                 * ones until it writes them: preload/output.c) */
	uint64_t signals_unwaited;   /* sent when no thread was waiting unsignalled */
	uint64_t broadcasts_unwaited;
	uint64_t wait_hist[CV_HIST_BUCKETS];
	/* Appended for rwlocks, spinlocks, semaphores, barriers, futexes and the
	 * cost of parking and waking (docs/profile-format.md has each kind's use). */
	/* rwlocks: the read side. acquisitions, contended, waits, wait_ns,
	 * max_wait_ns, timeouts above count both sides; write = total - read. */
	uint64_t rd_acquisitions, rd_contended, rd_waits, rd_wait_ns, rd_max_wait_ns;
	uint64_t wr_max_wait_ns;
	uint64_t wr_behind_readers;    /* write waits that began while only readers held the lock */
	uint64_t wr_behind_readers_ns; /* ... and their wait time */
	/* park/wake, on the waiter's side (condvars, semaphores, barriers, futexes) */
	uint64_t wakeups;              /* blocking waits that returned after a wake the shim saw sent */
	uint64_t wake_latency_ns;      /* sum over those of (waiter running again - wake sent) */
	uint64_t max_wake_latency_ns;
	uint64_t futile_wakes;         /* condvar: returned, then waited again without unlocking the mutex */
	uint64_t futile_after_broadcast; /* ... of those, woken while the last wake sent was a broadcast */
	uint64_t broadcast_woken;      /* condvar: waiters claimed by this thread's broadcasts (fan-out) */
	uint64_t interrupts;           /* EINTR returns (semaphores, futexes) */
	/* futexes (syscall(SYS_futex, ...)); signals / signals_unwaited above count
	 * FUTEX_WAKE-type calls and those that woke nobody */
	uint64_t futex_woken;          /* threads woken (the wake calls' return values) */
	uint64_t futex_eagain;         /* waits that returned EAGAIN: the word had changed, no sleep */
	uint64_t requeues, requeued;   /* FUTEX_(CMP_)REQUEUE calls; waiters they woke or moved */
	uint64_t pi_ops;               /* FUTEX_LOCK_PI, LOCK_PI2, TRYLOCK_PI, UNLOCK_PI, *_REQUEUE_PI */
	uint64_t wake_ops;             /* FUTEX_WAKE_OP calls (also counted in signals) */
	/* barriers */
	uint64_t rounds;               /* rounds this thread completed as the last arrival */
	uint64_t imbalance_ns;         /* sum over those rounds of (last arrival - first arrival) */
	uint64_t max_imbalance_ns;
};

/* cv_thread.flags */
#define CV_THREAD_MAIN        0x1u
#define CV_THREAD_EXITED      0x2u  /* finished before the profile was written */
#define CV_THREAD_DETACHED    0x4u
#define CV_THREAD_PTHREAD_EXIT 0x8u /* left through pthread_exit() */
#define CV_THREAD_UNTRACKED   0x10u /* not created through pthread_create under the shim */
#define CV_THREAD_RUNQ        0x20u /* run_delay_ns and timeslices were read */

/* CV_REC_THREAD: one per thread the shim saw. */
struct cv_thread_rec {
	uint32_t index;              /* 0 = the main thread (or the forking thread in a child) */
	int32_t  tid;
	int32_t  creator_tid;        /* 0 when unknown */
	uint32_t flags;              /* CV_THREAD_* */
	uint64_t start_routine;      /* address; 0 for the main thread */
	uint64_t create_ns;          /* time its creator spent inside pthread_create */
	uint64_t start_ns, end_ns;   /* CLOCK_MONOTONIC; end_ns = profile time if still running */
	uint64_t cpu_ns;
	uint64_t voluntary_cs, involuntary_cs;
	uint64_t join_wait_ns;       /* time this thread spent in pthread_join and friends */
	uint64_t joins;
	uint64_t threads_created;
	char     name[CV_NAME_MAX];
	/* From /proc/self/task/TID/schedstat and getrusage(RUSAGE_THREAD). */
	uint64_t run_delay_ns;       /* runnable but waiting for a CPU */
	uint64_t timeslices;         /* times it was scheduled onto a CPU */
	uint64_t minor_faults, major_faults;
};

/* CV_REC_COUNTER: an annotation-API value for one thread. Tail: name. */
#define CV_COUNTER_KINDS(X)          \
	X(CV_COUNTER_PROGRESS, 1, "progress") \
	X(CV_COUNTER_USER,     2, "counter")

enum cv_counter_kind {
#define CV_X(sym, val, name) sym = val,
	CV_COUNTER_KINDS(CV_X)
#undef CV_X
};

struct cv_counter {
	uint32_t thread;
	uint32_t kind;               /* enum cv_counter_kind */
	int64_t  value;
	uint32_t name_len;
	uint32_t pad;
};

/* CV_REC_STACK: one call stack; the shim keeps each distinct stack once.
 * Tail: depth program counters (uint64_t), innermost first, the shim's own
 * frames left out. Every pc is a return address (the instruction after a
 * call), so a reader looks up pc - 1 to find the calling line. */
#define CV_STACK_MAX_DEPTH 128
#define CV_STACK_TRUNCATED 0x1u      /* deeper than CV_STACK_MAX_DEPTH: the outermost frames are missing */
#define CV_STACK_PARTIAL   0x2u      /* a held lock's stack (cv_lock_edge.from_stack) whose function had
				      * returned: after the first pc, the frames live at the later acquisition */

struct cv_stack_rec {
	uint32_t id;                 /* 1..; 0 in other records means "no stack" */
	uint32_t depth;              /* pcs in the tail, 1..CV_STACK_MAX_DEPTH */
	uint32_t map_gen;            /* module-map generation it was captured in */
	uint32_t flags;              /* CV_STACK_* */
};

/* CV_REC_STACK_WAIT: one thread's waits on one object from one call stack.
 * Stacks are sampled (docs/profile-format.md "Stack sampling"): waits and
 * wait_ns are unbiased estimates, samples the waits actually captured. */
struct cv_stack_wait {
	uint32_t object;             /* cv_object.id */
	uint32_t thread;             /* cv_thread_rec.index */
	uint32_t stack;              /* cv_stack_rec.id; 0: sampled, but the stack could not be captured */
	uint32_t pad;
	uint64_t samples;            /* waits whose stack was captured */
	uint64_t waits;              /* estimated waits from this stack */
	uint64_t wait_ns;            /* estimated wait time from this stack */
};

/* Lock order (docs/profile-format.md, "Lock order"). The shim keeps each
 * thread's held locks (mutexes, rwlocks, spinlocks) and, the first time any thread
 * acquires lock B while holding lock A, an edge A -> B. A lock acquired with
 * a successful trylock adds no edge into it (it could not have blocked);
 * re-acquiring a lock the thread already holds adds none at all. */
#define CV_LOCK_READ 0x1u            /* held or acquired for reading (rwlock rdlock) */
#define CV_LOCK_TRY  0x2u            /* acquired by a trylock */
#define CV_WAIT_TIMED 0x4u           /* cv_thread_state: the wait has a deadline */

/* CV_REC_LOCK_ORDER: at most one, before the edges: what the tables missed. */
struct cv_lock_order {
	uint32_t edges;              /* edge records that follow */
	uint32_t edges_dropped;      /* first sightings not kept: the edge table was full */
	uint64_t held_overflows;     /* acquisitions past a thread's CV_HELD_MAX held locks: no edges from them */
};

/* CV_REC_LOCK_EDGE: thread `thread` acquired `to` while holding `from`, the
 * first time any thread did. */
struct cv_lock_edge {
	uint32_t from, to;           /* cv_object.id */
	uint32_t thread;             /* cv_thread_rec.index of the first thread seen doing it */
	uint32_t from_flags;         /* CV_LOCK_*: how `from` was held */
	uint32_t to_flags;           /* CV_LOCK_*: how `to` was acquired */
	uint32_t to_stack;           /* cv_stack_rec.id of the call that acquired `to`; 0: none */
	uint64_t from_pc;            /* return address of the call that acquired `from` */
	uint64_t to_pc;              /* return address of the call that acquired `to` */
	/* The stack `from` was acquired in, rebuilt from to_stack's frames that
	 * were live already then (docs/profile-format.md, "Lock order"; flag
	 * CV_STACK_PARTIAL when its function had returned). 0: none. */
	uint32_t from_stack;
	uint32_t pad;
};

/* CV_REC_THREAD_STATE: one per thread that held a lock or was blocked when the
 * profile was written (a hung program stopped by --timeout or a watchdog), in
 * a wait on an object or in a join. Tail: nheld struct cv_held_lock, oldest
 * first. */
struct cv_thread_state {
	uint32_t thread;             /* cv_thread_rec.index */
	uint32_t nheld;
	uint32_t held_untracked;     /* more locks held than the shim tracks (CV_HELD_MAX) */
	uint32_t waiting;            /* 1 + cv_object.id it is blocked on; 0: not blocked */
	uint32_t waiting_mutex;      /* blocked on a condvar: 1 + its mutex's id (released while it waits) */
	uint32_t waiting_flags;      /* CV_LOCK_READ: blocked in an rwlock rdlock; CV_WAIT_TIMED */
	uint64_t waiting_since_ns;   /* CLOCK_MONOTONIC when the wait began */
	uint64_t waiting_pc;         /* return address of the blocking call */
	/* Appended: blocked in pthread_join or pthread_timedjoin_np (0 in older
	 * profiles: not recorded). */
	int32_t joining_tid;         /* the kernel tid of the thread it joins; 0: not joining */
	uint32_t joining_flags;      /* CV_WAIT_TIMED: pthread_timedjoin_np */
	uint64_t joining_since_ns;   /* CLOCK_MONOTONIC when the join began */
	uint64_t joining_pc;         /* return address of the join call */
};

struct cv_held_lock {
	uint32_t object;             /* cv_object.id */
	uint32_t flags;              /* CV_LOCK_* */
	uint64_t pc;                 /* return address of the call that acquired it */
};

/* CV_REC_TRACE: one thread's trace events (trace mode, CONVOY_TRACE=1; docs/
 * profile-format.md "Trace"), after the thread's record. Tail: nevents events
 * of event_size bytes each, oldest first; event_size lets the event struct
 * grow at its end (a reader uses the fields it knows). The ring keeps the
 * newest `capacity` events: `dropped` older ones were overwritten. */
#define CV_TRACE_EVENTS(X)                                                            \
	X(CV_TRACE_WAIT,  1, "wait")   /* blocked on object for dur_ns, ending at ts_ns */  \
	X(CV_TRACE_HOLD,  2, "hold")   /* a sampled mutex hold of dur_ns, ending at ts_ns */ \
	X(CV_TRACE_WAKE,  3, "wake")   /* sent a signal, post or wake on object at ts_ns */ \
	X(CV_TRACE_WOKEN, 4, "woken")  /* returned woken at ts_ns by the wake stamped arg */

enum cv_trace_type {
#define CV_X(sym, val, name) sym = val,
	CV_TRACE_EVENTS(CV_X)
#undef CV_X
};

#define CV_TRACE_NO_OBJECT 0xffffffffu   /* the object was created after the profile's snapshot */

struct cv_trace_rec {
	uint32_t thread;             /* cv_thread_rec.index */
	uint32_t nevents;
	uint32_t event_size;         /* sizeof(struct cv_trace_event) of the writer */
	uint32_t capacity;           /* the ring's size in events */
	uint64_t dropped;            /* events overwritten because the ring was full */
	uint32_t hold_every;         /* 1 in this many hold samples is traced */
	uint32_t pad;
};

struct cv_trace_event {
	uint64_t ts_ns;              /* CLOCK_MONOTONIC */
	uint64_t dur_ns;             /* wait and hold: their length; 0 otherwise */
	uint64_t arg;                /* woken: the waker's wake stamp, equal to its wake event's ts_ns */
	uint32_t object;             /* cv_object.id, or CV_TRACE_NO_OBJECT */
	uint32_t type;               /* enum cv_trace_type */
};

/* CV_REC_END: last. crc32 covers every byte of the file before this record. */
struct cv_end {
	uint64_t records;            /* records before this one */
	uint32_t crc32;
	uint32_t pad;
};

#endif /* CONVOY_PROFILE_H */
