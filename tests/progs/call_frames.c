/* call_frames.c — every call the shim's own code makes, it makes from a
 * frame of its own (tests/shim/fastpath.c).
 *
 * Usage: call_frames LIBCONVOY_SO
 *
 * preload/stacks.c takes every frame in the shim for one that saved its
 * caller's frame pointer (push rbp; mov rsp, rbp: its canonical frame
 * address is rbp + 16) when it reuses recent captures. A frame can only
 * be in a capture as a caller, so the rule is about calls: at each call
 * instruction in a function compiled from preload/, the call-frame
 * information (.eh_frame, read with libdw) must say CFA = rbp + 16. The
 * Makefile's -momit-leaf-frame-pointer leaves frames out of leaves only,
 * where no call is (tail jumps are not calls); a flag or an attribute
 * that broke it (-fomit-frame-pointer on one file) fails here. Functions from
 * elsewhere (libgcc's unwinder, linked in; the C runtime's start-up code)
 * are told apart by the compile unit that holds them and are not the
 * shim's to check. Each function's bytes come from the file's symbol
 * table, decoded with Capstone.
 *
 * Prints "ok: N calls in F functions of preload/, each from a frame" and
 * exits 0, or names each call made without one and exits 1; 77 when the
 * file has no symbol table or no debug information to tell whose a
 * function is. */
#include <capstone/capstone.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define X86_64_RBP 6   /* DWARF's number for rbp */

/* The bytes at address addr, len of them, from the section that holds them. */
static const uint8_t *code_at(Elf *elf, uint64_t addr, uint64_t len)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR) ||
		    addr < sh.sh_addr || addr + len > sh.sh_addr + sh.sh_size)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		return d && d->d_buf ? (const uint8_t *)d->d_buf + (addr - sh.sh_addr) : NULL;
	}
	return NULL;
}

/* Whether the code at addr was compiled from the shim's sources. */
static bool from_preload(Dwarf *dw, uint64_t addr)
{
	Dwarf_Die cu;
	const char *name;
	return dwarf_addrdie(dw, addr, &cu) && (name = dwarf_diename(&cu)) && strncmp(name, "preload/", 8) == 0;
}

/* Whether, at pc, the frame's CFA is rbp + 16. */
static bool framed_at(Dwarf_CFI *cfi, uint64_t pc)
{
	Dwarf_Frame *frame;
	Dwarf_Op *ops;
	size_t nops;
	if (dwarf_cfi_addrframe(cfi, pc, &frame) != 0)
		return false;
	/* libdw gives a register rule as DW_OP_bregx (register, offset). */
	bool framed = dwarf_frame_cfa(frame, &ops, &nops) == 0 && nops == 1 &&
		      ((ops[0].atom == DW_OP_bregx && ops[0].number == X86_64_RBP && ops[0].number2 == 16) ||
		       (ops[0].atom == DW_OP_breg0 + X86_64_RBP && ops[0].number == 16));
	free(frame);
	return framed;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: call_frames LIBCONVOY_SO\n");
		return 2;
	}
	int fd = elf_version(EV_CURRENT) != EV_NONE ? open(argv[1], O_RDONLY) : -1;
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	Dwarf *dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	Dwarf_CFI *cfi = elf ? dwarf_getcfi_elf(elf) : NULL;
	Elf_Data *symbols = NULL;
	size_t nsymbols = 0, strings = 0;
	for (Elf_Scn *scn = NULL; elf && (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB) {
			symbols = elf_getdata(scn, NULL);
			nsymbols = sh.sh_size / sh.sh_entsize;
			strings = sh.sh_link;
		}
	}
	if (!symbols || !dw || !cfi) {
		printf("skip: %s has no %s\n", argv[1], !symbols ? "symbol table" : !dw ? "debug information" : "call-frame information");
		return 77;
	}
	csh cs;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		printf("capstone: cannot open an x86-64 decoder\n");
		return 1;
	}
	int functions = 0, calls = 0, bad = 0;
	for (size_t i = 0; i < nsymbols; i++) {
		GElf_Sym s;
		const char *name;
		const uint8_t *code;
		if (!gelf_getsym(symbols, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC || !s.st_size ||
		    s.st_shndx == SHN_UNDEF || !(name = elf_strptr(elf, strings, s.st_name)) ||
		    !from_preload(dw, s.st_value) || !(code = code_at(elf, s.st_value, s.st_size)))
			continue;
		functions++;
		cs_insn *insn;
		size_t n = cs_disasm(cs, code, s.st_size, s.st_value, 0, &insn);
		for (size_t k = 0; k < n; k++) {
			if (insn[k].id != X86_INS_CALL && insn[k].id != X86_INS_LCALL)
				continue;
			calls++;
			if (!framed_at(cfi, insn[k].address)) {
				printf("%s+0x%llx: %s %s without a frame (its CFA is not rbp + 16)\n", name,
				       (unsigned long long)(insn[k].address - s.st_value), insn[k].mnemonic, insn[k].op_str);
				bad++;
			}
		}
		if (n)
			cs_free(insn, n);
	}
	cs_close(&cs);
	dwarf_cfi_end(cfi);
	dwarf_end(dw);
	elf_end(elf);
	close(fd);
	if (bad || !calls)
		return 1;
	printf("ok: %d calls in %d functions of preload/, each from a frame\n", calls, functions);
	return 0;
}
