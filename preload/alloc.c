/* alloc.c — the shim's memory: lock-free, async-signal-safe, recycled.
 *
 * Nothing the shim allocates goes through malloc: the program may interpose
 * malloc with an allocator that locks pthread mutexes (we would recurse), and
 * a signal handler may run shim code at any instruction, including in the
 * middle of an allocation on its own thread. So no lock: blocks of up to
 * CV_CLASS_MAX bytes are carved from 1 MiB chunks by an atomic bump pointer
 * and recycled through one lock-free free list per size class; larger blocks
 * are mappings of their own.
 *
 * The free lists are Treiber stacks whose head carries a 16-bit tag in the
 * pointer's unused top bits (user addresses on x86-64 and arm64 fit in 48
 * bits): a pop that read a stale `next` fails its compare-and-swap because
 * every push and pop bumps the tag (ABA). Reading `next` of a block another
 * thread popped meanwhile is safe because chunk memory is never unmapped.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "shim.h"

#define CV_CHUNK      (1u << 20)
#define CV_FINE_MAX   1024u                   /* classes of 16 B steps up to here */
#define CV_CLASS_MAX  (64u << 10)             /* then powers of two up to here */
#define CV_NCLASSES   (CV_FINE_MAX / 16 + 6)  /* 2, 4, 8, 16, 32, 64 KiB */
#define PTR_BITS      48
#define PTR_MASK      ((1ull << PTR_BITS) - 1)

struct chunk {
	size_t used;                          /* bytes handed out, alignment included */
	size_t populated;                     /* bytes of data[] whose pages were populated ahead */
	char   data[];
};

struct free_block { struct free_block *next; };

static struct chunk *cur_chunk;
static uint64_t free_head[CV_NCLASSES];  /* tag << 48 | block */

static unsigned class_of(size_t size, size_t *class_size)
{
	if (size <= CV_FINE_MAX) {
		size_t s = (size + 15) & ~(size_t)15;
		*class_size = s ? s : 16;
		return (unsigned)(*class_size / 16 - 1);
	}
	unsigned k = 64u - (unsigned)__builtin_clzll(size - 1);   /* 2^k >= size */
	*class_size = (size_t)1 << k;
	return CV_FINE_MAX / 16 + (k - 11);
}

/* Nothing once the shim is off (cv__off): callers take it as out of memory
 * and leave the object untracked. errno is the caller's again: a failed
 * mmap (an address-space limit) must not show in the program's errno after
 * a lock call whose bookkeeping allocated. */
static void *map(size_t len)
{
	if (cv__off())
		return NULL;
	int saved_errno = errno;
	void *m = cv__mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	errno = saved_errno;
	return m == MAP_FAILED ? NULL : m;
}

static void *pop(unsigned c)
{
	uint64_t old = __atomic_load_n(&free_head[c], __ATOMIC_ACQUIRE), fresh;
	struct free_block *b;
	do {
		b = (struct free_block *)(uintptr_t)(old & PTR_MASK);
		if (!b)
			return NULL;
		/* May read a block another thread just popped: the tag makes the
		 * CAS fail then. Relaxed: the acquire on the head ordered it. */
		struct free_block *next = __atomic_load_n(&b->next, __ATOMIC_RELAXED);
		fresh = ((old >> PTR_BITS) + 1) << PTR_BITS | (uint64_t)(uintptr_t)next;
	} while (!__atomic_compare_exchange_n(&free_head[c], &old, fresh, true,
					      __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE));
	return b;
}

static void push(unsigned c, void *p)
{
	struct free_block *b = p;
	uint64_t old = __atomic_load_n(&free_head[c], __ATOMIC_RELAXED), fresh;
	do {
		__atomic_store_n(&b->next, (struct free_block *)(uintptr_t)(old & PTR_MASK), __ATOMIC_RELAXED);
		fresh = ((old >> PTR_BITS) + 1) << PTR_BITS | (uint64_t)(uintptr_t)b;
	} while (!__atomic_compare_exchange_n(&free_head[c], &old, fresh, true,
					      __ATOMIC_RELEASE, __ATOMIC_RELAXED));   /* publishes b->next */
}

/* The smallest page size: touching at this step reaches every page of any. */
#define CV_PAGE_MIN 4096u

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23   /* Linux 5.14 */
#endif
#define CV_POPULATE_MAX (64u << 10)

static bool populate_refused;   /* the kernel has no MADV_POPULATE_WRITE, or a filter said no */

