/* symbols.c — symbolization through libdwfl.
 *
 * Each module of the profile's map is reported at the load bias it had in the
 * recorded process, so process addresses look up directly. Modules whose file
 * is gone or has changed (build-id mismatch) are skipped: naming an address
 * from the wrong binary would be worse than not naming it.
 */
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <libelf.h>
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

/* Does the file at path still have the build-id the profile recorded? A
 * rebuilt binary would name addresses wrongly, so it is left out. */
static int same_build_id(const struct profile_module *pm)
{
	if (!pm->m.build_id_len)
		return 1;   /* nothing recorded to compare */
	int fd = open(pm->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int same = 0;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *bits;
	ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &bits) : -1;
	if (n == (ssize_t)pm->m.build_id_len && memcmp(bits, pm->build_id, (size_t)n) == 0)
		same = 1;
	if (elf)
		elf_end(elf);
	close(fd);
	return same;
}

struct syms *syms__load(const struct profile *p)
{
	struct syms *s = xcalloc(1, sizeof(*s));
	elf_version(EV_CURRENT);
	s->dwfl = dwfl_begin(&callbacks);
	if (!s->dwfl)
		return s;
	dwfl_report_begin(s->dwfl);
	for (size_t i = 0; i < p->nmodules; i++) {
		const struct profile_module *pm = &p->modules[i];
		if (!pm->path || pm->path[0] != '/' || access(pm->path, R_OK) != 0 || !same_build_id(pm))
			continue;   /* the vdso, a file that is gone, or one rebuilt since */
		dwfl_report_elf(s->dwfl, pm->path, pm->path, -1, pm->m.load_bias, false);
	}
	dwfl_report_end(s->dwfl, NULL, NULL);
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
