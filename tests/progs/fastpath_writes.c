/* fastpath_writes.c — run under libconvoy.so (tests/shim/fastpath.c): an
 * uncontended acquisition writes no memory outside the calling thread's own
 * lines.
 *
 * A worker thread does uncontended pthread_mutex_lock/unlock pairs (and
 * pthread_mutex_trylock/unlock, C11 mtx_lock/mtx_unlock,
 * pthread_spin_lock/unlock, pthread_rwlock_rdlock/wrlock/unlock,
 * sem_trywait/sem_post and sem_wait/sem_post pairs, and
 * pthread_cond_signal and _broadcast with nobody waiting) while hardware
 * watchpoints (perf_event_open, PERF_TYPE_BREAKPOINT, HW_BREAKPOINT_W,
 * counting writes by the worker only) sit on the lines other threads
 * read: both lines of the shim's object for the primitive, the first line
 * of its read-mostly block (cv__real: hold mask, real mutex functions),
 * and the first two lines of the main thread's state. Four debug
 * registers per thread, so the words are watched four at a time, one
 * round of pairs each; one register of every round watches the counter
 * the primitive's call bumps in the worker's own record (acquisitions,
 * trylocks, unwaited signals or broadcasts), which must count every call
 * (the watchpoints work).
 * The rounds include the 1-in-64 acquisitions whose hold time is sampled.
 *
 * Where watchpoints are refused or never fire (some virtual machines do
 * not pass the debug registers through), the same words are
 * watched by page protection instead: the pages that hold them are made
 * read-only for a round, every write to them faults, the handler notes
 * the address and the words' values, lets that one instruction write (the
 * page writable again and the trap flag set), and at the trap that
 * follows protects every page again and counts each word the fault's
 * address was in or whose value changed. Writes elsewhere on those pages
 * (the worker's own lines may share them) are stepped over, not counted;
 * the worker's own counter's page is protected too, so the control still
 * counts every pair. Only the worker's writes count, as with the
 * watchpoints; the kernel's are not seen by either. A death by SIGSEGV in
 * this mode is a write to one of those pages inside a shim section that
 * blocks signals (lock.c), which the program's handlers cannot see.
 *
 * White-box: the shim's layout comes from preload/shim.h, its symbols from
 * its ELF symbol table (libelf), the threads' states from their TLS blocks
 * (dlinfo RTLD_DI_TLS_DATA). Counts, not timings: the result is the same on
 * a busy machine.
 *
 * Exit 0 and "ok ..." when no watched word was written; 1 and one line per
 * written word otherwise; 77 when the shim is unavailable, or neither
 * watchpoints nor page protection can watch (not x86-64).
 */
#include <capstone/capstone.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>

#include "../../preload/shim.h"
#include "shimtrace.h"

#define PAIRS 256    /* per round: covers the sampled acquisitions (1 in 64), four times */

enum prim {
	PRIM_MUTEX, PRIM_TRYLOCK, PRIM_MTX, PRIM_SPIN, PRIM_RDLOCK, PRIM_WRLOCK, PRIM_SEMTRY, PRIM_SEMWAIT,
	PRIM_SIGNAL, PRIM_BROADCAST, NPRIMS
};
static const char *const prim_names[] = {
	"mutex lock+unlock", "mutex trylock+unlock", "mtx_lock+mtx_unlock", "spin lock+unlock",
	"rwlock rdlock+unlock", "rwlock wrlock+unlock", "sem_trywait+sem_post", "sem_wait+sem_post",
	"cond signal (no waiter)", "cond broadcast (no waiter)"
};

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_spinlock_t spin;
static pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static mtx_t mtx;
static sem_t sem;   /* one token: every wait finds it */

static const char *shim_path;
static uintptr_t shim_base;
static size_t self_tls_off;   /* cv__self within the shim's TLS block */
static void *shim_handle;

static _Atomic int round_go, round_done, worker_prim = -1;
static _Atomic pid_t worker_tid;
static struct cv_thread *_Atomic worker_state;

static int find_shim(struct dl_phdr_info *info, size_t size, void *arg)
{
	if (info->dlpi_name && strstr(info->dlpi_name, "libconvoy.so")) {
		shim_path = info->dlpi_name;
		shim_base = info->dlpi_addr;
		return 1;
	}
	return 0;
}


/* The calling thread's cv__self. */
static struct cv_thread *my_state(void)
{
	void *tls = NULL;
	if (dlinfo(shim_handle, RTLD_DI_TLS_DATA, &tls) != 0 || !tls)
		return NULL;
	return *(struct cv_thread **)((char *)tls + self_tls_off);
}

