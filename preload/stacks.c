/* stacks.c — call stacks at contention and at each object's init or first
 * use, with the C runtime's unwinder. Only ever on slow paths: the
 * uncontended lock never comes here.
 *
 * Capture. _Unwind_Backtrace fills a per-thread buffer. Everything here
 * runs inside the reentrancy guard (shim.h): a change of the module map
 * takes the loader's lock (cv__modules_refresh, dl_iterate_phdr), and the
 * tables below take stack_lock and init_lock. The shim's own frames at the
 * top are dropped by address range. Each distinct (pcs, module-map
 * generation) is kept once in a hash table of shim memory: lookups take no
 * lock, an insert takes stack_lock. Unwinding that yields nothing gives
 * stack id 0.
 *
 * Sampling (docs/profile-format.md, "Stack sampling", has the estimator).
 * For each (object, thread): the first CONVOY_STACK_FIRST waits are always
 * captured with weight 1. After that a wait of w ns is captured with
 * probability p = min(1, w / T), T = CONVOY_STACK_PERIOD ns, and weighted by
 * 1/p: it adds 1/p to its stack's wait count and w/p = max(w, T) to its wait
 * time (Horvitz-Thompson), so per-stack totals are unbiased and long waits,
 * the ones that cost, are always kept. Expected captures after the first K
 * are at most (total wait) / T, which bounds the cost.
 *
 * A wait's stack is captured after the wait, while the caller holds the lock
 * it waited for (the wait's length decides whether to keep it): a capture
 * lengthens that critical section by its cost; docs/performance.md has it.
 *
 * The unwinder is libgcc's _Unwind_Backtrace, the one C++ exceptions and
 * glibc's own thread cancellation use. It follows the DWARF call-frame
 * information and stops where there is none; it never guesses, so it reads
 * only memory the unwind tables describe and needs no validation. It takes
 * nothing from the program: no file descriptor (libunwind 1.6 validated
 * memory through a pipe it opened at start-up, on descriptors a daemon that
 * closed them hands to its own files), no pthread key and no per-thread
 * cache (libunwind's unw_backtrace made one of each per thread). It is
 * linked into the shim from libgcc_eh.a, its symbols local (exports.map):
 * nothing is loaded into the program for it (libgcc_s.so.1, opened at
 * start-up before, cost 0.3-0.6 ms a process, its constructor's cpuid
 * included, and showed to a program that looked for it), and the
 * program's global scope stays as it was. It finds each frame's tables
 * with glibc's _dl_find_object, which takes no lock: libgcc 12 and glibc
 * 2.35 or later (Debian 12 has both; the Makefile checks). Built against
 * older ones it would fall back to dl_iterate_phdr, the loader's lock, in
 * every capture. The trade: unwind tables a JIT registers at run time
 * (__register_frame) go to the program's libgcc_s, not to the shim's copy,
 * so a stack through JIT-compiled code ends at its first such frame. The
 * unwinder's lookup of each frame's table is remembered (fde_table, below),
 * and an unwind stops at the first frame the thread's recent captures had
 * whose callers are still where they were (reuse_known): the rest is
 * copied.
 */
#include <errno.h>
#include <link.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <unwind.h>

#include "shim.h"

#define CV_STACK_BUF     (CV_STACK_MAX_DEPTH + 16)   /* room for the shim's own frames */
#define CV_STACK_LIMIT   65536        /* distinct stacks kept; more get id 0 */
#define CV_ACC_LIMIT     256          /* distinct stacks per (object, thread); more fold into id 0 */
/* 4096 chains, 32 KiB written at the first capture (a fresh page costs
 * about 10 us here: 16384 chains, a mapping of their own, cost pigz -p 2 a
 * fault on each of twenty random pages); 16 stacks a chain when the table
 * is full, each passed by its hash. */
#define STK_BUCKET_BITS  12
/* Init stacks waiting for the object's first use: 8-way sets, 16 at first
 * (2 KiB), four times as many when half the ways are taken, up to 4096. */
#define INIT_SETS_FIRST  16
#define INIT_SETS_MAX    4096
#define INIT_WAYS        8
#define FP_ONE           65536u       /* wait counts are kept in 1/65536ths */

#define CV_KEEP_MAX 64  /* a capture deeper than this is not kept for the next */
_Static_assert(CV_KEEP_MAX < CV_STACK_BUF, "a capture cut at CV_STACK_BUF is never kept");
/* The frames of the thread's recent captures (struct frame_node): a
 * capture whose frames would overflow the nodes empties them first. */
#define CV_KNOWN_NODES 256
#define CV_KNOWN_HEADS 256   /* hash chains, a power of two */
#define CV_KNOWN_NONE  0   /* nodes are numbered from 1: a zeroed state has none */
_Static_assert(CV_KEEP_MAX <= CV_KNOWN_NODES && CV_KNOWN_NODES < UINT16_MAX, "a kept capture fits the nodes");
_Static_assert(CV_KNOWN_HEADS > 1 && (CV_KNOWN_HEADS & (CV_KNOWN_HEADS - 1)) == 0, "hash heads: a power of two");

/* What a frame's function does with the frame pointer (rbp), for
 * known_still_live: FP_CHECK, its CFA is its frame pointer plus 16 and its
 * size may not be fixed by its pc (alloca, a variable-length array, or any
 * function of code built with frame pointers, outside the shim); FP_SAVED,
 * it saved its caller's frame pointer just below its return address (push
 * rbp; mov rsp, rbp: the shim's functions that call others, built with
 * frame pointers, and FP_CHECK's); FP_PASSED, it left its caller's in the
 * register. None: it
 * used the register for something else, its caller's saved where only the
 * unwinder knows. */
#define FP_CHECK  1u
#define FP_SAVED  2u
#define FP_PASSED 4u

/* One frame of a kept capture, as the unwinder reported it: the return
 * address into a function (pc) and the CFA of the function it called (as
 * its distance below the thread's stack top, known_top), where that
 * return address lies just below; the function's FP_* flags; and the frame
 * it returns into, its parent: a tree of the thread's recent stacks by
 * their outer frames. */
#define CV_KNOWN_BELOW_MAX ((1u << 29) - 1)   /* 512 MiB: a frame deeper in its stack is not kept */
struct frame_node {
	void    *pc;
	uint32_t cfa_below : 29;
	uint32_t fp : 3;
	uint16_t parent;   /* CV_KNOWN_NONE: the capture's outermost frame */
	uint16_t next;     /* the hash chain */
};

struct cv_stack_state {
	uint64_t rng;
	void    *pcs[CV_STACK_BUF];
	uintptr_t cfas[CV_STACK_BUF];   /* each frame's canonical frame address (held stacks, below) */
	/* The thread's stack (struct cv_thread's stack_lo and stack_hi), set
	 * by capture; 0: unknown. */
	uintptr_t stack_lo, stack_hi;
	uint8_t  fps[CV_STACK_BUF];     /* each frame's function's FP_* flags */
	/* The frames of the thread's recent captures (reuse_known) that were
	 * whole, had no signal frame, at most CV_KEEP_MAX frames and all of
	 * them on the thread's own stack, whose top is known_top (0: none
	 * kept). prev_leaf: the previous capture's innermost frame, if it was
	 * kept (else CV_KNOWN_NONE). Node k is known[k - 1]. */
	uintptr_t known_top;
	uint16_t known_used, prev_leaf;
	uint16_t known_heads[CV_KNOWN_HEADS];
	struct frame_node known[CV_KNOWN_NODES];
	/* The previous capture's stack id (0: none) and the module map's
	 * generation it was made with: a capture that unwind found to be the
	 * previous one whole has the same frames, so the same id (capture_blocked). */
	uint32_t prev_id, prev_gen;
};
/* cv__alloc's 8 KiB class. */
_Static_assert(sizeof(struct cv_stack_state) > 4096 && sizeof(struct cv_stack_state) <= 8192,
	       "cv_stack_state: one 8 KiB block");

struct cv_stack_acc {
	struct cv_stack_acc *next;
	uint32_t stack;
	uint32_t pad;
	uint64_t samples, count_fp, wait_ns;
};

struct cv_stk {
	struct cv_stk *hash_next, *all_next;
	uint64_t hash;
	uint32_t id, depth, map_gen, flags;
	uint64_t pcs[];
};

struct init_ent {
	const void *addr;
	uint32_t    stack;
	uint32_t    pad;
};

