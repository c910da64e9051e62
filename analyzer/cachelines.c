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
 *
 * With a PMU, memory-access sampling (PERF_SAMPLE_ADDR on precise load and
 * store events) would give the data addresses directly; convoy does not
 * open those yet, and no machine it has run on has one, so this decoder is
 * the only source (said in the report).
 */
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
	return v == LINE_FALSE_SHARING ? "false-sharing" : v == LINE_TRUE_SHARING ? "true-sharing" : "private";
}

const char *cachelines__word_name(const struct model *m, uint64_t word, char *buf, size_t size)
{
	if (syms__data_name(m->syms, word, SYMS_ANY_GEN, buf, size))
		return buf;
	/* a sync object the profile knows (on the heap, say): by its row's name */
	for (size_t i = 0; i < m->p->nobjects; i++)
		if (m->p->objects[i].o.addr / 8 * 8 == word) {
			snprintf(buf, size, "%s", m->rows[i].name);
			return buf;
		}
	snprintf(buf, size, "0x%llx", (unsigned long long)word);
	return buf;
}

/* How to compute one instruction's data address from sampled registers. */
struct operand {
	uint64_t ip;                 /* the sampled IP it was decoded for */
	int ok;
	int base, index;             /* enum sample_reg, or -1 */
	int scale;
	int64_t disp;
	uint64_t rip;                /* the value RIP-relative addressing adds (the next instruction) */
	int write;
};

#if HAVE_DECODER
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
static int memory_operand(const cs_insn *insn, struct operand *o)
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
		o->write = (op->access & CS_AC_WRITE) != 0;
		return 1;
	}
	return 0;
}

