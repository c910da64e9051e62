/* unwind.c — user call chains from DWARF call-frame information (unwind.h).
 *
 * One Dwfl per process, its modules read from /proc/PID/maps when its first
 * sample comes, and attached (dwfl_attach_state) to callbacks that serve
 * the sample being unwound: its registers as the initial frame, its stack
 * copy as the only memory. libdwfl keeps each module's CFI once parsed, so
 * a sample costs the frames it walks. The modules are read again when a
 * sample's IP, or the last frame an unwind reached, lies in none of them:
 * the first samples may come before the dynamic loader mapped the C
 * library, and a dlopen maps more. A read that did not find the code waits
 * twice as long as the last before the next (from REFRESH_MIN_NS up to
 * REFRESH_MAX_NS: code outside every module, a JIT's, would otherwise read
 * them at every sample); one that found it, none. The modules go into a
 * new Dwfl that replaces the old only when the process still had modules:
 * the launcher drains the last samples after the process exited, when its
 * maps are empty.
 */
#include <elfutils/libdwfl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "samples.h"
#include "unwind.h"
#include "util.h"

#define MAX_PROCS 16                     /* processes with modules kept; the least recently used goes */
#define REFRESH_MIN_NS 1000000ull
#define REFRESH_MAX_NS 1000000000ull

struct proc {
	pid_t pid;
	Dwfl *dwfl;                      /* NULL: not read yet, or unreadable */
	uint64_t read_ns;                /* when the modules were last read (0: never) */
	uint64_t wait_ns;                /* before they may be read again for code they lack */
	uint64_t used;                   /* the unwinder's clock at its last sample */
};

struct unwinder {
	struct proc procs[MAX_PROCS];
	uint64_t clock;
	const struct unwind_sample *x;   /* the sample being unwound */
	uint64_t *frames;                /* its return addresses */
	size_t nframes, cap;
	int past_ip;                     /* the IP's own frame was passed */
	struct unwind_stats stats;
};

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* ---- the thread callbacks: the sample is the thread's whole state ------- */

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_arg)
{
	*thread_arg = arg;
	return true;
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
	if (*thread_arg)
		return 0;
	*thread_arg = arg;
	return ((struct unwinder *)arg)->x->tid;
}

/* Memory is the stack copy, nothing else: the process has run on since. */
static bool read_stack(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	const struct unwind_sample *x = ((struct unwinder *)arg)->x;
	uint64_t sp = x->regs[REG_SP];
	if (addr < sp || addr - sp > x->stack_len || x->stack_len - (addr - sp) < sizeof(*result))
		return false;
	memcpy(result, x->stack + (addr - sp), sizeof(*result));
	return true;
}

/* The x86-64 DWARF registers 0-16 (rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp,
 * r8-r15, the return address column) from perf's order. */
static bool initial_registers(Dwfl_Thread *thread, void *arg)
{
	const uint64_t *r = ((struct unwinder *)arg)->x->regs;
	static const int perf_of_dwarf[17] = { REG_AX,  REG_DX,  REG_CX,  REG_BX,  REG_SI,  REG_DI,
					       REG_BP,  REG_SP,  REG_R8,  REG_R9,  REG_R10, REG_R11,
					       REG_R12, REG_R13, REG_R14, REG_R15, REG_IP };
	Dwarf_Word dwarf[17];
	for (int i = 0; i < 17; i++)
		dwarf[i] = r[perf_of_dwarf[i]];
	dwfl_thread_state_register_pc(thread, r[REG_IP]);
	return dwfl_thread_state_registers(thread, 0, 17, dwarf);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = read_stack,
	.set_initial_registers = initial_registers,
};

/* No separate debug files: libdwfl tries a module's DWARF CFI wherever its
 * .eh_frame did not unwind a frame (the stack copy's end, mostly), and
 * reading a separate debug file for that (libc6-dbg's: some MB of
 * compressed DWARF) took 50 ms of the launcher's CPU per process; the
 * watcher's symbol lookups read the same file for the full symbol table,
 * about 9 ms a process (watch.c), and where DEBUGINFOD_URLS is set the
 * standard search would fetch files over the network while the program
 * runs. A module's own .debug_frame and .symtab are still read. */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name)
{
	return -1;
}

const Dwfl_Callbacks unwind_live_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = no_debuginfo,
};

/* ---- processes ---------------------------------------------------------- */

static int count_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
	++*(int *)arg;
	return DWARF_CB_OK;
}

/* Reads p's modules into a new Dwfl, which replaces p's when it has any. */
static void read_modules(struct unwinder *u, struct proc *p)
{
	p->read_ns = now_ns();
	Dwfl *d = dwfl_begin(&unwind_live_callbacks);
	if (!d)
		return;
	dwfl_report_begin(d);
	int rc = dwfl_linux_proc_report(d, p->pid), n = 0;
	dwfl_report_end(d, NULL, NULL);
	if (rc == 0)
		dwfl_getmodules(d, count_module, &n, 0);
	/* The machine is the first module's (the sampler unwinds only samples
	 * with 64-bit registers). */
	if (n == 0 || !dwfl_attach_state(d, NULL, p->pid, &thread_callbacks, u)) {
		dwfl_end(d);
		return;
	}
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = d;
}