static void one_pair(enum prim p)
{
	switch (p) {
	case PRIM_MUTEX: pthread_mutex_lock(&mutex); pthread_mutex_unlock(&mutex); break;
	case PRIM_TRYLOCK: pthread_mutex_trylock(&mutex); pthread_mutex_unlock(&mutex); break;
	case PRIM_RDLOCK: pthread_rwlock_rdlock(&rwlock); pthread_rwlock_unlock(&rwlock); break;
	case PRIM_WRLOCK: pthread_rwlock_wrlock(&rwlock); pthread_rwlock_unlock(&rwlock); break;
	case PRIM_MTX: mtx_lock(&mtx); mtx_unlock(&mtx); break;
	case PRIM_SPIN:  pthread_spin_lock(&spin); pthread_spin_unlock(&spin); break;
	case PRIM_SEMTRY: sem_trywait(&sem); sem_post(&sem); break;
	case PRIM_SEMWAIT: sem_wait(&sem); sem_post(&sem); break;
	case PRIM_SIGNAL: pthread_cond_signal(&cond); break;
	case PRIM_BROADCAST: pthread_cond_broadcast(&cond); break;
	default: break;
	}
}

/* A wait for the other thread's next step: a short sleep, not a spin, so
 * that the test costs the CPU time of its calls (a yield loop on each side
 * doubled it), and no call into the shim. */
static void nap(void)
{
	struct timespec t = { 0, 20000 };
	nanosleep(&t, NULL);
}

static void *worker(void *arg)
{
	for (int p = 0; p < NPRIMS; p++)   /* first uses: records made, caches filled, owner set */
		for (int i = 0; i < 100; i++)
			one_pair(p);
	atomic_store(&worker_tid, (pid_t)syscall(SYS_gettid));
	atomic_store(&worker_state, my_state());
	for (int seen = 0;;) {
		while (atomic_load(&round_go) == seen)
			nap();
		seen = atomic_load(&round_go);
		int p = atomic_load(&worker_prim);
		if (p < 0)
			return NULL;
		for (int i = 0; i < PAIRS; i++)
			one_pair(p);
		atomic_store(&round_done, seen);
	}
}

static int watch(pid_t tid, const void *addr)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_BREAKPOINT;
	a.size = sizeof(a);
	a.bp_type = HW_BREAKPOINT_W;
	a.bp_addr = (uintptr_t)addr;
	a.bp_len = HW_BREAKPOINT_LEN_8;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	return (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, 0);
}

/* Its count; *whole false when the watchpoint was off the CPU's debug
 * registers for part of the round (another process's breakpoints, such as
 * a test's `convoy run` watching cache lines, took the four of them). */
static long long count_of(int fd, bool *whole)
{
	struct { long long value; unsigned long long enabled, running; } v;
	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return -1;
	if (v.running < v.enabled)
		*whole = false;
	return v.value;
}

struct word { const char *what; const uint64_t *addr; };

/* The record of the object at addr in a thread's cache of n entries;
 * NULL when it is in none. Every entry is looked at, not only addr's own:
 * a record may sit in its entry's partner (shim.h, cv__way_partner), as
 * when two objects of one family hash to one entry (mutex and mtx share
 * the mutex cache, and where they fall changes with the addresses). */
static struct cv_rec *cached_rec(const struct cv_way *cache, size_t n, const void *addr)
{
	for (size_t i = 0; i < n; i++)
		if (cache[i].obj && cache[i].obj->addr == addr)
			return cache[i].rec;
	return NULL;
}
#define CACHED_REC(cache, addr) cached_rec(cache, sizeof(cache) / sizeof((cache)[0]), addr)

/* Whether this machine's watchpoints count at all (perf_event_open may be
 * refused, and some virtual machines accept them but never pass the debug
 * registers through): one on a word of this program's, written by this
 * thread. Without it a control that counted nothing would read as a shim
 * that stopped counting. */
static volatile uint64_t probe_word;

static bool watchpoints_count(void)
{
	int fd = watch(0, (const uint64_t *)&probe_word);
	if (fd < 0)
		return false;
	for (int i = 0; i < 8; i++)
		probe_word = (uint64_t)i;
	bool whole = true;
	long long n = count_of(fd, &whole);
	close(fd);
	return n > 0;
}

/* A counting watchpoint never signals, but on a busy machine the kernel can
 * still deliver a stray SIGTRAP to the watched thread when a breakpoint is
 * stopped (throttled or closed) as it fires: it killed this program beside
 * CPU hogs, 1 run in about 20. That write then goes uncounted (CI once saw
 * the worker's own counter at 999 of 1000), so a round in which a stray
 * trap came is run again. */