/* Pages [lo, hi) (page aligned) mapped in one system call, where the
 * kernel can: a saving only (the caller still writes every page). No
 * system call once the shim is off: a seccomp filter the program has
 * installed may kill it for one (a thread that was waiting inside the shim
 * when it came still allocates). */
static void populate(uintptr_t lo, uintptr_t hi)
{
	if (lo >= hi || cv__off() || __atomic_load_n(&populate_refused, __ATOMIC_RELAXED))
		return;
	int saved_errno = errno;
	if (cv__madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) != 0 &&
	    (errno == EINVAL || errno == EPERM || errno == ENOSYS))   /* before Linux 5.14; a filter */
		__atomic_store_n(&populate_refused, true, __ATOMIC_RELAXED);
	errno = saved_errno;
}

/* The pages of [p, p + len), a static table about to be written in many
 * places, mapped in one system call where the kernel can, their contents
 * unchanged: fewer faults, at the price of mapping pages that would not
 * have been written. */
void cv__populate_pages(const void *p, size_t len)
{
	uintptr_t mask = CV_PAGE_MIN - 1;
	populate((uintptr_t)p & ~mask, ((uintptr_t)p + len + mask) & ~mask);
}

static void touch(void *p, size_t len)
{
	for (uintptr_t a = (uintptr_t)p, end = a + len; a < end; a = (a | (CV_PAGE_MIN - 1)) + 1)
		*(volatile char *)a = 0;   /* fresh and zero, seen by no other thread yet */
}

/* A table of its own mapping (past CV_CLASS_MAX: cv__alloc) in one call,
 * not a fault a page; a smaller block's pages are written already (carved,
 * or zeroed off a free list). */
void cv__touch_pages(void *p, size_t len)
{
	if (len > CV_CLASS_MAX)
		cv__populate_pages(p, len);
	touch(p, len);
}

/* A chunk's pages are mapped in batches ahead of the bump pointer, one
 * madvise(MADV_POPULATE_WRITE) for many pages: a page fault costs about
 * 9 us on the development VM (an exception, a VM exit), a page populated
 * in a batch about 4 (docs/performance.md, "Many locks"). The batch
 * reaches twice as far again as the chunk has handed out (a process that
 * makes one thread and a few objects maps a page or two, as before), at
 * most 2 * CV_POPULATE_MAX, and the next is asked for once the carves are
 * half way through it, so that other threads carving meanwhile find their
 * pages there. Whoever moves the mark asks; a carve whose pages are not
 * there yet (the asker still in the call, a refusal) touches them itself,
 * so this is only ever a saving. */
static void populate_ahead(struct chunk *c, size_t end)
{
	size_t done = __atomic_load_n(&c->populated, __ATOMIC_RELAXED);
	size_t ahead = end < CV_POPULATE_MAX ? end : CV_POPULATE_MAX;
	if (end + ahead <= done)
		return;
	uintptr_t lo = (uintptr_t)(c->data + done) & ~(uintptr_t)(CV_PAGE_MIN - 1);
	uintptr_t hi = ((uintptr_t)(c->data + end + 2 * ahead) + CV_PAGE_MIN - 1) & ~(uintptr_t)(CV_PAGE_MIN - 1);
	if (hi > (uintptr_t)c + CV_CHUNK)
		hi = (uintptr_t)c + CV_CHUNK;
	if (hi > (uintptr_t)(c->data + done) &&   /* else the chunk's end is reached */
	    __atomic_compare_exchange_n(&c->populated, &done, hi - (uintptr_t)c->data, false, __ATOMIC_RELAXED,
					__ATOMIC_RELAXED))
		populate(lo, hi);   /* else another carve moved the mark: it asks */
}

/* The offset in c's data of the first address at or past off that is a
 * multiple of align (a power of two). */
static size_t aligned_at(const struct chunk *c, size_t off, size_t align)
{
	uintptr_t at = (uintptr_t)c->data + off;
	return ((at + align - 1) & ~(uintptr_t)(align - 1)) - (uintptr_t)c->data;
}

/* size bytes at a multiple of align (16, or a line) from the current
 * chunk, or from a fresh one, every page written before the caller reads
 * any (shim.h, cv__touch_for_write). The bump pointer moves by a
 * compare-and-swap, so that an aligned block leaves no slack beyond the
 * pointer's distance to the next line (none when blocks of whole lines
 * follow each other). */