/* Does insn write a register its own address uses? */
static int clobbers_address(csh h, const cs_insn *insn, const struct operand *o)
{
	cs_regs rd, wr;
	uint8_t nrd, nwr;
	if (cs_regs_access(h, insn, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return 1;
	for (int i = 0; i < nwr; i++) {
		int r = sample_reg_of(wr[i]);
		if (r >= 0 && (r == o->base || r == o->index))
			return 1;
	}
	return 0;
}

static void decode(csh h, const struct model *m, struct operand *o)
{
	uint64_t start;
	size_t len;
	const unsigned char *code = syms__function_code(m->syms, o->ip, SYMS_ANY_GEN, &start, &len);
	if (!code)
		return;
	cs_insn *a = cs_malloc(h), *b = cs_malloc(h), *prev = NULL, *cur = a;
	const uint8_t *p = code;
	size_t left = len;
	uint64_t addr = start;
	int at_ip = 0;
	while (addr <= o->ip && cs_disasm_iter(h, &p, &left, &addr, cur)) {
		if (cur->address == o->ip) {
			at_ip = 1;
			break;
		}
		prev = cur;
		cur = cur == a ? b : a;
	}
	/* The previous instruction ends at the IP, or the IP is not an
	 * instruction boundary of this function (then decode nothing). */
	if (at_ip) {
		struct operand x = *o;
		if (prev && prev->address + prev->size == o->ip && memory_operand(prev, &x) && !clobbers_address(h, prev, &x)) {
			*o = x;
			o->ok = 1;
		} else if (memory_operand(cur, &x)) {
			*o = x;
			o->ok = 1;
		}
	}
	cs_free(a, 1);
	cs_free(b, 1);
}

static int by_ip(const void *a, const void *b)
{
	const struct operand *x = a, *y = b;
	return x->ip < y->ip ? -1 : x->ip > y->ip;
}

struct access {
	uint64_t word;
	int thread;
	int write;
};

static int by_word_thread(const void *a, const void *b)
{
	const struct access *x = a, *y = b;
	if (x->word != y->word)
		return x->word < y->word ? -1 : 1;
	if (x->thread != y->thread)
		return x->thread - y->thread;
	return x->write - y->write;
}

static int by_samples(const void *a, const void *b)
{
	const struct cache_line *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* True sharing: a word written by one thread and used by another; false
 * sharing: no such word, but threads write different words of the line. */
static void judge(struct cache_line *l, const struct profile *p)
{
	uint64_t threads = 0, writers = 0;   /* bit sets of thread indexes mod 64 */
	int shared_word = 0;
	for (size_t i = 0; i < l->nuses;) {
		size_t j = i;
		int users = 0, word_writers = 0;
		while (j < l->nuses && l->uses[j].word == l->uses[i].word) {
			users++;
			word_writers += l->uses[j].writes > 0;
			threads |= 1ull << (l->uses[j].thread % 64);
			if (l->uses[j].writes)
				writers |= 1ull << (l->uses[j].thread % 64);
			j++;
		}
		shared_word |= users >= 2 && word_writers >= 1;
		i = j;
	}
	l->threads = __builtin_popcountll(threads);
	l->writers = __builtin_popcountll(writers);
	l->verdict = l->threads < 2 || !l->writers ? LINE_PRIVATE : shared_word ? LINE_TRUE_SHARING
		     : l->writers >= 2 || l->threads > l->writers ? LINE_FALSE_SHARING : LINE_PRIVATE;
	for (size_t i = 0; i < p->nobjects; i++)
		if (p->objects[i].o.addr / CACHE_LINE * CACHE_LINE == l->addr)
			l->sync_object = 1;
}
#endif

void cachelines__build(struct cachelines *out, const struct samples *smp, const int *thread, const struct model *m)
{
	memset(out, 0, sizeof(*out));
	out->available = HAVE_DECODER;
#if HAVE_DECODER
	csh h;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) {
		out->available = 0;
		return;
	}
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	struct operand *ops = xcalloc(smp->n ? smp->n : 1, sizeof(*ops));
	size_t nops = 0;
	for (size_t i = 0; i < smp->n; i++)
		if (smp->v[i].kind == SAMPLE_CPU && thread[i] >= 0 && smp->v[i].has_regs)
			ops[nops++].ip = smp->v[i].ip;
	qsort(ops, nops, sizeof(*ops), by_ip);
	size_t k = 0;
	for (size_t i = 0; i < nops; i++)
		if (!k || ops[k - 1].ip != ops[i].ip)
			ops[k++] = ops[i];
	nops = k;
	for (size_t i = 0; i < nops; i++)
		decode(h, m, &ops[i]);
	cs_close(&h);
	struct access *acc = xcalloc(smp->n ? smp->n : 1, sizeof(*acc));
	size_t nacc = 0;
	for (size_t i = 0; i < smp->n; i++) {
		const struct sample *x = &smp->v[i];
		if (x->kind != SAMPLE_CPU || thread[i] < 0)
			continue;
		struct operand key = { .ip = x->ip };
		const struct operand *o = x->has_regs ? bsearch(&key, ops, nops, sizeof(*ops), by_ip) : NULL;
		if (!o || !o->ok) {
			out->undecoded++;
			continue;
		}
		uint64_t a = o->rip + (uint64_t)o->disp + (o->base >= 0 ? x->regs[o->base] : 0) +
			     (o->index >= 0 ? x->regs[o->index] * (uint64_t)o->scale : 0);
		acc[nacc++] = (struct access){ a & ~7ull, thread[i], o->write };
		out->decoded++;
	}
	free(ops);
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
			if (!u || u->word != acc[a].word || u->thread != acc[a].thread) {
				u = &l->uses[l->nuses++];
				u->word = acc[a].word;
				u->thread = acc[a].thread;
			}
			if (acc[a].write)
				u->writes++;
			else
				u->reads++;
			l->samples++;
		}
		judge(l, m->p);
		i = j;
	}
	free(acc);
	qsort(out->v, out->n, sizeof(*out->v), by_samples);
#else
	(void)smp;
	(void)thread;
	(void)m;
#endif
}

void cachelines__free(struct cachelines *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].uses);
	free(c->v);
	memset(c, 0, sizeof(*c));
}
