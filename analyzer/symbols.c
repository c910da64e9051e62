/* symbols.c — symbolization through libdwfl.
 *
 * Each module of the profile's map is reported at the load bias it had in the
 * recorded process, so process addresses look up directly. Modules whose file
 * is gone or has changed (build-id mismatch) are skipped: naming an address
 * from the wrong binary would be worse than not naming it. Separate debug
 * info is found by dwfl_standard_find_debuginfo: /usr/lib/debug/.build-id,
 * .gnu_debuglink next to the file or under /usr/lib/debug.
 *
 * The map keeps modules that were dlclose'd, so two of them may have used the
 * same addresses in different generations (include/convoy/profile.h,
 * cv_module). Modules go into "layers", each a Dwfl of modules that do not
 * overlap; a lookup picks the module by address and generation, then asks its
 * layer.
 *
 * Code: function, file:line and inlined frames (an index of the module's
 * functions, and the scopes inside the one that covers the address),
 * names demangled (Rust's and the C++ ABI's). Without DWARF, the ELF symbol
 * (.symtab, else .dynsym, which is what a stripped binary keeps), else
 * module+offset. Frames of the C library and the languages' standard
 * libraries, linked or inlined, are marked runtime: the program's own frame
 * is the innermost of the others.
 *
 * Data: the variable whose DW_OP_addr location covers the address, and the
 * member path inside it from its DWARF type (structs, unions' first level,
 * arrays of any rank), stopping at a synchronisation type: pool.queue_lock,
 * workers[3].lock.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile.h"
#include "symbols.h"
#include "symindex.h"
#include "util.h"

/* libiberty's demanglers, for Rust and the C++ ABI (libiberty-dev). */
#include <demangle.h>

struct var {
	uint64_t addr, size;         /* process addresses */
	Dwarf_Die die;
	char *qualified;             /* "ns::name", "func::name" */
};

/* A function's code, in DWARF (file) addresses: [lo, hi). */
struct fn_range {
	uint64_t lo, hi;
	Dwarf_Die die;
};

struct smod {
	const struct profile_module *pm;
	Dwfl_Module *mod;            /* NULL: the file is gone, changed or unreadable */
	const char *base;            /* file name */
	int shim, runtime;
	uint64_t offsets;            /* code addresses named module+offset: no symbol covered them */
	int vars_done;               /* 1: file and namespace scope indexed; 2: static locals too */
	struct var *vars;            /* sorted by addr */
	size_t nvars;
	int fns_done;
	struct fn_range *fns;        /* functions with code, namespaced ones included, sorted by lo */
	size_t nfns;
	struct addrinfo_memo *memo;  /* ADDRINFO_MEMO entries, made at the first lookup */
	struct symindex *index;      /* the symbol table by address (symindex__addrinfo's) */
};

/* dwfl_module_addrinfo's answers, remembered by address: an analysis asks
 * for the same addresses again and again (`convoy scale --replay` of
 * tests/data/sweeps/sleeping_helpers: 629 lookups, 10 addresses), and each
 * new one is a binary search of the module's index (symindex.h) or, for
 * what only libdw can tell, a pass over its whole symbol table. */
#define ADDRINFO_MEMO 256
struct addrinfo_memo {
	bool used;
	uint64_t addr;
	const char *name;            /* libdw's, alive with the module; NULL: no symbol */
	GElf_Off off;
	GElf_Sym sym;
};

struct frame_set {
	uint64_t pc;
	uint32_t gen;
	int is_return;
	size_t n;
	struct sym_frame *f;
	struct frame_set *next;
};

#define FRAME_BUCKETS 4096
#define UNIT_BUCKETS  256

/* A DIE that has children, in a unit's index (unit_scopes). */
struct scope_node {
	Dwarf_Off off, last;         /* its offset and the last of its subtree's */
	int parent;                  /* index of its parent; -1: the unit's DIE */
	Dwarf_Die die;
};

/* The DIEs that have children in one unit, in the order of their offsets
 * (DWARF lays a unit's tree out depth first): a DIE's parents without
 * dwarf_getscopes_die's walk of the unit from its start at each question. */
struct unit_scopes {
	Dwarf_CU *cu;
	struct scope_node *v;
	size_t n, cap;
	struct unit_scopes *next;
};

struct syms {
	const struct profile *p;
	void *aux;
	void (*aux_free)(void *);
	Dwfl **layers;
	size_t nlayers;
	struct smod *mods;           /* as the profile's modules */
	size_t nmods;
	struct frame_set *frames[FRAME_BUCKETS];
	struct unit_scopes *units[UNIT_BUCKETS];
	char **strings;              /* names we own */
	size_t nstrings, capstrings;
};

/* Where separate debug info is looked for: libdw's default (the file's
 * directory, its .debug/, /usr/lib/debug by path and by .build-id), or
 * CONVOY_DEBUGINFO_PATH in the same syntax ("+:.debug:/usr/lib/debug"). */
static char *debuginfo_path;

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static const char *keep(struct syms *s, char *str)
{
	if (!str)
		return NULL;
	if (s->nstrings == s->capstrings) {
		s->capstrings = s->capstrings ? s->capstrings * 2 : 64;
		s->strings = realloc(s->strings, s->capstrings * sizeof(*s->strings));
		if (!s->strings) {
			cv_error("out of memory");
			abort();
		}
	}
	s->strings[s->nstrings++] = str;
	return str;
}

static const char *keep_copy(struct syms *s, const char *str)
{
	return str ? keep(s, xstrndup(str, strlen(str))) : NULL;
}

/* The demangled form of name, or a copy of it, without a symbol
 * version (.symtab's "__pthread_mutex_lock@GLIBC_2.2.5"). Caller frees.
 * Rust's manglings first (v0 "_R...", and legacy "_ZN...17h<hash>E"
 * without the hash), with libiberty's demangler; then the C++ ABI's. */
static char *demangle(const char *name)
{
	if (!name)
		return NULL;
	char *bare = xstrndup(name, strcspn(name, "@"));
	char *rust = rust_demangle(bare, DMGL_PARAMS);
	if (rust) {
		free(bare);
		return rust;
	}
	/* __cxa_demangle's options: libstdc++'s is GCC's same demangler, a
	 * release older here (of 148,552 names of Debian's C++ libraries, 6
	 * LLVM decltype names print differently), and linking libstdc++ for
	 * it cost every command 1.6 ms to start. */
	char *cxx = bare[0] == '_' && bare[1] == 'Z' ? cplus_demangle_v3(bare, DMGL_PARAMS | DMGL_TYPES) : NULL;
	if (cxx) {
		free(bare);
		return cxx;
	}
	return bare;
}