static _Atomic int stray_traps;

static void stray_trap(int sig)
{
	(void)sig;
	atomic_fetch_add(&stray_traps, 1);
}

/* ---- page protection, where watchpoints never fire ------------------------ */

#define MAX_WORDS 48   /* below 64: step_hit is a mask of them */
#define MAX_PAGES 16
#define TRAP_FLAG 0x100   /* EFLAGS.TF: a trap after the next instruction */

static const uint64_t *prot_words[MAX_WORDS];   /* [0]: the control */
static uint64_t prot_before[MAX_WORDS];         /* each word before the stepped write */
static _Atomic long prot_hits[MAX_WORDS];
static int prot_nwords;
static uintptr_t prot_pages[MAX_PAGES];
static int prot_npages;
static _Atomic int prot_broken;   /* an mprotect failed: the round proves nothing */
static long page_size;

static bool protected_page(uintptr_t page)
{
	for (int i = 0; i < prot_npages; i++)
		if (prot_pages[i] == page)
			return true;
	return false;
}

static void protect_pages(int prot)
{
	for (int i = 0; i < prot_npages; i++)
		if (mprotect((void *)prot_pages[i], (size_t)page_size, prot) != 0)
			atomic_store(&prot_broken, 1);
}

#if defined(__x86_64__)
static __thread bool step_counts;   /* the instruction being stepped is the worker's */
static __thread uint64_t step_hit;  /* the words the write was seen to cover (bit i: word i) */
static csh disasm;                  /* Capstone, opened before the rounds */
static cs_insn *disasm_insn;        /* its one instruction: nothing allocated in the handler */

/* How many bytes the instruction at pc writes (its widest written memory
 * operand); 8 when Capstone cannot tell. */
static size_t write_width(uintptr_t pc)
{
	const uint8_t *code = (const uint8_t *)pc;
	size_t len = 16, width = 0;
	uint64_t at = pc;
	if (!disasm_insn || !cs_disasm_iter(disasm, &code, &len, &at, disasm_insn))
		return 8;
	const cs_x86 *x = &disasm_insn->detail->x86;
	for (int i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM && (x->operands[i].access & CS_AC_WRITE) &&
		    x->operands[i].size > width)
			width = x->operands[i].size;
	return width ? width : 8;
}

/* A write to a protected page. By the worker (the only thread that runs
 * the shim during a round), a watched word counts when the bytes the
 * instruction writes from the fault's address (Capstone says how many)
 * overlap it, or when its value differs after the step. Then the page
 * opens for that one instruction. */
static void on_write_fault(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	uintptr_t at = (uintptr_t)si->si_addr, page = at & ~(uintptr_t)(page_size - 1);
	if (!protected_page(page)) {   /* a real fault: die of it */
		signal(sig, SIG_DFL);
		return;
	}
	step_counts = (pid_t)syscall(SYS_gettid) == atomic_load(&worker_tid);
	step_hit = 0;
	uintptr_t end = at + (step_counts ? write_width((uintptr_t)uc->uc_mcontext.gregs[REG_RIP]) : 0);
	for (int i = 0; step_counts && i < prot_nwords; i++) {
		prot_before[i] = *prot_words[i];
		if (at < (uintptr_t)(prot_words[i] + 1) && end > (uintptr_t)prot_words[i]) {
			atomic_fetch_add(&prot_hits[i], 1);
			step_hit |= 1ull << i;
		}
	}
	if (mprotect((void *)page, (size_t)page_size, PROT_READ | PROT_WRITE) != 0)
		atomic_store(&prot_broken, 1);
	uc->uc_mcontext.gregs[REG_EFL] |= TRAP_FLAG;
}

/* The instruction wrote: every page read-only again (a second fault
 * before this trap, by a store across two pages or by a handler's, may
 * have opened another), and the words compared. */
static void on_step(int sig, siginfo_t *si, void *ctx)
{
	(void)sig, (void)si;
	protect_pages(PROT_READ);
	for (int i = 0; step_counts && i < prot_nwords; i++)
		if (!(step_hit >> i & 1) && *prot_words[i] != prot_before[i])
			atomic_fetch_add(&prot_hits[i], 1);
	step_counts = false;
	((ucontext_t *)ctx)->uc_mcontext.gregs[REG_EFL] &= ~(greg_t)TRAP_FLAG;
}
#endif

static bool add_page(const void *addr)
{
	uintptr_t page = (uintptr_t)addr & ~(uintptr_t)(page_size - 1);
	if (protected_page(page))
		return true;
	if (prot_npages == MAX_PAGES)
		return false;
	prot_pages[prot_npages++] = page;
	return true;
}

