/* gomp.c — GCC's OpenMP runtime (libgomp): the waits the shim cannot see.
 *
 * libgomp parks its barrier waiters and its critical sections with the futex
 * system call issued inline, never through pthread_* or syscall(), so the
 * other interposers see nothing and the time shows as "off-CPU for other
 * reasons". Its entry points that the compiler calls are a stable ABI
 * (libgomp.map, GOMP_4.0 and older), and are interposed here:
 *
 *   GOMP_barrier, GOMP_loop_end, GOMP_sections_end      the explicit barrier and
 *                                                       the end of `omp for` /
 *                                                       `omp sections` without
 *                                                       nowait: barrier waits on
 *                                                       the object "omp barrier"
 *   GOMP_parallel, GOMP_parallel_loop_*,
 *   GOMP_parallel_sections (GCC >= 4.9)                 the outlined function is
 *                                                       wrapped: the master's time
 *                                                       from its return to the end
 *                                                       of the call is the
 *                                                       implicit barrier; a team
 *                                                       thread's time from its
 *                                                       return to its next region
 *                                                       is that barrier plus the
 *                                                       wait in libgomp's pool for
 *                                                       the next region (the
 *                                                       master's serial code):
 *                                                       "omp parallel end"
 *   GOMP_critical_start, GOMP_critical_name_start,
 *   omp_set_lock, omp_set_nest_lock                     lock waits on mutex-kind
 *                                                       objects "omp critical",
 *                                                       "omp named critical",
 *                                                       "omp lock", "omp nest lock"
 *
 * A mutex-kind object is keyed on a pthread_mutex_t-sized shadow the shim
 * owns, one per OpenMP lock (the registry reads a mutex's type from its
 * address, and an omp_lock_t or a critical's name pointer is smaller than
 * that): SHADOWS of them, in a fixed table; locks beyond that are not
 * recorded.
 *
 * An OpenMP lock and a named critical section of GCC's libgomp are peeked
 * at before the call, as a mutex is (its lock word, 0 while free; not
 * LLVM's libomp, whose words differ): one found held
 * is contended and timed (lock_call). The unnamed critical's lock is
 * libgomp's own, and a nest lock may be its owner's again, so each of
 * their acquisitions is timed, and one that took longer than CONTENDED_NS
 * spun or slept and counts as contended (or was preempted: a single
 * thread's critical on a busy machine once did). Timed with the TSC
 * where it is invariant (cv__ticks, as hold samples are), converted at the
 * rate it has run at against CLOCK_MONOTONIC since the process started
 * (lock_call): two clock_gettime calls cost an uncontended critical 48
 * of its 57 ns over native here.
 * Measured with `make bench-omp` (an uncontended `#pragma omp critical` in
 * a loop, medians of 5 interleaved runs): 24.7 ns natively, 58.2 ns under
 * the shim on a loaded 2-vCPU VM in 2026-11; 6.0 and 63.4 ns on the AMD
 * guest of 2026-12-04 with the clock, 5.9 to 6.1 and 24.8 to 27.7 with the
 * TSC. The *_end and unset calls record nothing and are not interposed.
 *
 * The real functions are found on the first call ("which runtime" below),
 * so a program without libgomp never calls into this file and runs
 * unchanged; should one call an entry point without libgomp loaded (a weak
 * reference checked for presence finds ours), the call does what a team
 * of one would: nothing. Not interposed: GOMP_parallel_start/end (the
 * pre-4.9 ABI) and GOMP_parallel_reductions (their implicit barrier stays
 * invisible), tasks and taskwait.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "shim.h"

#define CONTENDED_NS 1000   /* an uncontended libgomp lock takes tens of ns */

/* Objects with no address of their own are keyed on these. */
static const char omp_barrier_key, omp_parallel_end_key;

#define SHADOWS 256
static struct shadow {
	const void *lock;       /* the program's lock (NULL: free); set once */
	pthread_mutex_t key;    /* zeroed: a "normal" mutex to the registry, never locked */
} shadows[SHADOWS] CV_LARGE_BSS;
static pthread_mutex_t omp_critical_key;   /* the unnamed critical section */

/* The shadow key of the OpenMP lock at lock, claimed on first use; NULL
 * when the table is full. Open addressing, insert-only, lock-free. */
static const void *shadow_of(const void *lock)
{
	size_t h = (size_t)(((uintptr_t)lock >> 3) * 0x9e3779b97f4a7c15ull >> 56);
	for (size_t i = 0; i < SHADOWS; i++) {
		struct shadow *s = &shadows[(h + i) % SHADOWS];
		const void *cur = __atomic_load_n(&s->lock, __ATOMIC_ACQUIRE);
		if (!cur && __atomic_compare_exchange_n(&s->lock, &cur, lock, false, __ATOMIC_ACQ_REL,
							 __ATOMIC_ACQUIRE))
			return &s->key;
		if (cur == lock)   /* found, or another thread claimed it for the same lock */
			return &s->key;
	}
	return NULL;
}