/* One block, replaced whole when it grows: a fork child sees the old
 * table or the new one, each whole. */
struct init_table {
	uint32_t sets;   /* a power of two */
	uint32_t pad[3];
	struct init_ent ent[];
};

static struct {
	bool     on;
	bool     stats;               /* CONVOY_STACK_STATS=1: time each capture, print at exit */
	uint32_t first;               /* CONVOY_STACK_FIRST */
	uint64_t period_ns;           /* CONVOY_STACK_PERIOD */
} cfg;

/* CONVOY_STACK_STATS: what capturing cost, in ns, summed over all threads
 * (docs/performance.md quotes it). */
static struct {
	uint64_t captures, frames, refresh_ns, unwind_ns, intern_ns;
	uint64_t whole_reuses;    /* unwind's check: the previous capture whole, no unwind */
	uint64_t caller_reuses;   /* unwind's check: another recent capture's from the caller out, no unwind */
	uint64_t frames_reused;   /* reuse_known: frames copied from a recent capture at the end of an unwind */
	uint64_t fde_lookups, fde_remembered;   /* the unwinder's table lookups; those fde_table answered */
	uint64_t known_resets;    /* known_keep: the recent frames emptied for a capture's */
} stats;

static uintptr_t shim_lo, shim_hi;   /* the shim's mapping, the unwinder included */

/* Inlined into their callers: every frame of the shim's is one more for
 * the unwinder to walk (~150 ns each). */
#define CV_NO_FRAME static inline __attribute__((always_inline))

static cv_spinlock_t stack_lock, init_lock;
/* fork: no capture may be in flight when the process forks (the child would
 * inherit held the loader's lock a module-map refresh takes, and the
 * tables below half written). The gate is cv__process.forking, the count
 * of forks being made (init.c): the prepare step raises it and waits for
 * the captures in flight; both sides seq_cst. A capture runs in a critical
 * section (lock.c), where no handler of the program runs, so the captures
 * it waits for are never its own thread's (a SIGALRM handler that forks
 * cannot have interrupted one) and never held up by a handler: they finish
 * in microseconds. */
static unsigned in_capture;
static struct cv_stk **stk_buckets;
static struct cv_stk *stk_all;
static uint32_t nstacks;
static struct init_table *init_tab;      /* init_lock */
static uint32_t init_live, init_clock;   /* init_lock; init_live also read without, as a hint */

/* ---- configuration and start-up ----------------------------------------- */

static uint64_t env_num(const char *name, uint64_t dflt, uint64_t lo, uint64_t hi)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return dflt;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi) {
		cv__warn("%s=%s is not a number from %llu to %llu; using %llu", name, s,
			 (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)dflt);
		return dflt;
	}
	return v;
}

static void load_range(const struct dl_phdr_info *info, uintptr_t *lo_out, uintptr_t *hi_out)
{
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
		if (a < lo)
			lo = a;
		if (b > hi)
			hi = b;
	}
	*lo_out = lo;
	*hi_out = hi;
}


static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t me = (uintptr_t)arg, lo, hi;
	load_range(info, &lo, &hi);
	if (me < lo || me >= hi)
		return 0;
	shim_lo = lo;
	shim_hi = hi;
	return 1;
}

/* From cv__init, with the guard raised (cv__busy). */
void cv__stacks_init(void)
{
	cfg.on = cv__env_flag("CONVOY_STACKS", true);
	cfg.stats = cv__env_flag("CONVOY_STACK_STATS", false);
	cfg.first = (uint32_t)env_num("CONVOY_STACK_FIRST", 8, 0, 1000000);
	cfg.period_ns = env_num("CONVOY_STACK_PERIOD", 20000, 1, 1000000000);
	dl_iterate_phdr(find_self, (void *)(uintptr_t)&cv__stacks_init);
	cv__modules_refresh(NULL);
}

/* ---- the stack table ----------------------------------------------------- */

static uint64_t hash_pcs(void *const *pcs, uint32_t depth, uint32_t gen)
{
	uint64_t h = 0xcbf29ce484222325ull ^ ((uint64_t)depth << 32 | gen);
	for (uint32_t i = 0; i < depth; i++) {
		h ^= (uintptr_t)pcs[i];
		h *= 0x100000001b3ull;
		h ^= h >> 29;
	}
	return h ? h : 1;
}

static bool same(const struct cv_stk *s, uint64_t h, void *const *pcs, uint32_t depth, uint32_t gen,
		 uint32_t flags)
{
	if (s->hash != h || s->depth != depth || s->map_gen != gen || s->flags != flags)
		return false;
	for (uint32_t i = 0; i < depth; i++)
		if (s->pcs[i] != (uintptr_t)pcs[i])
			return false;
	return true;
}

static struct cv_stk *find_stack(struct cv_stk *s, uint64_t h, void *const *pcs, uint32_t depth,
				 uint32_t gen, uint32_t flags)
{
	for (; s; s = __atomic_load_n(&s->hash_next, __ATOMIC_ACQUIRE))
		if (same(s, h, pcs, depth, gen, flags))
			return s;
	return NULL;
}

/* The id of this stack, added if new; 0 when the table is full or out of
 * memory. Memory is had without the lock (lock.c). */
