/* symindex.h — a module's symbol table sorted by address, so that naming an
 * address costs a binary search, not a pass over the whole table: libdw
 * 0.188's dwfl_module_addrinfo reads every symbol for each address (1.6 ms
 * an address in node's binary, whose table has 109,000). The answers are
 * dwfl_module_addrinfo's own: where its choice depends on more than the
 * sized symbols that cover the address (assembly labels without a size,
 * the section an address lies in), the lookup says so and the caller asks
 * libdw. */
#ifndef CONVOY_SYMINDEX_H
#define CONVOY_SYMINDEX_H

#include <stdbool.h>
#include <stdint.h>
#include <elfutils/libdwfl.h>

struct symindex;

/* The index of mod's symbol table; NULL (ask libdw) when it has none, is a
 * relocatable file's or one with function descriptors (ppc64), or memory
 * ran out. */
struct symindex *symindex__build(Dwfl_Module *mod);
void symindex__free(struct symindex *ix);

/* What dwfl_module_addrinfo(mod, addr, off, sym, NULL, NULL, NULL) returns,
 * into *name (NULL: no symbol), *off and *sym: true; false when only libdw
 * can tell (*name, *off and *sym untouched). mod: the module ix was built
 * for. */
bool symindex__lookup(const struct symindex *ix, Dwfl_Module *mod, uint64_t addr, const char **name,
		      GElf_Off *off, GElf_Sym *sym);

/* What dwfl_module_addrinfo(mod, addr, off, sym, NULL, NULL, NULL) returns,
 * through *ix: NULL until the first call builds mod's index there, or
 * SYMINDEX_NONE where mod has none (libdw answers). symindex__free takes
 * either. */
extern struct symindex symindex_none;
#define SYMINDEX_NONE (&symindex_none)
const char *symindex__addrinfo(struct symindex **ix, Dwfl_Module *mod, uint64_t addr, GElf_Off *off, GElf_Sym *sym);

#endif