/* ---- which runtime --------------------------------------------------------- *
 *
 * Each call goes where the caller's own reference would have gone without
 * the shim. The shim's exports are unversioned, and the loader binds every
 * object's reference to them whatever version it names (an unversioned
 * definition matches any). Without the shim, a clang-built library's
 * omp_set_lock@VERSION passes by a libgomp in the global scope (no such
 * version there) to LLVM's libomp in its own scope, and a program built
 * against GCC before 4.4 has its omp_set_nest_lock@OMP_1.0 bound to the
 * function of that 8-byte lock, not to the default OMP_3.0 one
 * (helper-132: forwarded to libgomp's, the first crashed, the second
 * overwrote the 8 bytes after the lock). So the calling object (by the
 * call's return address) has a table of real functions, made as the
 * loader binds its references (make_table): for each entry, the version
 * the object's reference names (its .gnu.version_r: reference_versions),
 * looked up in the global scope after the shim, then in the object's own
 * scope. A plugin opened with RTLD_LOCAL has its libgomp there only (a
 * copy under a soname of its own, as Python wheels ship it), and two
 * plugins may have two (helper-129: a team of one and no mutual
 * exclusion; helper-131: one plugin's critical locked in the other's
 * copy). Most objects' tables are the global scope's (global): only the
 * others take a slot.
 *
 * A call made by a jump (a function whose last act is the call: an
 * orphaned barrier, a region whose body is one call) returns where its
 * caller's caller called: the table is that object's, or, where that is
 * the shim's region_body, the region's (region_table; helper-133: resolved
 * as the shim's own call, it found the shim's export and recursed).
 *
 * An object's table is made at its first call, normally on the master, in
 * the entry point that starts a region, before its team exists
 * (GOMP_parallel and the combined ones below): the lookups take the
 * loader's lock, which a library constructor running a parallel region
 * holds (dlopen's) while it waits for its team (helper-131: a team
 * thread's lookup hung there). The team's calls from the same object find
 * the table by _dl_find_object, which takes no lock, and each call site,
 * once found, by its return address alone (sites). */
#define GOMP_ENTRIES(X)                                                                             \
	X(GOMP_barrier) X(GOMP_loop_end) X(GOMP_sections_end) X(GOMP_parallel) X(GOMP_parallel_loop_static) \
	X(GOMP_parallel_loop_dynamic) X(GOMP_parallel_loop_guided) X(GOMP_parallel_loop_nonmonotonic_dynamic) \
	X(GOMP_parallel_loop_nonmonotonic_guided) X(GOMP_parallel_loop_runtime)                            \
	X(GOMP_parallel_loop_nonmonotonic_runtime) X(GOMP_parallel_loop_maybe_nonmonotonic_runtime)        \
	X(GOMP_parallel_sections) X(GOMP_critical_start) X(GOMP_critical_name_start) X(omp_set_lock)       \
	X(omp_set_nest_lock)

enum gomp_entry {
#define CV_X(name) E_##name,
	GOMP_ENTRIES(CV_X)
#undef CV_X
	GOMP_N
};
_Static_assert(GOMP_N <= 32, "gomp_table.words: a bit an entry");

static const char *const gomp_names[GOMP_N] = {
#define CV_X(name) #name,
	GOMP_ENTRIES(CV_X)
#undef CV_X
};

struct gomp_table {
	void *fn[GOMP_N];
	/* Bit e: fn[e] is GCC's libgomp's, whose locks and named criticals
	 * are ints that are 0 while free (lock_call peeks at them), not LLVM's
	 * libomp's, which exports the same names over other lock words
	 * (helper-131). */
	uint32_t words;
	uint32_t in_scope;   /* bit e: fn[e] was found in the global scope */
};

static bool same_table(const struct gomp_table *a, const struct gomp_table *b)
{
	return !memcmp(a->fn, b->fn, sizeof(a->fn)) && a->words == b->words && a->in_scope == b->in_scope;
}

/* ---- what the calling object's references name ----------------------------- */

/* An object's dynamic symbols, as its dynamic section gives them. */
struct elf_refs {
	const ElfW(Sym) *syms;
	const char *strs, *verneed, *verdef;
	const ElfW(Half) *versym;
	size_t nverneed, nverdef;
	uint32_t nsyms;
};

/* How many entries the dynamic symbol table has, from the object's hash
 * table (DT_HASH: its chain count; DT_GNU_HASH: past the highest chain's
 * end); 0 without either. */
static uint32_t dynsym_count(const uint32_t *hash, const uint32_t *gnu)
{
	if (hash)
		return hash[1];
	if (!gnu)
		return 0;
	uint32_t nbuckets = gnu[0], symoffset = gnu[1];
	const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)&gnu[4] + gnu[2]);
	const uint32_t *chain = buckets + nbuckets;
	uint32_t last = 0;
	for (uint32_t i = 0; i < nbuckets; i++)
		if (buckets[i] > last)
			last = buckets[i];
	if (last < symoffset)
		return symoffset;   /* no hashed symbol: only the undefined ones, below it */
	while (!(chain[last - symoffset] & 1))
		last++;
	return last + 1;
}

/* The highest symbol index size bytes of relocations at rel name, plus
 * one (entsize: a REL or a RELA entry). */
static uint32_t reloc_symbols(const char *rel, size_t size, size_t entsize)
{
	uint32_t n = 0;
	for (size_t off = 0; rel && entsize && off + entsize <= size; off += entsize) {
		__typeof__(((ElfW(Rel) *)0)->r_info) info = ((const ElfW(Rel) *)(rel + off))->r_info;   /* where a Rela has it too */
#if __ELF_NATIVE_CLASS == 64
		uint32_t sym = (uint32_t)ELF64_R_SYM(info);
#else
		uint32_t sym = (uint32_t)ELF32_R_SYM(info);
#endif
		if (sym + 1 > n)
			n = sym + 1;
	}
	return n;
}

/* The dynamic symbols of the object at map, whose mapping starts at start
 * with its ELF header (the first load segment maps the file's start, as
 * linkers lay objects out); false where no such header is there. The
 * loader relocated the address entries of the dynamic section in place
 * where that section is writable (glibc 2.35 on: l_ld_readonly), all but
 * DT_VERNEED's and DT_VERDEF's, which it never touches. How many symbols
 * there are: the hash table's count, or past the highest one a relocation
 * names (ld.bfd's GNU hash table of an object that exports nothing counts
 * one: its undefined symbols were not seen, helper-135). */