/* The module's file, opened for libdwfl, if it is still the file the profile
 * recorded: a regular file (opened non-blocking, so a profile naming a FIFO
 * or a device cannot hang or disturb the analyzer) with the recorded build-id
 * (a rebuilt binary would name addresses wrongly). -1 otherwise. *file is
 * the path opened: libdwfl looks for separate debug info beside it. */
static int open_module_file(const struct profile_module *pm, char *file, size_t size)
{
	if (!pm->path || pm->path[0] != '/')
		return -1;   /* the vdso, or a name that is not a path */
	/* CONVOY_MODULES_DIR: modules are read from there only, by file name
	 * (recordings checked in with the binaries they ran, tests/data); their
	 * debug info too, so the recorded path is never opened. */
	const char *dir = getenv("CONVOY_MODULES_DIR");
	if (dir && *dir)
		snprintf(file, size, "%s/%s", dir, strrchr(pm->path, '/') + 1);
	else
		snprintf(file, size, "%s", pm->path);
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	if (!pm->m.build_id_len)
		return fd;   /* nothing recorded to compare */
	int same = 0;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *bits;
	ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &bits) : -1;
	if (n == (ssize_t)pm->m.build_id_len && memcmp(bits, pm->build_id, (size_t)n) == 0)
		same = 1;
	if (elf)
		elf_end(elf);
	if (!same) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The C and C++ runtime and the kernel's vDSO (clock_gettime): frames in
 * these are not "the program's code". */
static int runtime_module(const char *base)
{
	static const char *const prefixes[] = {
		"libc.so", "libc-", "ld-linux", "ld64.so", "libpthread", "libstdc++", "libgcc_s",
		"libm.so", "libdl.so", "librt.so", "libunwind", "libc++", "linux-vdso", "linux-gate",
	};
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(base, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

/* Layers: modules that overlap (a library dlclose'd and another loaded at
 * its address) cannot share one Dwfl, so each goes to a layer where it
 * overlaps nothing. Sweeping the modules by start address, a layer is free
 * for a module once every module in it ends at or before the module's start;
 * a min-heap of layers by end finds one in O(log layers), O(n log n) in all,
 * with as few layers as the most modules covering one address. */
struct layer_end {
	uint64_t end;
	size_t layer;
};

static void heap_push(struct layer_end *h, size_t *n, struct layer_end v)
{
	size_t i = (*n)++;
	while (i && h[(i - 1) / 2].end > v.end) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static struct layer_end heap_pop(struct layer_end *h, size_t *n)
{
	struct layer_end top = h[0], last = h[--*n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1].end < h[c].end)
			c++;
		if (h[c].end >= last.end)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = last;
	return top;
}

static const struct profile_module *sort_modules;

static int by_start(const void *a, const void *b)
{
	uint64_t x = sort_modules[*(const size_t *)a].m.start, y = sort_modules[*(const size_t *)b].m.start;
	return x < y ? -1 : x > y;
}

/* layer_of[i] for each module; returns the number of layers. */
static size_t assign_layers(const struct profile *p, size_t *layer_of)
{
	size_t n = p->nmodules, nlayers = 0, nheap = 0;
	size_t *order = xcalloc(n, sizeof(*order));
	struct layer_end *heap = xcalloc(n, sizeof(*heap));
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	sort_modules = p->modules;
	qsort(order, n, sizeof(*order), by_start);
	for (size_t k = 0; k < n; k++) {
		const struct cv_module *m = &p->modules[order[k]].m;
		struct layer_end l = { .layer = nlayers };
		if (nheap && heap[0].end <= m->start)
			l = heap_pop(heap, &nheap);
		else
			nlayers++;
		layer_of[order[k]] = l.layer;
		l.end = m->end > l.end ? m->end : l.end;
		heap_push(heap, &nheap, l);
	}
	free(order);
	free(heap);
	return nlayers;
}

struct syms *syms__load(const struct profile *p, int read_modules)
{
	struct syms *s = xcalloc(1, sizeof(*s));
	s->p = p;
	elf_version(EV_CURRENT);
	const char *dp = getenv("CONVOY_DEBUGINFO_PATH");
	debuginfo_path = dp && *dp ? (char *)dp : NULL;
	s->nmods = p->nmodules;
	s->mods = xcalloc(p->nmodules ? p->nmodules : 1, sizeof(*s->mods));
	size_t *layer_of = xcalloc(p->nmodules ? p->nmodules : 1, sizeof(size_t));
	s->nlayers = assign_layers(p, layer_of);
	s->layers = xcalloc(s->nlayers ? s->nlayers : 1, sizeof(*s->layers));
	for (size_t l = 0; l < s->nlayers; l++) {
		s->layers[l] = dwfl_begin(&callbacks);
		if (s->layers[l])
			dwfl_report_begin(s->layers[l]);
	}
	for (size_t i = 0; i < p->nmodules; i++) {
		const struct profile_module *pm = &p->modules[i];
		struct smod *m = &s->mods[i];
		m->pm = pm;
		const char *slash = pm->path ? strrchr(pm->path, '/') : NULL;
		m->base = slash ? slash + 1 : pm->path ? pm->path : "";
		m->shim = !strncmp(m->base, "libconvoy", 9);
		m->runtime = runtime_module(m->base);
		Dwfl *dwfl = s->layers[layer_of[i]];
		char file[4096];
		int fd = dwfl && read_modules ? open_module_file(pm, file, sizeof(file)) : -1;
		if (fd < 0)
			continue;   /* the vdso, a file that is gone, or one rebuilt since */
		m->mod = dwfl_report_elf(dwfl, pm->path, file, fd, pm->m.load_bias, false);
		if (!m->mod)
			close(fd);   /* consumed only on success */
	}
	for (size_t l = 0; l < s->nlayers; l++)
		if (s->layers[l])
			dwfl_report_end(s->layers[l], NULL, NULL);
	free(layer_of);
	return s;
}

const struct profile *syms__profile(const struct syms *s) { return s->p; }
void *syms__aux(struct syms *s) { return s->aux; }

void syms__set_aux(struct syms *s, void *aux, void (*free_fn)(void *))
{
	if (s->aux && s->aux_free)
		s->aux_free(s->aux);
	s->aux = aux;
	s->aux_free = free_fn;
}

void syms__free(struct syms *s)
{
	if (!s)
		return;
	if (s->aux && s->aux_free)
		s->aux_free(s->aux);
	for (size_t l = 0; l < s->nlayers; l++)
		if (s->layers[l])
			dwfl_end(s->layers[l]);
	for (size_t i = 0; i < s->nmods; i++) {
		free(s->mods[i].vars);
		free(s->mods[i].fns);
		free(s->mods[i].memo);
		symindex__free(s->mods[i].index);
	}
	for (size_t b = 0; b < FRAME_BUCKETS; b++) {
		for (struct frame_set *f = s->frames[b], *next; f; f = next) {
			next = f->next;
			free(f->f);
			free(f);
		}
	}
	for (size_t b = 0; b < UNIT_BUCKETS; b++) {
		for (struct unit_scopes *u = s->units[b], *next; u; u = next) {
			next = u->next;
			free(u->v);
			free(u);
		}
	}
	for (size_t i = 0; i < s->nstrings; i++)
		free(s->strings[i]);
	free(s->strings);
	free(s->layers);
	free(s->mods);
	free(s);
}

/* dwfl_module_addrinfo(m->mod, addr, off, sym, NULL, NULL, NULL) through
 * the module's memo (m->mod set: every caller checks); off and sym zeroed
 * where there is no symbol. */
static const char *addrinfo(struct smod *m, uint64_t addr, GElf_Off *off, GElf_Sym *sym)
{
	if (!m->memo)
		m->memo = xcalloc(ADDRINFO_MEMO, sizeof(*m->memo));
	struct addrinfo_memo *e = &m->memo[(addr * 0x9e3779b97f4a7c15ull) >> 56];
	if (!e->used || e->addr != addr) {
		*e = (struct addrinfo_memo){ .used = true, .addr = addr };
		e->name = symindex__addrinfo(&m->index, m->mod, addr, &e->off, &e->sym);
		if (!e->name) {
			e->off = 0;
			memset(&e->sym, 0, sizeof(e->sym));
		}
	}
	*off = e->off;
	*sym = e->sym;
	return e->name;
}

/* The module that covered addr in generation gen: one valid for gen if any,
 * else (SYMS_ANY_GEN, or a profile without generations) the one still loaded,
 * else the one loaded last. */
static struct smod *module_for(struct syms *s, uint64_t addr, uint32_t gen)
{
	struct smod *valid = NULL, *loaded = NULL, *latest = NULL;
	for (size_t i = 0; i < s->nmods; i++) {
		const struct cv_module *m = &s->mods[i].pm->m;
		if (addr < m->start || addr >= m->end)
			continue;
		if (gen != SYMS_ANY_GEN && m->map_gen <= gen && (!m->unload_gen || gen < m->unload_gen))
			valid = &s->mods[i];
		if (!m->unload_gen)
			loaded = &s->mods[i];
		if (!latest || m->map_gen >= latest->pm->m.map_gen)
			latest = &s->mods[i];
	}
	return valid ? valid : loaded ? loaded : latest;
}

const char *syms__module_of(struct syms *s, uint64_t addr, uint32_t gen, uint64_t *offset)
{
	struct smod *m = module_for(s, addr, gen);
	if (!m)
		return NULL;
	*offset = addr - m->pm->m.load_bias;
	return m->base;
}

const unsigned char *syms__function_code(struct syms *s, uint64_t addr, uint32_t gen, uint64_t *start, size_t *len)
{
	struct smod *m = module_for(s, addr, gen);
	if (!m || !m->mod)
		return NULL;
	GElf_Off off;
	GElf_Sym sym;
	if (!addrinfo(m, addr, &off, &sym) || !sym.st_size ||
	    GELF_ST_TYPE(sym.st_info) != STT_FUNC || off >= sym.st_size)
		return NULL;
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(m->mod, &bias);
	if (!elf)
		return NULL;
	/* The section holding the function's file addresses, read whole once
	 * (libelf keeps it as long as the module is open). */
	uint64_t file_start = addr - off - bias;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR) ||
		    file_start < sh.sh_addr || file_start + sym.st_size > sh.sh_addr + sh.sh_size)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			return NULL;
		*start = addr - off;
		*len = sym.st_size;
		return (const unsigned char *)d->d_buf + (file_start - sh.sh_addr);
	}
	return NULL;
}

