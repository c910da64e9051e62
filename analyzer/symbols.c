/* symbols.c — symbolization through libdwfl.
 *
 * Each module of the profile's map is reported at the load bias it had in the
 * recorded process, so process addresses look up directly. Modules whose file
 * is gone or has changed (build-id mismatch) are skipped: naming an address
 * from the wrong binary would be worse than not naming it.
 */
#include <elfutils/libdwfl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile.h"
#include "symbols.h"
#include "util.h"

struct syms {
	Dwfl *dwfl;
};

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static int same_build_id(Dwfl_Module *mod, const struct profile_module *pm)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	if (!pm->m.build_id_len)
		return 1;   /* nothing recorded to compare */
	int n = dwfl_module_build_id(mod, &bits, &vaddr);
	return n == (int)pm->m.build_id_len && memcmp(bits, pm->build_id, (size_t)n) == 0;
}

/* Reports the modules not marked in skip; marks the ones whose file's
 * build-id differs from the recorded one. Returns how many it marked. */
static size_t report_modules(Dwfl *dwfl, const struct profile *p, char *skip)
{
	size_t mismatched = 0;
	dwfl_report_begin(dwfl);
	for (size_t i = 0; i < p->nmodules; i++) {
		const struct profile_module *pm = &p->modules[i];
		if (skip[i] || !pm->path || pm->path[0] != '/' || access(pm->path, R_OK) != 0)
			continue;   /* the vdso, or a file that is gone */
		Dwfl_Module *mod = dwfl_report_elf(dwfl, pm->path, pm->path, -1, pm->m.load_bias, false);
		if (mod && !same_build_id(mod, pm)) {
			skip[i] = 1;
			mismatched++;
		}
	}
	dwfl_report_end(dwfl, NULL, NULL);
	return mismatched;
}

struct syms *syms__load(const struct profile *p)
{
	struct syms *s = xcalloc(1, sizeof(*s));
	s->dwfl = dwfl_begin(&callbacks);
	if (!s->dwfl)
		return s;
	char *skip = xcalloc(p->nmodules, 1);
	/* A second report without the rebuilt files drops them. */
	if (report_modules(s->dwfl, p, skip))
		report_modules(s->dwfl, p, skip);
	free(skip);
	return s;
}

void syms__free(struct syms *s)
{
	if (s && s->dwfl)
		dwfl_end(s->dwfl);
	free(s);
}

const char *syms__name(struct syms *s, uint64_t addr, char *buf, size_t size)
{
	if (!s->dwfl)
		return NULL;
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, addr);
	if (!mod)
		return NULL;
	GElf_Off off;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
	if (!name)
		return NULL;
	if (off)
		snprintf(buf, size, "%s+%llu", name, (unsigned long long)off);
	else
		snprintf(buf, size, "%s", name);
	return buf;
}

const char *syms__source(struct syms *s, uint64_t addr, char *buf, size_t size)
{
	if (!s->dwfl)
		return NULL;
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, addr);
	Dwfl_Line *line = mod ? dwfl_module_getsrc(mod, addr) : NULL;
	int lineno;
	const char *file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
	if (!file)
		return NULL;
	const char *slash = strrchr(file, '/');
	snprintf(buf, size, "%s:%d", slash ? slash + 1 : file, lineno);
	return buf;
}
