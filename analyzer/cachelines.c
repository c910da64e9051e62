/* cachelines.c — data addresses from CPU samples (cachelines.h).
 *
 * A cpu-clock sample interrupts a thread between two instructions: its IP
 * is the next instruction to run, and the one whose memory access stalled
 * the thread (a load or locked write of a line another CPU holds) is often
 * the one just before it. x86 code cannot be decoded backwards, so the
 * function containing the IP is disassembled from its ELF symbol's start to
 * find the previous instruction's boundary. That instruction's memory
 * operand is used when its address registers still hold what it used (it
 * did not write them; the sampled registers are those after it ran); else
 * the memory operand of the instruction at the IP itself (not yet run, so
 * its registers are exact). Each distinct IP is decoded once. Accesses
 * through the stack pointer and through FS/GS (thread-local) are skipped.
 * Each access keeps its address and its operand's size: a 1-byte flag
 * beside another variable, or two threads' 4-byte counters in one 8-byte
 * word, are different data, and sharing is judged by overlapping bytes.
 * A sample inside a spin loop (a compare-and-swap or test-and-set retry
 * loop, or a loop polling one word) is spinning on that word (a lock or a
 * lock-like counter), not a plain store or load.
 *
 * With a PMU, the launcher samples data addresses directly (Intel PEBS
 * mem-loads/mem-stores, AMD IBS op: sampler.c); those samples join the same
 * lines. Hardware watchpoints armed by the launcher on the candidate words
 * count each thread's writes exactly (watch.c): where a word was watched,
 * its writers are what the watchpoints counted, and a line's verdict is
 * confirmed, revised or withdrawn by them. A line whose samples are mostly
 * spinning on one word is that lock-like word's line: data written beside
 * it (under the lock) moves with it, and is no sharing verdict of its own.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cachelines.h"
#include "model.h"
#include "profile.h"
#include "samples.h"
#include "symbols.h"
#include "util.h"

#if defined(__x86_64__)
#include <capstone/capstone.h>
#define HAVE_DECODER 1
#else
#define HAVE_DECODER 0
#endif

const char *cachelines__verdict_name(enum line_verdict v)
{
	return v == LINE_FALSE_SHARING ? "false-sharing" : v == LINE_TRUE_SHARING ? "true-sharing"
	       : v == LINE_SPIN ? "spinning" : "private";
}

const char *cachelines__word_name(const struct model *m, uint64_t word, char *buf, size_t size)
{
	if (syms__data_name(m->syms, word, SYMS_ANY_GEN, buf, size))
		return buf;
	/* a sync object the profile knows (on the heap, say): by its row's name */
	for (size_t i = 0; i < m->p->nobjects; i++)
		if (m->p->objects[i].o.addr == word) {
			snprintf(buf, size, "%s", m->rows[i].name);
			return buf;
		}
	snprintf(buf, size, "0x%llx", (unsigned long long)word);
	return buf;
}

#if HAVE_DECODER
/* Capstone is opened when the first decoder is, not linked: its 77,000
 * relocations were 4.9 ms of the 8.7 that every convoy command took to
 * start (`perf stat -r 40` of a program that only links libcapstone), and
 * only profiles with samples decode. The soname is that of the headers
 * compiled against: another major version's cs_insn is not this one. */
#define CS_STR(x) #x
#define CS_SONAME(major) "libcapstone.so." CS_STR(major)
static struct {
	__typeof__(cs_open) *open;
	__typeof__(cs_option) *option;
	__typeof__(cs_disasm) *disasm;
	__typeof__(cs_free) *free;
	__typeof__(cs_close) *close;
	__typeof__(cs_regs_access) *regs_access;
	__typeof__(cs_insn_group) *insn_group;
} cs;
static bool cs_loaded;
static pthread_once_t cs_once = PTHREAD_ONCE_INIT;
static char cs_why_not[300];

