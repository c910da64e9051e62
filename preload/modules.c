/* modules.c — the module map, as the profile needs it to name addresses
 * after the process is gone.
 *
 * Every object the dynamic loader ever had mapped while the shim looked is
 * kept: path, load bias, address range and build-id, copied into the shim's
 * memory (a library closed before exit has nothing left to read). The map is
 * re-read only when it changed: glibc counts every load and unload in
 * dl_phdr_info's dlpi_adds/dlpi_subs, so a check is one dl_iterate_phdr call
 * that stops at the first entry. stacks.c checks before each capture and at
 * each object's first use, so any module a recorded address can point into
 * was in the map when the address was recorded; output.c takes a last look
 * at write time.
 *
 * Why not wrap dlopen: dlopen finds the library through the *caller's*
 * RPATH/RUNPATH and namespace (glibc passes its return address). A wrapper
 * in libconvoy.so would be the caller, and a program whose plugins sit in its
 * own RUNPATH would stop finding them. The counters see every load, including
 * the ones glibc makes itself (NSS, iconv) and dlmopen.
 *
 * Generations tell apart two modules that used the same addresses one after
 * the other: the generation goes up each time a re-read finds modules gone;
 * a module is valid for [map_gen, unload_gen) and each stack records the
 * generation it was captured in (include/convoy/profile.h, cv_module).
 */
#include <link.h>
#include <string.h>

#include "shim.h"

struct cv_modent {
	struct cv_modent *next;          /* push-only, newest first */
	uint64_t load_bias, start, end;
	uint32_t build_id_len, path_len, is_main;
	uint32_t map_gen, unload_gen;    /* unload_gen 0: mapped at the last look */
	int      seen;                   /* in the current re-read */
	const unsigned char *build_id;
	const char *path;
};

static cv_spinlock_t mod_lock;       /* re-reads; the list itself is read without it */
static struct cv_modent *mods;
static uint32_t map_gen;
static unsigned long long seen_adds, seen_subs;
static int have_map;

struct counts { unsigned long long adds, subs; unsigned index; };

static int first_counts(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct counts *c = arg;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		c->adds = info->dlpi_adds;
		c->subs = info->dlpi_subs;
	}
	return 1;   /* the counters are the same in every entry: stop here */
}

static size_t find_build_id(const struct dl_phdr_info *info, const unsigned char **id)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		const unsigned char *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const unsigned char *name = p + sizeof(*n);
			const unsigned char *desc = name + ((n->n_namesz + 3) & ~3u);
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0 && desc + n->n_descsz <= end) {
				*id = desc;
				return n->n_descsz;
			}
			p = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	return 0;
}

static void *copy(const void *src, size_t len)
{
	unsigned char *p = cv__alloc(len + 1);
	if (p && len)
		memcpy(p, src, len);
	return p;
}

/* One entry of the loader's list (mod_lock held). */
static int reread_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct counts *c = arg;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		c->adds = info->dlpi_adds;
		c->subs = info->dlpi_subs;
	}
	uint64_t lo = UINT64_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uint64_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
		if (a < lo)
			lo = a;
		if (b > hi)
			hi = b;
	}
	if (lo == UINT64_MAX)
		return 0;
	const char *path = info->dlpi_name;
	uint32_t is_main = 0;
	if (c->index++ == 0) {   /* the loader lists the executable first, with an empty name */
		path = cv__process.exe;
		is_main = 1;
	} else if (!path) {
		path = "";
	}
	size_t path_len = strlen(path);
	for (struct cv_modent *m = mods; m; m = m->next) {
		if (!m->unload_gen && m->load_bias == info->dlpi_addr && m->start == lo && m->end == hi &&
		    m->path_len == path_len && memcmp(m->path, path, path_len) == 0) {
			m->seen = 1;
			return 0;
		}
	}
	struct cv_modent *m = cv__alloc(sizeof(*m));
	if (!m)
		return 0;
	const unsigned char *id = NULL;
	size_t id_len = find_build_id(info, &id);
	m->load_bias = info->dlpi_addr;
	m->start = lo;
	m->end = hi;
	m->is_main = is_main;
	m->build_id = id_len ? copy(id, id_len) : NULL;
	m->build_id_len = m->build_id ? (uint32_t)id_len : 0;
	m->path = copy(path, path_len);
	m->path_len = m->path ? (uint32_t)path_len : 0;
	m->map_gen = UINT32_MAX;   /* set below, once the generation is known */
	m->seen = 1;
	m->next = mods;
	__atomic_store_n(&mods, m, __ATOMIC_RELEASE);
	return 0;
}

