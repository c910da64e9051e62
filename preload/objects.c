/* objects.c — synchronisation objects and each thread's records of them.
 *
 * Two levels, so the program's path never writes a shared line for us:
 *
 *  - the registry: address -> live struct cv_obj, a chained hash split into
 *    shards with a spinlock and a chain array each, which grows with the
 *    shard. Touched only the first time a thread uses an object, and by
 *    init/destroy.
 *  - per thread: address -> struct cv_rec, an open-addressing table owned by the
 *    thread (no locks), fronted by a cache per object family in shim.h
 *    (cv__way, cv__way_partner). Every counter a lock operation bumps
 *    lives in the thread's record.
 *
 * Identity is address plus generation: destroy (or a second init) retires the
 * live object, and the next use of the address creates generation + 1. Threads
 * holding records of a retired object notice the flag on their next lookup and
 * move to the new one, so counts never cross generations. Statically
 * initialised objects are created on first use.
 *
 * Memory is bounded per address: a program that re-initialises the object at
 * one address over and over (a mutex or barrier on the stack of a loop) gets
 * its first CV_GENERATIONS_KEPT - 1 generations apart, and the last one
 * stands for every later re-init (its name says so, unless the program named
 * it). Across addresses: the first CV_RETIRED_KEPT
 * destroyed (or re-initialised) objects are kept apart; each later one is
 * merged at its retirement into one aggregate object of its kind (address
 * 0, named "destroyed objects merged"): every thread's record of it folds
 * into that thread's record of the aggregate, at once for the thread that
 * destroyed it, else at the thread's next look at the address or the next
 * growth of its table (a profile written before then writes the record
 * under the aggregate: cv__rec_written_under), and the object goes back
 * with its last record. The generations at an address go on counting past
 * that cap (retire_locked), so that an address re-initialised over and
 * over still reaches its last.
 */
#include <stddef.h>
#include <string.h>

#include "shim.h"

#define CV_SHARD_BITS 6
#define CV_SHARDS (1u << CV_SHARD_BITS)
/* A shard's chains: 16 at first (the registry's first use touches one 8 KiB
 * array of them for all 64 shards, not random pages of one 512 KiB table: a
 * fresh page costs about 10 us here), four times as many when it holds
 * twice as many objects as chains, up to 1024 (65536 in all). */
#define CV_CHAINS_BITS_FIRST 4
#define CV_CHAINS_BITS_MAX 10
#define CV_TABLE_INITIAL 16

#define CV_GENERATIONS_KEPT 64u
static const char generations_merged[] = "later generations merged";

#define CV_RETIRED_KEPT 4096u
static const char retired_merged[] = "destroyed objects merged";

static struct shard {
	cv_spinlock_t lock;
	uint32_t bits;              /* 1 << bits chains; 0: none yet */
	uint32_t objects;           /* in the chains */
	struct cv_obj **chains;
} shards[CV_SHARDS];

/* Past the cap, the generation of an object folded into the aggregate
 * (which leaves no object at its address to number the next one after) is
 * remembered in its shard's sets of four ways, until an object is made
 * there again: bounded (a line a set, 64 KiB in all: as many ways as
 * CV_RETIRED_KEPT, touched only past the cap), and lossy (an address whose
 * way another took, an empty one or else the lowest generation's, goes
 * back to the generation after its retired object kept from before the
 * cap, or 0). Under the shard's lock. A set of another epoch is empty: a
 * fork child's epoch is the parent's plus one, so that it clears no page
 * of the parent's. */
#define CV_PAST_CAP_SET_BITS 4
#define CV_PAST_CAP_SETS (1u << CV_PAST_CAP_SET_BITS)
#define CV_PAST_CAP_WAYS 4u
static struct generations_set {
	const void *addr[CV_PAST_CAP_WAYS];         /* NULL: an empty way */
	uint32_t    generation[CV_PAST_CAP_WAYS];
	uint32_t    epoch;
} __attribute__((aligned(CV_CACHELINE))) past_cap[CV_SHARDS][CV_PAST_CAP_SETS] CV_LARGE_BSS;
static uint32_t past_cap_epoch;
static struct cv_obj **first_chains;  /* every shard's first chains, one block */
static uint32_t nobjects;             /* ids until output.c numbers what it writes; may wrap */
static uint32_t retired_kept;         /* retirements, counted up to CV_RETIRED_KEPT (a few more in a race) */
static struct cv_obj *aggregates[CV_NKINDS];
static cv_spinlock_t aggregates_lock;
static cv_spinlock_t registry_lock;   /* the chains' first allocation */

/* Where operations on an object go when the shim is out of memory: counted
 * nowhere useful, but the program runs on. Never cached. */
static struct cv_obj lost_obj = { .kind = CV_OBJ_UNKNOWN, .id = UINT32_MAX };   /* no real object's */
static struct cv_rec lost_rec = { .obj = &lost_obj };

/* An empty cache's record: its object is retired, so a fast path that
 * tests a cache hit and the object's state in one expression misses. */
static const struct cv_obj nil_obj = { .kind = CV_OBJ_UNKNOWN, .retired = 1 };
const struct cv_rec cv__nil_rec = { .obj = (struct cv_obj *)&nil_obj };

#define CV_EMPTY_WAY { .rec = CV_NIL_REC, .obj = (struct cv_obj *)&nil_obj }
#define CV_EMPTY_CACHES                                                              \
	.mutex_cache = { [0 ... CV_MUTEX_WAYS - 1] = CV_EMPTY_WAY },                \
	.cond_cache = { [0 ... CV_WAYS - 1] = CV_EMPTY_WAY },                       \
	.rwlock_cache = { [0 ... CV_RWLOCK_WAYS - 1] = CV_EMPTY_WAY },              \
	.spin_cache = { [0 ... CV_WAYS - 1] = CV_EMPTY_WAY },                       \
	.futex_cache = { [0 ... CV_WAYS - 1] = CV_EMPTY_WAY },                      \
	.sem_cache = { CV_EMPTY_WAY, CV_EMPTY_WAY },                                \
	.sem_aside = { [0 ... CV_SEM_WAYS - 1] = CV_EMPTY_WAY }
/* Every thread's state until it has one of its own, and while the guard is
 * raised (shim.h): its caches are empty and `inert` fails every fast path. */
const struct cv_thread cv__inert = { .inert = 1, CV_EMPTY_CACHES };