static uint32_t intern(void *const *pcs, uint32_t depth, uint32_t gen, uint32_t flags)
{
	if (!__atomic_load_n(&stk_buckets, __ATOMIC_ACQUIRE)) {
		struct cv_stk **buckets = cv__alloc(sizeof(*stk_buckets) << STK_BUCKET_BITS);
		if (!buckets)
			return 0;
		struct cv_stk **none = NULL;
		if (!__atomic_compare_exchange_n(&stk_buckets, &none, buckets, false, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			cv__free(buckets, sizeof(*stk_buckets) << STK_BUCKET_BITS);   /* another thread's came first */
	}
	uint64_t h = hash_pcs(pcs, depth, gen);
	struct cv_stk **bucket = &stk_buckets[h >> (64 - STK_BUCKET_BITS)];
	struct cv_stk *s = find_stack(__atomic_load_n(bucket, __ATOMIC_ACQUIRE), h, pcs, depth, gen, flags);
	if (s)
		return s->id;
	if (__atomic_load_n(&nstacks, __ATOMIC_RELAXED) >= CV_STACK_LIMIT)
		return 0;
	struct cv_stk *fresh = cv__alloc(sizeof(*fresh) + depth * sizeof(fresh->pcs[0]));
	if (!fresh)
		return 0;
	uint32_t id = 0;
	cv__spin_lock(&stack_lock);
	s = find_stack(*bucket, h, pcs, depth, gen, flags);
	if (s) {
		id = s->id;
	} else if (nstacks < CV_STACK_LIMIT) {
		s = fresh;
		fresh = NULL;
		s->hash = h;
		s->depth = depth;
		s->map_gen = gen;
		s->flags = flags;
		for (uint32_t i = 0; i < depth; i++)
			s->pcs[i] = (uintptr_t)pcs[i];
		s->id = id = nstacks + 1;
		__atomic_store_n(&nstacks, id, __ATOMIC_RELAXED);
		s->hash_next = *bucket;
		s->all_next = stk_all;
		/* Publish filled: lock-free readers follow these pointers. */
		__atomic_store_n(bucket, s, __ATOMIC_RELEASE);
		__atomic_store_n(&stk_all, s, __ATOMIC_RELEASE);
	}
	cv__spin_unlock(&stack_lock);
	cv__free(fresh, sizeof(*fresh) + depth * sizeof(fresh->pcs[0]));   /* found, or the table is full */
	return id;
}

/* ---- capture ------------------------------------------------------------- */

static struct cv_stack_state *state_of(struct cv_thread *t)
{
	struct cv_stack_state *st = t->stk;
	if (CV_LIKELY(st != NULL))
		return st;
	st = cv__alloc(sizeof(*st));
	if (!st)
		return NULL;
	st->rng = ((uint64_t)t->tid << 32 ^ cv__ticks() ^ (uintptr_t)t) | 1;
	t->stk = st;
	return st;
}

static uint64_t next_rand(struct cv_stack_state *st)
{
	uint64_t x = st->rng;   /* xorshift64* */
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	st->rng = x;
	return x * 0x2545F4914F6CDD1Dull;
}

struct unwind_buf {
	struct cv_stack_state *st;
	int n;
	int reused_at;     /* reuse_known: the frame from which the rest was copied; -1: none */
	uint16_t reused;   /* its node */
	bool signal;       /* a signal frame was passed: not kept for the next */
	uintptr_t fp_prev; /* the frame pointer in the function of the frame before */
};

/* ---- the unwinder's table lookups, remembered -------------------------------- *
 * For each frame, libgcc's unwinder asks _Unwind_Find_FDE (its own,
 * linked in: libgcc_eh.a) for the call-frame information that covers the
 * frame's pc: glibc's _dl_find_object, then a binary search of the
 * module's .eh_frame_hdr table, cold in a large program (node's has some
 * 100,000 entries). The answer depends on the pc and the mapped objects
 * only: the shim's copy of the unwinder has no frames registered at run
 * time (its __register_frame_info is local to the shim and never called;
 * a registration would make such answers change under the table). And
 * captures meet the same return addresses again and again (a program's
 * init and wait sites, its threads' outer frames): the linker sends the
 * unwinder's calls here (-Wl,--wrap=_Unwind_Find_FDE), and the answers
 * are kept in a process-wide table keyed by pc and the loader's count of
 * loads and unloads that the capture's look at the module map saw
 * (cv__modules_refresh: any dlopen or dlclose that maps or unmaps an
 * object changes it, a library replaced at the same path and address
 * included, which the map's own generation does not tell). The frames a
 * capture unwinds are live, so their objects were mapped at that look and
 * still are. Each entry is a sequence lock that never waits: a reader
 * that finds it being written, or changed while it read, asks libgcc; a
 * writer that finds it taken leaves it. Only the shim's own unwinds come
 * here (the unwinder's symbols are local to the shim), and only inside a
 * capture (fde_loads). */
struct dwarf_eh_bases {   /* libgcc's unwind-dw2-fde.h */
	void *tbase, *dbase, *func;
};
const void *__real__Unwind_Find_FDE(void *pc, struct dwarf_eh_bases *bases);
const void *__wrap__Unwind_Find_FDE(void *pc, struct dwarf_eh_bases *bases);

#define FDE_BITS 10   /* 1,024 entries, 64 KiB, mapped at the first unwind */
struct fde_ent {
	uint32_t seq;      /* odd while written */
	uint64_t loads;    /* the key's loader count; 0: empty */
	void *pc;
	/* The answer. NULL: no object's tables cover pc (libgcc then tries
	 * its signal-frame fallback, as it does without the table). */
	const void *fde;
	struct dwarf_eh_bases bases;
} __attribute__((aligned(64)));   /* one line each */
static struct fde_ent fde_table[1u << FDE_BITS] CV_LARGE_BSS;
static __thread uint64_t fde_loads;   /* the capture's loader count; 0: outside a capture, or not known */
/* The table's pages are mapped in one system call at the process's first
 * unwind (cv__populate_pages; another thread's unwind at that moment
 * faults them in as before): its entries are spread by hash, and the
 * lookups of a program's start wrote every one of its 16 pages, a fault
 * each (python3 -c pass: 86 lookups libgcc answered, 16 of the shim's 45
 * faults; a fault costs 10-14 us here, a page mapped in the call about
 * 1: its unwinds 589-649 -> 490-543 us a process, docs/performance.md).
 * Not again in a fork child: it keeps the parent's entries, which stay
 * true, and copies only the pages it writes (populating them copied
 * about 12 more pages a child). */
static bool fde_table_mapped;

const void *__wrap__Unwind_Find_FDE(void *pc, struct dwarf_eh_bases *bases)
{
	uint64_t loads = fde_loads;
	if (!loads)
		return __real__Unwind_Find_FDE(pc, bases);
	if (cfg.stats)
		__atomic_fetch_add(&stats.fde_lookups, 1, __ATOMIC_RELAXED);
	struct fde_ent *e = &fde_table[cv__addr_hash(pc) >> (64 - FDE_BITS)];
	uint32_t seq = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
	if (!(seq & 1)) {
		void *at = __atomic_load_n(&e->pc, __ATOMIC_RELAXED);
		uint64_t at_loads = __atomic_load_n(&e->loads, __ATOMIC_RELAXED);
		const void *fde = __atomic_load_n(&e->fde, __ATOMIC_RELAXED);
		struct dwarf_eh_bases b = {
			__atomic_load_n(&e->bases.tbase, __ATOMIC_RELAXED),
			__atomic_load_n(&e->bases.dbase, __ATOMIC_RELAXED),
			__atomic_load_n(&e->bases.func, __ATOMIC_RELAXED),
		};
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (at == pc && at_loads == loads && __atomic_load_n(&e->seq, __ATOMIC_RELAXED) == seq) {
			if (cfg.stats)
				__atomic_fetch_add(&stats.fde_remembered, 1, __ATOMIC_RELAXED);
			*bases = b;
			return fde;
		}
	}
	const void *fde = __real__Unwind_Find_FDE(pc, bases);
	if (!(seq & 1) && __atomic_compare_exchange_n(&e->seq, &seq, seq + 1, false, __ATOMIC_ACQUIRE,
						       __ATOMIC_RELAXED)) {
		__atomic_thread_fence(__ATOMIC_RELEASE);
		__atomic_store_n(&e->pc, pc, __ATOMIC_RELAXED);
		__atomic_store_n(&e->loads, loads, __ATOMIC_RELAXED);
		__atomic_store_n(&e->fde, fde, __ATOMIC_RELAXED);
		__atomic_store_n(&e->bases.tbase, bases->tbase, __ATOMIC_RELAXED);
		__atomic_store_n(&e->bases.dbase, bases->dbase, __ATOMIC_RELAXED);
		__atomic_store_n(&e->bases.func, bases->func, __ATOMIC_RELAXED);
		__atomic_store_n(&e->seq, seq + 2, __ATOMIC_RELEASE);
	}
	return fde;
}

static inline struct frame_node *node_at(struct cv_stack_state *st, uint16_t k)
{
	return &st->known[k - 1];
}

static inline uintptr_t node_cfa(const struct cv_stack_state *st, const struct frame_node *f)
{
	return st->known_top - f->cfa_below;
}

static inline uint16_t *known_head(struct cv_stack_state *st, const void *pc, uintptr_t cfa)
{
	uint64_t h = ((uintptr_t)pc ^ cfa * 0x9e3779b97f4a7c15ull) * 0xff51afd7ed558ccdull;
	return &st->known_heads[h >> (64 - __builtin_ctz(CV_KNOWN_HEADS))];
}

/* The node of the frame at cfa returning to pc; CV_KNOWN_NONE: none. */
static uint16_t known_find(struct cv_stack_state *st, const void *pc, uintptr_t cfa)
{
	if (!st->known_top || cfa >= st->known_top || st->known_top - cfa > CV_KNOWN_BELOW_MAX)
		return CV_KNOWN_NONE;
	uint32_t below = (uint32_t)(st->known_top - cfa);
	for (uint16_t k = *known_head(st, pc, cfa); k != CV_KNOWN_NONE; k = node_at(st, k)->next) {
		const struct frame_node *f = node_at(st, k);
		if (f->pc == pc && f->cfa_below == below)
			return k;
	}
	return CV_KNOWN_NONE;
}

/* Whether the frames outwards of node k are still the thread's, fp the
 * frame pointer in node k's function now: each still returns where it
 * did, and each function whose frame's size its pc may not fix
 * (FP_CHECK) still has its frame where it had. The unwinder reports with
 * frame j the CFA of the frame inside it (the stack pointer at frame j's
 * call), and on x86-64 that call's return address, frame j's pc, lies
 * just below it: read back from the stack. Where frame j's function keeps
 * its CFA with no frame pointer, the CFA reported with frame j + 1 is
 * frame j's plus a distance its pc fixes; with FP_CHECK, its frame pointer
 * plus 16, checked against the frame pointer it has now: the one the
 * unwinder restored for node k's function, then, outwards, the one each
 * function saved (FP_SAVED) or left in the register (FP_PASSED); past a
 * function that did neither it is not known, and a frame with FP_CHECK
 * further out says no. Every CFA of a kept capture lies on the thread's
 * own stack (keepable), mapped for the thread's life, and above node k's,
 * which the unwind has just reached at the same CFA: the reads stay
 * between the thread's stack pointer and the top of its stack. CFAs out
 * of order say no (a defence: a parent's CFA is above its child's in every
 * capture kept). What this cannot tell: a frame whose size its pc does not
 * fix, kept by another register than the frame pointer (a function that
 * realigns its stack), that changed while the frames inside it stayed
 * where they were, its old return-address slots still holding what they
 * held. */
static bool known_still_live(struct cv_stack_state *st, uint16_t k, uintptr_t fp)
{
#if defined(__x86_64__)
	const struct frame_node *child = node_at(st, k);
	uintptr_t inner = node_cfa(st, child);
	bool fp_known = true;
	for (uint16_t j = child->parent; j != CV_KNOWN_NONE; j = child->parent) {
		const struct frame_node *f = node_at(st, j);
		uintptr_t cfa = node_cfa(st, f);
		if (cfa <= inner || *(const uintptr_t *)(cfa - sizeof(uintptr_t)) != (uintptr_t)f->pc)
			return false;
		if ((child->fp & FP_CHECK) && (!fp_known || fp + 16 != cfa))
			return false;
		if (child->fp & FP_SAVED) {
			fp = *(const uintptr_t *)(cfa - 2 * sizeof(uintptr_t));
			fp_known = true;
		} else if (!(child->fp & FP_PASSED)) {
			fp_known = false;
		}
		inner = cfa;
		child = f;
	}
	return true;
#else
	(void)st, (void)k, (void)fp;
	return false;
#endif
}

/* The frames outwards of node k, after frame n - 1 of the buffer. */
static int known_copy(struct cv_stack_state *st, int n, uint16_t k)
{
	st->fps[n - 1] = node_at(st, k)->fp;
	for (uint16_t j = node_at(st, k)->parent; j != CV_KNOWN_NONE && n < CV_STACK_BUF; j = node_at(st, j)->parent) {
		const struct frame_node *f = node_at(st, j);
		st->pcs[n] = f->pc;
		st->cfas[n] = node_cfa(st, f);
		st->fps[n++] = f->fp;
	}
	return n;
}

/* A frame one of the thread's recent captures had too, at the same CFA
 * with the same pc, whose callers are still those it had: the rest of the
 * stack is that capture's, copied after frame n - 1 instead of unwound.
 * Captures of one thread share their outer frames (a loop that makes or
 * waits on objects, the thread's function, its base), and a thread that
 * makes objects down several paths in turn (a parser that makes a lock for
 * each thing it reads) comes back to frames of captures before the last:
 * a new object's init stack unwinds only the frames no recent capture
 * had. */
static bool reuse_known(struct unwind_buf *b, _Unwind_Ptr ip, uintptr_t cfa, uintptr_t fp)
{
	struct cv_stack_state *st = b->st;
	uint16_t k = known_find(st, (void *)ip, cfa);
	if (k == CV_KNOWN_NONE || !known_still_live(st, k, fp))
		return false;
	int from = b->n;
	b->reused_at = b->n - 1;
	b->reused = k;
	b->n = known_copy(st, b->n, k);
	if (cfg.stats)
		__atomic_fetch_add(&stats.frames_reused, (uint64_t)(b->n - from), __ATOMIC_RELAXED);
	return true;
}

/* A kept capture's n frames into the tree, top its stack's top; frames
 * from reused_at outwards (node reused) are in it already. Emptied first
 * when the new frames would not fit, or the top is another. */
static void known_keep(struct cv_stack_state *st, int n, uintptr_t top, int reused_at, uint16_t reused)
{
	int fresh = reused_at >= 0 ? reused_at : n;   /* frames [0, fresh) may be new */
	if (st->known_top != top || st->known_used + fresh > CV_KNOWN_NODES) {
		memset(st->known_heads, 0, sizeof(st->known_heads));
		st->known_used = 0;
		st->known_top = top;
		fresh = n;
		reused = CV_KNOWN_NONE;
		if (cfg.stats)
			__atomic_fetch_add(&stats.known_resets, 1, __ATOMIC_RELAXED);
	}
	uint16_t parent = fresh < n ? reused : CV_KNOWN_NONE;
	for (int i = fresh - 1; i >= 0; i--) {
		uint16_t k = known_find(st, st->pcs[i], st->cfas[i]);
		if (k == CV_KNOWN_NONE) {
			k = ++st->known_used;
			struct frame_node *f = node_at(st, k);
			uint16_t *head = known_head(st, st->pcs[i], st->cfas[i]);
			f->pc = st->pcs[i];
			f->cfa_below = (uint32_t)(top - st->cfas[i]);
			f->next = *head;
			*head = k;
		}
		node_at(st, k)->fp = st->fps[i];
		node_at(st, k)->parent = parent;
		parent = k;
	}
	st->prev_leaf = parent;
}

static inline bool in_shim(const void *pc)
{
	return (uintptr_t)pc >= shim_lo && (uintptr_t)pc < shim_hi;
}

/* The FP_* flags of the function returned into at pc, whose frame pointer
 * is fp and its CFA cfa, its caller's frame pointer caller_fp. */
static inline uint8_t fp_flags(const void *pc, uintptr_t fp, uintptr_t caller_fp, uintptr_t cfa)
{
	/* Returned into, so a caller: the shim's callers are built with frame
	 * pointers, no frame of varying size (the Makefile leaves frames out
	 * of leaves only; fastpath::no_call_without_a_frame; libgcc's
	 * unwinder, linked in without them, is a caller only in a capture
	 * through a signal frame, which is never kept). */
	if (in_shim(pc))
		return FP_SAVED;
	if (fp && fp + 16 == cfa)
		return FP_CHECK | FP_SAVED;
	return fp == caller_fp ? FP_PASSED : 0;
}

static _Unwind_Reason_Code one_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct unwind_buf *b = arg;
	struct cv_stack_state *st = b->st;
	int signal_frame = 0;
	_Unwind_Ptr ip = _Unwind_GetIPInfo(ctx, &signal_frame);
	b->signal |= signal_frame != 0;   /* before the end: a fault at pc 0 reports one with ip 0 */
	if (!ip || b->n == CV_STACK_BUF)
		return _URC_END_OF_STACK;
	uintptr_t cfa = (uintptr_t)_Unwind_GetCFA(ctx), fp = 0;
#if defined(__x86_64__)
	fp = _Unwind_GetGR(ctx, 6);   /* rbp, DWARF's register 6 */
#endif
	if (b->n > 0)   /* the frame before's function: its CFA is this frame's */
		st->fps[b->n - 1] = fp_flags(st->pcs[b->n - 1], b->fp_prev, fp, cfa);
	b->fp_prev = fp;
	st->cfas[b->n] = cfa;
	/* A frame a signal interrupted (the unwinder flags the caller of a
	 * signal frame, the frame its trampoline returns to) is at the
	 * instruction that was to run next, not after a call: kept as that
	 * pc + 1, so that the profile's one rule (a reader looks up pc - 1:
	 * docs/profile-format.md) finds that instruction, not the one before
	 * it, which may be another function's
	 * (tests/stacks/progs/interrupted.c). reuse_known takes the pc itself:
	 * a recent capture's frame at this CFA returning there is this one. */
	st->pcs[b->n] = (void *)(ip + (signal_frame != 0));
	st->fps[b->n++] = 0;   /* until the next frame's CFA says */
	if (cfa && reuse_known(b, ip, cfa, fp))
		return _URC_END_OF_STACK;
	return _URC_NO_REASON;
}

/* ld.so's: the stack pointer the process started with. The main thread's
 * outermost frame, _start's, has its CFA 16 bytes below it. */
extern void *__libc_stack_end;

/* The largest step between two frames of a main-thread capture that is
 * kept: the kernel keeps other mappings stack_guard_gap (1 MiB unless the
 * kernel was booted with less) below the [stack] mapping, so a chain that
 * came onto the main stack from another mapping steps further. */
#define CV_MAIN_STEP_MAX (64u << 10)

/* Whether a capture's n frames may be kept for the next (reuse_known
 * then reads their return addresses and saved frame pointers back): each
 * above the one inside it,
 * one chain of calls on one stack, none through a stack carved from a
 * frame's own memory (which the program may make unreadable), and all on
 * the thread's own stack, which stays mapped (a coroutine's, an alternate
 * signal stack's or another stack switched to may be unmapped by the next
 * capture). That stack: the one the C library mapped for a thread it made
 * (stack_hi); or the main thread's [stack] mapping, for a chain that ends
 * in _start's frame (at most 64 bytes below __libc_stack_end), lies in
 * its RLIMIT_STACK range (stack_lo known) and steps less than
 * CV_MAIN_STEP_MAX from frame to frame. A program may map other memory in
 * that range (MAP_FIXED, or a finite RLIMIT_STACK above the mmap base's
 * clamp) and switch stacks there with call-frame information that leads
 * back to _start (Rust's stacker does; helper-76): the step out of it is
 * at least the guard gap. Not told: such a mapping placed with MAP_FIXED
 * within the guard gap. Assumed: the program makes no part of its own
 * thread stack unreadable where an older frame was (memory below its
 * stack pointer used as a stack; docs/performance.md). That stack's top
 * into *top_out, the CFAs no further than CV_KNOWN_BELOW_MAX below it. */
static bool keepable(const struct cv_stack_state *st, int n, uintptr_t *top_out)
{
	uintptr_t top = st->stack_hi, start = (uintptr_t)__libc_stack_end;
	bool main_stack = !top;
	if (main_stack) {
		uintptr_t last = n > 0 ? st->cfas[n - 1] : 0;
		if (!st->stack_lo || last > start || start - last > 64)
			return false;
		top = start;
	}
	for (int i = 0; i < n; i++) {
		uintptr_t cfa = st->cfas[i];
		if (cfa < st->stack_lo || cfa >= top || top - cfa > CV_KNOWN_BELOW_MAX || (i > 0 && cfa <= st->cfas[i - 1]) ||
		    (main_stack && i > 0 && cfa - st->cfas[i - 1] >= CV_MAIN_STEP_MAX))
			return false;
	}
	*top_out = top;
	return true;
}

/* A return address into the function that calls this. */
static __attribute__((noinline)) void *here(void)
{
	return __builtin_return_address(0);
}

/* The frame pointer register in the function this is inlined in. */
CV_NO_FRAME uintptr_t frame_pointer(void)
{
	uintptr_t fp = 0;
#if defined(__x86_64__)
	__asm__ volatile("mov %%rbp, %0" : "=r"(fp));
#endif
	return fp;
}

/* Up to CV_STACK_BUF return addresses into st->pcs, innermost first (the
 * convention of glibc's backtrace() and libunwind's unw_backtrace; a
 * frame a signal interrupted as its pc + 1: one_frame), and
 * each frame's canonical frame address into st->cfas (the stack pointer in
 * its caller at the call). Kept among the thread's recent captures for the
 * next (reuse_known). loads: the loader's count the capture saw
 * (fde_table); *whole: the stack is the previous capture's whole. */
CV_NO_FRAME int unwind(struct cv_stack_state *st, uint64_t loads, bool *whole)
{
	/* Frame 0, the call into the unwinder, is this function's, the
	 * shim's. Where a recent capture had the caller's frame at this CFA
	 * returning where this function will, and the callers from there are
	 * still where they were (the check reuse_known makes), the rest is
	 * copied without the unwinder, whose first two steps (its own frame,
	 * then this one) cost about 500 ns: a program that makes objects down
	 * several paths comes back to frames of captures before the last
	 * (openssl verify: 1,784 of its 1,963 init captures stopped at the
	 * unwinder's first frame). The previous capture's caller: the same
	 * stack whole, its id too. Frame 0 as the unwinder reports it: a
	 * return address into this function and about its stack pointer. The
	 * frame pointer in the caller is the one this function saved (built
	 * with frame pointers: checked). Kept as the unwinder's capture would
	 * be, frame 0 its one new node, so that the same stack next is the
	 * previous capture's whole (helper-91: else each looked its id up
	 * again, 195 ns a capture against 160). */
	uintptr_t cfa = (uintptr_t)__builtin_dwarf_cfa(), fp = frame_pointer();
	void *ra = __builtin_return_address(0);
	uint16_t prev = st->prev_leaf != CV_KNOWN_NONE ? node_at(st, st->prev_leaf)->parent : CV_KNOWN_NONE;
	uint16_t caller = CV_KNOWN_NONE;
	/* The previous capture's caller first: a loop's, without the hash
	 * (lockpair churn-many, a mutex made at each of 1,000 addresses in
	 * turn: 291 ns a pair through the hash alone, 278 with this). */
	if (fp + 16 == cfa)
		caller = prev != CV_KNOWN_NONE && node_at(st, prev)->pc == ra && node_cfa(st, node_at(st, prev)) == cfa ?
				 prev : known_find(st, ra, cfa);
	if (caller != CV_KNOWN_NONE && known_still_live(st, caller, *(const uintptr_t *)fp)) {
		*whole = caller == prev;
		st->pcs[0] = here();
		st->cfas[0] = cv__sp();
		st->fps[0] = FP_SAVED;
		st->pcs[1] = node_at(st, caller)->pc;
		st->cfas[1] = cfa;
		int n = known_copy(st, 2, caller);
		if (cfg.stats)
			__atomic_fetch_add(*whole ? &stats.whole_reuses : &stats.caller_reuses, 1, __ATOMIC_RELAXED);
		if (*whole)
			return n;
		st->prev_id = 0;   /* another stack than the previous capture's: its id goes */
		if (n <= CV_KEEP_MAX)   /* the copy comes from a kept capture: always */
			known_keep(st, n, st->known_top, 1, caller);
		else
			st->prev_leaf = CV_KNOWN_NONE;
		return n;
	}
	*whole = false;
	st->prev_id = 0;   /* the previous capture changes below: the id of its frames goes with it */
	struct unwind_buf b = { st, 0, -1, CV_KNOWN_NONE, false, 0 };
	if (!__atomic_load_n(&fde_table_mapped, __ATOMIC_RELAXED) &&
	    !__atomic_exchange_n(&fde_table_mapped, true, __ATOMIC_RELAXED))
		cv__populate_pages(fde_table, sizeof(fde_table));
	fde_loads = loads;
	_Unwind_Backtrace(one_frame, &b);
	fde_loads = 0;
	/* Kept for the next: a stack of calls only (no signal frame), whole
	 * (CV_KEEP_MAX is below the cut at CV_STACK_BUF, which a shallower
	 * stack would otherwise inherit), on the thread's own stack. */
	uintptr_t top;
	if (!b.signal && b.n <= CV_KEEP_MAX && keepable(st, b.n, &top))
		known_keep(st, b.n, top, b.reused_at, b.reused);
	else
		st->prev_leaf = CV_KNOWN_NONE;
	return b.n;
}

static void *enclosing_function(const void *return_address)
{
	return _Unwind_FindEnclosingFunction((char *)return_address - 1);   /* the call, not the next line */
}

/* The stack a held lock was taken in, from the stack now (pcs[skip..n),
 * each frame's CFA in cfas), without a second unwind at every acquisition:
 * the lock's call, pc, then its caller's callers as they are now. The frame
 * of the function that took it (the enclosing function of pc) is found as
 * the innermost frame of that function that was live already then: its CFA
 * lies above sp, the shim's stack pointer at the acquisition, below every
 * program frame of then. A recursive function may be matched one call too
 * deep. When that function has returned (a helper that locks and returns),
 * the frames live then are told by their callee's CFA alone and the stack is
 * marked CV_STACK_PARTIAL: its outer frames are those live at the later
 * acquisition. Built in place in front of them, then put back. */
static uint32_t intern_held(struct cv_stack_state *st, int skip, int n, const void *pc, uintptr_t sp, uint32_t gen)
{
	void *fn = enclosing_function(pc);
	int k = skip;
	while (fn && k < n && !(st->cfas[k] > sp && enclosing_function(st->pcs[k]) == fn))
		k++;
	uint32_t flags = 0;
	if (fn && k < n) {
		k++;   /* the frames after the function's own */
	} else {
		flags = CV_STACK_PARTIAL;
		for (k = skip > 1 ? skip : 1; k < n && st->cfas[k - 1] <= sp; k++)
			;
	}
	void *saved = st->pcs[k - 1];
	st->pcs[k - 1] = (void *)pc;
	uint32_t depth = (uint32_t)(n - k + 1);
	if (depth > CV_STACK_MAX_DEPTH || n == CV_STACK_BUF)
		flags |= CV_STACK_TRUNCATED;
	uint32_t id = intern(st->pcs + k - 1, depth > CV_STACK_MAX_DEPTH ? CV_STACK_MAX_DEPTH : depth, gen, flags);
	st->pcs[k - 1] = saved;
	return id;
}

/* The locks of held named by which[0..n), for the held stacks. */
struct held_set {
	const struct cv_held *held;
	const uint8_t *which;
	uint32_t n;
};

/* The calling thread's stack, without the shim's frames, as an id (0: none).
 * *gen gets the module-map generation it belongs to. With hs, also the
 * stacks its held locks were taken in, into held_ids (0: none;
 * intern_held). Inside the guard. */
CV_NO_FRAME uint32_t capture_blocked(struct cv_stack_state *st, uint32_t *gen, const struct held_set *hs,
				     uint32_t *held_ids)
{
	uint32_t nheld = hs ? hs->n : 0;   /* held_ids are 0 until found (cv__stack_capture_held) */
	__atomic_fetch_add(&in_capture, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&cv__process.forking, __ATOMIC_SEQ_CST)) {
		__atomic_fetch_sub(&in_capture, 1, __ATOMIC_SEQ_CST);
		*gen = 0;
		return 0;   /* a fork is being prepared: this wait goes without a stack */
	}
	uint64_t t0 = cfg.stats ? cv__now_ns() : 0, t1 = 0, t2 = 0, loads = 0;
	*gen = cv__modules_refresh(&loads);
	if (cfg.stats)
		t1 = cv__now_ns();
	uint32_t id = 0;
	bool split = nheld, whole;
	int n = unwind(st, loads, &whole);
	if (cfg.stats)
		t2 = cv__now_ns();
	int skip = 0;
	while (skip < n && in_shim(st->pcs[skip]))
		skip++;
	if (n > skip) {
		uint32_t depth = (uint32_t)(n - skip), flags = 0;
		if (n == CV_STACK_BUF || depth > CV_STACK_MAX_DEPTH)
			flags |= CV_STACK_TRUNCATED;
		if (depth > CV_STACK_MAX_DEPTH)
			depth = CV_STACK_MAX_DEPTH;
		/* The previous capture whole: its frames, so its id (stack
		 * ids stay valid for the process's life, a fork child's
		 * included), unless the map has a new generation since. */
		bool reuse = whole && st->prev_id && st->prev_gen == *gen;
		id = reuse ? st->prev_id : intern(st->pcs + skip, depth, *gen, flags);
	}
	st->prev_id = id;
	st->prev_gen = *gen;
	for (uint32_t i = 0; split && i < nheld && n > 0; i++) {
		const struct cv_held *h = &hs->held[hs->which[i]];
		held_ids[i] = intern_held(st, skip, n, h->pc, cv__held_sp(h), *gen);
	}
	if (cfg.stats) {
		uint64_t t3 = cv__now_ns();
		__atomic_fetch_add(&stats.captures, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&stats.frames, (uint64_t)(n > 0 ? n : 0), __ATOMIC_RELAXED);
		__atomic_fetch_add(&stats.refresh_ns, t1 - t0, __ATOMIC_RELAXED);
		__atomic_fetch_add(&stats.unwind_ns, t2 - t1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&stats.intern_ns, t3 - t2, __ATOMIC_RELAXED);
	}
	__atomic_fetch_sub(&in_capture, 1, __ATOMIC_SEQ_CST);
	return id;
}

