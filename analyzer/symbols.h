/* symbols.h — addresses recorded in a profile, named with elfutils (libdwfl)
 * from the module map the profile carries: functions with file:line and
 * inlined frames for code, variables with their member path for data. */
#ifndef CONVOY_SYMBOLS_H
#define CONVOY_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

struct profile;
struct syms;

/* Never NULL; may know nothing. With read_modules 0 no module file is
 * opened: only what the profile itself says names things (reproducible
 * output, whatever is installed). */
struct syms *syms__load(const struct profile *p, int read_modules);
void syms__free(struct syms *s);
const struct profile *syms__profile(const struct syms *s);   /* the profile it was loaded for */
/* One slot for what is derived from these symbols (callstacks.c's object
 * names), freed with them. */
void *syms__aux(struct syms *s);
void syms__set_aux(struct syms *s, void *aux, void (*free_fn)(void *));

/* The symbol containing addr ("queue_lock", "pool+8", "ns::f(int)"),
 * demangled, written to buf; NULL when no symbol covers it (heap, stack,
 * stripped). */
const char *syms__name(struct syms *s, uint64_t addr, char *buf, size_t size);

/* The file:line of addr, when DWARF has it; NULL otherwise. */
const char *syms__source(struct syms *s, uint64_t addr, char *buf, size_t size);

/* Any module-map generation: the module mapped at the end, else the last
 * one that covered the address. */
#define SYMS_ANY_GEN UINT32_MAX

/* One frame of a call stack. A pc inside inlined code gives several: the
 * innermost first, each marked inlined into the one after it. */
struct sym_frame {
	uint64_t    pc;              /* as recorded (a return address for callers) */
	const char *function;        /* demangled; NULL when nothing names it */
	const char *path;            /* source file as DWARF has it; NULL if unknown */
	const char *file;            /* its last component */
	int         line;            /* 0 if unknown */
	const char *module;          /* the module's file name (last component); NULL if none */
	uint64_t    offset;          /* pc - load bias: the address in the module's file */
	int         inlined;         /* inlined into the next frame */
	int         shim;            /* inside libconvoy.so */
	int         runtime;         /* libc, the loader, a system header, or a language's standard
	                              * library (C++ std::, Rust std/core/alloc), linked or inlined */
};

/* The frames of one recorded pc (is_return: pc is a return address, look up
 * pc - 1), in the module map of generation gen. Always at least one frame;
 * the array belongs to s. */
size_t syms__frames(struct syms *s, uint64_t pc, uint32_t gen, int is_return,
		    const struct sym_frame **out);

/* "function (file:line)", "function", or "module+0xoff" / "0xaddr". */
const char *syms__frame_label(const struct sym_frame *f, char *buf, size_t size);

/* The variable containing a data address, with the path to the member it
 * points at: "pool.queue_lock", "workers[3].lock", "ns::table[2][1]";
 * "sym+off" without DWARF; NULL if no variable covers it. */
const char *syms__data_name(struct syms *s, uint64_t addr, uint32_t gen, char *buf, size_t size);

/* What the exported data symbol containing addr is, when it is a runtime's
 * known state ("CPython's runtime state, where its GIL lives"); else NULL. */
const char *syms__data_note(struct syms *s, uint64_t addr, uint32_t gen);

/* The modules whose code addresses were named module+offset because no
 * symbol covered them, each with what it offers ("python3.11 (12
 * addresses; it has only its exported symbols ...)"), in buf; returns how
 * many. Counts the lookups made so far: call it after the report named
 * what it shows. */
size_t syms__offsets_note(struct syms *s, char *buf, size_t size);
/* The same over the profiles of several runs (a sweep's; NULL entries:
 * runs read without symbols), each module once, its lookups added up. */
size_t syms__offsets_note_runs(struct syms *const *runs, size_t nruns, char *buf, size_t size);

/* The machine code of the function containing the code address addr (its
 * ELF symbol): *len bytes that run at *start, owned by s. NULL when no
 * symbol with a size covers it or its file cannot be read. */
const unsigned char *syms__function_code(struct syms *s, uint64_t addr, uint32_t gen, uint64_t *start, size_t *len);
/* The module (file name) covering addr and the address in its file; NULL if none. */
const char *syms__module_of(struct syms *s, uint64_t addr, uint32_t gen, uint64_t *offset);

#endif