static bool elf_refs_of(const struct link_map *map, const void *start, struct elf_refs *r)
{
	const ElfW(Ehdr) *eh = start;
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_phentsize != sizeof(ElfW(Phdr)))
		return false;
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)start + eh->e_phoff);
	ElfW(Addr) moved = map->l_addr;   /* what the loader did not add to an entry */
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_DYNAMIC && (ph[i].p_flags & PF_W))
			moved = 0;
	const uint32_t *hash = NULL, *gnu = NULL;
	const char *rela = NULL, *rel = NULL, *jmprel = NULL;
	size_t relasz = 0, relaent = 0, relsz = 0, relent = 0, pltrelsz = 0, pltrel = 0;
	*r = (struct elf_refs){ 0 };
	for (const ElfW(Dyn) *d = map->l_ld; d && d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_RELA: rela = (const void *)(d->d_un.d_ptr + moved); break;
		case DT_RELASZ: relasz = d->d_un.d_val; break;
		case DT_RELAENT: relaent = d->d_un.d_val; break;
		case DT_REL: rel = (const void *)(d->d_un.d_ptr + moved); break;
		case DT_RELSZ: relsz = d->d_un.d_val; break;
		case DT_RELENT: relent = d->d_un.d_val; break;
		case DT_JMPREL: jmprel = (const void *)(d->d_un.d_ptr + moved); break;
		case DT_PLTRELSZ: pltrelsz = d->d_un.d_val; break;
		case DT_PLTREL: pltrel = d->d_un.d_val; break;
		case DT_SYMTAB: r->syms = (const void *)(d->d_un.d_ptr + moved); break;
		case DT_STRTAB: r->strs = (const void *)(d->d_un.d_ptr + moved); break;
		case DT_VERSYM: r->versym = (const void *)(d->d_un.d_ptr + moved); break;
		case DT_HASH: hash = (const void *)(d->d_un.d_ptr + moved); break;
		case DT_GNU_HASH: gnu = (const void *)(d->d_un.d_ptr + moved); break;
		case DT_VERNEED: r->verneed = (const void *)(d->d_un.d_ptr + map->l_addr); break;
		case DT_VERNEEDNUM: r->nverneed = d->d_un.d_val; break;
		case DT_VERDEF: r->verdef = (const void *)(d->d_un.d_ptr + map->l_addr); break;
		case DT_VERDEFNUM: r->nverdef = d->d_un.d_val; break;
		}
	}
	uint32_t n = dynsym_count(hash, gnu), m;
	if ((m = reloc_symbols(rela, relasz, relaent)) > n)
		n = m;
	if ((m = reloc_symbols(rel, relsz, relent)) > n)
		n = m;
	if ((m = reloc_symbols(jmprel, pltrelsz, pltrel == DT_RELA ? sizeof(ElfW(Rela)) : sizeof(ElfW(Rel)))) > n)
		n = m;
	r->nsyms = n;
	return r->syms && r->strs;
}

/* For each entry the object references (an undefined dynamic symbol of
 * its name), the version its reference names and the file it names it
 * from (its .gnu.version_r entry); NULL, NULL: no reference (a call
 * through a pointer, or from code that jumped to the shim in another
 * object's stead), or one without a version. */
static uint32_t reference_versions(const struct elf_refs *r, const char *version[GOMP_N], const char *file[GOMP_N])
{
	uint32_t referenced = 0;
	for (uint32_t i = 1; i < r->nsyms; i++) {
		const char *name = r->strs + r->syms[i].st_name;
		if (r->syms[i].st_shndx != SHN_UNDEF || (strncmp(name, "GOMP_", 5) != 0 && strncmp(name, "omp_", 4) != 0))
			continue;
		int e = 0;
		while (e < GOMP_N && strcmp(name, gomp_names[e]) != 0)
			e++;
		referenced |= e < GOMP_N ? 1u << e : 0;
		ElfW(Half) ndx = r->versym ? r->versym[i] & 0x7fff : 0;   /* 0 local, 1 global: no version */
		const char *vn = r->verneed;
		for (size_t k = 0; e < GOMP_N && ndx > 1 && vn && k < r->nverneed; k++) {
			const ElfW(Verneed) *need = (const ElfW(Verneed) *)vn;
			const char *aux = vn + need->vn_aux;
			for (unsigned j = 0; j < need->vn_cnt; j++) {
				const ElfW(Vernaux) *a = (const ElfW(Vernaux) *)aux;
				if (a->vna_other == ndx) {
					version[e] = r->strs + a->vna_name;
					file[e] = r->strs + need->vn_file;
				}
				aux += a->vna_next;
			}
			vn += need->vn_next;
		}
	}
	return referenced;
}

/* Where the object whose symbols r are, at map, defines name as the
 * loader binds a reference to it: in version where one is named (its
 * defined symbol of that name whose .gnu.version entry is that version's
 * in its .gnu.version_d); without one, as glibc's check_match does, the
 * base definition (version index 1 or 2: libgomp's OMP_1.0 nest lock, the
 * 8-byte one, for a library linked without libgomp: helper-135), else the
 * one that is not hidden (the default). NULL: no such definition. The
 * loader's lookup in one object, without its lock. */
static void *defined(const struct elf_refs *r, const struct link_map *map, const char *name, const char *version)
{
	void *dflt = NULL;
	for (uint32_t i = 1; r->versym && i < r->nsyms; i++) {
		if (r->syms[i].st_shndx == SHN_UNDEF || strcmp(r->strs + r->syms[i].st_name, name) != 0)
			continue;
		void *at = (void *)(map->l_addr + r->syms[i].st_value);
		ElfW(Half) ndx = r->versym[i] & 0x7fff;
		if (!version) {
			if (ndx == 1 || ndx == 2)
				return at;
			if (!(r->versym[i] & 0x8000))
				dflt = at;
			continue;
		}
		const char *vd = r->verdef;
		for (size_t k = 0; vd && k < r->nverdef; k++) {
			const ElfW(Verdef) *d = (const ElfW(Verdef) *)vd;
			if (d->vd_ndx == ndx) {
				const ElfW(Verdaux) *a = (const ElfW(Verdaux) *)(vd + d->vd_aux);
				if (strcmp(r->strs + a->vda_name, version) == 0)
					return at;
				break;
			}
			vd += d->vd_next;
		}
	}
	return dflt;
}