static void *carve(size_t size, size_t align)
{
	for (;;) {
		struct chunk *c = __atomic_load_n(&cur_chunk, __ATOMIC_ACQUIRE);
		if (c) {
			size_t off = __atomic_load_n(&c->used, __ATOMIC_RELAXED), at;
			bool fits;
			do
				fits = (at = aligned_at(c, off, align)) + size <= CV_CHUNK - sizeof(struct chunk);
			while (fits && !__atomic_compare_exchange_n(&c->used, &off, at + size, true, __ATOMIC_RELAXED,
								   __ATOMIC_RELAXED));
			if (fits) {
				populate_ahead(c, at + size);
				touch(c->data + at, size);
				return c->data + at;
			}
		}
		struct chunk *m = map(CV_CHUNK);
		if (!m)
			return NULL;
		size_t at = aligned_at(m, 0, align);
		m->used = at + size;
		if (__atomic_compare_exchange_n(&cur_chunk, &c, m, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
			populate_ahead(m, at + size);
			touch(m->data + at, size);
			return m->data + at;
		}
		cv__munmap(m, CV_CHUNK);   /* another thread installed one first: use it */
	}
}

void *cv__alloc(size_t size)
{
	if (size > CV_CLASS_MAX)
		return map(size);   /* fresh anonymous pages are zero */
	size_t class_size;
	unsigned c = class_of(size, &class_size);
	void *p = pop(c);
	if (p) {
		memset(p, 0, class_size);
		return p;
	}
	/* Chunk memory is fresh: zero. Line-sized classes are line-aligned
	 * (every block of the class is carved here, so recycled ones are
	 * too): records and thread states share no line with another
	 * thread's, and carve aligns them without padding each block. */
	return carve(class_size, class_size % CV_CACHELINE ? 16 : CV_CACHELINE);
}

void cv__free(void *p, size_t size)
{
	if (!p)
		return;
	if (size > CV_CLASS_MAX) {
		if (!cv__off())   /* see map */
			cv__munmap(p, size);
		return;
	}
	size_t class_size;
	push(class_of(size, &class_size), p);
}

/* ---- a stack of the shim's own -------------------------------------------- */

void cv__all_but_faults(sigset_t *set)
{
	static const int faults[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS };
	sigfillset(set);
	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
		sigdelset(set, faults[i]);
}

/* At the top of the mapping, above the stack: nothing on the caller's. */
struct own_call {
	ucontext_t caller, callee;
	sigset_t   before;    /* the caller's mask, back after the call */
	void     (*fn)(void *);
	void      *arg;
	struct own_call *outer;   /* the call this one is within, if any */
	char      *stack;
	size_t     stack_size;
	char      *map;       /* to unmap after the call, map_len bytes; NULL: the kept stack */
	size_t     map_len;
};
/* The call in progress on this thread (a fault's handler may make another). */
static __thread struct own_call *own_call;

static void own_call_run(void)
{
	own_call->fn(own_call->arg);
}   /* returns to own_call->caller (uc_link) */

/* To own_call's stack and back. Everything after getcontext is read from
 * memory (own_call): as far as the compiler knows it returns twice. */
static CV_NOINLINE bool own_call_switch(void)
{
	if (getcontext(&own_call->callee) != 0)
		return false;
	struct own_call *c = own_call;
	c->callee.uc_stack.ss_sp = c->stack;
	c->callee.uc_stack.ss_size = c->stack_size;
	c->callee.uc_link = &c->caller;
	makecontext(&c->callee, own_call_run, 0);
	return swapcontext(&c->caller, &c->callee) == 0;
}

/* A stack for a call: size bytes with a guard page below and top bytes
 * above (its call's own_call), one mapping; NULL when none could be had. */
static char *map_stack(size_t page, size_t size, size_t top)
{
	char *m = cv__mmap(NULL, page + size + top, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	cv__mprotect(m, page, PROT_NONE);   /* the guard page */
	return m;
}

/* The stack the calls without room on the caller's take when it is free
 * (the profile's writer's from a small stack: one call a process,
 * usually), mapped at its first use and kept: the unmap after each call,
 * whose TLB shootdown reaches every CPU the program ran on, is saved
 * (docs/performance.md, "The shim's locks, its writer's stack and a
 * thread's state"), and a process that never writes has no address space
 * taken for it (a program under a tight RLIMIT_AS counts it). A call
 * while it is taken (another thread's, a fault handler's within one, a
 * fork child of either) maps one of its own and unmaps it after. */
#define KEPT_SIZE (256u << 10)
static char *kept_map;
static int kept_taken;

/* The fork child: the kept stack is free unless this thread's own call
 * is on it (a fault handler within the write that forked); another
 * thread's call, taken at the fork, is not the child's. */
void cv__own_stack_after_fork(void)
{
	bool mine = false;
	for (const struct own_call *c = own_call; c; c = c->outer)
		mine |= !c->map;
	if (!mine)
		__atomic_store_n(&kept_taken, 0, __ATOMIC_RELAXED);
}

/* The stack of size bytes for a call, [m + page, m + page + size), its
 * own_call above it: the kept one, else a mapping (*len bytes, to unmap
 * after; 0 for the kept); NULL when none could be had. */
static char *own_stack(size_t size, size_t page, size_t top, size_t *len)
{
	if (size <= KEPT_SIZE && !__atomic_exchange_n(&kept_taken, 1, __ATOMIC_ACQUIRE)) {
		if (kept_map || (kept_map = map_stack(page, KEPT_SIZE, top)) != NULL) {
			*len = 0;
			return kept_map + KEPT_SIZE - size;
		}
		__atomic_store_n(&kept_taken, 0, __ATOMIC_RELEASE);
	}
	*len = page + size + top;
	return map_stack(page, size, top);
}

/* Whether the caller's stack has size bytes below its frame for the call,
 * by the calling thread's bounds (stacks.c, cv__stack_room: its own stack,
 * or the alternate signal stack it is on, whose own base bounds the room
 * there; unknown bounds, no room; none at all once a stack may have been
 * set with SS_AUTODISARM, which a handler outside the trampoline may be on
 * unseen: shim.h, cv__altstacks_autodisarm) and, on the main thread's
 * stack, which grows on demand up to RLIMIT_STACK, within the limit of now
 * (the program may have lowered it since start). Not told apart: a
 * coroutine's stack carved from a frame on the thread's stack, whose end
 * may come before size (shim.h, cv__call_with_stack). The stack switch it
 * saves, with the kept stack's first mapping and first pages, was 60 to
 * 90 us of a short process's exit on the development VM
 * (docs/performance.md, "The writer on the caller's stack"). */
static bool room_here(size_t size)
{
	const struct cv_thread *t = cv__my_state;
	uintptr_t sp = cv__sp();
	if (!t || __atomic_load_n(&cv__altstacks_autodisarm, __ATOMIC_RELAXED) || !cv__stack_room(t, sp, size))
		return false;
	if (!(t->flags & CV_THREAD_MAIN) || !cv__on_thread_stack(t, sp))
		return true;
	struct rlimit rl;
	return cv__getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	       t->stack_top - sp + size <= rl.rlim_cur;
}

bool cv__call_with_stack(void (*fn)(void *), void *arg, size_t size, bool here_if_room)
{
	int saved_errno = errno;
	/* Blocked before the stack is claimed: a handler that jumped out
	 * between the claim and the call would leave the kept stack taken. */
	sigset_t blocked, before;
	cv__all_but_faults(&blocked);
	cv__sigmask(SIG_BLOCK, &blocked, &before);   /* the callee's context takes this mask too */
	if (here_if_room && room_here(size)) {
		fn(arg);
		cv__sigmask(SIG_SETMASK, &before, NULL);
		errno = saved_errno;
		return true;
	}
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t top = (sizeof(struct own_call) + page - 1) & ~(page - 1), len;
	char *m = own_stack(size, page, top, &len);
	if (!m) {
		cv__sigmask(SIG_SETMASK, &before, NULL);
		errno = saved_errno;
		return false;
	}
	struct own_call *c = (struct own_call *)(m + page + size);
	c->fn = fn;
	c->arg = arg;
	c->outer = own_call;
	c->stack = m + page;
	c->stack_size = size;
	c->map = len ? m : NULL;
	c->map_len = len;
	c->before = before;
	own_call = c;
	bool ran = own_call_switch();
	c = own_call;
	own_call = c->outer;
	before = c->before;   /* c is in the stack's memory, released next */
	if (c->map)
		cv__munmap(c->map, c->map_len);
	else
		__atomic_store_n(&kept_taken, 0, __ATOMIC_RELEASE);
	cv__sigmask(SIG_SETMASK, &before, NULL);
	errno = saved_errno;
	return ran;
}
