/* symindex.c — the analyzer's sorted symbol index (analyzer/symindex.c)
 * gives dwfl_module_addrinfo's answers: the same name, offset and symbol
 * at the edges of symbols and between them, in modules of every kind a
 * profile maps (the C library with its aliases and assembly, a program
 * with a full symbol table, the shim with its version script), each
 * placed at a load bias as a process maps it. */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <elfutils/libdwfl.h>

#include "testutil.h"
#include "../../analyzer/symindex.h"

static char *debuginfo_path;
static const Dwfl_Callbacks offline = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

struct tally {
	size_t asked, indexed;
};

/* The index's answer at addr, where it gives one, is libdw's. */
static void compare_at(const struct symindex *ix, Dwfl_Module *mod, const char *path, uint64_t addr,
		       struct tally *t)
{
	GElf_Off want_off = 0, off = 0;
	GElf_Sym want_sym, sym;
	memset(&want_sym, 0, sizeof(want_sym));
	memset(&sym, 0, sizeof(sym));
	const char *want = dwfl_module_addrinfo(mod, addr, &want_off, &want_sym, NULL, NULL, NULL), *name = NULL;
	t->asked++;
	if (!symindex__lookup(ix, mod, addr, &name, &off, &sym))
		return;   /* left to libdw */
	t->indexed++;
	cr_assert((want == NULL) == (name == NULL) && (!want || !strcmp(want, name)),
		  "%s at %#llx: libdw says %s, the index %s", path, (unsigned long long)addr, want ? want : "(none)",
		  name ? name : "(none)");
	if (!want)
		return;
	cr_assert(off == want_off && sym.st_value == want_sym.st_value && sym.st_size == want_sym.st_size &&
			  sym.st_info == want_sym.st_info && sym.st_shndx == want_sym.st_shndx,
		  "%s at %#llx (%s): libdw says +%llu of [%#llx, %llu), the index +%llu of [%#llx, %llu)", path,
		  (unsigned long long)addr, want, (unsigned long long)want_off, (unsigned long long)want_sym.st_value,
		  (unsigned long long)want_sym.st_size, (unsigned long long)off, (unsigned long long)sym.st_value,
		  (unsigned long long)sym.st_size);
}

enum { EVERY_BYTE = 1, LOCAL_SYMBOLS = 2 };

/* About max_symbols symbols of path's table, each at its edges and middle,
 * as many addresses drawn across the module and the last address there
 * is, at a load bias; with EVERY_BYTE, each address of the module too.
 * LOCAL_SYMBOLS: the table has local symbols (libdw's second pass). */
static void same_answers(const char *path, int max_symbols, unsigned flags)
{
	Dwfl *dwfl = dwfl_begin(&offline);
	cr_assert(dwfl, "dwfl_begin: %s", dwfl_errmsg(-1));
	dwfl_report_begin(dwfl);
	Dwfl_Module *mod = dwfl_report_elf(dwfl, path, path, -1, 0x7f1234560000ull, false);
	dwfl_report_end(dwfl, NULL, NULL);
	cr_assert(mod, "%s: %s", path, dwfl_errmsg(-1));
	struct symindex *ix = symindex__build(mod);
	cr_assert(ix, "%s: no index built", path);
	int n = dwfl_module_getsymtab(mod);
	cr_assert(!(flags & LOCAL_SYMBOLS) || dwfl_module_getsymtab_first_global(mod) > 1,
		  "%s: no local symbols in libdw's table", path);
	int stride = n / max_symbols > 1 ? n / max_symbols : 1;
	struct tally t = { 0 }, inside = { 0 };
	for (int i = 1; i < n; i += stride) {
		GElf_Sym s;
		GElf_Addr v;
		if (!dwfl_module_getsym_info(mod, i, &s, &v, NULL, NULL, NULL) || s.st_shndx == SHN_UNDEF)
			continue;
		const uint64_t edges[] = { v - 1, v + s.st_size, v + s.st_size + 1 };
		for (size_t k = 0; k < sizeof(edges) / sizeof(edges[0]); k++)
			compare_at(ix, mod, path, edges[k], &t);
		const uint64_t within[] = { v, v + s.st_size / 2, v + s.st_size - 1 };
		for (size_t k = 0; s.st_size && k < sizeof(within) / sizeof(within[0]); k++)
			compare_at(ix, mod, path, within[k], &inside);
	}
	/* An address inside a symbol with a size is the index's to answer:
	 * libdw only where a label sits at it. */
	cr_assert(inside.indexed * 100 >= inside.asked * 98, "%s: the index answered %zu of %zu addresses inside symbols",
		  path, inside.indexed, inside.asked);
	Dwarf_Addr lo, hi;
	dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
	srand48(1);
	for (int i = 0; i < max_symbols && hi > lo; i++)
		compare_at(ix, mod, path, lo + (uint64_t)(drand48() * (double)(hi - lo)), &t);
	for (uint64_t a = lo; (flags & EVERY_BYTE) && a < hi; a++)
		compare_at(ix, mod, path, a, &t);
	compare_at(ix, mod, path, UINT64_MAX, &t);
	symindex__free(ix);
	dwfl_end(dwfl);
}