static void reread_locked(void)
{
	struct counts c = { 0, 0, 0 };
	for (struct cv_modent *m = mods; m; m = m->next)
		m->seen = 0;
	dl_iterate_phdr(reread_cb, &c);
	uint32_t gen = map_gen;
	int gone = 0;
	for (struct cv_modent *m = mods; m; m = m->next)
		if (!m->unload_gen && !m->seen && m->map_gen != UINT32_MAX)
			gone = 1;
	if (gone) {
		gen++;
		for (struct cv_modent *m = mods; m; m = m->next)
			if (!m->unload_gen && !m->seen && m->map_gen != UINT32_MAX)
				m->unload_gen = gen;
	}
	for (struct cv_modent *m = mods; m; m = m->next)
		if (m->map_gen == UINT32_MAX)
			m->map_gen = gen;
	seen_adds = c.adds;
	seen_subs = c.subs;
	have_map = 1;
	__atomic_store_n(&map_gen, gen, __ATOMIC_RELEASE);
}

/* Call with the reentrancy guard held: dl_iterate_phdr takes the loader's
 * lock and the re-read allocates. *loads (unless NULL): the loader's own
 * count of loads and unloads this look saw (dlpi_adds + dlpi_subs: every
 * dlopen or dlclose that maps or unmaps an object adds one; 0 where the C
 * library does not say), which changes whenever the set of mapped objects
 * does, whatever this map makes of it. */
uint32_t cv__modules_refresh(uint64_t *loads)
{
	struct counts c = { 0, 0, 0 };
	dl_iterate_phdr(first_counts, &c);
	if (loads)
		*loads = c.adds + c.subs;
	if (__atomic_load_n(&have_map, __ATOMIC_ACQUIRE) &&
	    c.adds == __atomic_load_n(&seen_adds, __ATOMIC_RELAXED) &&
	    c.subs == __atomic_load_n(&seen_subs, __ATOMIC_RELAXED))
		return __atomic_load_n(&map_gen, __ATOMIC_ACQUIRE);
	cv__spin_lock(&mod_lock);
	reread_locked();
	uint32_t gen = map_gen;
	cv__spin_unlock(&mod_lock);
	return gen;
}

/* The generation last read, without a look: for a thread with too little
 * stack for dl_iterate_phdr (an object first used there is named against
 * the map as it was). */
uint32_t cv__modules_gen(void)
{
	return __atomic_load_n(&map_gen, __ATOMIC_ACQUIRE);
}

void cv__modules_write(void *w, bool reread)
{
	if (reread) {
		cv__spin_lock(&mod_lock);
		reread_locked();   /* a last look: what is mapped now, what went */
		cv__spin_unlock(&mod_lock);
	}
	for (struct cv_modent *m = __atomic_load_n(&mods, __ATOMIC_ACQUIRE); m; m = m->next) {
		struct cv_module rec = {
			.load_bias = m->load_bias,
			.start = m->start,
			.end = m->end,
			.build_id_len = m->build_id_len,
			.path_len = m->path_len,
			.is_main = m->is_main,
			.map_gen = m->map_gen,
			.unload_gen = m->unload_gen,
		};
		cv__put_record(w, CV_REC_MODULE, &rec, sizeof(rec), m->build_id, rec.build_id_len,
			       m->path, rec.path_len);
	}
}

/* Fork child: a re-read another thread had in progress is abandoned and
 * done again on the next refresh. */
void cv__modules_after_fork(void)
{
	cv__spin_reset(&mod_lock);
	__atomic_store_n(&have_map, 0, __ATOMIC_RELEASE);
}