void cv__caches_clear(struct cv_thread *t)
{
	t->sem_cache[0] = t->sem_cache[1] = (struct cv_way)CV_EMPTY_WAY;
	for (uint32_t i = 0; i < CV_SEM_WAYS; i++)
		t->sem_aside[i] = (struct cv_way)CV_EMPTY_WAY;
	for (uint32_t i = 0; i < CV_WAYS; i++)
		t->cond_cache[i] = t->spin_cache[i] = t->futex_cache[i] = (struct cv_way)CV_EMPTY_WAY;
	for (uint32_t i = 0; i < CV_NWAYS(t->mutex_cache); i++)
		t->mutex_cache[i] = (struct cv_way)CV_EMPTY_WAY;
	for (uint32_t i = 0; i < CV_NWAYS(t->rwlock_cache); i++)
		t->rwlock_cache[i] = (struct cv_way)CV_EMPTY_WAY;
	for (int f = 0; f < CV_L2_FAMILIES; f++)
		for (uint32_t i = 0; t->l2[f] && i < CV_L2_WAYS; i++)
			t->l2[f][i] = (struct cv_way)CV_EMPTY_WAY;
}

/* Records (defined with the merging below). */
static void rec_push(struct cv_thread *t, struct cv_rec *r);
static void obj_put(struct cv_obj *o);
static void rec_retire(struct cv_thread *t, struct cv_rec *r, bool slotted);
static struct cv_slot *table_find(struct cv_thread *t, const void *addr);
static struct cv_obj *aggregate_of(uint32_t kind);

static inline struct shard *shard_of(const void *addr)
{
	return &shards[cv__addr_hash(addr) >> (64 - CV_SHARD_BITS)];
}

/* addr's chain among 1 << bits: the hash bits below the shard's. */
static inline size_t chain_index(const void *addr, uint32_t bits)
{
	return (size_t)((cv__addr_hash(addr) << CV_SHARD_BITS) >> (64 - bits));
}

/* addr's chain in its shard (the shard's lock held). */
static inline struct cv_obj **chain_of(const struct shard *sh, const void *addr)
{
	return &sh->chains[chain_index(addr, sh->bits)];
}

static bool registry_ready(void)
{
	if (CV_LIKELY(__atomic_load_n(&first_chains, __ATOMIC_ACQUIRE) != NULL))
		return true;
	struct cv_obj **all = cv__alloc(sizeof(*all) * CV_SHARDS << CV_CHAINS_BITS_FIRST);   /* lock.c: not held */
	if (!all)
		return false;
	cv__spin_lock(&registry_lock);
	if (!first_chains) {
		for (uint32_t i = 0; i < CV_SHARDS; i++) {
			shards[i].bits = CV_CHAINS_BITS_FIRST;
			shards[i].chains = all + (i << CV_CHAINS_BITS_FIRST);
		}
		__atomic_store_n(&first_chains, all, __ATOMIC_RELEASE);
		all = NULL;
	}
	cv__spin_unlock(&registry_lock);
	cv__free(all, sizeof(*all) * CV_SHARDS << CV_CHAINS_BITS_FIRST);   /* another thread's came first */
	return true;
}

/* Whether sh (its lock held) has more objects than its chains are for:
 * past two a chain, four times the chains, up to CV_CHAINS_BITS_MAX. */
static bool shard_full(const struct shard *sh)
{
	return sh->objects > 2u << sh->bits && sh->bits < CV_CHAINS_BITS_MAX;
}

/* sh's objects into chains of 1 << bits, allocated by the caller without
 * the lock (lock.c) and held now; the chains they leave, for the caller to
 * free after it, or the new ones when another thread grew sh meanwhile.
 * The first array is part of registry_ready's block and is not freed
 * (NULL then). */
static struct cv_obj **shard_grow_locked(struct shard *sh, struct cv_obj **chains, uint32_t bits)
{
	if (!shard_full(sh) || bits != sh->bits + 2)
		return chains;
	struct cv_obj **old = sh->chains;
	uint32_t old_bits = sh->bits;
	sh->chains = chains;
	sh->bits = bits;
	for (uint32_t i = 0; i < 1u << old_bits; i++) {
		for (struct cv_obj *o = old[i], *next; o; o = next) {
			next = o->hash_next;
			struct cv_obj **head = chain_of(sh, o->addr);
			o->hash_next = *head;
			*head = o;
		}
	}
	return old_bits > CV_CHAINS_BITS_FIRST ? old : NULL;
}

/* sh grown when it is full, which object_get found with its lock held
 * (bits: the chains' then). */
static void shard_grow(struct shard *sh, uint32_t bits)
{
	struct cv_obj **chains = cv__alloc(sizeof(*chains) << (bits + 2));
	if (!chains)
		return;
	cv__spin_lock(&sh->lock);
	struct cv_obj **spare = shard_grow_locked(sh, chains, bits + 2);
	cv__spin_unlock(&sh->lock);
	if (spare)
		cv__free(spare, spare == chains ? sizeof(*chains) << (bits + 2) : sizeof(*chains) << bits);
}

static bool past_the_cap(void)
{
	return __atomic_load_n(&retired_kept, __ATOMIC_RELAXED) >= CV_RETIRED_KEPT;
}

/* addr's set in its shard (the shard's lock held), written first (shim.h,
 * cv__touch_for_write) and emptied when it is of an earlier epoch. */
static struct generations_set *past_cap_set(const struct shard *sh, const void *addr)
{
	struct generations_set *set =
		&past_cap[sh - shards][(cv__addr_hash(addr) << CV_SHARD_BITS) >> (64 - CV_PAST_CAP_SET_BITS)];
	cv__touch_for_write(&set->addr[0]);
	if (set->epoch != past_cap_epoch) {
		memset(set->addr, 0, sizeof(set->addr));
		set->epoch = past_cap_epoch;
	}
	return set;
}

/* The generation after the last one folded at addr past the cap, taken
 * out of its set (0: none): the object made now carries the count. */
static uint32_t past_cap_take(const struct shard *sh, const void *addr)
{
	struct generations_set *set = past_cap_set(sh, addr);
	for (uint32_t i = 0; i < CV_PAST_CAP_WAYS; i++)
		if (set->addr[i] == addr) {
			set->addr[i] = NULL;
			return set->generation[i] + 1;
		}
	return 0;
}