static struct proc *proc_of(struct unwinder *u, pid_t pid)
{
	struct proc *p = &u->procs[0];
	for (int i = 0; i < MAX_PROCS; i++) {
		if (u->procs[i].pid == pid) {
			p = &u->procs[i];
			break;
		}
		if (u->procs[i].used < p->used)
			p = &u->procs[i];   /* the least recently used (or a free slot) */
	}
	if (p->pid != pid) {
		if (p->dwfl)
			dwfl_end(p->dwfl);
		*p = (struct proc){ .pid = pid };
	}
	p->used = ++u->clock;
	if (!p->read_ns)
		read_modules(u, p);
	return p;
}

/* Whether pc is in a module's executable segment: a chain that ran into
 * data (a frame pointer through code that keeps none) may point into a
 * module's .data or .bss. (The program headers, not the sections: libdwfl
 * finds an address's section through the module's DWARF, which it would
 * read and decompress for this.) */
static int in_code(Dwfl *dwfl, uint64_t pc, int return_address)
{
	Dwarf_Addr addr = return_address ? pc - 1 : pc, bias;
	Dwfl_Module *mod = pc ? dwfl_addrmodule(dwfl, addr) : NULL;
	Elf *elf = mod ? dwfl_module_getelf(mod, &bias) : NULL;
	size_t n;
	if (!elf || elf_getphdrnum(elf, &n) != 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    addr - bias >= ph.p_vaddr && addr - bias < ph.p_vaddr + ph.p_memsz)
			return 1;
	}
	return 0;
}

/* Reads the modules again when pc is in none of them and the last such
 * read is long enough ago (p->wait_ns). Returns 1 when it read them. */
static int refresh(struct unwinder *u, struct proc *p, uint64_t pc, int return_address)
{
	if (p->dwfl && in_code(p->dwfl, pc, return_address))
		return 0;
	if (now_ns() - p->read_ns < p->wait_ns)
		return 0;
	read_modules(u, p);
	if (p->dwfl && in_code(p->dwfl, pc, return_address))
		p->wait_ns = 0;
	else
		p->wait_ns = p->wait_ns ? (2 * p->wait_ns < REFRESH_MAX_NS ? 2 * p->wait_ns : REFRESH_MAX_NS)
					: REFRESH_MIN_NS;
	return 1;
}

/* ---- unwinding ---------------------------------------------------------- */

static int on_frame(Dwfl_Frame *state, void *arg)
{
	struct unwinder *u = arg;
	Dwarf_Addr pc;
	if (!dwfl_frame_pc(state, &pc, NULL) || !pc)
		return DWARF_CB_ABORT;
	if (!u->past_ip) {   /* the first frame is the IP's own */
		u->past_ip = 1;
		return DWARF_CB_OK;
	}
	u->frames[u->nframes++] = pc;
	return u->nframes < u->cap ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* Unwinds x into u->frames; how many frames are in p's code. */
static size_t unwind(struct unwinder *u, struct proc *p, const struct unwind_sample *x)
{
	u->x = x;
	u->nframes = 0;
	u->past_ip = 0;
	/* An error ends every unwind (no CFI past the outermost frame, the
	 * stack copy's end): the frames before it stand. */
	dwfl_getthread_frames(p->dwfl, x->tid, on_frame, u);
	size_t code = 0;
	for (size_t i = 0; i < u->nframes; i++)
		code += (size_t)in_code(p->dwfl, u->frames[i], 1);
	return code;
}

int unwinder__chain(struct unwinder *u, const struct unwind_sample *x, uint64_t *chain, size_t *n, size_t cap)
{
	struct proc *p = proc_of(u, x->pid);
	refresh(u, p, x->regs[REG_IP], 0);
	if (!p->dwfl || !cap) {
		u->stats.kept++;
		return 0;
	}
	uint64_t frames[cap];
	u->frames = frames;
	u->cap = cap;
	size_t code = unwind(u, p, x);
	if (u->nframes && refresh(u, p, frames[u->nframes - 1], 1) && p->dwfl)
		code = unwind(u, p, x);   /* it ran into code mapped since */
	size_t kernel = 0, join = *n;
	for (size_t i = 0; i < *n; i++) {
		kernel += (size_t)in_code(p->dwfl, chain[i], 1);
		if (join == *n && u->nframes && chain[i] == frames[u->nframes - 1])
			join = i;
	}
	/* A frame-pointer chain that passes through the unwind's last frame
	 * (where the stack copy ended) goes on where it stopped: its frames
	 * beyond continue the unwound ones. */
	for (size_t i = join + 1; i < *n && u->nframes < cap; i++) {
		frames[u->nframes++] = chain[i];
		code += (size_t)in_code(p->dwfl, chain[i], 1);
	}
	if (!code || code < kernel) {
		u->stats.kept++;
		return 0;
	}
	memcpy(chain, frames, u->nframes * sizeof(*chain));
	*n = u->nframes;
	u->stats.cfi++;
	return 1;
}

void unwinder__forget(struct unwinder *u, pid_t pid)
{
	for (int i = 0; i < MAX_PROCS; i++)
		if (u->procs[i].pid == pid) {
			if (u->procs[i].dwfl)
				dwfl_end(u->procs[i].dwfl);
			u->procs[i] = (struct proc){ 0 };
		}
}

struct unwinder *unwinder__new(char *why, size_t size)
{
#if defined(__x86_64__)
	return xcalloc(1, sizeof(struct unwinder));
#else
	snprintf(why, size, "this launcher unwinds x86-64 only");
	return NULL;
#endif
}

void unwinder__stats(const struct unwinder *u, struct unwind_stats *out)
{
	*out = u ? u->stats : (struct unwind_stats){ 0 };
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	for (int i = 0; i < MAX_PROCS; i++)
		if (u->procs[i].dwfl)
			dwfl_end(u->procs[i].dwfl);
	free(u);
}