const char *syms__name(struct syms *s, uint64_t addr, char *buf, size_t size)
{
	struct smod *m = module_for(s, addr, SYMS_ANY_GEN);
	if (!m || !m->mod)
		return NULL;
	GElf_Off off;
	GElf_Sym sym;
	const char *name = addrinfo(m, addr, &off, &sym);
	if (!name)
		return NULL;
	char *d = demangle(name);
	if (off)
		snprintf(buf, size, "%s+%llu", d, (unsigned long long)off);
	else
		snprintf(buf, size, "%s", d);
	free(d);
	return buf;
}

const char *syms__source(struct syms *s, uint64_t addr, char *buf, size_t size)
{
	struct smod *m = module_for(s, addr, SYMS_ANY_GEN);
	Dwfl_Line *line = m && m->mod ? dwfl_module_getsrc(m->mod, addr) : NULL;
	int lineno;
	const char *file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
	if (!file)
		return NULL;
	const char *slash = strrchr(file, '/');
	snprintf(buf, size, "%s:%d", slash ? slash + 1 : file, lineno);
	return buf;
}

/* ---- code ------------------------------------------------------------------ */

static const char *linkage_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *link = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	return link ? link : dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
}

/* An unnamed class with an operator() or a "<lambda>" constructor: a closure type. */
static int closure_type(Dwarf_Die *type)
{
	Dwarf_Die child;
	if (dwarf_child(type, &child) != 0)
		return 0;
	do {
		const char *n = dwarf_diename(&child);
		if (dwarf_tag(&child) == DW_TAG_subprogram && n &&
		    (!strncmp(n, "<lambda", 7) || !strcmp(n, "operator()")))
			return 1;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/* Adds die, and below it the DIEs in its subtree that have children, to
 * u; returns the last offset of its subtree. */
static Dwarf_Off index_scopes(struct unit_scopes *u, Dwarf_Die *die, int parent, int depth)
{
	if (u->n == u->cap)
		u->v = xrealloc(u->v, (u->cap = u->cap ? u->cap * 2 : 256) * sizeof(*u->v));
	int self = (int)u->n++;
	Dwarf_Off last = dwarf_dieoffset(die);
	u->v[self] = (struct scope_node){ .off = last, .parent = parent, .die = *die };
	Dwarf_Die child;
	if (depth < 256 && dwarf_child(die, &child) == 0) {
		do {
			Dwarf_Off end = dwarf_haschildren(&child) > 0 ? index_scopes(u, &child, self, depth + 1) :
									dwarf_dieoffset(&child);
			if (end > last)
				last = end;
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	u->v[self].last = last;
	return last;
}

/* What dwarf_getscopes_die gives: die, then the DIEs around it out to its
 * unit's, from the unit's index (made at its first question). Returns how
 * many, -1 on error. */
static int die_scopes(struct syms *s, Dwarf_Die *die, Dwarf_Die **out)
{
	Dwarf_Die unit;
	if (!dwarf_diecu(die, &unit, NULL, NULL))
		return -1;
	Dwarf_Off off = dwarf_dieoffset(die);
	size_t b = (size_t)(((uintptr_t)unit.cu * 0x9E3779B97F4A7C15ull) >> 56) % UNIT_BUCKETS;
	struct unit_scopes *u = s->units[b];
	while (u && u->cu != unit.cu)
		u = u->next;
	if (!u) {
		u = xcalloc(1, sizeof(*u));
		u->cu = unit.cu;
		index_scopes(u, &unit, -1, 0);
		u->next = s->units[b];
		s->units[b] = u;
	}
	size_t lo = 0, hi = u->n;
	while (lo < hi) {   /* the first node at or after die */
		size_t mid = (lo + hi) / 2;
		if (u->v[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	int at = (int)lo - 1;   /* the last node before die: it or one of its parents holds die */
	while (at >= 0 && u->v[at].last < off)
		at = u->v[at].parent;
	int n = 1;
	for (int i = at; i >= 0; i = u->v[i].parent)
		n++;
	*out = xcalloc((size_t)n, sizeof(**out));
	(*out)[0] = *die;
	n = 1;
	for (int i = at; i >= 0; i = u->v[i].parent)
		(*out)[n++] = u->v[i].die;
	return n;
}

/* A function DIE's name: the demangled linkage name, else DW_AT_name
 * qualified by the scopes around its declaration ("main::<lambda()>::
 * operator()": lambdas and inline functions may have no linkage name).
 * Both follow abstract_origin and specification. Caller frees. */
static char *die_function_name(struct syms *s, Dwarf_Die *die)
{
	const char *link = linkage_name(die);
	if (link)
		return demangle(link);
	Dwarf_Attribute a;
	const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
	if (!name)
		return NULL;
	Dwarf_Die origin = *die, next;
	for (int i = 0; i < 8; i++) {
		Dwarf_Attribute *r = dwarf_attr(&origin, DW_AT_abstract_origin, &a);
		if (!r)
			r = dwarf_attr(&origin, DW_AT_specification, &a);
		if (!r || !dwarf_formref_die(r, &next))
			break;
		origin = next;
	}
	Dwarf_Die *chain = NULL;
	int n = die_scopes(s, &origin, &chain);
	char buf[1024] = "";
	size_t len = 0;
	/* Outermost first; a function around it with a linkage name is already
	 * fully qualified, so start there. */
	int from = n - 2;
	for (int i = 1; i < n - 1; i++) {
		if (dwarf_tag(&chain[i]) == DW_TAG_subprogram && linkage_name(&chain[i])) {
			from = i;
			break;
		}
	}
	for (int i = from; i >= 1 && len < sizeof(buf); i--) {
		int tag = dwarf_tag(&chain[i]);
		const char *part = NULL;
		char *owned = NULL;
		if (tag == DW_TAG_subprogram && linkage_name(&chain[i]))
			part = owned = demangle(linkage_name(&chain[i]));
		else if (tag == DW_TAG_namespace)
			part = dwarf_diename(&chain[i]) ? dwarf_diename(&chain[i]) : "(anonymous namespace)";
		else if (tag == DW_TAG_subprogram || tag == DW_TAG_structure_type || tag == DW_TAG_class_type ||
			 tag == DW_TAG_union_type)
			part = dwarf_formstring(dwarf_attr_integrate(&chain[i], DW_AT_name, &a));
		if (!part && tag != DW_TAG_subprogram && tag != DW_TAG_namespace &&
		    (tag == DW_TAG_structure_type || tag == DW_TAG_class_type || tag == DW_TAG_union_type))
			part = closure_type(&chain[i]) ? "{lambda}" : "{anonymous}";
		if (part)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s::", part);
		free(owned);
	}
	free(chain);
	if (len < sizeof(buf))
		snprintf(buf + len, sizeof(buf) - len, "%s", name);
	return xstrndup(buf, strlen(buf));
}

static int system_source(const char *path)
{
	return path && (!strncmp(path, "/usr/include/", 13) || !strncmp(path, "/usr/lib/gcc/", 13) ||
			!strncmp(path, "/usr/local/include/", 19));
}

/* Rust's standard library: DWARF paths "/rustc/<commit>/library/..." and
 * the crates it vendors ("/rust/deps/hashbrown-0.16.1/..."). Only for
 * frames inlined or nothing names: an inlined frame's path is in its own
 * function, but a program's function whose pc lies in std code inlined
 * into it without an inline record has std's path and is still the
 * program's. */
static int rust_std_source(const char *path, const char *comp_dir)
{
	if (path && path[0] != '/' && comp_dir)
		path = comp_dir;   /* std's own units name their files relative to "/rustc/<commit>" */
	return path && (!strncmp(path, "/rustc/", 7) || !strncmp(path, "/rust/deps/", 11));
}

static const char *const std_prefixes[] = {
	"std::", "__gnu_cxx::", "__gthread", "__gthrw_", "core::", "alloc::", "<std::", "<core::", "<alloc::",
	"__rust_", "__rdl_",
};

static int std_path(const char *fn)
{
	for (size_t i = 0; i < sizeof(std_prefixes) / sizeof(std_prefixes[0]); i++)
		if (!strncmp(fn, std_prefixes[i], strlen(std_prefixes[i])))
			return 1;
	return 0;
}

/* The C++ and Rust standard libraries, inlined or linked into the program:
 * their namespaces, and Rust's implementations of their traits for their
 * own or built-in types ("<usize as core::cmp::PartialOrd>::lt", "<F as
 * core::ops::function::FnOnce<()>>::call_once"). A trait implemented for
 * the program's type ("<app::Point as core::fmt::Display>::fmt") is the
 * program's code: its type has the program's path. */
static int runtime_function(const char *fn)
{
	if (!fn)
		return 0;
	if (std_path(fn))
		return 1;
	const char *as = fn[0] == '<' ? strstr(fn, " as ") : NULL;
	if (as && std_path(as + 4)) {
		const char *path = memchr(fn, ':', (size_t)(as - fn));
		return !path || std_path(fn + 1);
	}
	return !strcmp(fn, "_start");
}

/* The scopes inside fn (a function's DIE that contains pc, a DWARF
 * address) that contain pc, innermost first, fn last: inlined instances
 * and blocks, as dwarf_getscopes_die gives them. Returns how many. */
static int scopes_inside(Dwarf_Die fn, Dwarf_Addr pc, Dwarf_Die **out)
{
	Dwarf_Die *chain = NULL, scope = fn, child;
	int n = 0, cap = 0;
	for (;;) {   /* as deep as the inlining goes (helper-124: 80 levels) */
		if (n == cap)
			chain = xrealloc(chain, (size_t)(cap = cap ? 2 * cap : 16) * sizeof(*chain));
		chain[n++] = scope;
		if (dwarf_child(&scope, &child) != 0)
			break;
		int found = 0;
		do {
			int tag = dwarf_tag(&child);
			found = (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
				 tag == DW_TAG_entry_point || tag == DW_TAG_lexical_block) && dwarf_haspc(&child, pc) > 0;
		} while (!found && dwarf_siblingof(&child, &child) == 0);
		if (!found)
			break;
		scope = child;
	}
	for (int i = 0; i < n / 2; i++) {   /* innermost first */
		Dwarf_Die t = chain[i];
		chain[i] = chain[n - 1 - i];
		chain[n - 1 - i] = t;
	}
	*out = chain;
	return n;
}

struct fn_list {
	struct fn_range *v;
	size_t n, cap;
};

/* The functions with code under parent, those inside its namespaces and
 * types included (the scopes nested in them are scopes_inside's). */
static void walk_functions(struct fn_list *l, Dwarf_Die *parent, int depth)
{
	Dwarf_Die child;
	if (depth > 64 || dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_namespace || tag == DW_TAG_module || tag == DW_TAG_structure_type ||
		    tag == DW_TAG_class_type || tag == DW_TAG_union_type) {
			walk_functions(l, &child, depth + 1);
			continue;
		}
		if (tag != DW_TAG_subprogram)
			continue;
		Dwarf_Addr base, lo, hi;
		for (ptrdiff_t off = 0; (off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0;) {
			if (lo >= hi)
				continue;
			if (l->n == l->cap) {
				l->cap = l->cap ? l->cap * 2 : 256;
				l->v = realloc(l->v, l->cap * sizeof(*l->v));
				if (!l->v) {
					cv_error("out of memory");
					abort();
				}
			}
			l->v[l->n++] = (struct fn_range){ .lo = lo, .hi = hi, .die = child };
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

/* By start, then by the DIE's place in the file: of functions with the same
 * code (folded by the linker's identical-code folding), the first
 * defined, as dwarf_getscopes found it (helper-124). */
static int by_lo(const void *a, const void *b)
{
	const struct fn_range *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	Dwarf_Off p = dwarf_dieoffset((Dwarf_Die *)&x->die), q = dwarf_dieoffset((Dwarf_Die *)&y->die);
	return p < q ? -1 : p > q;
}

/* The scopes containing pc (a DWARF address of m), innermost first: its
 * function's DIE, found in an index of the module's functions made once,
 * and the inlined instances and blocks inside it that contain pc. Not
 * elfutils' dwarf_getscopes (0.188): it walks the CU's top level at every
 * call, and past an inlined instance gives its abstract origin's scopes,
 * so the concrete callers took dwarf_getscopes_die, a walk of the CU from
 * its start to the DIE (CPython's libpython with its DWARF: half of a
 * report's 0.7 s); and it prunes a DIE without addresses, such as a
 * namespace, where rustc defines every function. */
static int function_scopes(struct smod *m, Dwarf_Addr pc, Dwarf_Die **out)
{
	if (!m->fns_done) {
		m->fns_done = 1;
		struct fn_list l = { 0 };
		Dwarf_Addr bias;
		for (Dwarf_Die *cu = dwfl_module_nextcu(m->mod, NULL, &bias); cu;
		     cu = dwfl_module_nextcu(m->mod, cu, &bias))
			walk_functions(&l, cu, 0);
		if (l.n)
			qsort(l.v, l.n, sizeof(*l.v), by_lo);
		m->fns = l.v;
		m->nfns = l.n;
	}
	size_t lo = 0, hi = m->nfns;
	while (lo < hi) {   /* the first function starting after pc */
		size_t mid = (lo + hi) / 2;
		if (m->fns[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || pc >= m->fns[lo - 1].hi)
		return 0;
	size_t at = lo - 1;
	while (at > 0 && m->fns[at - 1].lo == m->fns[at].lo && pc < m->fns[at - 1].hi)
		at--;   /* the first of those that start there */
	return scopes_inside(m->fns[at].die, pc, out);
}

static void set_source(struct syms *s, struct sym_frame *f, const char *path, int line)
{
	f->path = keep_copy(s, path);
	const char *slash = f->path ? strrchr(f->path, '/') : NULL;
	f->file = slash ? slash + 1 : f->path;
	f->line = f->path ? line : 0;
}

static size_t symbolize(struct syms *s, uint64_t pc, uint32_t gen, int is_return, struct sym_frame **out)
{
	struct smod *m = module_for(s, pc, gen);
	uint64_t look = is_return && pc ? pc - 1 : pc;
	struct sym_frame base = { .pc = pc };
	if (m) {
		base.module = m->base;
		base.offset = pc - m->pm->m.load_bias;
		base.shim = m->shim;
		base.runtime = m->runtime;
	}
	if (!m || !m->mod) {
		*out = xcalloc(1, sizeof(**out));
		**out = base;
		return 1;
	}

	/* The ELF symbol: the outermost function's name when DWARF has none. */
	GElf_Off symoff;
	GElf_Sym sym;
	const char *elfname = addrinfo(m, look, &symoff, &sym);

	/* A runtime's frames (the C library's: every stack's start_thread)
	 * are named by its symbol table alone, without source lines or the
	 * functions inlined in them. Its DWARF, where a debug package has it
	 * (libc6-dbg, which valgrind brings), is 4 MB of compressed sections
	 * that libdw inflates whole when it opens them: 100 ms of CPU an
	 * analysis, most of what convoy spent in make test, for lines inside
	 * glibc that the text report never shows (the JSON's stack frames
	 * did). */
	Dwarf_Addr bias = 0;
	Dwarf_Die *cudie = m->runtime ? NULL : dwfl_module_addrdie(m->mod, look, &bias);
	Dwarf_Die *scopes = NULL;
	int nscopes = cudie ? function_scopes(m, look - bias, &scopes) : 0;
	size_t nfn = 0;
	for (int i = 0; i < nscopes; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine || tag == DW_TAG_entry_point)
			nfn++;
	}
	struct sym_frame *f = xcalloc(nfn ? nfn : 1, sizeof(*f));
	Dwfl_Line *line = m->runtime ? NULL : dwfl_module_getsrc(m->mod, look);
	int lineno = 0;
	const char *src = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
	if (!nfn) {
		f[0] = base;
		f[0].function = keep(s, elfname ? demangle(elfname) : NULL);
		set_source(s, &f[0], src, lineno);
		nfn = 1;
	} else {
		Dwarf_Files *files = NULL;
		size_t nfiles = 0;
		if (dwarf_getsrcfiles(cudie, &files, &nfiles) != 0)
			files = NULL;
		size_t k = 0;
		const char *path = src;
		int ln = lineno;
		for (int i = 0; i < nscopes && k < nfn; i++) {
			int tag = dwarf_tag(&scopes[i]);
			if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine && tag != DW_TAG_entry_point)
				continue;
			f[k] = base;
			f[k].function = keep(s, die_function_name(s, &scopes[i]));
			set_source(s, &f[k], path, ln);
			if (tag == DW_TAG_inlined_subroutine) {
				f[k].inlined = 1;
				/* The next frame's line is where this one was inlined. */
				Dwarf_Attribute a;
				Dwarf_Word cf = 0, cl = 0;
				path = NULL;
				ln = 0;
				if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &cf) == 0 && files &&
				    cf < nfiles)
					path = dwarf_filesrc(files, cf, NULL, NULL);
				if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &cl) == 0)
					ln = (int)cl;
			}
			if (!f[k].function && !f[k].inlined && elfname)
				f[k].function = keep(s, demangle(elfname));
			k++;
		}
		nfn = k;
	}
	free(scopes);
	if (!f[0].function)
		m->offsets++;
	Dwarf_Attribute a;
	const char *comp_dir = cudie ? dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &a)) : NULL;
	for (size_t k = 0; k < nfn; k++)
		if (!f[k].runtime && (system_source(f[k].path) || runtime_function(f[k].function) ||
				      ((!f[k].function || f[k].inlined) && rust_std_source(f[k].path, comp_dir))))
			f[k].runtime = 1;
	*out = f;
	return nfn;
}

size_t syms__frames(struct syms *s, uint64_t pc, uint32_t gen, int is_return, const struct sym_frame **out)
{
	uint64_t h = (pc * 0x9E3779B97F4A7C15ull) ^ gen ^ (uint64_t)is_return << 63;
	size_t b = (size_t)(h >> 52) % FRAME_BUCKETS;
	for (struct frame_set *f = s->frames[b]; f; f = f->next) {
		if (f->pc == pc && f->gen == gen && f->is_return == is_return) {
			*out = f->f;
			return f->n;
		}
	}
	struct frame_set *f = xcalloc(1, sizeof(*f));
	f->pc = pc;
	f->gen = gen;
	f->is_return = is_return;
	f->n = symbolize(s, pc, gen, is_return, &f->f);
	f->next = s->frames[b];
	s->frames[b] = f;
	*out = f->f;
	return f->n;
}

const char *syms__frame_label(const struct sym_frame *f, char *buf, size_t size)
{
	if (f->function && f->file && f->line)
		snprintf(buf, size, "%s (%s:%d)", f->function, f->file, f->line);
	else if (f->function)
		snprintf(buf, size, "%s", f->function);
	else if (f->module)
		snprintf(buf, size, "%s+0x%llx", f->module, (unsigned long long)f->offset);
	else
		snprintf(buf, size, "0x%llx", (unsigned long long)f->pc);
	return buf;
}

/* What a module offers to name its code, for the note on names that are
 * offsets: the full symbol table, else MiniDebugInfo (.gnu_debugdata, an
 * xz-compressed symbol table that libdwfl reads when elfutils was built
 * with lzma, as Debian's is), else only the exported symbols (.dynsym). */
static const char *symbol_sources(Dwfl_Module *mod, char *buf, size_t size)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	size_t shstrndx;
	int symtab = 0, debugdata = 0;
	if (elf && elf_getshdrstrndx(elf, &shstrndx) == 0)
		for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh))
				continue;   /* a damaged section header: sh is not filled */
			const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
			symtab |= sh.sh_type == SHT_SYMTAB;
			debugdata |= name && !strcmp(name, ".gnu_debugdata");
		}
	Dwarf_Addr dbias;
	int dwarf = dwfl_module_getdwarf(mod, &dbias) != NULL;
	snprintf(buf, size, "%s%s", symtab ? "a symbol table" : debugdata ? "MiniDebugInfo (.gnu_debugdata)" :
		 "only its exported symbols (.dynsym; no .gnu_debugdata)",
		 dwarf ? " and debug info" : symtab ? ", no debug info" :
		 ", no separate debug file found (/usr/lib/debug, .gnu_debuglink, CONVOY_DEBUGINFO_PATH)");
	return buf;
}

