/* symindex.c — a module's symbol table sorted by address (symindex.h).
 *
 * What dwfl_module_addrinfo chooses (elfutils' libdwfl/dwfl_module_addrsym.c):
 * of the symbols at or below the address with a name, a section and a
 * type other than section, file or TLS, it looks at the global ones first
 * and at the local ones only when no global one decided it. A symbol with
 * a size that covers the address is a candidate; taken in table order, a
 * candidate replaces the one held when it starts higher or binds more
 * strongly (global over weak over local), or when it starts at the same
 * address, binds as strongly and is smaller. With no such candidate, a
 * symbol without a size (an assembly label) is the answer if it lies in
 * the address's section and no symbol below the address ends past it; and
 * a global label exactly at the address keeps the local symbols from being
 * looked at. The tests (tests/analyzer/symindex.c) hold the index to the
 * libdw it is built with, on every byte of a library of such shapes among
 * others.
 *
 * The index answers the first case, which is nearly every address a
 * profile has (code inside functions, variables): the candidates are found
 * by binary search and a walk down while an earlier symbol could still
 * reach the address, then taken in table order as libdw takes them. It
 * also answers "no symbol" where no label could be chosen. Where a label
 * could be, which depends on sections, it leaves the answer to libdw.
 */
#include <gelf.h>
#include <stdlib.h>

#include "symindex.h"

struct sym_entry {
	uint64_t value;    /* the symbol's address in the module, as libdw reports it */
	uint64_t size;
	uint32_t idx;      /* its index in libdw's table: the order libdw looks at them */
	uint8_t  bind;     /* binding_rank */
	uint8_t  global;   /* in libdw's first pass */
	uint8_t  absolute; /* in no section (SHN_ABS, SHN_COMMON): a label only at its own address */
};

struct symindex {
	struct sym_entry *e;   /* sorted by value */
	/* The highest end (value + size, UINT64_MAX where that wraps) among
	 * e[0..k]: no symbol at or below e[k] covers an address at or past it
	 * but UINT64_MAX. */
	uint64_t *end;
	size_t n;
	bool local_pass;       /* libdw has a second pass, over the local symbols */
};

/* libdw's preference among bindings, higher is better. */
static uint8_t binding_rank(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL: return 3;
	case STB_WEAK:   return 2;
	case STB_LOCAL:  return 1;
	default:         return 0;
	}
}

static int by_value(const void *a, const void *b)
{
	const struct sym_entry *x = a, *y = b;
	return x->value < y->value ? -1 : x->value > y->value;   /* equals in any order: candidates go by idx */
}

static uint64_t end_of(const struct sym_entry *e)
{
	return e->value + e->size < e->value ? UINT64_MAX : e->value + e->size;
}

struct symindex symindex_none;

void symindex__free(struct symindex *ix)
{
	if (!ix || ix == SYMINDEX_NONE)
		return;
	free(ix->e);
	free(ix->end);
	free(ix);
}

struct symindex *symindex__build(Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod), first_global = dwfl_module_getsymtab_first_global(mod);
	/* Relocatable files (a base for each section) are not what a profile
	 * maps. Where a function's address is resolved from its symbol's
	 * value (ppc64's descriptors), libdw tries the symbol at both
	 * addresses: not indexed. */
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Ehdr ehdr;
	if (n <= 1 || first_global < 0 || !elf || !gelf_getehdr(elf, &ehdr) || ehdr.e_type == ET_REL ||
	    ehdr.e_machine == EM_PPC64)
		return NULL;
	struct symindex *ix = calloc(1, sizeof(*ix));
	if (!ix || !(ix->e = malloc((size_t)n * sizeof(*ix->e))))
		goto fail;
	int global_from = first_global == 0 ? 1 : first_global;
	ix->local_pass = first_global > 1;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &value, &shndx, NULL, NULL);
		if (!name || !*name || sym.st_shndx == SHN_UNDEF || GELF_ST_TYPE(sym.st_info) == STT_SECTION ||
		    GELF_ST_TYPE(sym.st_info) == STT_FILE || GELF_ST_TYPE(sym.st_info) == STT_TLS)
			continue;
		ix->e[ix->n++] = (struct sym_entry){ .value = value, .size = sym.st_size, .idx = (uint32_t)i,
						     .bind = binding_rank(&sym), .global = i >= global_from,
						     .absolute = shndx >= SHN_LORESERVE };
	}
	if (!ix->n)
		goto fail;
	qsort(ix->e, ix->n, sizeof(*ix->e), by_value);
	if (!(ix->end = malloc(ix->n * sizeof(*ix->end))))
		goto fail;
	uint64_t highest = 0;
	for (size_t k = 0; k < ix->n; k++) {
		uint64_t end = end_of(&ix->e[k]);
		highest = end > highest ? end : highest;
		ix->end[k] = highest;
	}
	return ix;