/* What a capture needs below the caller's frame: 2,151 bytes measured here
 * (a contended lock's whole slow path with the unwind, libgcc_s 12, on a
 * painted stack), doubled. */
#define CV_CAPTURE_STACK_NEED 4096u

/* The pages from sp - need up to sp (need at most CV_ROOM_MAX) can be
 * read: asked of the kernel, which says EFAULT for a guard page or a hole
 * rather than faulting. Each page is probed (4 KiB steps reach every page
 * of any size), with a probe for each on the stack: a capture's 4 KiB on a
 * coroutine's stack takes the room for two, as it did. */
#define CV_ROOM_MAX (16u << 10)
static __attribute__((noinline)) bool readable_below(uintptr_t sp, size_t need)
{
	struct iovec remote[(need + 4095) / 4096 + 1];
	char bytes[sizeof(remote) / sizeof(remote[0])];
	unsigned long n = 0;
	for (uintptr_t a = sp - need; a < sp; a = (a | 4095) + 1)
		remote[n++] = (struct iovec){ (void *)a, 1 };
	struct iovec local = { bytes, n };
	int saved_errno = errno;   /* EFAULT at a hole: a snapshot's check runs outside the guard */
	bool readable = cv__read_own_memory(&local, 1, remote, n) == (ssize_t)n;
	errno = saved_errno;
	return readable;
}