size_t syms__offsets_note(struct syms *s, char *buf, size_t size)
{
	return syms__offsets_note_runs(&s, 1, buf, size);
}

/* A module offsetting names in no earlier run than run r, at index i there. */
static int first_of_base(struct syms *const *runs, size_t r, size_t i)
{
	const char *base = runs[r]->mods[i].base;
	for (size_t q = 0; q <= r; q++)
		for (size_t j = 0; j < (q == r ? i : runs[q]->nmods); j++)
			if (runs[q]->mods[j].offsets && runs[q]->mods[j].mod && !runs[q]->mods[j].shim &&
			    !strcmp(runs[q]->mods[j].base, base))
				return 0;
	return 1;
}

size_t syms__offsets_note_runs(struct syms *const *runs, size_t nruns, char *buf, size_t size)
{
	size_t len = 0, n = 0;
	buf[0] = '\0';
	for (size_t r = 0; r < nruns; r++)
		for (size_t i = 0; runs[r] && i < runs[r]->nmods && len < size; i++) {
			const struct smod *m = &runs[r]->mods[i];
			if (!m->offsets || !m->mod || m->shim || !first_of_base(runs, r, i))
				continue;
			/* The same module's lookups in the later runs. */
			unsigned long long offsets = 0;
			for (size_t q = r; q < nruns; q++)
				for (size_t j = 0; runs[q] && j < runs[q]->nmods; j++)
					if (!runs[q]->mods[j].shim && !strcmp(runs[q]->mods[j].base, m->base))
						offsets += runs[q]->mods[j].offsets;
			char why[256];
			len += (size_t)snprintf(buf + len, size - len, "%s%s (%llu address%s; it has %s)", n++ ? "; " : "",
						m->base, offsets, offsets == 1 ? "" : "es",
						symbol_sources(m->mod, why, sizeof(why)));
		}
	return n;
}