/* defined() in the object that holds addr. */
static void *defined_beside(const void *addr, const char *name, const char *version)
{
	struct dl_find_object found;
	struct elf_refs r;
	if (!addr || _dl_find_object((void *)addr, &found) != 0 ||
	    !elf_refs_of(found.dlfo_link_map, found.dlfo_map_start, &r))
		return NULL;
	return defined(&r, found.dlfo_link_map, name, version);
}

/* ---- the calling object's table -------------------------------------------- */

static void *lookup(void *handle, const char *name, const char *version)
{
	return !handle ? NULL : version ? dlvsym(handle, name, version) : dlsym(handle, name);
}

/* A handle to the loaded object at map, by the name the loader opened it
 * under; NULL for the main program (no name: its scope is the global one). */
static void *handle_of(const struct link_map *map)
{
	return map && map->l_name && map->l_name[0] ? dlopen(map->l_name, RTLD_LAZY | RTLD_NOLOAD) : NULL;
}

static const void *object_of(const void *addr)
{
	struct dl_find_object found;
	return _dl_find_object((void *)addr, &found) == 0 ? found.dlfo_link_map : NULL;
}

/* The shim's own object. Not stacks.c's address range: that is set by
 * cv__init, and a library constructor may run OpenMP before it. */
static const void *shim_map(void)
{
	static const void *map;
	if (!__atomic_load_n(&map, __ATOMIC_ACQUIRE))
		__atomic_store_n(&map, object_of((const void *)shim_map), __ATOMIC_RELEASE);
	return __atomic_load_n(&map, __ATOMIC_ACQUIRE);
}

/* fn, unless it is the shim's own: with nothing but the shim defining a
 * name where it is looked for, its export calling itself recursed until
 * the stack ran out (helper-133). */
static void *not_ours(void *fn)
{
	return fn && object_of(fn) == shim_map() ? NULL : fn;
}

/* Whether the object that defines fn is GCC's libgomp: not LLVM's or
 * Intel's runtime, which are told by their own entry points. */
static bool in_libgomp(void *fn)
{
	return fn && !defined_beside(fn, "__kmpc_set_lock", NULL);
}

/* The global scope's table (below), made once. */
static struct gomp_table global_table;
static int global_made;

/* Keeps the object that defines fn loaded (a handle never closed), once
 * per object in turn: a libgomp a plugin brought into the global scope
 * and took away with it, loaded again elsewhere, left the tables with its
 * old functions (helper-134: a crash). */
static void pin(void *fn, const void **last)
{
	const struct link_map *map = fn ? object_of(fn) : NULL;
	if (map && map != *last) {
		*last = map;
		handle_of(map);
	}
}

/* t for an object whose references the global scope's definers satisfy:
 * each entry it references is the global table's, found in the global
 * scope, or the same object's definition of the version the reference
 * names (defined). No lookup, so no loader's lock: a constructor's thread
 * whose call was its object's first hung on it while dlopen waited for the
 * thread (helper-134). false: an entry needs the loader. */