static void load_capstone(void)
{
	const struct { const char *name; void **fn; } syms[] = {
		{ "cs_open", (void **)&cs.open },     { "cs_option", (void **)&cs.option },
		{ "cs_disasm", (void **)&cs.disasm }, { "cs_free", (void **)&cs.free },
		{ "cs_close", (void **)&cs.close },   { "cs_regs_access", (void **)&cs.regs_access },
		{ "cs_insn_group", (void **)&cs.insn_group },
	};
	void *lib = dlopen(CS_SONAME(CS_API_MAJOR), RTLD_NOW | RTLD_LOCAL);
	const char *err = lib ? NULL : dlerror();
	for (size_t i = 0; !err && i < sizeof(syms) / sizeof(syms[0]); i++)
		if (!(*syms[i].fn = dlsym(lib, syms[i].name)) && !(err = dlerror()))
			err = syms[i].name;   /* a symbol whose value is 0 */
	if (err) {
		snprintf(cs_why_not, sizeof(cs_why_not), "no instruction decoder (%s)", err);
		if (lib)
			dlclose(lib);
		memset(&cs, 0, sizeof(cs));
		return;
	}
	cs_loaded = true;
}

/* The last function disassembled is kept: the IPs of one function come
 * one after another (the analyzer decodes them sorted), and a function is
 * disassembled whole for its loops. */
struct insn_decoder {
	csh h;
	uint64_t start;
	unsigned char *code;         /* a copy of what was disassembled */
	size_t len;
	cs_insn *ins;
	size_t n;
};

struct insn_decoder *decoder__open(void)
{
	pthread_once(&cs_once, load_capstone);
	csh h;
	if (!cs_loaded || cs.open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return NULL;
	cs.option(h, CS_OPT_DETAIL, CS_OPT_ON);
	struct insn_decoder *d = xcalloc(1, sizeof(*d));
	d->h = h;
	return d;
}

const char *decoder__why_not(void)
{
	pthread_once(&cs_once, load_capstone);
	return cs_loaded ? "no instruction decoder (Capstone's cs_open failed)" : cs_why_not;
}

void decoder__close(struct insn_decoder *d)
{
	if (!d)
		return;
	if (d->n)
		cs.free(d->ins, d->n);
	free(d->code);
	cs.close(&d->h);
	free(d);
}

/* The sample register holding a Capstone register, in any width; -1 if none. */
static int sample_reg_of(unsigned reg)
{
	static const struct { enum sample_reg r; unsigned ids[4]; } gprs[] = {
		{ REG_AX, { X86_REG_RAX, X86_REG_EAX, X86_REG_AX, X86_REG_AL } },
		{ REG_BX, { X86_REG_RBX, X86_REG_EBX, X86_REG_BX, X86_REG_BL } },
		{ REG_CX, { X86_REG_RCX, X86_REG_ECX, X86_REG_CX, X86_REG_CL } },
		{ REG_DX, { X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL } },
		{ REG_SI, { X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL } },
		{ REG_DI, { X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL } },
		{ REG_BP, { X86_REG_RBP, X86_REG_EBP, X86_REG_BP, X86_REG_BPL } },
		{ REG_SP, { X86_REG_RSP, X86_REG_ESP, X86_REG_SP, X86_REG_SPL } },
		{ REG_R8,  { X86_REG_R8,  X86_REG_R8D,  X86_REG_R8W,  X86_REG_R8B } },
		{ REG_R9,  { X86_REG_R9,  X86_REG_R9D,  X86_REG_R9W,  X86_REG_R9B } },
		{ REG_R10, { X86_REG_R10, X86_REG_R10D, X86_REG_R10W, X86_REG_R10B } },
		{ REG_R11, { X86_REG_R11, X86_REG_R11D, X86_REG_R11W, X86_REG_R11B } },
		{ REG_R12, { X86_REG_R12, X86_REG_R12D, X86_REG_R12W, X86_REG_R12B } },
		{ REG_R13, { X86_REG_R13, X86_REG_R13D, X86_REG_R13W, X86_REG_R13B } },
		{ REG_R14, { X86_REG_R14, X86_REG_R14D, X86_REG_R14W, X86_REG_R14B } },
		{ REG_R15, { X86_REG_R15, X86_REG_R15D, X86_REG_R15W, X86_REG_R15B } },
	};
	for (size_t i = 0; i < sizeof(gprs) / sizeof(gprs[0]); i++)
		for (int k = 0; k < 4; k++)
			if (gprs[i].ids[k] == reg)
				return (int)gprs[i].r;
	return -1;
}

/* The memory operand of insn as an operand; 0 when it has none usable. */
static int memory_operand(const cs_insn *insn, struct data_operand *o)
{
	if (insn->id == X86_INS_LEA || insn->id == X86_INS_NOP)
		return 0;   /* no access */
	const cs_x86 *x = &insn->detail->x86;
	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		if (op->type != X86_OP_MEM)
			continue;
		if (op->mem.segment != X86_REG_INVALID)
			return 0;   /* FS/GS: thread-local */
		o->rip = 0;
		o->base = o->index = -1;
		if (op->mem.base == X86_REG_RIP)
			o->rip = insn->address + insn->size;
		else if (op->mem.base != X86_REG_INVALID && (o->base = sample_reg_of(op->mem.base)) < 0)
			return 0;
		if (op->mem.index != X86_REG_INVALID && (o->index = sample_reg_of(op->mem.index)) < 0)
			return 0;
		if (o->base == REG_SP)
			return 0;   /* the thread's own stack */
		o->scale = op->mem.scale;
		o->disp = op->mem.disp;
		o->size = op->size;
		o->write = (op->access & CS_AC_WRITE) != 0;
		return 1;
	}
	return 0;
}