/* ---- data ------------------------------------------------------------------ */

/* Exported data symbols known to be a runtime's state with its interpreter
 * lock inside: a monitor (a mutex and its condvars) at an offset in one of
 * them is that lock, whatever the version's layout, because the state holds
 * no other pthread mutex or condvar inline. CPython keeps its GIL's mutex and
 * condvars (and the forced-switch pair beside them) in _PyRuntime, exported
 * by every libpython and python3 binary (3.8 to 3.11: ceval.gil; 3.12 on, the
 * main interpreter's, which _PyRuntime embeds). */
static const struct { const char *symbol, *note; } runtime_states[] = {
	{ "_PyRuntime", "CPython's runtime state, where its GIL lives" },
};

const char *syms__data_note(struct syms *s, uint64_t addr, uint32_t gen)
{
	struct smod *m = module_for(s, addr, gen);
	GElf_Off off;
	GElf_Sym sym;
	const char *name = m && m->mod ? addrinfo(m, addr, &off, &sym) : NULL;
	for (size_t i = 0; name && i < sizeof(runtime_states) / sizeof(runtime_states[0]); i++)
		if (!strcmp(name, runtime_states[i].symbol))
			return runtime_states[i].note;
	return NULL;
}

struct var_list {
	struct var *v;
	size_t n, cap;
};