static char *library_of(const void *fn)
{
	Dl_info info;
	cr_assert(dladdr(fn, &info) && info.dli_fname, "dladdr");
	return realpath(info.dli_fname, NULL);
}

Test(symindex, the_c_library_named_as_libdw_names_it)
{
	same_answers(library_of((const void *)&printf), 300, 0);
}

Test(symindex, libdw_itself_named_as_libdw_names_it)
{
	same_answers(library_of((const void *)&dwfl_begin), 300, 0);
}

Test(symindex, a_program_with_its_local_symbols_named_as_libdw_names_it)
{
	same_answers(tu_build_path("convoy"), 600, LOCAL_SYMBOLS);
}

Test(symindex, the_shim_named_as_libdw_names_it)
{
	same_answers(tu_build_path("libconvoy.so"), 600, LOCAL_SYMBOLS);
}

/* The index of name in mod's table; 0 if none. */
static int table_index(Dwfl_Module *mod, const char *name)
{
	for (int i = 1; i < dwfl_module_getsymtab(mod); i++) {
		GElf_Sym s;
		const char *at = dwfl_module_getsym_info(mod, i, &s, &(GElf_Addr){ 0 }, NULL, NULL, NULL);
		if (at && !strcmp(at, name))
			return i;
	}
	return 0;
}

/* tests/progs/lib/symshapes.c: aliases, nesting, local symbols, labels and
 * a symbol whose end wraps past the last address, every byte. */
Test(symindex, hard_shapes_named_as_libdw_names_them)
{
	char *path = tu_build_path("tests/progs/libsymshapes.so");
	same_answers(path, 100, EVERY_BYTE | LOCAL_SYMBOLS);
	/* Its pairs whose answer depends on their order in the table come in
	 * both orders (the linker's choice): else one order went untested. */
	Dwfl *dwfl = dwfl_begin(&offline);
	dwfl_report_begin(dwfl);
	Dwfl_Module *mod = dwfl_report_elf(dwfl, path, path, -1, 0, false);
	dwfl_report_end(dwfl, NULL, NULL);
	cr_assert(mod, "%s: %s", path, dwfl_errmsg(-1));
	const char *pairs[][2] = { { "order_outer", "order_weak_inner" }, { "start_large", "start_small" } };
	for (size_t p = 0; p < 2; p++) {
		unsigned orders = 0;
		for (int k = 0; k < 8; k++) {
			char a[64], b[64];
			snprintf(a, sizeof(a), "%s%d", pairs[p][0], k);
			snprintf(b, sizeof(b), "%s%d", pairs[p][1], k);
			int ia = table_index(mod, a), ib = table_index(mod, b);
			cr_assert(ia && ib, "%s: no %s or %s", path, a, b);
			orders |= ia < ib ? 1u : 2u;
		}
		cr_assert(orders == 3, "%s: every %s pair in one order in the table (add pairs)", path, pairs[p][0]);
	}
	dwfl_end(dwfl);
}