static bool from_global(struct gomp_table *t, uint32_t referenced, const char *const version[GOMP_N])
{
	if (!__atomic_load_n(&global_made, __ATOMIC_ACQUIRE))
		return false;
	const struct gomp_table *g = &global_table;
	for (int e = 0; e < GOMP_N; e++) {
		void *fn = __atomic_load_n(&g->fn[e], __ATOMIC_RELAXED);
		if (referenced >> e & 1) {
			if (!(g->in_scope >> e & 1))
				return false;   /* not in the global scope: the object's own may have it */
			if (!(fn = defined_beside(fn, gomp_names[e], version[e])))
				return false;
		}
		__atomic_store_n(&t->fn[e], fn, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&t->words, g->words, __ATOMIC_RELAXED);
	__atomic_store_n(&t->in_scope, g->in_scope, __ATOMIC_RELAXED);
	return true;
}

/* t for a runtime's own code (libgomp's, LLVM's libomp's), where a call
 * reaches the shim by a jump from code the runtime ran: a task whose last
 * act starts a region returns into GOMP_task. Its own definitions, as the
 * code it ran was built against (helper-135: taken from a global scope
 * without a runtime, a task's region ran as a team of one). false: the
 * object defines no entry point. */
static bool runtime_itself(struct gomp_table *t, const struct link_map *map, const struct elf_refs *r)
{
	if (!defined(r, map, "GOMP_parallel", NULL) && !defined(r, map, "omp_set_lock", NULL))
		return false;
	bool gomp = !defined(r, map, "__kmpc_set_lock", NULL);
	uint32_t words = 0;
	for (int e = 0; e < GOMP_N; e++) {
		void *fn = not_ours(defined(r, map, gomp_names[e], NULL));
		words |= (uint32_t)(fn && gomp) << e;
		__atomic_store_n(&t->fn[e], fn, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&t->words, words, __ATOMIC_RELAXED);
	__atomic_store_n(&t->in_scope, 0, __ATOMIC_RELAXED);
	return true;
}

/* t for the object at map, mapped from start (NULL, NULL: code in no
 * object, or the shim's, where the global scope's defaults are all there
 * is). Each entry's function is looked up as the loader binds the
 * object's reference: in the global scope after the shim (from_global,
 * else dlvsym), then in the object's own scope; failing both (a library
 * whose libgomp comes from the scope of the plugin that loaded it, or one
 * linked without it), in the loaded object the reference names
 * (libgomp.so.1, for a reference without a version: the GOMP_ and omp_
 * names are its ABI). A reference without a version takes the base
 * definition where there is one (defined). A handle a function was found
 * through is kept, and an object a function was found in is pinned, so
 * that the function stays loaded while the shim may call it: such an
 * object is not unloaded by dlclose. */
static void make_table(struct gomp_table *t, const struct link_map *map, const void *start)
{
	const char *version[GOMP_N] = { 0 }, *file[GOMP_N] = { 0 };
	uint32_t referenced = 0;
	struct elf_refs refs;
	bool have_refs = map && elf_refs_of(map, start, &refs);
	if (have_refs) {
		if (runtime_itself(t, map, &refs))
			return;
		referenced = reference_versions(&refs, version, file);
	}
	if (map && from_global(t, referenced, version))
		return;
	void *own = NULL;   /* the object's handle, opened when the global scope lacks a function */
	bool own_used = false;
	const void *pinned = NULL;
	uint32_t words = 0, in_scope = 0;
	for (int e = 0; e < GOMP_N; e++) {
		void *fn = not_ours(lookup(RTLD_NEXT, gomp_names[e], version[e]));
		if (fn) {
			in_scope |= 1u << e;
			pin(fn, &pinned);
		}
		if (!fn && map && (own || (own = handle_of(map))))
			own_used |= (fn = not_ours(lookup(own, gomp_names[e], version[e]))) != NULL;
		if (!fn) {
			void *h = dlopen(file[e] ? file[e] : "libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
			if ((fn = not_ours(lookup(h, gomp_names[e], version[e]))) == NULL && h)
				dlclose(h);   /* else kept */
		}
		void *base;   /* dlsym gives the newest version; the loader binds the base */
		if ((referenced >> e & 1) && !version[e] && (base = defined_beside(fn, gomp_names[e], NULL)))
			fn = base;
		words |= (uint32_t)in_libgomp(fn) << e;
		__atomic_store_n(&t->fn[e], fn, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&t->words, words, __ATOMIC_RELAXED);
	__atomic_store_n(&t->in_scope, in_scope, __ATOMIC_RELAXED);
	if (own && !own_used)
		dlclose(own);
}

/* The global scope's table, with each name's default version: for code in
 * no object (a JIT's), for the shim's own code outside a region, and
 * shared by every object whose own table is the same (most). Threads that
 * make it at once store the same. */
static const struct gomp_table *global(void)
{
	if (!__atomic_load_n(&global_made, __ATOMIC_ACQUIRE)) {
		make_table(&global_table, NULL, NULL);
		__atomic_store_n(&global_made, 1, __ATOMIC_RELEASE);
	}
	return &global_table;
}

/* The calling objects' tables, by link map and dynamic section (a closed
 * object's link map may be the next one's, its dynamic section elsewhere:
 * helper-133): the global one where the object's is the same (most), else
 * the slot's own. Kept for every object that called, so that its team's
 * calls find it without the loader's lock. A slot's word is its state and
 * a count of its fillings, so that a reader that saw it ready and the same
 * after reading the slot read one filling. A thread that finds its
 * object's slot being filled makes a table of its own for its call. Once
 * every slot has been used, one whose object is gone (no loaded object
 * holds its dynamic section) is filled again: plugins loaded and closed in
 * turn reuse them (helper-133: 128 such cycles took all 256). Past
 * GOMP_OBJECTS live objects, each call makes its table again. */
#define GOMP_OBJECTS 256
#define SLOT_FILLING 1u   /* the word's low bit; clear: ready (or never used, count 0) */
static struct object_slot {
	uint32_t word;
	const void *map, *ld;
	const struct gomp_table *table;   /* &global_table or &own */
	struct gomp_table own;
} objects[GOMP_OBJECTS];
static uint32_t nobjects;   /* slots ever used: objects[0, nobjects) */

/* map's table where a slot holds it; else NULL, with *busy where another
 * thread is filling one for it. */
static const struct gomp_table *slot_table(const struct link_map *map, bool *busy)
{
	uint32_t n = __atomic_load_n(&nobjects, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n && i < GOMP_OBJECTS; i++) {
		struct object_slot *s = &objects[i];
		uint32_t w = __atomic_load_n(&s->word, __ATOMIC_ACQUIRE);
		const void *at = __atomic_load_n(&s->map, __ATOMIC_RELAXED), *ld = __atomic_load_n(&s->ld, __ATOMIC_RELAXED);
		const struct gomp_table *t = __atomic_load_n(&s->table, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (at != map || ld != map->l_ld || __atomic_load_n(&s->word, __ATOMIC_RELAXED) != w)
			continue;
		if (w & SLOT_FILLING)
			*busy = true;
		else if (t)
			return t;
	}
	return NULL;
}

/* The sites that remember a table (below): forgotten, before its slot is
 * filled for another object. */
static void sites_forget(const struct gomp_table *t);

/* A slot to fill for another object, its word made FILLING; NULL: none. */
static struct object_slot *slot_claim(void)
{
	uint32_t n = __atomic_load_n(&nobjects, __ATOMIC_ACQUIRE);
	while (n < GOMP_OBJECTS)
		if (__atomic_compare_exchange_n(&nobjects, &n, n + 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			/* Until its map is stored, readers pass it by (no map is NULL)
			 * and the reclaim below too (no object holds a NULL ld). */
			__atomic_store_n(&objects[n].word, SLOT_FILLING, __ATOMIC_RELAXED);
			return &objects[n];
		}
	for (uint32_t i = 0; i < GOMP_OBJECTS; i++) {
		struct object_slot *s = &objects[i];
		uint32_t w = __atomic_load_n(&s->word, __ATOMIC_ACQUIRE);
		const void *map = __atomic_load_n(&s->map, __ATOMIC_RELAXED);
		if ((w & SLOT_FILLING) || object_of(__atomic_load_n(&s->ld, __ATOMIC_RELAXED)) == map)
			continue;   /* being filled, or its object is still loaded */
		if (__atomic_compare_exchange_n(&s->word, &w, w + 1, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
			sites_forget(&s->own);
			return s;
		}
	}
	return NULL;
}

/* A slot for map with table made (the global one where it is the same);
 * NULL: none to be had. */
static const struct gomp_table *slot_fill(const struct link_map *map, const struct gomp_table *made)
{
	struct object_slot *s = slot_claim();
	if (!s)
		return NULL;
	const struct gomp_table *g = global(), *t = same_table(made, g) ? g : &s->own;
	s->own = *made;
	__atomic_store_n(&s->map, map, __ATOMIC_RELAXED);
	__atomic_store_n(&s->ld, map->l_ld, __ATOMIC_RELAXED);
	__atomic_store_n(&s->table, t, __ATOMIC_RELAXED);
	__atomic_store_n(&s->word, __atomic_load_n(&s->word, __ATOMIC_RELAXED) + 1, __ATOMIC_RELEASE);
	return t;
}

/* The current region's table on this thread, where its function called
 * the shim by a jump (a tail call: the return address is the shim's
 * region_body, not the function's object); NULL outside a region. */
static const struct gomp_table *region_table(void)
{
	struct cv_thread *t = cv__current();
	return t ? __atomic_load_n(&t->omp_runtime, __ATOMIC_RELAXED) : NULL;
}

/* The table for a call from caller, made in *scratch where it is not kept;
 * *keep: the call site may remember it. */
static const struct gomp_table *object_table(const void *caller, struct gomp_table *scratch, bool *keep)
{
	struct dl_find_object found;
	if (_dl_find_object((void *)caller, &found) != 0) {
		*keep = true;
		return global();
	}
	const struct link_map *map = found.dlfo_link_map;
	if (map == shim_map()) {
		const struct gomp_table *rt = region_table();
		return rt ? rt : global();
	}
	bool busy = false;
	const struct gomp_table *t = slot_table(map, &busy);
	if (!t) {
		make_table(scratch, map, found.dlfo_map_start);
		busy = false;
		if (!(t = slot_table(map, &busy)) && !busy)   /* another thread may have filled one meanwhile */
			t = slot_fill(map, scratch);
	}
	*keep = t != NULL;
	return t ? t : scratch;
}

/* Call sites already served: a return address and its table, claimed once
 * (open addressing, insert-only, lock-free), so that a call costs a probe,
 * not _dl_find_object's search (8-11 ns here). A site whose table is not
 * stored yet, or was forgotten (its slot filled for another object), or
 * past the probes, goes to the search; one of code in the shim is never
 * kept (its table is the region's). A library closed and another opened
 * at the same address has the first one's tables for the sites at the
 * same addresses until their slots are filled again. */
#define SITES       512
#define SITE_PROBES 8
static struct site {
	const void *pc;
	const struct gomp_table *t;
} sites[SITES];

static size_t site_hash(const void *pc)
{
	return (size_t)((uintptr_t)pc * 0x9e3779b97f4a7c15ull >> 55);   /* 9 bits: SITES */
}

static void sites_forget(const struct gomp_table *t)
{
	for (size_t i = 0; i < SITES; i++) {
		const struct gomp_table *was = t;
		__atomic_compare_exchange_n(&sites[i].t, &was, NULL, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
	}
}

/* The runtime table for the call that returns to caller. */
static const struct gomp_table *runtime(const void *caller, struct gomp_table *scratch)
{
	size_t h = site_hash(caller);
	struct site *site = NULL;   /* caller's, or a free one */
	for (size_t i = 0; i < SITE_PROBES && !site; i++) {
		struct site *s = &sites[(h + i) % SITES];
		const void *at = __atomic_load_n(&s->pc, __ATOMIC_ACQUIRE);
		if (at == caller) {
			const struct gomp_table *t = __atomic_load_n(&s->t, __ATOMIC_ACQUIRE);
			if (CV_LIKELY(t != NULL))
				return t;
			site = s;   /* not stored yet, or forgotten */
		} else if (!at) {
			site = s;
		}
	}
	bool keep = false;
	const struct gomp_table *t = object_table(caller, scratch, &keep);
	const void *none = NULL;
	if (keep && site &&
	    (__atomic_load_n(&site->pc, __ATOMIC_ACQUIRE) == caller ||
	     __atomic_compare_exchange_n(&site->pc, &none, caller, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)))
		__atomic_store_n(&site->t, t, __ATOMIC_RELEASE);
	return t;
}

/* In the exported function itself: its return address is the program's.
 * scratch: a table in the exported function's frame, for one not kept. */
#define RUNTIME(scratch) runtime(__builtin_return_address(0), (scratch))
#define REAL(t, name) ((__typeof__(&name))__atomic_load_n(&(t)->fn[E_##name], __ATOMIC_RELAXED))
/* Whether name's function in t peeks at its lock's word. */
#define WORDS(t, name) (((t)->words >> E_##name) & 1)

/* The calling thread's record of the object keyed at key, named on first
 * use; NULL when the shim is not recording here (inside itself, or
 * disabled). */
static struct cv_rec *rec_for(const void *key, uint32_t kind, const char *name)
{
	struct cv_thread *t = cv__current();
	if (CV_UNLIKELY(!t) && !(t = cv__thread_slow()))
		return NULL;
	/* Mutex-kind objects go through the cache pthread mutexes use:
	 * a critical section entered in a loop looks its record up once. */
	struct cv_rec *r = kind == CV_OBJ_MUTEX ? cv__mutex_rec(t, key) : cv__lookup_slow(t, key, kind);
	if (r && name && !__atomic_load_n(&r->obj->name, __ATOMIC_ACQUIRE))
		__atomic_store_n(&r->obj->name, name, __ATOMIC_RELEASE);
	return r;
}

static void record_barrier(struct cv_rec *r, uint64_t waited)
{
	cv__record_wait(r, waited);
	cv__stack_on_wait(cv__current(), r, waited);   /* stacks.c: sampled */
}

/* A barrier-like call: the time inside it is barrier wait. */
static void barrier_call(void (*fn)(void))
{
	struct cv_rec *r = rec_for(&omp_barrier_key, CV_OBJ_BARRIER, "omp barrier");
	uint64_t t0 = r ? cv__now_ns() : 0;
	fn();
	if (r)
		record_barrier(r, cv__now_ns() - t0);
}

CV_EXPORT void GOMP_barrier(void)
{
	struct gomp_table scratch;
	const struct gomp_table *t = RUNTIME(&scratch);
	void (*fn)(void) = REAL(t, GOMP_barrier);
	if (fn)
		barrier_call(fn);
}

CV_EXPORT void GOMP_loop_end(void)
{
	struct gomp_table scratch;
	const struct gomp_table *t = RUNTIME(&scratch);
	void (*fn)(void) = REAL(t, GOMP_loop_end);
	if (fn)
		barrier_call(fn);
}

CV_EXPORT void GOMP_sections_end(void)
{
	struct gomp_table scratch;
	const struct gomp_table *t = RUNTIME(&scratch);
	void (*fn)(void) = REAL(t, GOMP_sections_end);
	if (fn)
		barrier_call(fn);
}

/* ---- parallel regions ------------------------------------------------------ */

struct region {
	void (*fn)(void *);
	void *data;
	struct cv_thread *master;
	const struct gomp_table *rt;   /* the master's: for calls the region's code makes by a jump */
	uint64_t master_done;   /* when the master's share of the work returned */
};

/* When this team thread's last share of a region returned (0: none open). */
static __thread uint64_t idle_since;

static void region_body(void *arg)
{
	struct region *g = arg;
	struct cv_thread *t = cv__current();
	if (idle_since && t != g->master) {
		struct cv_rec *r = rec_for(&omp_parallel_end_key, CV_OBJ_BARRIER, "omp parallel end");
		if (r)
			record_barrier(r, cv__now_ns() - idle_since);
	}
	idle_since = 0;
	const void *outer = t ? t->omp_runtime : NULL;   /* a nested region's */
	if (t)
		__atomic_store_n(&t->omp_runtime, g->rt, __ATOMIC_RELAXED);
	g->fn(g->data);
	if (t)
		__atomic_store_n(&t->omp_runtime, outer, __ATOMIC_RELAXED);
	uint64_t now = cv__now_ns();
	if (t == g->master)
		g->master_done = now;
	else
		idle_since = now;
}

/* The master's part of a parallel region that the real entry point
 * real(...) starts: the region's function is wrapped (region_body) and
 * its implicit barrier timed, where the thread is recorded; without a
 * runtime, the function is run as a team of one would. The entry point
 * returns only after every team thread finished the region, so the region
 * may live on this stack. */
#define CV_REGION(rt, name, fn, data, ...)                                                    \
	do {                                                                                   \
		__typeof__(&name) real_ = REAL(rt, name);                                      \
		struct cv_thread *t_ = cv__current() ?: cv__thread_slow();                     \
		if (!real_) {                                                                  \
			(fn)(data);                                                            \
		} else if (!t_) {                                                              \
			real_((fn), (data), __VA_ARGS__);                                      \
		} else {                                                                       \
			struct region g_ = { (fn), (data), t_, (rt), 0 };                       \
			real_(region_body, &g_, __VA_ARGS__);                                  \
			region_end(&g_);                                                       \
		}                                                                              \
	} while (0)

static void region_end(const struct region *g)
{
	struct cv_rec *r = rec_for(&omp_parallel_end_key, CV_OBJ_BARRIER, "omp parallel end");
	if (r && g->master_done)
		record_barrier(r, cv__now_ns() - g->master_done);
}

CV_EXPORT void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags)
{
	struct gomp_table scratch;
	const struct gomp_table *rt = RUNTIME(&scratch);
	CV_REGION(rt, GOMP_parallel, fn, data, num_threads, flags);
}

/* The combined regions (GCC 4.9 on), each a parallel region whose body
 * starts with a work share that the entry point sets up: passed on as
 * GOMP_parallel is, so that their implicit barrier is timed and their
 * runtime is found on the master (a constructor whose first region was a
 * schedule(dynamic) loop hung, its team thread's first call looking the
 * runtime up with the loader's lock held: helper-132). */
#define CV_PARALLEL_LOOP(name)                                                                             \
	CV_EXPORT void name(void (*fn)(void *), void *data, unsigned num_threads, long start, long end,    \
			    long incr, long chunk_size, unsigned flags)                                    \
	{                                                                                                  \
		struct gomp_table scratch;                                                                 \
		const struct gomp_table *rt = RUNTIME(&scratch);                                           \
		CV_REGION(rt, name, fn, data, num_threads, start, end, incr, chunk_size, flags);             \
	}
#define CV_PARALLEL_LOOP_RUNTIME(name)                                                                     \
	CV_EXPORT void name(void (*fn)(void *), void *data, unsigned num_threads, long start, long end,    \
			    long incr, unsigned flags)                                                     \
	{                                                                                                  \
		struct gomp_table scratch;                                                                 \
		const struct gomp_table *rt = RUNTIME(&scratch);                                           \
		CV_REGION(rt, name, fn, data, num_threads, start, end, incr, flags);                        \
	}
CV_PARALLEL_LOOP(GOMP_parallel_loop_static)
CV_PARALLEL_LOOP(GOMP_parallel_loop_dynamic)
CV_PARALLEL_LOOP(GOMP_parallel_loop_guided)
CV_PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_dynamic)
CV_PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_guided)
CV_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_runtime)
CV_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_nonmonotonic_runtime)
CV_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

CV_EXPORT void GOMP_parallel_sections(void (*fn)(void *), void *data, unsigned num_threads, unsigned count,
				      unsigned flags)
{
	struct gomp_table scratch;
	const struct gomp_table *rt = RUNTIME(&scratch);
	CV_REGION(rt, GOMP_parallel_sections, fn, data, num_threads, count, flags);
}

/* ---- critical sections and locks ------------------------------------------- */

/* OpenMP lock waits in ticks of the TSC, on x86-64 with an invariant TSC
 * (CPUID 0x80000007, EDX bit 8: a constant rate in every C-state, which
 * Linux keeps in step across CPUs or stops using), converted to ns at the
 * rate the TSC has run against CLOCK_MONOTONIC since the process started:
 * 32.32 fixed point, made again each time the span since the start has
 * doubled, up to RATE_FINAL_NS, so that one late clock read weighs less
 * and less; made only from a clean pair of reads (shim.h,
 * cv__clock_pair), the start's included (init.c). Until there is a rate,
 * and without an invariant TSC, the clock times them. */
#define RATE_FIRST_NS 100000ull       /* 0.1 ms: the first rate to 0.1 % or better */
#define RATE_FINAL_NS 1000000000ull   /* 1 s */

static uint64_t ns_per_tick_q32;   /* 0: no rate yet */
static uint64_t rate_again_at;     /* the TSC count at which to make it again */
static int tsc_invariant = -1;     /* -1: not asked yet */

static bool tsc_usable(void)
{
#if defined(__x86_64__)
	int ok = __atomic_load_n(&tsc_invariant, __ATOMIC_RELAXED);
	if (ok < 0) {
		unsigned a, b, c, d;
		ok = __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8));
		__atomic_store_n(&tsc_invariant, ok, __ATOMIC_RELAXED);
	}
	return ok;
#else
	return false;   /* cv__ticks is the clock already */
#endif
}

/* The rate again, from a clean pair now against the start's. */
static void make_rate(void)
{
	uint64_t ns, ticks;
	if (!cv__clock_pair(&ns, &ticks) || ns <= cv__process.start_ns || ticks <= cv__process.start_ticks)
		return;
	uint64_t span = ns - cv__process.start_ns, span_ticks = ticks - cv__process.start_ticks;
	if (span < RATE_FIRST_NS)
		return;
#if defined(__SIZEOF_INT128__)
	uint64_t rate = (uint64_t)(((unsigned __int128)span << 32) / span_ticks);
#else
	uint64_t rate = (uint64_t)((double)span / (double)span_ticks * 4294967296.0);
#endif
	__atomic_store_n(&rate_again_at, span >= RATE_FINAL_NS ? UINT64_MAX : ticks + span_ticks, __ATOMIC_RELAXED);
	__atomic_store_n(&ns_per_tick_q32, rate, __ATOMIC_RELAXED);
}

static uint64_t ticks_to_ns(uint64_t ticks, uint64_t rate)
{
#if defined(__SIZEOF_INT128__)
	return (uint64_t)(((unsigned __int128)ticks * rate) >> 32);
#else
	return (uint64_t)((double)ticks * (double)rate / 4294967296.0);
#endif
}

/* One acquisition through fn(arg) of the lock keyed at key. word: the
 * lock's own word where the shim can read it (libgomp's gomp_mutex_t on
 * Linux, an int that is 0 while free: an omp_lock_t, a named critical's
 * pointer slot), peeked before the call as a mutex's is: a lock found free
 * is not contended, however long the call took (a preempted thread), and
 * one found held is, with the call's time as its wait. Where there is no
 * word to read (the unnamed critical, a nest lock, whose owner may take it
 * again), a call that took CONTENDED_NS or longer spun or slept. Like the
 * mutex peek, a lock another thread takes between the peek and the call
 * spins uncounted. */
static void lock_call(const void *key, const char *name, void (*fn)(void *), void *arg, const int *word)
{
	struct cv_rec *r = key ? rec_for(key, CV_OBJ_MUTEX, name) : NULL;
	bool held = r && (!word || CV_LOAD(word) != 0);
	bool tsc = held && tsc_usable();
	uint64_t rate = tsc ? __atomic_load_n(&ns_per_tick_q32, __ATOMIC_RELAXED) : 0;
	uint64_t t0 = !held ? 0 : rate ? cv__ticks() : cv__now_ns();
	fn(arg);
	if (!r)
		return;
	uint64_t waited = 0;
	if (rate) {
		uint64_t now = cv__ticks();
		waited = now > t0 ? ticks_to_ns(now - t0, rate) : 0;   /* not back in time */
		if (now >= __atomic_load_n(&rate_again_at, __ATOMIC_RELAXED))
			make_rate();
	} else if (held) {
		waited = cv__now_ns() - t0;
		if (tsc)
			make_rate();
	}
	CV_BUMP(&r->acquisitions, 1);
	struct cv_thread *t = cv__current();
	if (CV_LOAD(&r->obj->last_owner) != t) {
		if (CV_LOAD(&r->obj->last_owner))
			CV_BUMP(&r->handoffs, 1);
		CV_STORE(&r->obj->last_owner, t);
	}
	if (held && (word || waited >= CONTENDED_NS)) {
		CV_BUMP(&cv__rec_more(r)->contended, 1);
		cv__record_wait(r, waited);
		cv__stack_on_wait(t, r, waited);
	}
}

/* lock_call's fn for a call without an argument: arg is the function. */
static void call_void(void *arg)
{
	((void (*)(void))arg)();
}

CV_EXPORT void GOMP_critical_start(void)
{
	struct gomp_table scratch;
	const struct gomp_table *t = RUNTIME(&scratch);
	void (*fn)(void) = REAL(t, GOMP_critical_start);
	if (fn)
		lock_call(&omp_critical_key, "omp critical", call_void, (void *)fn, NULL);
}

CV_EXPORT void GOMP_critical_name_start(void **pptr)
{
	struct gomp_table scratch;
	const struct gomp_table *t = RUNTIME(&scratch);
	void (*fn)(void **) = REAL(t, GOMP_critical_name_start);
	if (fn)   /* each named critical is its own lock, keyed on its name's pointer */
		lock_call(shadow_of(pptr), "omp named critical", (void (*)(void *))fn, pptr,
			  WORDS(t, GOMP_critical_name_start) ? (const int *)pptr : NULL);
}

CV_EXPORT void omp_set_lock(void *lock)
{
	struct gomp_table scratch;
	const struct gomp_table *t = RUNTIME(&scratch);
	void (*fn)(void *) = REAL(t, omp_set_lock);
	if (fn)
		lock_call(shadow_of(lock), "omp lock", fn, lock, WORDS(t, omp_set_lock) ? (const int *)lock : NULL);
}

CV_EXPORT void omp_set_nest_lock(void *lock)
{
	struct gomp_table scratch;
	const struct gomp_table *t = RUNTIME(&scratch);
	void (*fn)(void *) = REAL(t, omp_set_nest_lock);
	if (fn)
		lock_call(shadow_of(lock), "omp nest lock", fn, lock, NULL);
}
