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

/* About max_symbols symbols of path's table, each at its edges and middle,
 * and as many addresses drawn across the module, at a load bias; with
 * every_byte, each address of the module too. */
static void same_answers(const char *path, int max_symbols, bool every_byte)
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
	int stride = n / max_symbols > 1 ? n / max_symbols : 1;
	struct tally t = { 0 };
	for (int i = 1; i < n; i += stride) {
		GElf_Sym s;
		GElf_Addr v;
		if (!dwfl_module_getsym_info(mod, i, &s, &v, NULL, NULL, NULL) || s.st_shndx == SHN_UNDEF)
			continue;
		const uint64_t at[] = { v - 1, v, v + 1, v + s.st_size / 2, v + s.st_size - 1, v + s.st_size,
					v + s.st_size + 1 };
		for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++)
			compare_at(ix, mod, path, at[k], &t);
	}
	Dwarf_Addr lo, hi;
	dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
	srand48(1);
	for (int i = 0; i < max_symbols && hi > lo; i++)
		compare_at(ix, mod, path, lo + (uint64_t)(drand48() * (double)(hi - lo)), &t);
	for (uint64_t a = lo; every_byte && a < hi; a++)
		compare_at(ix, mod, path, a, &t);
	/* The index is what answers, libdw only near labels: past the
	 * sample of symbols, every byte is mostly past a label (the last
	 * code's, the gaps between segments). */
	cr_assert(every_byte || t.indexed * 10 >= t.asked * 9, "%s: the index answered %zu of %zu addresses", path,
		  t.indexed, t.asked);
	cr_assert(t.indexed > 0, "%s: the index answered nothing", path);
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
	same_answers(library_of((const void *)&printf), 300, false);
}

Test(symindex, libdw_itself_named_as_libdw_names_it)
{
	same_answers(library_of((const void *)&dwfl_begin), 300, false);
}

Test(symindex, a_program_with_its_local_symbols_named_as_libdw_names_it)
{
	same_answers(tu_build_path("convoy"), 600, false);
}

Test(symindex, the_shim_named_as_libdw_names_it)
{
	same_answers(tu_build_path("libconvoy.so"), 600, false);
}

/* tests/progs/lib/symshapes.c: aliases, nesting, local symbols and labels,
 * every byte. */
Test(symindex, hard_shapes_named_as_libdw_names_them)
{
	same_answers(tu_build_path("tests/progs/libsymshapes.so"), 100, true);
}