/* Whether the thread runs on an alternate signal stack at sp: *lo its
 * lowest address. The kernel tells from the stack pointer, except while a
 * handler runs on a stack set with SS_AUTODISARM, which it reports as none
 * (or, if the handler armed one again, as armed but not in use): then
 * the trampoline's note of that stack (signals.c, note_disarmed_stack),
 * *noted. The note outlives its handler (a siglongjmp out of it, the
 * program's own change after it), and the memory it names may since be
 * another, smaller stack: a bound, not proof that the pages are there.
 * Out of line: its stack_t stays off the frame of a capture on a small
 * stack that never has one. */
static __attribute__((noinline)) bool on_alt_stack(uintptr_t sp, uintptr_t *lo, bool *noted)
{
	stack_t alt;
	int saved_errno = errno;
	bool asked = cv__sys(SYS_sigaltstack, 0, (long)&alt, 0, 0) == 0;
	errno = saved_errno;
	*noted = false;
	if (asked && (alt.ss_flags & SS_ONSTACK)) {
		*lo = (uintptr_t)alt.ss_sp;
		return true;
	}
	const struct cv_thread *t = cv__my_state;   /* a snapshot's check runs inside the guard */
	if (!asked || !t)
		return false;
	uintptr_t note_lo, note_hi;
	cv__pair_load(&t->disarmed, &note_lo, &note_hi);
	if (!note_hi || sp <= note_lo || sp > note_hi)
		return false;
	*lo = note_lo;
	*noted = true;
	return true;
}