static void past_cap_keep(const struct shard *sh, const void *addr, uint32_t generation)
{
	struct generations_set *set = past_cap_set(sh, addr);
	uint32_t way = 0;
	while (way < CV_PAST_CAP_WAYS && set->addr[way] != addr)
		way++;
	if (way == CV_PAST_CAP_WAYS) {   /* not there: an empty way, else the lowest generation's */
		way = 0;
		for (uint32_t i = 1; i < CV_PAST_CAP_WAYS && set->addr[way]; i++)
			if (!set->addr[i] || set->generation[i] < set->generation[way])
				way = i;
	}
	set->addr[way] = addr;
	set->generation[way] = generation;
}

/* Retire the live object o in sh's chain *head (shard lock held): it stays in the
 * chain as the address's newest retired object, which carries the generation
 * forward; an older retired object at the same address leaves the chain.
 * Past CV_RETIRED_KEPT retirements o is marked merged and leaves the chain
 * itself; true then, and the caller owes obj_put the reference taken here.
 * Its generation is remembered then (past_cap_keep): else the address's
 * next object was numbered after whatever retired object it kept from
 * before the cap, the same generation each time, and an address
 * re-initialised again and again past the cap never reached
 * CV_GENERATIONS_KEPT (lockpair churn-many: every life a new object and
 * record, merged at its destroy). */