fail:
	symindex__free(ix);
	return NULL;
}

/* How many entries start at or below addr. */
static size_t at_or_below(const struct symindex *ix, uint64_t addr)
{
	size_t lo = 0, hi = ix->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix->e[mid].value <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether a symbol without a size that libdw could take for addr starts
 * at value, among the first pass's (global) or all: one in a section, or
 * an absolute one at addr itself. */
static bool label_at(const struct symindex *ix, uint64_t value, uint64_t addr, bool global_only)
{
	for (size_t k = at_or_below(ix, value); k > 0 && ix->e[k - 1].value == value; k--) {
		const struct sym_entry *e = &ix->e[k - 1];
		if (!e->size && (e->global || !global_only) && (!e->absolute || value == addr))
			return true;
	}
	return false;
}

/* libdw's choice among candidates (sized symbols covering the address) in
 * one pass, in table order: a candidate replaces the one held when it
 * starts higher or binds more strongly, or when it starts at the same
 * address, binds as strongly and is smaller. */
static const struct sym_entry *choose(const struct sym_entry *const *cand, size_t ncand, bool global)
{
	const struct sym_entry *held = NULL;
	for (size_t i = 0; i < ncand; i++) {
		const struct sym_entry *c = cand[i];
		if (c->global != global)
			continue;
		if (!held || held->value < c->value || held->bind < c->bind ||
		    (held->value == c->value && held->bind == c->bind && held->size > c->size))
			held = c;
	}
	return held;
}

/* Symbols that overlap the one an address is in are few (aliases of one
 * function); past these, libdw answers. */
#define CAND_MAX  32
#define WALK_MAX 256

bool symindex__lookup(const struct symindex *ix, Dwfl_Module *mod, uint64_t addr, const char **name,
		      GElf_Off *off, GElf_Sym *sym)
{
	if (addr == UINT64_MAX)
		return false;   /* a wrapped end is kept as UINT64_MAX: whether it covers this, libdw says */
	size_t below = at_or_below(ix, addr);
	const struct sym_entry *cand[CAND_MAX];
	size_t ncand = 0, walked = 0;
	for (size_t k = below; k > 0 && ix->end[k - 1] > addr; k--) {
		const struct sym_entry *e = &ix->e[k - 1];
		if (++walked > WALK_MAX)
			return false;
		if (e->size && addr - e->value < e->size) {
			if (ncand == CAND_MAX)
				return false;
			/* in table order: insertion by idx */
			size_t at = ncand++;
			for (; at > 0 && cand[at - 1]->idx > e->idx; at--)
				cand[at] = cand[at - 1];
			cand[at] = e;
		}
	}
	const struct sym_entry *chosen = choose(cand, ncand, true);
	if (!chosen && ix->local_pass) {
		/* A global label at addr in its section skips the locals:
		 * sections are libdw's to tell. */
		if (label_at(ix, addr, addr, true))
			return false;
		chosen = choose(cand, ncand, false);
	}
	if (chosen) {
		GElf_Sym found;
		GElf_Addr value;
		const char *found_name = dwfl_module_getsym_info(mod, (int)chosen->idx, &found, &value, NULL, NULL, NULL);
		if (!found_name)
			return false;
		*name = found_name;
		*off = addr - chosen->value;
		*sym = found;
		return true;
	}
	/* No sized symbol covers addr. A label is libdw's answer only where
	 * no symbol below addr (of either pass: without the second, every
	 * entry is in the first) ends past it: at the highest end below. */
	if (below > 0 && label_at(ix, ix->end[below - 1], addr, false))
		return false;
	*name = NULL;
	*off = 0;
	return true;
}

const char *symindex__addrinfo(struct symindex **ix, Dwfl_Module *mod, uint64_t addr, GElf_Off *off, GElf_Sym *sym)
{
	if (!*ix) {
		*ix = symindex__build(mod);
		if (!*ix)
			*ix = SYMINDEX_NONE;
	}
	const char *name;
	if (*ix != SYMINDEX_NONE && symindex__lookup(*ix, mod, addr, &name, off, sym))
		return name;
	return dwfl_module_addrinfo(mod, addr, off, sym, NULL, NULL, NULL);
}