/* Whether the stack the thread is on has need bytes below sp. On an
 * alternate signal stack (a handler of the program's, which may lock),
 * that stack's own bounds: one cut from the thread's own stack lies inside
 * the thread's bounds with the interrupted frames just below it (a capture
 * in a handler on 4.5 KiB of it crashed the program; hostile test capalt,
 * 2026-12-04; the same on a stack set with SS_AUTODISARM). Asked of the
 * kernel only once the program has set one (signals.c, cv__altstacks): a
 * system call, 0.9 us on the development VM. On the thread's stack, its
 * bounds. On another stack (a coroutine's), or where the thread's bounds
 * are unknown (the main thread under an unlimited RLIMIT_STACK), the
 * pages are asked of the kernel: a hostile test's coroutines on 4 KiB
 * stacks, 2.5 KiB deep, crashed in the unwind, and 3.4 KiB deep in
 * dl_iterate_phdr at an object's first use. No system call once the shim
 * is off (a seccomp filter): no room. errno stays as it was (a hang
 * snapshot's check runs in the program's context, cv__snapshot_deferred). */
bool cv__stack_room(const struct cv_thread *t, uintptr_t sp, size_t need)
{
	if (cv__off())
		return false;
	uintptr_t alt;
	bool noted;
	if (__atomic_load_n(&cv__altstacks, __ATOMIC_RELAXED) && on_alt_stack(sp, &alt, &noted))
		return sp > alt && sp - alt >= need && (!noted || (need <= CV_ROOM_MAX && readable_below(sp, need)));
	if (t && cv__on_thread_stack(t, sp))
		return sp - t->stack_lo >= need;
	return need <= CV_ROOM_MAX && readable_below(sp, need);
}

/* The room a capture, or a look at the module map (dl_iterate_phdr),
 * needs below the caller's frame. */
CV_NO_FRAME bool stack_room(const struct cv_thread *t)
{
	return cv__stack_room(t, (uintptr_t)__builtin_frame_address(0), CV_CAPTURE_STACK_NEED);
}

/* In a critical section (lock.c), where no handler of the program runs:
 * see in_capture. A thread whose stack has less room left than a capture
 * needs gets no stack (id 0): the wait is still counted, like one whose
 * unwind failed. */