/* Does insn write a register its own address uses? */
static int clobbers_address(csh h, const cs_insn *insn, const struct data_operand *o)
{
	cs_regs rd, wr;
	uint8_t nrd, nwr;
	if (cs.regs_access(h, (cs_insn *)insn, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return 1;
	for (int i = 0; i < nwr; i++) {
		int r = sample_reg_of(wr[i]);
		if (r >= 0 && (r == o->base || r == o->index))
			return 1;
	}
	return 0;
}

/* The read-modify-writes a lock is taken with: compare-and-swap,
 * exchange (test-and-set) and bit test-and-set/reset on memory. Not xadd or
 * a locked add: a shared counter's, whose result decides no retry. */
static int lock_rmw(const cs_insn *insn)
{
	switch (insn->id) {
	case X86_INS_CMPXCHG: case X86_INS_CMPXCHG8B: case X86_INS_CMPXCHG16B: case X86_INS_XCHG:
	case X86_INS_BTS: case X86_INS_BTR: case X86_INS_BTC:
		return 1;
	default:
		return 0;
	}
}

/* The registers insn writes and reads (Capstone ids). 0 on failure. */
static int regs_of(csh h, const cs_insn *insn, cs_regs rd, uint8_t *nrd, cs_regs wr, uint8_t *nwr)
{
	return cs.regs_access(h, (cs_insn *)insn, rd, nrd, wr, nwr) == CS_ERR_OK;
}

static int writes_flags(csh h, const cs_insn *insn)
{
	cs_regs rd, wr;
	uint8_t nrd, nwr;
	if (!regs_of(h, insn, rd, &nrd, wr, &nwr))
		return 1;
	for (int i = 0; i < nwr; i++)
		if (wr[i] == X86_REG_EFLAGS)
			return 1;
	return 0;
}

/* Does reader read a general register writer writes (in any width)? */
static int reads_result(csh h, const cs_insn *reader, const cs_insn *writer)
{
	cs_regs rd, wr, rd2, wr2;
	uint8_t nrd, nwr, nrd2, nwr2;
	if (!regs_of(h, reader, rd, &nrd, wr, &nwr) || !regs_of(h, writer, rd2, &nrd2, wr2, &nwr2))
		return 0;
	for (int i = 0; i < nrd; i++)
		for (int k = 0; k < nwr2; k++)
			if (sample_reg_of(rd[i]) >= 0 && sample_reg_of(rd[i]) == sample_reg_of(wr2[k]))
				return 1;
	return 0;
}

static int conditional_jump(csh h, const cs_insn *insn)
{
	return cs.insn_group(h, insn, X86_GRP_JUMP) && insn->id != X86_INS_JMP;
}

/* The same address, whatever the registers hold (RIP-relative operands of
 * two instructions: the same rip + disp). */
static int same_address(const struct data_operand *a, const struct data_operand *b)
{
	return a->base == b->base && a->index == b->index && (a->index < 0 || a->scale == b->scale) &&
	       a->rip + (uint64_t)a->disp == b->rip + (uint64_t)b->disp;
}

/* The first lock read-modify-write on memory in ins[first..last] whose
 * result a conditional branch in that range tests: the branch's flags come
 * from it, or from an instruction reading the register it wrote (xchg, then
 * test); n when none. */
static size_t tested_rmw(csh h, const cs_insn *ins, size_t first, size_t last, size_t n)
{
	struct data_operand o;
	for (size_t c = first; c <= last; c++) {
		if (!lock_rmw(&ins[c]) || !memory_operand(&ins[c], &o))
			continue;
		size_t setter = c;
		for (size_t i = c + 1; i <= last; i++) {
			if (conditional_jump(h, &ins[i])) {
				if (setter == c || reads_result(h, &ins[setter], &ins[c]))
					return c;
				break;
			}
			if (writes_flags(h, &ins[i]))
				setter = i;
		}
	}
	return n;
}

/* Does the compare-and-swap ins[c] store a value the loop computes from the
 * value it expected (in AX, the value last read)? Then the loop updates
 * data without a lock (a CAS-increment: lea rdx, [rax + 1]; lock cmpxchg
 * [counter], rdx), and its retries are a contended store, not a wait. A lock
 * stores a value fixed before its attempt (1, a thread id), however often it
 * retries. */
static int cas_updates_data(csh h, const cs_insn *ins, size_t first, size_t last, size_t c)
{
	const cs_x86 *x = &ins[c].detail->x86;
	if (ins[c].id != X86_INS_CMPXCHG || x->op_count != 2 || x->operands[1].type != X86_OP_REG)
		return 0;
	int stored = sample_reg_of(x->operands[1].reg);
	for (size_t i = first; i <= last; i++) {
		cs_regs rd, wr;
		uint8_t nrd, nwr;
		if (i == c || !regs_of(h, &ins[i], rd, &nrd, wr, &nwr))
			continue;
		int writes_stored = 0, reads_expected = 0;
		for (int k = 0; k < nwr; k++)
			writes_stored |= stored >= 0 && sample_reg_of(wr[k]) == stored;
		for (int k = 0; k < nrd; k++)
			reads_expected |= sample_reg_of(rd[k]) == REG_AX;
		if (writes_stored && reads_expected)
			return 1;
	}
	return 0;
}

/* Spin loops are short: a longer loop does work, not wait. */
#define SPIN_LOOP_MAX 24

/* A spin loop around ins[k]: a backward jump (conditional or not) to or
 * before ins[k], from at or after the instruction before it (a sample lands
 * just past the loop when the access it stalled on let it out), closing a
 * loop of at most SPIN_LOOP_MAX instructions that stores nothing but, at
 * most, through one lock read-modify-write, and leaves its word's address
 * registers alone (so the sampled registers give the address anywhere in
 * the loop). Either the loop retries a lock read-modify-write whose result
 * it tests (compare-and-swap, test-and-set with xchg or bts), or every
 * memory access in it reads one word: it polls it. That is the shape of a
 * user spinlock on __atomic_compare_exchange or __atomic_test_and_set (and
 * its read-only wait loop) and the rotated forms compilers make of them (a
 * retry block closed by a jmp), whatever the function is called. *o becomes
 * the word's operand, spun on (spin_loop); or, for a CAS loop that stores a
 * value computed from the one it read (cas_updates_data), written: a
 * lock-free update of shared data, whose sharing verdict stands. */
static int spin_loop(csh h, const cs_insn *ins, size_t n, size_t k, struct data_operand *o)
{
	for (size_t j = k > 0 ? k - 1 : 0; j < n && j < k + SPIN_LOOP_MAX; j++) {
		const cs_insn *br = &ins[j];
		if (!cs.insn_group(h, br, X86_GRP_JUMP))
			continue;
		const cs_x86 *x = &br->detail->x86;
		if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
			continue;
		uint64_t target = (uint64_t)x->operands[0].imm;
		if (target > ins[k].address || target < ins[0].address)
			continue;
		size_t first = k;
		while (first > 0 && ins[first].address > target)
			first--;
		if (ins[first].address != target || j - first >= SPIN_LOOP_MAX)
			continue;   /* not an instruction boundary, or a long loop */
		struct data_operand word;
		size_t c = tested_rmw(h, ins, first, j, n);
		int have = c < n && memory_operand(&ins[c], &word), polls = 1, conditional = 0;
		for (size_t i = first; i <= j && polls; i++) {
			struct data_operand m;
			conditional |= conditional_jump(h, &ins[i]);
			if (i == c || !memory_operand(&ins[i], &m))
				continue;
			if (!have) {
				word = m;
				have = 1;
			}
			polls = !m.write && same_address(&m, &word);
		}
		if (!have || !polls || !conditional)
			continue;
		int fixed = 1;
		for (size_t i = first; i <= j && fixed; i++)
			fixed = !clobbers_address(h, &ins[i], &word);
		if (!fixed)
			continue;
		word.ip = o->ip;
		word.write = c < n;
		word.spin_loop = !(c < n && cas_updates_data(h, ins, first, j, c));
		*o = word;
		return 1;
	}
	return 0;
}

int decoder__operand(struct insn_decoder *d, const unsigned char *code, uint64_t start, size_t len,
		     struct data_operand *o)
{
	o->ok = o->spin_loop = 0;
	if (o->ip < start || o->ip >= start + len)
		return 0;
	if (start != d->start || len != d->len || !d->code || memcmp(code, d->code, len)) {
		if (d->n)
			cs.free(d->ins, d->n);
		d->ins = NULL;
		d->n = cs.disasm(d->h, code, len, start, 0, &d->ins);
		free(d->code);
		d->code = xcalloc(1, len);
		memcpy(d->code, code, len);
		d->start = start;
		d->len = len;
	}
	const cs_insn *ins = d->ins;
	size_t n = d->n, k = 0;
	while (k < n && ins[k].address < o->ip)
		k++;
	/* The IP is an instruction boundary of this function, or nothing is
	 * decoded. Inside a spin loop the word spun on is the access; else the
	 * previous instruction's when it ends at the IP and its address
	 * registers still hold what it used, else the one at the IP. */
	if (k < n && ins[k].address == o->ip) {
		struct data_operand x = *o;
		if (spin_loop(d->h, ins, n, k, &x) ||
		    (k > 0 && ins[k - 1].address + ins[k - 1].size == o->ip && memory_operand(&ins[k - 1], &x) &&
		     !clobbers_address(d->h, &ins[k - 1], &x)) ||
		    memory_operand(&ins[k], &x)) {
			*o = x;
			o->ok = 1;
		}
	}
	return o->ok;
}
#else
struct insn_decoder *decoder__open(void) { return NULL; }
const char *decoder__why_not(void) { return "no instruction decoder for this machine"; }
void decoder__close(struct insn_decoder *d) { (void)d; }
int decoder__operand(struct insn_decoder *d, const unsigned char *code, uint64_t start, size_t len,
		     struct data_operand *o)
{
	(void)d, (void)code, (void)start, (void)len;
	o->ok = 0;
	return 0;
}
#endif

static int by_ip(const void *a, const void *b)
{
	const struct data_operand *x = a, *y = b;
	return x->ip < y->ip ? -1 : x->ip > y->ip;
}

uint64_t data_operand__address(const struct data_operand *o, const uint64_t *regs)
{
	return o->rip + (uint64_t)o->disp + (o->base >= 0 ? regs[o->base] : 0) +
	       (o->index >= 0 ? regs[o->index] * (uint64_t)o->scale : 0);
}

/* One sampled access: the bytes at word, size of them. */
struct access {
	uint64_t word;
	unsigned size;
	int thread;
	int write, spin, pmu;
};

/* Word, then size, then thread: the order accesses and uses are grouped in. */
static int cmp_word_size_thread(uint64_t w1, unsigned s1, int t1, uint64_t w2, unsigned s2, int t2)
{
	if (w1 != w2)
		return w1 < w2 ? -1 : 1;
	if (s1 != s2)
		return s1 < s2 ? -1 : 1;
	return t1 - t2;
}

static int by_word_thread(const void *a, const void *b)
{
	const struct access *x = a, *y = b;
	return cmp_word_size_thread(x->word, x->size, x->thread, y->word, y->size, y->thread);
}

static int use_by_word_thread(const void *a, const void *b)
{
	const struct word_use *x = a, *y = b;
	return cmp_word_size_thread(x->word, x->size, x->thread, y->word, y->size, y->thread);
}

int cachelines__overlap(const struct word_use *a, const struct word_use *b)
{
	return a->word < b->word + b->size && b->word < a->word + a->size;
}

/* Some thread spins on bytes u's accesses cover: a lock-like word. */

static int by_samples(const void *a, const void *b)
{
	const struct cache_line *x = a, *y = b;
	if (x->samples + x->pmu_samples != y->samples + y->pmu_samples)
		return x->samples + x->pmu_samples < y->samples + y->pmu_samples ? 1 : -1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Where a line's writes come from: the samples alone; the watchpoints'
 * counts where a thread's writes to a word were watched, else the samples;
 * the watchpoints alone (reads still from the samples: a watchpoint counts
 * writes only). */
enum writes_from { FROM_SAMPLES, FROM_BOTH, FROM_WATCHES };

static int writes_word(const struct word_use *u, enum writes_from from)
{
	if (from == FROM_SAMPLES || (from == FROM_BOTH && !u->watched))
		return u->writes > 0;
	return u->watched && u->watched_writes > 0;
}

/* Is u's word one threads spin on: sampled in a spin loop by one thread and
 * used by another too? A word only its spinner ever touches is a lock
 * nobody else takes (an uncontended mutex's own cmpxchg loop in glibc): its
 * thread waits for no one, and the word's writes are plain lock traffic. */
static int spun_on(const struct cache_line *l, const struct word_use *u)
{
	for (size_t k = 0; k < l->nuses; k++) {
		const struct word_use *s = &l->uses[k];
		if (!s->spins || !cachelines__overlap(s, u))
			continue;
		for (size_t j = 0; j < l->nuses; j++) {
			const struct word_use *v = &l->uses[j];
			if (v->thread != s->thread && cachelines__overlap(v, s) &&
			    (v->reads || v->spins || writes_word(v, FROM_BOTH)))
				return 1;
		}
	}
	return 0;
}

/* True sharing: bytes written by one thread and used by another; false
 * sharing: no such bytes, but threads write different words of the line.
 * Bytes threads spin on (spin_loop) are a lock, not data: left out of the
 * judgement. A line whose samples are at least half on such a word (its
 * spins, and the lock's other accesses: taking it, releasing it) is the
 * lock's (LINE_SPIN): the data written beside the lock, under it, moves
 * with it. So is a line whose only shared words are spun on. */
static enum line_verdict judge(struct cache_line *l, enum writes_from from)
{
	uint64_t threads = 0, writers = 0;   /* bit sets of thread indexes mod 64 */
	uint64_t on_lock = 0;                /* samples on spun-on words */
	int shared_word = 0;
	for (size_t i = 0; i < l->nuses; i++) {
		const struct word_use *u = &l->uses[i];
		int w = writes_word(u, from);
		if (spun_on(l, u))
			on_lock += u->reads + u->writes + u->spins;
		if ((!w && !u->reads) || spun_on(l, u))
			continue;
		threads |= 1ull << (u->thread % 64);
		if (!w)
			continue;
		writers |= 1ull << (u->thread % 64);
		for (size_t k = 0; k < l->nuses && !shared_word; k++) {
			const struct word_use *v = &l->uses[k];
			shared_word = v->thread != u->thread && cachelines__overlap(u, v) &&
				      (v->reads || writes_word(v, from)) && !spun_on(l, v);
		}
	}
	l->threads = __builtin_popcountll(threads);
	l->writers = __builtin_popcountll(writers);
	if (on_lock && 2 * on_lock >= l->samples + l->pmu_samples)
		return LINE_SPIN;
	if (l->threads >= 2 && l->writers)
		return shared_word ? LINE_TRUE_SHARING
		       : l->writers >= 2 || l->threads > l->writers ? LINE_FALSE_SHARING : LINE_PRIVATE;
	return l->spins ? LINE_SPIN : LINE_PRIVATE;
}

/* The data accesses of the CPU samples (decoded) and of the PMU's memory
 * samples, one per sample, into acc. */
static size_t accesses(struct cachelines *out, const struct samples *smp, const struct sample_threads *th,
		       const struct model *m, struct access *acc)
{
	struct insn_decoder *d = decoder__open();
	out->available = d != NULL;
	out->spinning = xcalloc(smp->n ? smp->n : 1, 1);
	size_t nacc = 0;
	/* Each distinct IP decoded once. */
	struct data_operand *ops = xcalloc(smp->n ? smp->n : 1, sizeof(*ops));
	size_t nops = 0;
	for (size_t i = 0; d && i < smp->n; i++)
		if (smp->v[i].kind == SAMPLE_CPU && th->cpu[i] >= 0 && smp->v[i].has_regs)
			ops[nops++].ip = smp->v[i].ip;
	qsort(ops, nops, sizeof(*ops), by_ip);
	size_t k = 0;
	for (size_t i = 0; i < nops; i++)
		if (!k || ops[k - 1].ip != ops[i].ip)
			ops[k++] = ops[i];
	nops = k;
	for (size_t i = 0; i < nops; i++) {
		uint64_t start;
		size_t len;
		const unsigned char *code = syms__function_code(m->syms, ops[i].ip, SYMS_ANY_GEN, &start, &len);
		if (code)
			decoder__operand(d, code, start, len, &ops[i]);
	}
	decoder__close(d);
	for (size_t i = 0; i < smp->n; i++) {
		const struct sample *x = &smp->v[i];
		if (x->kind != SAMPLE_CPU || th->cpu[i] < 0)
			continue;
		struct data_operand key = { .ip = x->ip };
		const struct data_operand *o = x->has_regs ? bsearch(&key, ops, nops, sizeof(*ops), by_ip) : NULL;
		if (!o || !o->ok) {
			out->undecoded++;
			continue;
		}
		acc[nacc++] = (struct access){ data_operand__address(o, x->regs), o->size ? o->size : 1, th->cpu[i],
					       o->write, o->spin_loop, 0 };
		out->decoded++;
		out->spin_loop += o->spin_loop;
		out->spinning[i] = (unsigned char)o->spin_loop;
	}
	free(ops);
	/* The PMU gives the address, not the access's size: its first byte. */
	for (size_t i = 0; i < smp->nmem; i++)
		if (th->mem[i] >= 0) {
			acc[nacc++] = (struct access){ smp->mem[i].addr, 1, th->mem[i], smp->mem[i].write, 0, 1 };
			out->pmu++;
		}
	return nacc;
}

/* The watchpoints' counts onto the lines the samples found: a thread's
 * writes to a watched word (its address and length as armed), and which
 * words were watched. */
static void add_watches(struct cachelines *out, const struct samples *smp, const struct sample_threads *th)
{
	for (size_t i = 0; i < smp->nwatch; i++) {
		const struct watch_rec *w = &smp->watch[i];
		struct cache_line *l = NULL;
		for (size_t k = 0; k < out->n && !l; k++)
			if (out->v[k].addr == w->addr / CACHE_LINE * CACHE_LINE)
				l = &out->v[k];
		if (!l || th->watch[i] < 0)
			continue;   /* a line no sample of the profile's threads used */
		/* A watchpoint over data sampled at other addresses too (version
		 * 2's 8 bytes over two 4-byte counters) counted writes to both:
		 * it cannot say who writes which. */
		int one_datum = 1;
		struct word_use watched = { .word = w->addr, .size = w->len }, *u = NULL;
		for (size_t k = 0; k < l->nuses; k++) {
			if (cachelines__overlap(&l->uses[k], &watched) && l->uses[k].word != w->addr)
				one_datum = 0;
			if (!u && l->uses[k].word == w->addr && l->uses[k].thread == th->watch[i])
				u = &l->uses[k];   /* the thread's sampled access there */
		}
		if (!one_datum)
			continue;
		if (!u) {
			struct word_use key = { .word = w->addr, .size = w->len, .thread = th->watch[i] };
			l->uses = xrealloc(l->uses, (l->nuses + 1) * sizeof(*l->uses));
			u = &l->uses[l->nuses++];
			*u = key;
		}
		u->watched = 1;
		u->watched_writes += w->writes;
		u->watched_ns += w->running_ns;
		l->watched_writes += w->writes;
		l->watched = 1;
		qsort(l->uses, l->nuses, sizeof(*l->uses), use_by_word_thread);
	}
}

void cachelines__build(struct cachelines *out, const struct samples *smp, const struct sample_threads *th,
		       const struct model *m)
{
	memset(out, 0, sizeof(*out));
	struct access *acc = xcalloc(smp->n + smp->nmem + 1, sizeof(*acc));
	size_t nacc = accesses(out, smp, th, m, acc);
	qsort(acc, nacc, sizeof(*acc), by_word_thread);
	/* Lines, each with its words' per-thread uses. */
	out->v = xcalloc(nacc ? nacc : 1, sizeof(*out->v));
	for (size_t i = 0; i < nacc;) {
		struct cache_line *l = &out->v[out->n++];
		l->addr = acc[i].word / CACHE_LINE * CACHE_LINE;
		size_t j = i;
		while (j < nacc && acc[j].word / CACHE_LINE * CACHE_LINE == l->addr)
			j++;
		l->uses = xcalloc(j - i, sizeof(*l->uses));
		for (size_t a = i; a < j; a++) {
			struct word_use *u = l->nuses ? &l->uses[l->nuses - 1] : NULL;
			if (!u || u->word != acc[a].word || u->size != acc[a].size || u->thread != acc[a].thread) {
				u = &l->uses[l->nuses++];
				u->word = acc[a].word;
				u->size = acc[a].size;
				u->thread = acc[a].thread;
			}
			l->spins += acc[a].spin;
			if (acc[a].spin)
				u->spins++;
			else if (acc[a].write)
				u->writes++;
			else
				u->reads++;
			if (acc[a].pmu)
				l->pmu_samples++;
			else
				l->samples++;
		}
		for (size_t o = 0; o < m->p->nobjects; o++)
			if (m->p->objects[o].o.addr / CACHE_LINE * CACHE_LINE == l->addr)
				l->sync_object = 1;
		i = j;
	}
	free(acc);
	add_watches(out, smp, th);
	for (size_t i = 0; i < out->n; i++) {
		struct cache_line *l = &out->v[i];
		l->sampled_verdict = judge(l, FROM_SAMPLES);
		l->watched_verdict = judge(l, FROM_WATCHES);
		l->verdict = judge(l, FROM_BOTH);   /* last: its threads and writers stay */
	}
	qsort(out->v, out->n, sizeof(*out->v), by_samples);
}

const char *cachelines__evidence_name(const struct cache_line *l)
{
	if (!l->watched)
		return "sampled";
	if (l->verdict != l->sampled_verdict)
		return l->verdict == LINE_TRUE_SHARING || l->verdict == LINE_FALSE_SHARING ? "revised" : "withdrawn";
	return l->watched_verdict == l->verdict ? "confirmed" : "watched";
}

void cachelines__free(struct cachelines *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].uses);
	free(c->v);
	free(c->spinning);
	memset(c, 0, sizeof(*c));
}
