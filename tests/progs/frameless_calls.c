/* frameless_calls.c — the shim's entry points without a frame call
 * nothing (tests/shim/fastpath.c).
 *
 * Usage: frameless_calls LIBCONVOY_SO
 *
 * stacks.c takes every frame in the shim for one that saved its caller's
 * frame pointer. That holds for a function built with a frame, and for one
 * without (an interposed lock built with CV_EXPORT_FRAMELESS, preload/shim.h;
 * an unlock gcc built as a leaf) only while it is never a caller: no call
 * instruction in its body or its .cold part (gcc's split of unlikely
 * code), tail jumps only. Each exported function's bytes are read from the
 * file's symbol table and decoded with Capstone; one that never sets its
 * frame pointer (mov rbp, rsp) must call nothing. Prints "ok: N exported
 * functions, F with a frame, L without, no call in those" and exits 0, or
 * names each call and exits 1; 77 when the file has no symbol table. */
#include <capstone/capstone.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct image {
	Elf *elf;
	Elf_Data *symbols;
	size_t nsymbols, strings;
};

/* name's symbol, as a function with a size. */
static bool find(const struct image *im, const char *name, GElf_Sym *out)
{
	for (size_t i = 0; i < im->nsymbols; i++) {
		GElf_Sym s;
		const char *n;
		if (gelf_getsym(im->symbols, (int)i, &s) && GELF_ST_TYPE(s.st_info) == STT_FUNC && s.st_size &&
		    (n = elf_strptr(im->elf, im->strings, s.st_name)) && strcmp(n, name) == 0) {
			*out = s;
			return true;
		}
	}
	return false;
}

/* The bytes at address addr, len of them, from the section that holds them. */
static const uint8_t *code_at(Elf *elf, uint64_t addr, uint64_t len)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || addr < sh.sh_addr ||
		    addr + len > sh.sh_addr + sh.sh_size)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		return d && d->d_buf ? (const uint8_t *)d->d_buf + (addr - sh.sh_addr) : NULL;
	}
	return NULL;
}

/* The calls in one function's code, each printed when it has no frame
 * (*framed false: it never moves the stack pointer into rbp); their count,
 * or -1. */
static int calls_in(csh cs, const struct image *im, const char *name, const GElf_Sym *s, size_t *ninsns,
		    bool *framed)
{
	const uint8_t *code = code_at(im->elf, s->st_value, s->st_size);
	if (!code) {
		printf("%s: its code is not in the file\n", name);
		return -1;
	}
	cs_insn *insn;
	size_t n = cs_disasm(cs, code, s->st_size, s->st_value, 0, &insn);
	int calls = 0;
	uint64_t decoded = 0;
	for (size_t i = 0; i < n; i++) {
		decoded += insn[i].size;
		*framed |= insn[i].id == X86_INS_MOV && strcmp(insn[i].op_str, "rbp, rsp") == 0;
	}
	for (size_t i = 0; i < n && !*framed; i++) {
		if (insn[i].id == X86_INS_CALL || insn[i].id == X86_INS_LCALL) {
			printf("%s: a call without a frame at +0x%llx: %s %s\n", name,
			       (unsigned long long)(insn[i].address - s->st_value), insn[i].mnemonic, insn[i].op_str);
			calls++;
		}
	}
	if (n)
		cs_free(insn, n);
	if (decoded != s->st_size) {   /* padding after the last ret decodes too; a gap does not */
		printf("%s: %llu of its %llu bytes decoded\n", name, (unsigned long long)decoded,
		       (unsigned long long)s->st_size);
		return -1;
	}
	*ninsns += n;
	return calls;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: frameless_calls LIBCONVOY_SO\n");
		return 2;
	}
	int fd = elf_version(EV_CURRENT) != EV_NONE ? open(argv[1], O_RDONLY) : -1;
	struct image im = { .elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL };
	for (Elf_Scn *scn = NULL; im.elf && (scn = elf_nextscn(im.elf, scn)) != NULL;) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB) {
			im.symbols = elf_getdata(scn, NULL);
			im.nsymbols = sh.sh_size / sh.sh_entsize;
			im.strings = sh.sh_link;
		}
	}
	if (!im.symbols) {
		printf("skip: %s has no symbol table\n", argv[1]);
		return 77;
	}
	csh cs;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		printf("capstone: cannot open an x86-64 decoder\n");
		return 1;
	}
	int bad = 0, exported = 0, framed = 0;
	size_t ninsns = 0;
	for (size_t i = 0; i < im.nsymbols; i++) {
		GElf_Sym s;
		const char *name;
		if (!gelf_getsym(im.symbols, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC || !s.st_size ||
		    GELF_ST_BIND(s.st_info) != STB_GLOBAL || GELF_ST_VISIBILITY(s.st_other) != STV_DEFAULT ||
		    s.st_shndx == SHN_UNDEF || !(name = elf_strptr(im.elf, im.strings, s.st_name)))
			continue;
		exported++;
		bool has_frame = false;
		int calls = calls_in(cs, &im, name, &s, &ninsns, &has_frame);
		char cold[256];
		snprintf(cold, sizeof(cold), "%s.cold", name);
		GElf_Sym c;
		if (calls >= 0 && !has_frame && find(&im, cold, &c)) {
			int more = calls_in(cs, &im, cold, &c, &ninsns, &has_frame);
			calls = more < 0 ? more : calls + more;
		}
		framed += has_frame;
		bad += calls != 0;
	}
	cs_close(&cs);
	elf_end(im.elf);
	close(fd);
	if (bad || !exported)
		return 1;
	printf("ok: %d exported functions, %d with a frame, %d without, no call in those (%zu instructions)\n",
	       exported, framed, exported - framed, ninsns);
	return 0;
}