static void add_var(struct syms *s, struct var_list *l, Dwarf_Die *die, uint64_t bias, const char *prefix)
{
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t nops;
	if (!dwarf_attr(die, DW_AT_location, &a) || dwarf_getlocation(&a, &ops, &nops) != 0 || nops != 1 ||
	    ops[0].atom != DW_OP_addr)
		return;
	Dwarf_Die type;
	Dwarf_Word size = 0;
	if (!dwarf_formref_die(dwarf_attr_integrate(die, DW_AT_type, &a), &type) ||
	    dwarf_aggregate_size(&type, &size) != 0 || size == 0)
		size = 1;
	const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
	if (!name)
		return;
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v) {
			cv_error("out of memory");
			abort();
		}
	}
	struct var *v = &l->v[l->n++];
	v->addr = ops[0].number + bias;
	v->size = size;
	v->die = *die;
	size_t len = strlen(prefix) + strlen(name) + 1;
	char *q = xcalloc(1, len);
	snprintf(q, len, "%s%s", prefix, name);
	v->qualified = (char *)keep(s, q);
}

/* Variables with a static address: at file and namespace scope, and with
 * locals, static locals inside functions and their blocks. */
static void walk_vars(struct syms *s, struct var_list *l, Dwarf_Die *parent, uint64_t bias, const char *prefix,
		      int locals, int depth)
{
	Dwarf_Die child;
	if (depth > 32 || dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_variable) {
			add_var(s, l, &child, bias, prefix);
		} else if (tag == DW_TAG_namespace || (locals && (tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block))) {
			char next[512];
			const char *name = tag == DW_TAG_lexical_block ? NULL : dwarf_diename(&child);
			if (tag == DW_TAG_namespace && !name)
				name = "(anonymous namespace)";
			if (name)
				snprintf(next, sizeof(next), "%s%s::", prefix, name);
			else
				snprintf(next, sizeof(next), "%s", prefix);
			walk_vars(s, l, &child, bias, next, locals, depth + 1);
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int by_addr(const void *a, const void *b)
{
	const struct var *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The module's variables with a static address, sorted, at the given
 * depth: 1, those at file and namespace scope; 2, static locals as well.
 * The first is cheap where the second is not: a CU's top-level DIEs skip
 * their children by DW_AT_sibling, while the locals are inside every
 * function (CPython's libpython with its DWARF: 0.3 s of a report for the
 * GIL's mutex in _PyRuntime, a global). */
static void index_vars(struct syms *s, struct smod *m, int depth)
{
	m->vars_done = depth;
	if (!m->mod)
		return;
	struct var_list l = { 0 };
	Dwarf_Addr bias;
	for (Dwarf_Die *cu = dwfl_module_nextcu(m->mod, NULL, &bias); cu; cu = dwfl_module_nextcu(m->mod, cu, &bias))
		walk_vars(s, &l, cu, bias, "", depth == 2, 0);
	if (l.n)
		qsort(l.v, l.n, sizeof(*l.v), by_addr);
	free(m->vars);
	m->vars = l.v;
	m->nvars = l.n;
}

static const struct var *var_at(struct smod *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nvars;
	const struct var *best = NULL;
	while (lo < hi) {   /* the last variable starting at or before addr */
		size_t mid = (lo + hi) / 2;
		if (m->vars[mid].addr <= addr) {
			best = &m->vars[mid];
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	/* Declarations of one variable in several CUs share the address: any will do. */
	return best && addr < best->addr + best->size ? best : NULL;
}

/* Types where the member path stops: the lock itself. */
static int sync_type_name(const char *n)
{
	static const char *const names[] = {
		"pthread_mutex_t", "pthread_cond_t", "pthread_rwlock_t", "pthread_spinlock_t",
		"pthread_barrier_t", "sem_t", "mtx_t", "cnd_t", "__gthread_mutex_t",
		"__gthread_recursive_mutex_t", "__gthread_cond_t", "mutex", "recursive_mutex",
		"timed_mutex", "recursive_timed_mutex", "shared_mutex", "shared_timed_mutex",
		"condition_variable", "condition_variable_any", "__mutex_base", "__recursive_mutex_base",
		"__condvar", "once_flag", "counting_semaphore", "binary_semaphore", "barrier", "latch",
	};
	if (!n)
		return 0;
	if (!strncmp(n, "atomic", 6) || !strncmp(n, "__atomic_base", 13) || !strncmp(n, "counting_semaphore<", 19))
		return 1;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(n, names[i]))
			return 1;
	return 0;
}

static int die_type(Dwarf_Die *die, Dwarf_Die *type)
{
	Dwarf_Attribute a;
	return dwarf_formref_die(dwarf_attr_integrate(die, DW_AT_type, &a), type) != NULL;
}

static uint64_t die_size(Dwarf_Die *type)
{
	Dwarf_Word size;
	return dwarf_aggregate_size(type, &size) == 0 ? size : 0;
}

/* Appends to buf the path from a value of type t to offset off inside it. */
static void member_path(Dwarf_Die t, uint64_t off, char *buf, size_t size)
{
	size_t len = strlen(buf);
	for (int depth = 0; depth < 64; depth++) {
		int tag = dwarf_tag(&t);
		const char *name = dwarf_diename(&t);
		if (sync_type_name(name))
			break;
		if (tag == DW_TAG_typedef || tag == DW_TAG_const_type || tag == DW_TAG_volatile_type ||
		    tag == DW_TAG_restrict_type || tag == DW_TAG_atomic_type) {
			if (!die_type(&t, &t))
				break;
			continue;
		}
		if (tag == DW_TAG_array_type) {
			Dwarf_Die elem;
			if (!die_type(&t, &elem))
				break;
			uint64_t esize = die_size(&elem);
			if (!esize)
				break;
			/* Dimensions, outermost first; index = off / esize split by them. */
			uint64_t dims[16];
			int ndims = 0;
			Dwarf_Die sub;
			if (dwarf_child(&t, &sub) == 0) {
				do {
					if (dwarf_tag(&sub) != DW_TAG_subrange_type || ndims == 16)
						continue;
					Dwarf_Attribute a;
					Dwarf_Word count = 0, upper = 0;
					if (dwarf_formudata(dwarf_attr_integrate(&sub, DW_AT_count, &a), &count) == 0)
						dims[ndims++] = count;
					else if (dwarf_formudata(dwarf_attr_integrate(&sub, DW_AT_upper_bound, &a), &upper) == 0)
						dims[ndims++] = upper + 1;
					else
						dims[ndims++] = 0;   /* flexible or unknown */
				} while (dwarf_siblingof(&sub, &sub) == 0);
			}
			if (!ndims)
				dims[ndims++] = 0;
			uint64_t index = off / esize;
			uint64_t idx[16];
			for (int d = ndims - 1; d >= 0; d--) {
				if (d == 0 || !dims[d]) {
					idx[d] = index;
					index = 0;
				} else {
					idx[d] = index % dims[d];
					index /= dims[d];
				}
			}
			for (int d = 0; d < ndims; d++)
				len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "[%llu]",
							(unsigned long long)idx[d]);
			off %= esize;
			t = elem;
			continue;
		}
		if (tag == DW_TAG_structure_type || tag == DW_TAG_class_type || tag == DW_TAG_union_type) {
			Dwarf_Die mem, found;
			int have = 0;
			uint64_t found_loc = 0;
			if (dwarf_child(&t, &mem) == 0) {
				do {
					int mt = dwarf_tag(&mem);
					if (mt != DW_TAG_member && mt != DW_TAG_inheritance)
						continue;
					Dwarf_Attribute a;
					Dwarf_Word loc = 0;
					if (dwarf_hasattr(&mem, DW_AT_data_member_location) &&
					    dwarf_formudata(dwarf_attr(&mem, DW_AT_data_member_location, &a), &loc) != 0)
						continue;   /* a location expression: not a plain offset */
					if (mt == DW_TAG_member && !dwarf_hasattr(&mem, DW_AT_data_member_location) &&
					    tag != DW_TAG_union_type)
						continue;   /* a static member */
					Dwarf_Die mtype;
					if (!die_type(&mem, &mtype))
						continue;
					uint64_t msize = die_size(&mtype);
					if (off >= loc && off < loc + (msize ? msize : 1)) {
						found = mem;
						found_loc = loc;
						have = 1;
						break;   /* the first member that covers it (a union's first) */
					}
				} while (dwarf_siblingof(&mem, &mem) == 0);
			}
			if (!have)
				break;
			const char *mname = dwarf_diename(&found);
			/* std::array's storage: workers[3], not workers._M_elems[3]. */
			if (mname && !strcmp(mname, "_M_elems") && name && !strncmp(name, "array<", 6))
				mname = NULL;
			if (dwarf_tag(&found) == DW_TAG_member && mname)
				len += (size_t)snprintf(buf + len, len < size ? size - len : 0, ".%s", mname);
			off -= found_loc;
			if (!die_type(&found, &t))
				break;
			continue;
		}
		break;   /* a base type, pointer or enum: nothing inside to name */
	}
	if (off)
		snprintf(buf + len, len < size ? size - len : 0, "+%llu", (unsigned long long)off);
}

const char *syms__data_name(struct syms *s, uint64_t addr, uint32_t gen, char *buf, size_t size)
{
	struct smod *m = module_for(s, addr, gen);
	if (!m || !m->mod)
		return NULL;
	if (!m->vars_done)
		index_vars(s, m, 1);
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *elfname = addrinfo(m, addr, &off, &sym);
	/* A symbol without a size names only its own address: past it, libdw's
	 * answer for code (an assembly function's label), for data mostly a
	 * linker's marker (a stripped chromium's .bss locks were each
	 * "__bss_start+" half a megabyte). Such an object is named as a
	 * stripped module's others are (callstacks.c, names_build). */
	if (elfname && sym.st_size == 0 && off != 0)
		elfname = NULL;
	const struct var *v = var_at(m, addr);
	if (!v && m->vars_done == 1) {   /* a static local, or no variable DWARF knows */
		index_vars(s, m, 2);
		v = var_at(m, addr);
	}
	if (v) {
		/* The ELF symbol has the qualified C++ name of a namespace-scope
		 * variable; a static local's symbol is "name.N", DWARF's is better. */
		char *d = elfname && addr - off == v->addr && !strchr(elfname, '.') ? demangle(elfname) : NULL;
		snprintf(buf, size, "%s", d ? d : v->qualified);
		free(d);
		Dwarf_Die die = v->die, type;
		if (die_type(&die, &type))
			member_path(type, addr - v->addr, buf, size);
		else if (addr != v->addr)
			snprintf(buf + strlen(buf), size - strlen(buf), "+%llu", (unsigned long long)(addr - v->addr));
		return buf;
	}
	if (!elfname)
		return NULL;
	char *d = demangle(elfname);
	if (off)
		snprintf(buf, size, "%s+%llu", d, (unsigned long long)off);
	else
		snprintf(buf, size, "%s", d);
	free(d);
	return buf;
}