static bool retire_locked(struct shard *sh, struct cv_obj **head, struct cv_obj *o)
{
	uint32_t kept = __atomic_load_n(&retired_kept, __ATOMIC_RELAXED);
	bool merge = kept >= CV_RETIRED_KEPT ||
		     __atomic_fetch_add(&retired_kept, 1, __ATOMIC_RELAXED) >= CV_RETIRED_KEPT;
	if (merge)
		past_cap_keep(sh, o->addr, o->generation);
	for (struct cv_obj **pp = head; *pp;) {
		struct cv_obj *x = *pp;
		if (x->addr == o->addr && (merge ? x == o : x != o && x->retired)) {
			*pp = x->hash_next;
			sh->objects--;
			break;
		}
		pp = &x->hash_next;
	}
	if (merge) {
		__atomic_fetch_add(&o->refs, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&o->merged, 1, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&o->retired, 1, __ATOMIC_RELEASE);
	return merge;
}

/* The flags an object of this kind records when it is created. */
static uint32_t kind_flags(const void *addr, uint32_t kind)
{
	if (kind != CV_OBJ_MUTEX)
		return 0;
	/* glibc's __kind: type, robust, PI, PP, pshared bits */
	return (uint32_t)CV_LOAD(&((const pthread_mutex_t *)addr)->__data.__kind) &
	       (CV_MUTEX_TYPE_MASK | CV_MUTEX_ROBUST | CV_MUTEX_PI | CV_MUTEX_PP | CV_MUTEX_PSHARED);
}

/* The live object at addr, created (or re-created, when the kind changed
 * because the memory was reused without destroy) as needed; for_record:
 * the caller makes a record of it (counted in refs under the shard lock, so
 * a merge cannot free it in between). */
static struct cv_obj *object_get(const void *addr, uint32_t kind, bool for_record)
{
	if (!registry_ready())
		return NULL;
	struct shard *sh = shard_of(addr);
	struct cv_obj *live, *fresh = NULL;
	uint32_t generation = 0, grow_from = 0, merged_kind = CV_NKINDS;

	/* A second pass when the object is new: its memory is had without the
	 * lock (lock.c), and another thread may have made it meanwhile. The
	 * generation is the newest either pass saw: a first pass's retirement
	 * may have taken its object out of the chain. */
	for (;;) {
		live = NULL;
		cv__spin_lock(&sh->lock);
		struct cv_obj **head = chain_of(sh, addr);
		for (struct cv_obj *o = *head; o; o = o->hash_next) {
			if (o->addr != addr)
				continue;
			if (!o->retired) {
				live = o;
				continue;
			}
			if (o->generation + 1 > generation)
				generation = o->generation + 1;
		}
		if (live && live->kind != kind && live->kind != CV_OBJ_UNKNOWN && kind != CV_OBJ_UNKNOWN) {
			if (live->generation + 1 > generation)
				generation = live->generation + 1;
			if (retire_locked(sh, head, live)) {
				merged_kind = live->kind;
				obj_put(live);   /* its records fold in as their threads come by */
			}
			live = NULL;
		}
		if (!live && fresh && past_the_cap()) {   /* made now: its count */
			uint32_t remembered = past_cap_take(sh, addr);
			if (remembered > generation)
				generation = remembered;
		}
		if (live || fresh)
			break;
		cv__spin_unlock(&sh->lock);
		if (!(fresh = cv__alloc(sizeof(*fresh))))
			return NULL;
	}
	if (live) {
		if (live->kind == CV_OBJ_UNKNOWN && kind != CV_OBJ_UNKNOWN) {
			/* named (convoy_name_object) before its first use */
			live->kind = kind;
			live->flags = kind_flags(addr, kind);
		}
	} else {
		live = fresh;
		fresh = NULL;
		live->addr = addr;
		live->kind = kind;
		live->generation = generation;
		live->flags = kind_flags(addr, kind);
		cv__obj_number(live, __atomic_fetch_add(&nobjects, 1, __ATOMIC_RELAXED));
		struct cv_obj **head = chain_of(sh, addr);
		live->hash_next = *head;
		*head = live;
		sh->objects++;
		if (shard_full(sh))
			grow_from = sh->bits;
	}
	if (for_record)
		__atomic_fetch_add(&live->refs, 1, __ATOMIC_RELAXED);
	cv__spin_unlock(&sh->lock);
	cv__free(fresh, sizeof(*fresh));   /* another thread made it first */
	if (merged_kind != CV_NKINDS)
		aggregate_of(merged_kind);   /* where a profile writes its records till they fold */
	if (grow_from)
		shard_grow(sh, grow_from);
	return live;
}

/* The last generation kept at an address stays live through re-inits. */
static void merge_generations(struct cv_obj *o)
{
	if (!__atomic_load_n(&o->name, __ATOMIC_RELAXED))
		__atomic_store_n(&o->name, generations_merged, __ATOMIC_RELEASE);
}

/* t's record says the live object at addr is of this kind and the last
 * generation kept there, which stands for every later one: a re-init or
 * destroy of addr changes nothing in the registry, and a re-init needs no
 * init stack (no first use will make an object). Its record holds the
 * object (refs), and nothing but a use as another kind retires it, a race
 * in the program that this re-init may then be ordered before. */
static bool object_stays(struct cv_thread *t, const void *addr, uint32_t kind)
{
	if (!t || !t->table)
		return false;
	struct cv_rec *r = table_find(t, addr)->rec;
	struct cv_obj *o = r ? r->obj : NULL;
	if (!o || o->kind != kind || CV_LOAD(&o->retired) || o->generation + 1 < CV_GENERATIONS_KEPT)
		return false;
	merge_generations(o);
	return true;
}

bool cv__object_end(struct cv_thread *saved, const void *addr, uint32_t kind)
{
	if (!registry_ready()) {
		cv__stack_forget(addr);
		return false;
	}
	struct shard *sh = shard_of(addr);
	struct cv_obj *merged = NULL;
	bool stays = false, claimed = false;
	cv__spin_lock(&sh->lock);
	struct cv_obj **head = chain_of(sh, addr);
	for (struct cv_obj *o = *head; o; o = o->hash_next) {
		if (o->addr != addr || o->retired)
			continue;
		claimed = CV_LOAD(&o->stack_claimed);
		if (o->generation + 1 >= CV_GENERATIONS_KEPT) {
			merge_generations(o);
			stays = o->kind == kind;
		} else if (retire_locked(sh, head, o)) {
			merged = o;
		}
		break;
	}
	cv__spin_unlock(&sh->lock);
	/* An init stack still waiting for its object's first use goes (stacks.c);
	 * a live object whose first use claimed its stack has none waiting: the
	 * claim took it, or is taking it (cv__stack_first_use), and the next
	 * init's stack is kept after this (on_init). */
	if (!claimed)
		cv__stack_forget(addr);
	if (merged) {
		/* The destroying thread folds its own record now; others later
		 * (a profile written before then writes them under the
		 * aggregate, made now if no fold made it yet). */
		aggregate_of(merged->kind);
		struct cv_slot *s = saved && saved->table ? table_find(saved, addr) : NULL;
		if (s && s->addr && s->rec && s->rec->obj == merged)
			rec_retire(saved, s->rec, true);
		obj_put(merged);
	}
	return stays;
}

/* addr's registry chain asked for ahead of the lock (read racily: only a
 * hint, and a prefetch never faults), so that its miss overlaps the
 * thread's table's. */
static void chain_prefetch(const void *addr)
{
	const struct shard *sh = shard_of(addr);
	uint32_t bits = CV_LOAD(&sh->bits);
	struct cv_obj **chains = CV_LOAD(&sh->chains);
	if (chains && bits)
		__builtin_prefetch(&chains[chain_index(addr, bits)]);
}

bool cv__object_ending(struct cv_thread *t, const void *addr, uint32_t kind)
{
	chain_prefetch(addr);   /* cv__object_end walks it next */
	if (t)
		cv__held_forget(t, addr);
	return !object_stays(t, addr, kind);
}

void cv__forget_object(const void *addr, uint32_t kind)
{
	struct cv_thread *saved = cv__guard_enter();
	if (cv__object_ending(saved, addr, kind)) {
		cv__critical_enter();
		cv__object_end(saved, addr, kind);
		cv__critical_leave();
	}
	cv__guard_leave(saved);
}

struct cv_obj *cv__object_of(const void *addr, uint32_t kind)
{
	struct cv_thread *saved = cv__guard_enter();
	cv__critical_enter();   /* as record_new: no handler (one that forks) between object_get's passes */
	struct cv_obj *o = object_get(addr, kind, false);
	cv__critical_leave();
	cv__guard_leave(saved);
	return o;
}


/* ---- the per-thread table ------------------------------------------------ */

static struct cv_slot *table_find(struct cv_thread *t, const void *addr)
{
	uint32_t i = (uint32_t)(cv__addr_hash(addr) >> 32) & t->table_mask;
	for (;; i = (i + 1) & t->table_mask) {
		struct cv_slot *s = &t->table[i];
		if (s->addr == addr || s->addr == NULL)
			return s;
	}
}

/* Removes s, shifting back the entries of its probe run (linear probing
 * keeps no tombstones). */
static void table_remove(struct cv_thread *t, struct cv_slot *s)
{
	uint32_t i = (uint32_t)(s - t->table), j = i;
	for (;;) {
		j = (j + 1) & t->table_mask;
		const void *a = t->table[j].addr;
		if (!a)
			break;
		uint32_t home = (uint32_t)(cv__addr_hash(a) >> 32) & t->table_mask;
		/* The entry at j may fill the hole at i unless its home lies
		 * cyclically in (i, j]. */
		bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (!stays) {
			t->table[i] = t->table[j];
			i = j;
		}
	}
	t->table[i].addr = NULL;
	t->table[i].rec = NULL;
	t->table_used--;
}

/* A slot of t's table whose record is of an object merged since (see
 * rec_retire) and no wait of t's uses. */
static bool stale_slot(const struct cv_thread *t, const struct cv_slot *s)
{
	const struct cv_rec *r = s->rec;
	return r && r->obj->addr == s->addr && CV_LOAD(&r->obj->merged) && !cv__pinned(t, r);
}

/* Makes room in t's table: its records of merged objects leave it and
 * fold into their aggregate, all of them, and the rest go into a table
 * twice the size, or one the same size when they fill at most a quarter
 * of it. A thread that used many objects other threads destroyed and
 * never looked at their addresses again kept all but 64 of them a growth,
 * in a table doubled each time, up to the cap on records (churn_objects
 * rounds, 320,000 uses: 57,540 unrecorded). The folds are the lock call's
 * that grows the table, about 0.4 us each: a thread holding 100,000
 * records of destroyed objects pauses some 50 ms in it (helper-153). */
static bool table_grow(struct cv_thread *t)
{
	struct cv_slot *old = t->table;
	uint32_t old_cap = old ? t->table_mask + 1 : 0, stay = 0, nstale = 0;
	for (uint32_t i = 0; i < old_cap; i++)
		stay += old[i].addr && !stale_slot(t, &old[i]);
	uint32_t cap = !old_cap ? CV_TABLE_INITIAL : stay * 4 > old_cap ? old_cap * 2 : old_cap;
	struct cv_slot *fresh = cv__alloc(cap * sizeof(*fresh));
	if (!fresh)
		return false;
	cv__touch_pages(fresh, cap * sizeof(*fresh));   /* the rehash reads before it writes; past 64 KiB a mapping */
	t->table = fresh;
	t->table_mask = cap - 1;
	t->table_used = 0;
	/* Records of merged objects are left out, and retired once the table
	 * is whole (a retirement may grow it again). The old table itself
	 * says which: their slots are the ones the rehash did not empty (an
	 * object merged since the count above among them). No list on the
	 * stack: this runs on whatever stack the program's lock call came on,
	 * a coroutine's 4 KiB say. */
	for (uint32_t i = 0; i < old_cap; i++) {
		if (!old[i].addr)
			continue;
		if (stale_slot(t, &old[i])) {
			nstale++;
			continue;
		}
		*table_find(t, old[i].addr) = old[i];
		t->table_used++;
		old[i].addr = NULL;
	}
	for (uint32_t i = 0; nstale && i < old_cap; i++)
		if (old[i].addr) {
			rec_retire(t, old[i].rec, false);
			nstale--;
		}
	cv__free(old, old_cap * sizeof(*old));
	return true;
}

/* CV_RECORDS_MAX (convoy/profile.h): 32 MiB of records (128 bytes each,
 * alloc.c), 576 more each that waited (struct cv_rec_more). */
static uint32_t nrecords;        /* never past CV_RECORDS_MAX: it cannot wrap */
static int records_warned;
static uint32_t uses_unrecorded; /* lookups that found no record to make: cv__uses_unrecorded */
static uint32_t uses_without_memory;   /* cv__uses_without_memory */

static void count_saturating(uint32_t *n)
{
	uint32_t v = __atomic_load_n(n, __ATOMIC_RELAXED);
	while (v != UINT32_MAX && !__atomic_compare_exchange_n(n, &v, v + 1, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

uint32_t cv__uses_unrecorded(void)
{
	return __atomic_load_n(&uses_unrecorded, __ATOMIC_RELAXED);
}

uint32_t cv__uses_without_memory(void)
{
	return __atomic_load_n(&uses_without_memory, __ATOMIC_RELAXED);
}

/* Claims one of the CV_RECORDS_MAX; false when none is left. */
static bool record_claim(void)
{
	uint32_t n = __atomic_load_n(&nrecords, __ATOMIC_RELAXED);
	do {
		if (n >= CV_RECORDS_MAX)
			return false;
	} while (!__atomic_compare_exchange_n(&nrecords, &n, n + 1, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return true;
}

static struct cv_rec *record_new(struct cv_thread *t, const void *addr, uint32_t kind)
{
	/* Memory is bounded: past CV_RECORDS_MAX (object, thread) pairs — a
	 * program that makes millions of short-lived locks — new ones go
	 * uncounted, with one warning; the program is unaffected. */
	if (!record_claim()) {
		count_saturating(&uses_unrecorded);
		if (!__atomic_exchange_n(&records_warned, 1, __ATOMIC_RELAXED))
			cv__warn("more than %u (object, thread) pairs: objects first used from now on "
				 "are not recorded", CV_RECORDS_MAX);
		return NULL;
	}
	/* One section for the registry and the first-use stack (lock.c). */
	cv__critical_enter();
	struct cv_obj *o = object_get(addr, kind, true);
	struct cv_rec *r = o ? cv__alloc(sizeof(*r)) : NULL;
	if (r) {
		r->obj = o;
		rec_push(t, r);
		cv__stack_first_use(t, o);   /* stacks.c: the object's init or first-use stack, once */
	} else {
		if (o)
			obj_put(o);
		__atomic_fetch_sub(&nrecords, 1, __ATOMIC_RELAXED);
		count_saturating(&uses_without_memory);
	}
	cv__critical_leave();
	return r;
}

/* t's cache for objects of this kind and the number of entries an
 * address is hashed to (NULL: the kind has no cache). Every cache's
 * entries come in pairs (cv__way_partner). */
static struct cv_way *cache_for(struct cv_thread *t, uint32_t kind, uint32_t *ways)
{
#define CACHE(c) (*ways = CV_NWAYS(c), (c))
	switch (kind) {
	case CV_OBJ_COND:   return CACHE(t->cond_cache);
	case CV_OBJ_MUTEX:  return CACHE(t->mutex_cache);
	case CV_OBJ_RWLOCK: return CACHE(t->rwlock_cache);
	case CV_OBJ_SPIN:   return CACHE(t->spin_cache);
	case CV_OBJ_SEM:    return CACHE(t->sem_aside);   /* past sem_cache: sem_fill, cache_drop */
	case CV_OBJ_FUTEX:  return CACHE(t->futex_cache);
	default:            *ways = 0; return NULL;
	}
#undef CACHE
}

/* The second cache (shim.h, cv_thread.l2) of objects of this kind: its
 * CV_L2_* index, -1 for a family without one. */
static int l2_family(uint32_t kind)
{
	return kind == CV_OBJ_MUTEX ? CV_L2_MUTEX : kind == CV_OBJ_RWLOCK ? CV_L2_RWLOCK : -1;
}

/* t's second cache of objects of this kind; NULL while it has none. */
static struct cv_way *l2_of(const struct cv_thread *t, uint32_t kind)
{
	int f = l2_family(kind);
	return f >= 0 ? cv__l2(t, f) : NULL;
}

/* r, just looked up, into addr's entry of a cache of `ways` entries; the
 * live record of another object it displaces goes to the entry's partner (shim.h,
 * cv__way_partner), over whatever is there: the pair keeps the two
 * records filled last. Keeping a record that sat at home in the partner
 * instead (09833c0) kept one the program had stopped using: in one run of
 * node 20 its two hottest OpenSSL read locks shared an entry, another
 * lock sat at home in the partner, and each of their 367,000
 * acquisitions went to the table. Neither rule is right for three locks
 * over one pair, and which locks share a pair changes with the addresses
 * (docs/performance.md, "Rwlocks, spinlocks and futex words in turn").
 * Inside the guard: a signal handler meanwhile reads cv__inert's caches,
 * not these. */
static void fill_pair(struct cv_way *cache, uint32_t ways, const void *addr, struct cv_rec *r)
{
	struct cv_way *w = cv__way_n(cache, ways, addr);
	if (CV_LOAD(&w->obj->addr) != addr && !CV_LOAD(&w->obj->retired))
		cv__way_set(cv__way_partner(cache, w), w->rec, w->obj);
	cv__way_set(w, r, r->obj);
}

/* A semaphore's record goes to the fixed entry; the live record there, of
 * another semaphore, to its partner; the partner's, of a third, aside
 * (shim.h, cv__sem_rec). */
static void sem_fill(struct cv_thread *t, const void *addr, struct cv_rec *r)
{
	struct cv_way *home = &t->sem_cache[0], *partner = &t->sem_cache[1];
	const void *was = CV_LOAD(&home->obj->addr);
	if (was != addr && !CV_LOAD(&home->obj->retired)) {
		const void *next = CV_LOAD(&partner->obj->addr);
		if (next != addr && next != was && !CV_LOAD(&partner->obj->retired))
			fill_pair(t->sem_aside, CV_SEM_WAYS, next, partner->rec);
		cv__way_set(partner, home->rec, home->obj);
	}
	cv__way_set(home, r, r->obj);
}

/* r into its family's cache, and into the second (shim.h, cv_thread.l2)
 * where the thread has one. */
static void cache_fill(struct cv_thread *t, const void *addr, struct cv_rec *r)
{
	if (r->obj->kind == CV_OBJ_SEM) {
		sem_fill(t, addr, r);
		return;
	}
	uint32_t ways;
	struct cv_way *cache = cache_for(t, r->obj->kind, &ways);
	if (!cache)
		return;
	fill_pair(cache, ways, addr, r);
	struct cv_way *l2 = t->nheld ? NULL : l2_of(t, r->obj->kind);
	if (l2)   /* the same rule there */
		fill_pair(l2, CV_L2_WAYS, addr, r);
}

static void drop_pair(struct cv_way *cache, uint32_t ways, const void *addr, const struct cv_rec *r)
{
	struct cv_way *w = cv__way_n(cache, ways, addr);
	if (w->rec == r)
		*w = (struct cv_way)CV_EMPTY_WAY;
	if ((w = cv__way_partner(cache, w))->rec == r)
		*w = (struct cv_way)CV_EMPTY_WAY;
}

/* r out of t's caches, where it may be in addr's entry or its partner. */
static void cache_drop(struct cv_thread *t, const void *addr, const struct cv_rec *r)
{
	uint32_t ways;
	struct cv_way *cache = cache_for(t, r->obj->kind, &ways);
	if (!cache)
		return;
	for (uint32_t i = 0; r->obj->kind == CV_OBJ_SEM && i < CV_NWAYS(t->sem_cache); i++)
		if (t->sem_cache[i].rec == r)
			t->sem_cache[i] = (struct cv_way)CV_EMPTY_WAY;
	drop_pair(cache, ways, addr, r);
	struct cv_way *l2 = l2_of(t, r->obj->kind);
	if (l2)
		drop_pair(l2, CV_L2_WAYS, addr, r);
}

/* Whether a refill of t's first cache of family f from its table, with
 * no lock held, is the one that should make its second cache (shim.h,
 * cv_thread.l2): the CV_L2_AFTER-th, by a thread with more records than a
 * first cache holds, that the shim saw start. */
static bool l2_wanted(struct cv_thread *t, int f)
{
	return f >= 0 && !t->nheld && !t->l2[f] && !(t->flags & CV_THREAD_UNTRACKED) &&
	       t->table_used > CV_L2_RECORDS && ++t->l2_refills[f] >= CV_L2_AFTER;
}

/* t's second cache of family f, made under the whole guard (it
 * allocates). Without memory, none: the table serves, and the next try
 * is CV_L2_AFTER refills later (a failed mmap each refill cost a lock
 * pair 670 ns, helper-99). */
static void l2_make(struct cv_thread *t, int f)
{
	struct cv_thread *saved = cv__guard_enter();
	/* A signal handler's lookup may have made it since the caller looked. */
	struct cv_way *l2 = t->l2[f] ? NULL : cv__alloc(CV_L2_WAYS * sizeof(*l2));
	if (l2) {
		for (uint32_t i = 0; i < CV_L2_WAYS; i++)
			l2[i] = (struct cv_way)CV_EMPTY_WAY;
		__atomic_store_n(&t->l2[f], l2, __ATOMIC_RELEASE);   /* filled before it is seen */
	} else {
		t->l2_refills[f] = 0;
	}
	cv__guard_leave(saved);
}

/* For want of memory, the use goes to lost_rec: counted as such. */
static struct cv_rec *lost_for_memory(void)
{
	count_saturating(&uses_without_memory);
	return &lost_rec;
}

static struct cv_rec *lookup_locked(struct cv_thread *t, const void *addr, uint32_t kind)
{
	if (!t->table || (t->table_used + 1) * 2 > t->table_mask + 1)
		if (!table_grow(t))
			return lost_for_memory();
	struct cv_slot *s = table_find(t, addr);
	struct cv_rec *r = s->rec;
	if (r && CV_LOAD(&r->obj->merged)) {
		rec_retire(t, r, true);   /* may move entries: look again */
		if (!t->table || (t->table_used + 1) * 2 > t->table_mask + 1)
			if (!table_grow(t))
				return lost_for_memory();
		s = table_find(t, addr);
		r = s->rec;
	}
	if (!r || CV_LOAD(&r->obj->retired) || r->obj->kind != kind) {
		r = record_new(t, addr, kind);
		if (!r)
			return &lost_rec;
		if (!s->addr)
			t->table_used++;
		s->addr = addr;
		s->rec = r;
	}
	/* Each family's cache only ever holds records of its own kind, so a hit
	 * on the address alone is a hit on the kind. */
	cache_fill(t, addr, r);
	return r;
}

/* addr's record in t's table when lookup_locked would return it as it is:
 * live, of this kind, its object neither merged nor retired; else NULL.
 * Reads only. */
static struct cv_rec *table_hit(struct cv_thread *t, const void *addr, uint32_t kind)
{
	if (!t->table)
		return NULL;
	struct cv_rec *r = table_find(t, addr)->rec;
	if (!r)
		return NULL;
	const struct cv_obj *o = r->obj;
	if (CV_LOAD(&o->merged) || CV_LOAD(&o->retired) || o->kind != kind)
		return NULL;
	return r;
}

struct cv_rec *cv__lookup_slow(struct cv_thread *t, const void *addr, uint32_t kind)
{
	/* Guarded: a signal handler on this thread (sem_post is
	 * async-signal-safe, and programs lock in handlers) must find the
	 * thread busy, not change its table while this reads it. Most misses
	 * of the thread's caches find a record it has (more locks in turn
	 * than a cache holds, or two in one entry's pair); that look calls
	 * nothing, so the quiet guard is enough for it. The rest may make a
	 * record, take a shard lock and allocate: the whole guard. */
	struct cv_thread *saved = cv__guard_enter_quiet();
	struct cv_rec *r = table_hit(t, addr, kind);
	if (r)
		cache_fill(t, addr, r);
	cv__guard_leave_quiet(saved);
	if (r) {
		int f = l2_family(kind);
		if (l2_wanted(t, f))
			l2_make(t, f);
		return r;
	}
	saved = cv__guard_enter();
	r = lookup_locked(t, addr, kind);
	cv__guard_leave(saved);
	return r;
}

/* The thread ended (thread.c, inside the guard) and will look nothing up
 * again: its table and caches go; its records stay for the profile. */
void cv__records_thread_end(struct cv_thread *t)
{
	struct cv_slot *table = t->table;
	uint32_t cap = table ? t->table_mask + 1 : 0;
	struct cv_way *l2[CV_L2_FAMILIES];
	for (int f = 0; f < CV_L2_FAMILIES; f++) {   /* out before the caches are emptied: no need */
		l2[f] = t->l2[f];
		t->l2[f] = NULL;
		t->l2_refills[f] = 0;
	}
	cv__caches_clear(t);
	t->table = NULL;
	t->table_mask = t->table_used = 0;
	cv__free(table, cap * sizeof(*table));
	for (int f = 0; f < CV_L2_FAMILIES; f++)
		if (l2[f])
			cv__free(l2[f], CV_L2_WAYS * sizeof(*l2[f]));
}

/* ---- records: merging and giving back ------------------------------------ *
 * Records fold into other records when their thread ended past the thread
 * cap (thread.c: into the merged threads' record of the same object) or
 * their object was retired past the object cap (into the thread's record of
 * the kind's aggregate object). Only the owning thread, or the one merging
 * an ended thread, changes a thread's records. */

/* Where a count goes when its record's more could not be had: a shared
 * sink, never written to a profile. The record is marked with it (its
 * more is the sink's address) and counted once in uses_without_memory
 * (lost_rec's uses were counted at their lookups), and asks for memory
 * again at each count: the shim's may be back (an address-space limit
 * raised, a failed seccomp install's moment past). */
static struct cv_rec_more more_lost;

/* A record is its thread's, but a handler on that thread may wait on the
 * same object between the load and the store, and the shared out-of-memory
 * record (lost_rec) is every thread's: the block is installed by a
 * compare-and-swap, and the loser's goes back. The writer reads more once
 * set (acquire). */
struct cv_rec_more *cv__rec_more(struct cv_rec *r)
{
	struct cv_rec_more *more = __atomic_load_n(&r->more, __ATOMIC_ACQUIRE);
	if (CV_LIKELY(more != NULL && more != &more_lost))
		return more;
	struct cv_rec_more *fresh = cv__alloc(sizeof(*fresh));
	if (!fresh) {
		if (!more && r != &lost_rec &&
		    __atomic_compare_exchange_n(&r->more, &more, &more_lost, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			count_saturating(&uses_without_memory);
		return &more_lost;
	}
	while (!__atomic_compare_exchange_n(&r->more, &more, fresh, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		if (more != NULL && more != &more_lost) {   /* a handler's came first */
			cv__free(fresh, sizeof(*fresh));
			return more;
		}
	return fresh;
}

/* r's more as the profile has it: NULL when there is none to write. */
const struct cv_rec_more *cv__rec_more_kept(const struct cv_rec *r)
{
	const struct cv_rec_more *more = __atomic_load_n(&r->more, __ATOMIC_ACQUIRE);
	return more == &more_lost ? NULL : more;
}

/* src's counts into dst's. */
static void rec_add(struct cv_rec *dst, const struct cv_rec *src)
{
	CV_BUMP(&dst->acquisitions, CV_LOAD(&src->acquisitions));
	CV_BUMP(&dst->rd_acquisitions, CV_LOAD(&src->rd_acquisitions));
	CV_BUMP(&dst->trylocks, CV_LOAD(&src->trylocks));
	CV_BUMP(&dst->handoffs, CV_LOAD(&src->handoffs));
	CV_BUMP(&dst->signals_unwaited, CV_LOAD(&src->signals_unwaited));
	CV_BUMP(&dst->broadcasts_unwaited, CV_LOAD(&src->broadcasts_unwaited));
	CV_BUMP(&dst->hold_samples, CV_LOAD(&src->hold_samples));
	CV_BUMP(&dst->hold_ticks, CV_LOAD(&src->hold_ticks));
	cv__store_max(&dst->max_hold_ticks, CV_LOAD(&src->max_hold_ticks));
	const struct cv_rec_more *from = cv__rec_more_kept(src);
	if (!from)
		return;
	struct cv_rec_more *to = cv__rec_more(dst);
#define CV_SUM(f) CV_BUMP(&to->f, CV_LOAD(&from->f));
#define CV_MAX(f) cv__store_max(&to->f, CV_LOAD(&from->f));
	CV_REC_MORE_FIELDS(CV_SUM, CV_MAX)
#undef CV_SUM
#undef CV_MAX
	for (uint32_t i = 0; i < CV_HIST_BUCKETS; i++)
		CV_BUMP(&to->hist[i], CV_LOAD(&from->hist[i]));
}

static void rec_push(struct cv_thread *t, struct cv_rec *r)
{
	r->next = t->recs;
	if (r->next)
		r->next->prev = r;
	__atomic_store_n(&t->recs, r, __ATOMIC_RELEASE);   /* output.c walks it */
}

/* A profile being written may be walking r: its next stays readable (the
 * shim's memory is never unmapped), at worst a stale row or a short walk. */
static void rec_unlink(struct cv_thread *t, struct cv_rec *r)
{
	if (r->prev)
		__atomic_store_n(&r->prev->next, r->next, __ATOMIC_RELEASE);
	else
		__atomic_store_n(&t->recs, r->next, __ATOMIC_RELEASE);
	if (r->next)
		r->next->prev = r->prev;
}

/* One record of o (or a merge's hold on it) gone; the last one out of a
 * merged object gives it back, unless a profile is being written (which
 * may be reading it: it is kept). */
static void obj_put(struct cv_obj *o)
{
	if (__atomic_sub_fetch(&o->refs, 1, __ATOMIC_ACQ_REL) == 0 && CV_LOAD(&o->merged) && !cv__profile_writing())
		cv__free(o, sizeof(*o));
}

/* dst's record of o, made if needed, keyed in dst's table by the object
 * itself: the merged threads' table holds nothing else, and in a thread's
 * own table an aggregate (shim memory) never meets a program address. */
static struct cv_rec *merged_rec(struct cv_thread *dst, struct cv_obj *o)
{
	if (!dst->table || (dst->table_used + 1) * 2 > dst->table_mask + 1)
		if (!table_grow(dst))
			return NULL;
	struct cv_slot *s = table_find(dst, o);
	if (s->rec)
		return s->rec;
	struct cv_rec *r = cv__alloc(sizeof(*r));
	if (!r)
		return NULL;
	r->obj = o;
	__atomic_fetch_add(&o->refs, 1, __ATOMIC_RELAXED);
	rec_push(dst, r);
	s->addr = o;
	s->rec = r;
	dst->table_used++;
	return r;
}

/* src's counts into d; src goes back (it is on no list any more). */
static void rec_fold(struct cv_rec *d, struct cv_rec *src)
{
	rec_add(d, src);
	cv__stacks_merge_rec(d, src);
	obj_put(src->obj);
	if (!cv__profile_writing()) {   /* else kept: the writer may be walking it */
		cv__free((void *)cv__rec_more_kept(src), sizeof(struct cv_rec_more));
		cv__free(src, sizeof(*src));
	}
	/* The record allowance is per (object, thread): this pair is gone. */
	__atomic_fetch_sub(&nrecords, 1, __ATOMIC_RELAXED);
}

/* The aggregate object of a kind, made on first need. */
static struct cv_obj *aggregate_of(uint32_t kind)
{
	if (kind >= CV_NKINDS)
		kind = CV_OBJ_UNKNOWN;   /* as cv__rec_written_under */
	struct cv_obj *a = __atomic_load_n(&aggregates[kind], __ATOMIC_ACQUIRE);
	if (a)
		return a;
	struct cv_obj *fresh = cv__alloc(sizeof(*fresh));   /* lock.c: not under the lock */
	if (fresh) {
		fresh->kind = kind;
		fresh->name = retired_merged;
		fresh->stack_claimed = 1;
	}
	cv__spin_lock(&aggregates_lock);
	if (!(a = aggregates[kind]) && fresh) {
		a = fresh;
		fresh = NULL;
		cv__obj_number(a, __atomic_fetch_add(&nobjects, 1, __ATOMIC_RELAXED));
		__atomic_store_n(&aggregates[kind], a, __ATOMIC_RELEASE);
	}
	cv__spin_unlock(&aggregates_lock);
	cv__free(fresh, sizeof(*fresh));   /* another thread's came first */
	return a;
}

struct cv_obj *cv__rec_written_under(const struct cv_thread *t, const struct cv_rec *r)
{
	struct cv_obj *o = r->obj;
	if (!CV_LOAD(&o->merged) || __atomic_load_n(&r->stack_accs, __ATOMIC_ACQUIRE) ||
	    (t && (cv__pinned(t, r) || CV_LOAD(&t->waiting_obj) == o)))
		return o;
	struct cv_obj *a = __atomic_load_n(&aggregates[o->kind < CV_NKINDS ? o->kind : CV_OBJ_UNKNOWN], __ATOMIC_ACQUIRE);
	return a ? a : o;   /* made at the merge (cv__object_end, object_get): none only without memory */
}

/* t's record r of a merged object folds into t's record of the aggregate;
 * r leaves t's list, caches and table (when slotted there). */
static void rec_retire(struct cv_thread *t, struct cv_rec *r, bool slotted)
{
	if (cv__pinned(t, r))
		return;   /* a wait uses it (shim.h, struct cv_pin): it stays, and its object's next use makes a new one */
	/* Cold, most often (an object destroyed long after its records were
	 * last used): its two lines, which rec_fold reads, and the list
	 * neighbours rec_unlink writes, asked for at once. */
	cv__prefetch_lines(r, sizeof(*r));
	__builtin_prefetch(r->prev, 1);
	__builtin_prefetch(r->next, 1);
	/* Out of the table first: the aggregate's record may grow the table,
	 * and a growth retires the records of merged objects it finds, which
	 * would free r under our feet. */
	struct cv_slot *s = slotted ? table_find(t, r->obj->addr) : NULL;
	if (s && s->rec == r)
		table_remove(t, s);
	struct cv_obj *a = aggregate_of(r->obj->kind);
	struct cv_rec *d = a ? merged_rec(t, a) : NULL;
	if (!d)
		return;   /* out of memory: r stays, reported apart; the address's next use makes a new record */
	cache_drop(t, r->obj->addr, r);
	if (t->pending.rec == r)
		cv__wait_count_pending(t);   /* into r, before r folds */
	if (t->hold_rec == r)
		t->hold_addr = NULL, t->hold_rec = NULL;
	if (t->cw_mutex_rec == r)
		t->cw_cond = NULL, t->cw_mutex_rec = NULL;
	rec_unlink(t, r);
	rec_fold(d, r);
}

bool cv__records_merge(struct cv_thread *dst, struct cv_thread *src)
{
	for (struct cv_rec *r = src->recs; r; r = r->next)
		if (!merged_rec(dst, r->obj))
			return false;
	struct cv_rec *r = src->recs;
	src->recs = NULL;
	while (r) {
		struct cv_rec *next = r->next;
		rec_fold(merged_rec(dst, r->obj), r);
		r = next;
	}
	return true;
}

/* ---- fork ---------------------------------------------------------------- */

/* The child starts a profile of its own: no objects yet. The old ones stay
 * allocated (the shim's memory is never freed) but unreachable. */
void cv__objects_after_fork(void)
{
	first_chains = NULL;     /* registry_ready() makes fresh, zeroed chains */
	cv__spin_reset(&registry_lock);   /* a thread may have been making the first at the fork */
	nobjects = 0;
	past_cap_epoch++;   /* every set empty, and no page of them written */
	retired_kept = 0;
	memset(aggregates, 0, sizeof(aggregates));
	cv__spin_reset(&aggregates_lock);
	nrecords = 0;
	uses_unrecorded = 0;
	uses_without_memory = 0;
	for (uint32_t i = 0; i < CV_SHARDS; i++) {
		cv__spin_reset(&shards[i].lock);   /* held, maybe, by a thread the child lacks */
		shards[i].bits = shards[i].objects = 0;
		shards[i].chains = NULL;
	}
}