CV_NO_FRAME uint32_t capture(struct cv_thread *t, struct cv_stack_state *st, uint32_t *gen, const struct held_set *hs,
		       uint32_t *held_ids)
{
	if (!stack_room(t)) {
		*gen = cv__modules_gen();   /* no dl_iterate_phdr either: it needs stack too */
		return 0;
	}
	st->stack_lo = t->stack_lo;
	st->stack_hi = t->stack_hi;
	cv__critical_enter();
	uint32_t id = capture_blocked(st, gen, hs, held_ids);
	cv__critical_leave();
	return id;
}

/* ---- waits ----------------------------------------------------------------- */

static struct cv_stack_acc *acc_for(struct cv_rec *r, uint32_t stack)
{
	struct cv_stack_acc *a = r->stack_accs, *zero = NULL;
	for (; a; a = a->next) {
		if (a->stack == stack)
			return a;
		if (a->stack == 0)
			zero = a;
	}
	if (r->nstack_accs >= CV_ACC_LIMIT) {
		if (zero)
			return zero;
		stack = 0;
	}
	a = cv__alloc(sizeof(*a));
	if (!a)
		return zero;
	a->stack = stack;
	a->next = r->stack_accs;
	r->nstack_accs++;
	__atomic_store_n(&r->stack_accs, a, __ATOMIC_RELEASE);   /* output.c walks it */
	return a;
}

/* A wait kept: its stack, credited with count_fp waits (in 1/FP_ONE) and
 * weight_ns of waiting. Out of line, so that the draw, which seldom comes
 * here, saves none of the registers the capture needs. */
static CV_NOINLINE void keep_wait(struct cv_thread *t, struct cv_stack_state *st, struct cv_rec *r,
				  uint64_t count_fp, uint64_t weight_ns)
{
	struct cv_thread *saved = cv__guard_enter();
	uint32_t gen;
	struct cv_stack_acc *a = acc_for(r, capture(t, st, &gen, NULL, NULL));
	if (a) {
		CV_BUMP(&a->samples, 1);
		CV_BUMP(&a->count_fp, count_fp);
		CV_BUMP(&a->wait_ns, weight_ns);
	}
	cv__guard_leave(saved);
}

/* Whether to keep a wait of wait_ns on r, and its weight: the first K
 * always, with weight 1; after that with probability p = min(1, w / T),
 * standing for 1/p waits and T ns of waiting. The draw, uniform in
 * [0, T), is the high half of a product, not a remainder: no division. */
static inline __attribute__((always_inline)) void draw(struct cv_thread *t, struct cv_stack_state *st,
							struct cv_rec *r, uint64_t wait_ns)
{
	uint32_t seen = r->stack_seen;
	if (seen != UINT32_MAX)
		r->stack_seen = seen + 1;
	uint64_t count_fp = FP_ONE, weight_ns = wait_ns;
	if (seen >= cfg.first && wait_ns < cfg.period_ns) {
		if (wait_ns == 0 || (uint64_t)(((unsigned __int128)next_rand(st) * cfg.period_ns) >> 64) >= wait_ns)
			return;
		count_fp = (cfg.period_ns * FP_ONE) / wait_ns;
		weight_ns = cfg.period_ns;
	}
	keep_wait(t, st, r, count_fp, weight_ns);
}

/* The thread's first wait offered to the sampler: its state first. */
static CV_NOINLINE void first_draw(struct cv_thread *t, struct cv_rec *r, uint64_t wait_ns)
{
	struct cv_thread *saved = cv__guard_enter();
	struct cv_stack_state *st = state_of(t);
	cv__guard_leave(saved);
	if (st)
		draw(t, st, r, wait_ns);
}

/* After a timed wait on r's object (and after cv__record_wait): maybe capture
 * the stack, and credit it with the wait it stands for.
 *
 * Only a capture takes the guard, not the draw: after a lock's wait the
 * draw is made inside the critical section the wait was for, after every
 * wait, and keeps few (the guard's two pthread_setcanceltype calls there
 * lengthened every contended acquisition's section; docs/performance.md,
 * "Where issue 11's goals stand", its seventh session). It writes only
 * this thread's record and random state, which a signal handler's own draw
 * in between may reuse, harmlessly. */
void cv__stack_on_wait(struct cv_thread *t, struct cv_rec *r, uint64_t wait_ns)
{
	if (!cfg.on || !t || r->obj->kind == CV_OBJ_UNKNOWN)   /* kind unknown: the shared "out of memory" record */
		return;
	struct cv_stack_state *st = t->stk;
	if (CV_UNLIKELY(!st))
		first_draw(t, r, wait_ns);
	else
		draw(t, st, r, wait_ns);
}

uint32_t cv__stack_capture_held(struct cv_thread *t, const struct cv_held *held, const uint8_t *which, uint32_t n,
				uint32_t *held_ids)
{
	struct cv_stack_state *st = cfg.on ? state_of(t) : NULL;
	struct held_set hs = { held, which, n };
	uint32_t gen;
	for (uint32_t i = 0; i < n; i++)
		held_ids[i] = 0;   /* also where the capture gives up early */
	return st ? capture(t, st, &gen, &hs, held_ids) : 0;
}

/* ---- init and first use ------------------------------------------------------ */

static struct init_ent *init_set(struct init_table *tab, const void *addr)
{
	return &tab->ent[((uint32_t)(cv__addr_hash(addr) >> 32) & (tab->sets - 1)) * INIT_WAYS];
}

/* addr's entry in tab (init_lock held): its own, else a free one, else
 * (a full set) the oldest guess, round robin. */
static struct init_ent *init_slot(struct init_table *tab, const void *addr)
{
	struct init_ent *set = init_set(tab, addr), *free = NULL;
	for (int i = 0; i < INIT_WAYS; i++) {
		if (set[i].addr == addr)
			return &set[i];
		if (!set[i].addr && !free)
			free = &set[i];
	}
	return free ? free : &set[init_clock++ % INIT_WAYS];
}

static size_t init_table_size(uint32_t sets)
{
	return sizeof(struct init_table) + sizeof(struct init_ent) * sets * INIT_WAYS;
}

/* Whether addr's set in tab has neither addr nor a free way (init_lock
 * held): its entry would replace another's. */
static bool init_set_full(struct init_table *tab, const void *addr)
{
	const struct init_ent *set = init_set(tab, addr);
	for (int i = 0; i < INIT_WAYS; i++)
		if (!set[i].addr || set[i].addr == addr)
			return false;
	return true;
}

/* init_lock held: the sets the table should grow to before addr's entry
 * goes in; 0: none. It grows when half its ways are taken, and when
 * addr's set is full: the hash spreads addresses at random (shim.h,
 * cv__addr_hash), and a set of eight fills now and then well before
 * half the table does (3,000 mutexes of one array kept 2,983 init stacks
 * so). Past INIT_SETS_MAX sets, an entry replaces another. */
static uint32_t init_sets_wanted(const void *addr)
{
	if (!init_tab)
		return INIT_SETS_FIRST;
	if (init_tab->sets < INIT_SETS_MAX &&
	    (init_live >= init_tab->sets * INIT_WAYS / 2 || init_set_full(init_tab, addr)))
		return init_tab->sets * 4;
	return 0;
}

/* An empty table of sets sets, its pages written (the rehash reads before
 * it writes; past 64 KiB a mapping); NULL when out of memory. Made without
 * init_lock (lock.c). */
static struct init_table *init_table_new(uint32_t sets)
{
	struct init_table *tab = cv__alloc(init_table_size(sets));
	if (tab) {
		cv__touch_pages(tab, init_table_size(sets));
		tab->sets = sets;
	}
	return tab;
}

/* init_lock held: tab takes the table's entries and its place; the old
 * table, for the caller to free after the lock (NULL: none). */
static struct init_table *init_grow_into(struct init_table *tab)
{
	struct init_table *old = init_tab;
	uint32_t live = 0;
	for (uint32_t i = 0; old && i < old->sets * INIT_WAYS; i++) {
		if (!old->ent[i].addr)
			continue;
		struct init_ent *e = init_slot(tab, old->ent[i].addr);
		live += !e->addr;
		*e = old->ent[i];
	}
	__atomic_store_n(&init_live, live, __ATOMIC_RELAXED);
	init_tab = tab;
	return old;
}

static void init_table_free(struct init_table *tab)
{
	if (tab)
		cv__free(tab, init_table_size(tab->sets));
}