/* One round of PAIRS of primitive p with words[0..n-1] and the control
 * watched by page protection; the same report as the watchpoint rounds. */
static int protected_round(enum prim p, const struct word *words, int n, const uint64_t *control, int round,
			   long long *control_count)
{
	prot_nwords = 0;
	prot_npages = 0;
	prot_words[prot_nwords++] = control;
	bool fits = add_page(control) && n < MAX_WORDS;
	for (int i = 0; fits && i < n; i++) {
		prot_words[prot_nwords++] = words[i].addr;
		fits = add_page(words[i].addr);
	}
	if (!fits) {
		printf("FAIL %s: more words or pages to watch than the page protection holds\n", prim_names[p]);
		return 1;
	}
	for (int i = 0; i < prot_nwords; i++) {
		atomic_store(&prot_hits[i], 0);
		prot_before[i] = *prot_words[i];
	}
	atomic_store(&worker_prim, p);
	protect_pages(PROT_READ);
	atomic_store(&round_go, round);
	while (atomic_load(&round_done) != round)
		nap();
	protect_pages(PROT_READ | PROT_WRITE);
	*control_count = atomic_load(&prot_hits[0]);
	if (atomic_load(&prot_broken)) {
		printf("FAIL %s: mprotect failed: %s\n", prim_names[p], strerror(errno));
		return 1;
	}
	int failed = 0;
	for (int i = 1; i < prot_nwords; i++) {
		long v = atomic_load(&prot_hits[i]);
		if (v != 0) {
			const struct word *wd = &words[i - 1];
			printf("FAIL %s: %ld writes to %s, word %td\n", prim_names[p], v, wd->what,
			       wd->addr - (const uint64_t *)((uintptr_t)wd->addr & ~(uintptr_t)63));
			failed = 1;
		}
	}
	return failed;
}

/* The control: the worker's own counter, written by every pair, must have
 * been seen written every time (the watching works). 1 when it was not. */
static int control_saw(enum prim p, long long c, const char *by, long long *control_min)
{
	if (*control_min < 0 || c < *control_min)
		*control_min = c;
	if (c >= PAIRS)
		return 0;
	printf("FAIL %s: %s on the worker's own counter saw %lld writes of %d\n", prim_names[p], by, c, PAIRS);
	return 1;
}