/* Takes (removes) the init stack recorded for addr; 0 if none. */
static uint32_t init_take(const void *addr)
{
	if (!__atomic_load_n(&init_live, __ATOMIC_RELAXED))
		return 0;
	uint32_t stack = 0;
	cv__spin_lock(&init_lock);
	struct init_ent *set = init_tab ? init_set(init_tab, addr) : NULL;
	for (int i = 0; set && i < INIT_WAYS; i++) {
		if (set[i].addr == addr) {
			stack = set[i].stack;
			set[i].addr = NULL;
			__atomic_store_n(&init_live, init_live - 1, __ATOMIC_RELAXED);
			break;
		}
	}
	cv__spin_unlock(&init_lock);
	return stack;
}

void cv__stack_forget(const void *addr)
{
	init_take(addr);
}

/* After a successful pthread_*_init: the stack that made the object, kept
 * until its first use creates the object (objects are made on first use so
 * that generations count uses, not inits). Inside the guard. */
CV_NO_FRAME void on_init(struct cv_thread *t, const void *addr)
{
	struct cv_stack_state *st = state_of(t);
	if (!st)
		return;
	uint32_t gen, id = capture(t, st, &gen, NULL, NULL);
	if (!id)
		return;
	/* A larger table is made without the lock, then the need looked at
	 * again: another thread may have grown it meanwhile. Out of memory,
	 * the table stays as it is (or none). */
	struct init_table *fresh = NULL, *old = NULL;
	uint32_t want;
	cv__spin_lock(&init_lock);
	while ((want = init_sets_wanted(addr)) != 0 && (!fresh || fresh->sets != want)) {
		cv__spin_unlock(&init_lock);
		init_table_free(fresh);
		fresh = init_table_new(want);
		cv__spin_lock(&init_lock);
		if (!fresh)
			break;
	}
	if (want && fresh && fresh->sets == want) {
		old = init_grow_into(fresh);
		fresh = NULL;
	}
	if (init_tab) {
		struct init_ent *e = init_slot(init_tab, addr);
		if (!e->addr)
			__atomic_store_n(&init_live, init_live + 1, __ATOMIC_RELAXED);
		e->addr = addr;
		e->stack = id;
	}
	cv__spin_unlock(&init_lock);
	init_table_free(old);
	init_table_free(fresh);
}

void cv__object_init(const void *addr, uint32_t kind)
{
	struct cv_thread *saved = cv__guard_enter();
	if (cv__object_ending(saved, addr, kind)) {
		/* One section for the registry and the capture. */
		cv__critical_enter();
		if (!cv__object_end(saved, addr, kind) && cfg.on && saved)
			on_init(saved, addr);
		cv__critical_leave();
	}
	cv__guard_leave(saved);
}

/* The object was just created by (some thread's) first use: its stack, once.
 * Inside the guard (cv__lookup_slow). */
void cv__stack_first_use(struct cv_thread *t, struct cv_obj *o)
{
	if (CV_LOAD(&o->stack_claimed) || __atomic_exchange_n(&o->stack_claimed, 1, __ATOMIC_ACQ_REL))
		return;
	if (o->kind == CV_OBJ_UNKNOWN)
		return;
	uint32_t gen = 0, id = 0;
	struct cv_stack_state *st = cfg.on ? state_of(t) : NULL;
	if (st && (id = init_take(o->addr)) == 0)
		id = capture(t, st, &gen, NULL, NULL);
	else   /* names of globals in dlopen'd libraries need the map too */
		gen = stack_room(t) ? cv__modules_refresh(NULL) : cv__modules_gen();
	CV_STORE(&o->map_gen, gen);
	CV_STORE(&o->first_stack, id);
}

/* ---- the profile ------------------------------------------------------------- */

/* Right after r's stats record, so that the two always come together. */
void cv__stacks_write_rec(void *w, const struct cv_rec *r)
{
	for (struct cv_stack_acc *a = __atomic_load_n(&r->stack_accs, __ATOMIC_ACQUIRE); a; a = a->next) {
		uint64_t samples = CV_LOAD(&a->samples);
		if (!samples)
			continue;
		struct cv_stack_wait sw = {
			.object = r->object,
			.thread = r->thread,
			.stack = a->stack,
			.samples = samples,
			.waits = (CV_LOAD(&a->count_fp) + FP_ONE / 2) / FP_ONE,
			.wait_ns = CV_LOAD(&a->wait_ns),
		};
		cv__put_record(w, CV_REC_STACK_WAIT, &sw, sizeof(sw), NULL, 0, NULL, 0);
	}
}

/* After every record that names a stack: a stack is in the table before any
 * record can name it, so every id written so far is here. */
void cv__stacks_write(void *w)
{
	for (struct cv_stk *s = __atomic_load_n(&stk_all, __ATOMIC_ACQUIRE); s; s = s->all_next) {
		struct cv_stack_rec rec = { .id = s->id, .depth = s->depth, .map_gen = s->map_gen, .flags = s->flags };
		cv__put_record(w, CV_REC_STACK, &rec, sizeof(rec), s->pcs, s->depth * sizeof(s->pcs[0]), NULL, 0);
	}
	if (cfg.stats) {
		uint64_t c = stats.captures ? stats.captures : 1;
		cv__warn("stacks: %llu captures, %llu distinct; per capture %llu ns: module-map check %llu, "
			 "unwind %llu (%.1f frames), table %llu; %llu the previous capture's whole, %llu a recent one's "
			 "from the caller out, %.1f frames a capture copied from recent ones in the others; %llu call-frame "
			 "table lookups, %llu of them remembered; "
			 "the recent frames emptied %llu times",
			 (unsigned long long)stats.captures, (unsigned long long)nstacks,
			 (unsigned long long)((stats.refresh_ns + stats.unwind_ns + stats.intern_ns) / c),
			 (unsigned long long)(stats.refresh_ns / c), (unsigned long long)(stats.unwind_ns / c),
			 (double)stats.frames / (double)c, (unsigned long long)(stats.intern_ns / c),
			 (unsigned long long)stats.whole_reuses, (unsigned long long)stats.caller_reuses,
			 (double)stats.frames_reused / (double)(stats.captures > stats.whole_reuses + stats.caller_reuses ?
								   stats.captures - stats.whole_reuses - stats.caller_reuses : 1),
			 (unsigned long long)stats.fde_lookups, (unsigned long long)stats.fde_remembered,
			 (unsigned long long)stats.known_resets);
	}
}

/* An ended thread's record folded into the merged threads' (objects.c,
 * under its lock): its per-stack waits join dst's, and src's go back. */
void cv__stacks_merge_rec(struct cv_rec *dst, struct cv_rec *src)
{
	struct cv_stack_acc *a = src->stack_accs;
	src->stack_accs = NULL;
	while (a) {
		struct cv_stack_acc *next = a->next, *d = acc_for(dst, a->stack);
		if (d) {
			CV_BUMP(&d->samples, a->samples);
			CV_BUMP(&d->count_fp, a->count_fp);
			CV_BUMP(&d->wait_ns, a->wait_ns);
		}
		if (!cv__profile_writing())   /* else kept: the writer may be walking it */
			cv__free(a, sizeof(*a));
		a = next;
	}
}

void cv__stacks_thread_end(struct cv_thread *t)
{
	struct cv_stack_state *st = t->stk;
	t->stk = NULL;
	cv__free(st, sizeof(*st));
}

/* ---- fork ---------------------------------------------------------------------- */

void cv__stacks_fork_wait(void)
{
	while (__atomic_load_n(&in_capture, __ATOMIC_SEQ_CST))
		cv__yield();   /* captures take microseconds and never wait for the program */
}


/* The child: locks another thread held at the fork are released (that thread
 * is gone). The child keeps the stack table (ids stay valid); an entry another
 * thread was inserting at the fork is at worst unreachable. */
void cv__stacks_after_fork(void)
{
	cv__spin_reset(&stack_lock);
	cv__spin_reset(&init_lock);
	cv__modules_after_fork();
	/* The child's one thread makes no capture. A capture another thread
	 * began after prepare's wait, and left at the closed gate, was counted
	 * in in_capture at the fork: kept, it would make the child's own first
	 * fork wait for it forever. */
	__atomic_store_n(&in_capture, 0, __ATOMIC_SEQ_CST);
}