int main(void)
{
	dl_iterate_phdr(find_shim, NULL);
	GElf_Sym self_sym, real_sym;
	if (!shim_path || !shim_symbol(shim_path, "cv__self", &self_sym) ||
	    !shim_symbol(shim_path, "cv__real", &real_sym) || !(shim_handle = dlopen(shim_path, RTLD_LAZY | RTLD_NOLOAD))) {
		printf("skip: not under libconvoy.so, or its symbols are not readable\n");
		return 77;
	}
	bool by_pages = !watchpoints_count();
#if !defined(__x86_64__)
	if (by_pages) {
		printf("skip: hardware watchpoints are refused or never fire here, and page protection is x86-64's only\n");
		return 77;
	}
#else
	if (by_pages) {
		page_size = sysconf(_SC_PAGESIZE);
		if (cs_open(CS_ARCH_X86, CS_MODE_64, &disasm) == CS_ERR_OK &&
		    cs_option(disasm, CS_OPT_DETAIL, CS_OPT_ON) == CS_ERR_OK)
			disasm_insn = cs_malloc(disasm);
		struct sigaction fault = { .sa_sigaction = on_write_fault, .sa_flags = SA_SIGINFO };
		struct sigaction step = { .sa_sigaction = on_step, .sa_flags = SA_SIGINFO };
		sigaction(SIGSEGV, &fault, NULL);
		sigaction(SIGTRAP, &step, NULL);
	}
#endif
	self_tls_off = self_sym.st_value;
	struct sigaction trap = { .sa_handler = stray_trap };
	if (!by_pages)
		sigaction(SIGTRAP, &trap, NULL);
	pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
	mtx_init(&mtx, mtx_plain);
	sem_init(&sem, 0, 1);
	pthread_mutex_t mine = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&mine);   /* the main thread is tracked: its state exists */
	pthread_mutex_unlock(&mine);
	struct cv_thread *main_state = my_state();
	pthread_t th;
	pthread_create(&th, NULL, worker, NULL);
	while (!atomic_load(&worker_state))
		nap();
	struct cv_thread *w = atomic_load(&worker_state);
	pid_t tid = atomic_load(&worker_tid);
	if (!main_state || w == main_state || w->inert || main_state->inert) {
		printf("skip: the threads have no state of their own in the shim\n");
		return 77;
	}
	const uint64_t *real = (const uint64_t *)(shim_base + real_sym.st_value);
	struct cv_rec *mutex_rec = CACHED_REC(w->mutex_cache, &mutex), *mtx_rec = CACHED_REC(w->mutex_cache, &mtx);
	struct cv_rec *cond_rec = CACHED_REC(w->cond_cache, &cond);
	struct cv_rec *spin_rec = CACHED_REC(w->spin_cache, (const void *)&spin);
	struct cv_rec *rwlock_rec = CACHED_REC(w->rwlock_cache, &rwlock);
	struct cv_rec *sem_rec = CACHED_REC(w->sem_cache, &sem);
	if (!mutex_rec || !mtx_rec || !cond_rec || !spin_rec || !rwlock_rec || !sem_rec) {
		printf("FAIL the worker's caches lack a record of an object it just used\n");
		return 1;
	}
	struct cv_rec *recs[NPRIMS] = { mutex_rec, mutex_rec, mtx_rec, spin_rec, rwlock_rec,
					rwlock_rec, sem_rec, sem_rec, cond_rec, cond_rec };
	const uint64_t *controls[NPRIMS] = { &mutex_rec->acquisitions, &mutex_rec->trylocks, &mtx_rec->acquisitions,
					     &spin_rec->acquisitions, &rwlock_rec->rd_acquisitions,
					     &rwlock_rec->acquisitions, &sem_rec->trylocks, &sem_rec->acquisitions,
					     &cond_rec->signals_unwaited, &cond_rec->broadcasts_unwaited };

	int failed = 0, watched = 0, round = 0;
	long long control_min = -1;
	for (int p = 0; p < NPRIMS; p++) {
		struct word words[40];
		int n = 0;
		const uint64_t *obj = (const uint64_t *)recs[p]->obj;
		for (int i = 0; i < 16; i++)   /* shim.h: the read-mostly line, then the operations line */
			words[n++] = (struct word){ i < 8 ? "object, read-mostly line" : "object, operations line", obj + i };
		for (int i = 0; i < 8; i++)
			words[n++] = (struct word){ "cv__real, first line", real + i };
		for (int i = 0; i < 16; i++)
			words[n++] = (struct word){ "the main thread's state", (const uint64_t *)main_state + i };
		const uint64_t *control = controls[p];
		if (by_pages) {
			long long c = 0;
			failed |= protected_round(p, words, n, control, ++round, &c);
			watched += n;
			failed |= control_saw(p, c, "page protection", &control_min);
			continue;
		}
		for (int at = 0, again = 0; at < n; at += 3) {
			int fds[4], k = 0, traps = atomic_load(&stray_traps);
			fds[k++] = watch(tid, control);
			for (int j = at; j < n && j < at + 3; j++)
				fds[k++] = watch(tid, words[j].addr);
			for (int j = 0; j < k; j++)
				if (fds[j] < 0) {
					printf("skip: perf_event_open(PERF_TYPE_BREAKPOINT): %s\n", strerror(errno));
					return 77;
				}
			atomic_store(&worker_prim, p);
			atomic_store(&round_go, ++round);
			while (atomic_load(&round_done) != round)
				nap();
			bool whole = true;
			long long counts[4];
			for (int j = 0; j < k; j++)
				counts[j] = count_of(fds[j], &whole);
			if ((atomic_load(&stray_traps) != traps || !whole) && again++ < 10) {   /* a write may have gone uncounted */
				for (int j = 0; j < k; j++)
					close(fds[j]);
				at -= 3;
				continue;
			}
			failed |= control_saw(p, counts[0], "the watchpoint", &control_min);
			for (int j = 1; j < k; j++) {
				const struct word *wd = &words[at + j - 1];
				long long v = counts[j];
				watched++;
				if (v != 0) {
					printf("FAIL %s: %lld writes to %s, word %td\n", prim_names[p], v, wd->what,
					       wd->addr - (const uint64_t *)((uintptr_t)wd->addr & ~(uintptr_t)63));
					failed = 1;
				}
			}
			for (int j = 0; j < k; j++)
				close(fds[j]);
		}
	}
	atomic_store(&worker_prim, -1);
	atomic_store(&round_go, ++round);
	pthread_join(th, NULL);
	if (!failed)
		printf("ok: %d words watched %s over %d rounds of %d calls, none written; control counted >= %lld\n",
		       watched, by_pages ? "by page protection (no working watchpoints here)" : "by watchpoints",
		       round - 1, PAIRS, control_min);
	return failed;
}
