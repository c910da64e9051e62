/* output.c — writing the profile (format: include/convoy/profile.h).
 *
 * Runs once per process (lifecycle.c says from where: the destructor, exec,
 * _exit, quick_exit or a fatal signal's handler), while other threads may still
 * be running and locking: it takes none of the shim's locks (the lists it
 * walks are push-only) and reads their counters with relaxed loads. It writes
 * to a temporary name and then publishes the file (see "the file" below), so
 * a reader never sees half a profile under the real name. Any failure is one
 * "convoy:" line; the program's exit status and output do not change.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/random.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "convoy/statsfields.h"
#include "shim.h"

/* Once per process (a fork child starts again): NOT_WRITTEN, then WRITTEN; or,
 * for a profile written before an exec, EXEC_IN_FLIGHT until the exec either
 * replaces the process or fails and hands the profile back (NOT_WRITTEN).
 * A hang snapshot (cv__write_snapshot) holds SNAPSHOT_IN_FLIGHT while it
 * writes, then goes back to NOT_WRITTEN: the process's end still writes. */
enum { NOT_WRITTEN, WRITTEN, EXEC_IN_FLIGHT, SNAPSHOT_IN_FLIGHT };
static int written;
static pid_t exec_tid;     /* the thread whose exec is in flight */
static pid_t snapshot_tid; /* the thread writing a snapshot */
static pid_t writer_tid;   /* the thread writing the profile now, or 0 */
static uint64_t write_progress;   /* records written, for cv__profile_settle */

struct writer {
	int      fd;
	int      error;      /* first errno */
	uint32_t crc;
	uint64_t records;
	size_t   used;
	/* 16 KiB: each page of it is faulted in by the first write that
	 * reaches it (about 9 us a page on the development VM), a write(2)
	 * costs about 1 us; 64 KiB cost a 68 KB profile 12 faults more for
	 * 3 system calls fewer. */
	unsigned char buf[1 << 14];
};

static struct writer out CV_LARGE_BSS;   /* static: the destructor may run on a small stack */

/* The end record's checksum: zlib's crc32 (the analyzer checks it with
 * zlib), computed here because a library the shim links joins the
 * program's global scope: dlsym(RTLD_DEFAULT, "deflate") would find it, and
 * a dlopen of it would not load it again (tests/progs/global_scope.c).
 *
 * The table is made by the compiler, read-only: nothing to build before a
 * write (which may come before the shim's constructors ran, or in a fork
 * child in the middle of the parent's write), and no page of it to fault in
 * at every exit. crc_table[k][b] is byte b followed by k zero bytes. The
 * register's step over a zero bit is linear, so an entry is the XOR of
 * CRC_k_j over the bits j set in b, where CRC_k_j is bit j through k + 1
 * byte steps: 64 constants, each one byte step from the one before. */
#define CRC_1(x) (((x) >> 1) ^ (0xEDB88320u & (0u - ((x) & 1u))))
#define CRC_8(x) CRC_1(CRC_1(CRC_1(CRC_1(CRC_1(CRC_1(CRC_1(CRC_1(x))))))))
#define CRC_BASIS(j) \
	CRC_0_##j = CRC_8(1u << (j)), CRC_1_##j = CRC_8(CRC_0_##j), CRC_2_##j = CRC_8(CRC_1_##j), \
	CRC_3_##j = CRC_8(CRC_2_##j), CRC_4_##j = CRC_8(CRC_3_##j), CRC_5_##j = CRC_8(CRC_4_##j), \
	CRC_6_##j = CRC_8(CRC_5_##j), CRC_7_##j = CRC_8(CRC_6_##j)
enum { CRC_BASIS(0), CRC_BASIS(1), CRC_BASIS(2), CRC_BASIS(3), CRC_BASIS(4), CRC_BASIS(5), CRC_BASIS(6), CRC_BASIS(7) };
#define CRC_BIT(k, b, j) (((b) >> (j) & 1) ? (uint32_t)CRC_##k##_##j : 0u)
#define CRC_ENTRY(k, b) (CRC_BIT(k, b, 0) ^ CRC_BIT(k, b, 1) ^ CRC_BIT(k, b, 2) ^ CRC_BIT(k, b, 3) ^ \
			 CRC_BIT(k, b, 4) ^ CRC_BIT(k, b, 5) ^ CRC_BIT(k, b, 6) ^ CRC_BIT(k, b, 7))
#define CRC_4(k, b)  CRC_ENTRY(k, b), CRC_ENTRY(k, (b) + 1), CRC_ENTRY(k, (b) + 2), CRC_ENTRY(k, (b) + 3)
#define CRC_16(k, b) CRC_4(k, b), CRC_4(k, (b) + 4), CRC_4(k, (b) + 8), CRC_4(k, (b) + 12)
#define CRC_64(k, b) CRC_16(k, b), CRC_16(k, (b) + 16), CRC_16(k, (b) + 32), CRC_16(k, (b) + 48)
#define CRC_ROW(k)   { CRC_64(k, 0), CRC_64(k, 64), CRC_64(k, 128), CRC_64(k, 192) }
static const uint32_t crc_table[8][256] = {
	CRC_ROW(0), CRC_ROW(1), CRC_ROW(2), CRC_ROW(3), CRC_ROW(4), CRC_ROW(5), CRC_ROW(6), CRC_ROW(7),
};
_Static_assert(CRC_ENTRY(0, 255) == 0x2D02EF8Du, "zlib's crc_table[0][255]");

/* Eight bytes a step where words are little-endian ("slicing by 8"): the
 * profile's writer spent up to 0.6 % of a short pigz run here a byte at a
 * time. */
static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t len)
{
	crc = ~crc;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (; len >= 8; p += 8, len -= 8) {
		uint64_t v;
		memcpy(&v, p, sizeof(v));
		v ^= crc;
		crc = crc_table[7][v & 0xff] ^ crc_table[6][(v >> 8) & 0xff] ^ crc_table[5][(v >> 16) & 0xff] ^
		      crc_table[4][(v >> 24) & 0xff] ^ crc_table[3][(v >> 32) & 0xff] ^
		      crc_table[2][(v >> 40) & 0xff] ^ crc_table[1][(v >> 48) & 0xff] ^ crc_table[0][v >> 56];
	}
#endif
	while (len--)
		crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

static void flush(struct writer *w)
{
	size_t off = 0;
	while (off < w->used && !w->error) {
		ssize_t n = cv__write(w->fd, w->buf + off, w->used - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			w->error = n < 0 ? errno : EIO;
		else
			off += (size_t)n;
	}
	w->used = 0;
}

static void put(struct writer *w, const void *data, size_t len)
{
	const unsigned char *p = data;
	w->crc = crc32_update(w->crc, p, len);
	while (len) {
		if (w->used == sizeof(w->buf))
			flush(w);
		size_t n = sizeof(w->buf) - w->used;
		if (n > len)
			n = len;
		memcpy(w->buf + w->used, p, n);
		w->used += n;
		p += n;
		len -= n;
	}
}

/* One record: the fixed struct, then up to two tails, padded to 8 bytes. */
static void record(struct writer *w, uint32_t type, const void *fixed, size_t fixed_len,
		   const void *tail1, size_t len1, const void *tail2, size_t len2)
{
	static const unsigned char zeros[8];
	size_t payload = fixed_len + len1 + len2, padded = (payload + 7) & ~(size_t)7;
	struct cv_rec_header h = { .type = type, .size = (uint32_t)padded, .fixed = (uint32_t)fixed_len };
	put(w, &h, sizeof(h));
	put(w, fixed, fixed_len);
	if (len1)
		put(w, tail1, len1);
	if (len2)
		put(w, tail2, len2);
	put(w, zeros, padded - payload);
	w->records++;
	__atomic_store_n(&write_progress, w->records, __ATOMIC_RELAXED);
}

void cv__put_record(void *w, uint32_t type, const void *fixed, size_t fixed_len,
		    const void *tail1, size_t len1, const void *tail2, size_t len2)
{
	record(w, type, fixed, fixed_len, tail1, len1, tail2, len2);
}

/* ---- the profile ------------------------------------------------------- */

/* ---- the snapshot ------------------------------------------------------ *
 * Other threads may still be creating threads, objects and records while the
 * profile is written, and runtime ids are handed out before the thing is on
 * its list. So the writer first fixes what this profile holds: the threads on
 * the list now (oldest first, so the main thread is 0; never-started ones
 * left out), each one's records as of now, and the objects those records
 * use. Threads and objects get dense ids in that order, and each record's
 * (object, thread) pair is rewritten to them (only the writer reads those two
 * fields), so every reference in the file resolves. What names a thread or
 * an object beyond the life of its records (lock-order edges, a condvar's
 * monitor, trace events) names it by the number the shim gave it once (an
 * object's id, a thread's index), which the snapshot's position tables
 * turn into its id in the file: a thing merged away since is in none. */

/* Open addressing, half full at most. */
struct position_table {
	struct position { uint32_t key, at1; } *slot;   /* at1: 1 + the position, 0: a free slot */
	size_t mask;
};

static struct position *position_slot(const struct position_table *tab, uint32_t key)
{
	size_t at = (size_t)(key * 0x9E3779B97F4A7C15ull >> 32) & tab->mask;
	while (tab->slot[at].at1 && tab->slot[at].key != key)
		at = (at + 1) & tab->mask;
	return &tab->slot[at];
}

static uint32_t position_of(const struct position_table *tab, uint32_t key)
{
	const struct position *p = position_slot(tab, key);
	return p->at1 ? p->at1 - 1 : UINT32_MAX;
}

#define SNAPSHOT_TABLES 5          /* rows, objs, by_index, by_id, folds */
#define SNAPSHOT_MAP_MIN (64u << 10)

/* A thread of the profile: a state, or the row of one that ended. */
struct snapshot_row {
	struct cv_thread *t;               /* NULL: e's */
	const struct cv_ended_thread *e;
	struct cv_rec *head;               /* its newest record at snapshot time */
	uint32_t index;                    /* cv_thread.index: the profile's order */
	bool folds;                        /* some of its records are written under an aggregate */
};

struct snapshot {
	struct snapshot_row *rows;
	size_t nthreads;
	struct cv_obj **objs;
	size_t nobjs;
	struct position_table by_id, by_index;   /* objects by id, threads by index (every listed one) */
	/* One thread's records written under an aggregate
	 * (cv__rec_written_under), summed by write_thread into one row for
	 * each aggregate, by kind: pending until written. */
	struct fold { bool pending; struct cv_stats s; } *folds;
	uint32_t merged_threads;   /* the merged threads' row, or UINT32_MAX */
	uint32_t index_end;        /* 1 + the highest thread index listed */
	struct snapshot_mapping { void *p; size_t bytes, used; } maps[SNAPSHOT_TABLES];
	size_t nmaps;
};

/* The snapshot being written, for cv__dumped and cv__thread_dumped. */
static const struct snapshot *dumping;

/* The walks below read one record or object after another, each cold in
 * a program with many (records and objects of two lines, spread over
 * the shim's memory): a list's next record is asked for while this one
 * is read, and an object OBJS_AHEAD places on in the snapshot's table. */
#define OBJS_AHEAD 16

/* A zeroed table of the snapshot's, carved from its mappings: one of
 * SNAPSHOT_MAP_MIN bytes holds every table of a process with a few
 * threads and up to about 2,000 records, so a small process's write
 * touches one page for them, not one a table (a page fault costs about
 * 9 us on the development VM: docs/performance.md, "Start and exit"), and
 * makes two system calls, not ten. Untouched pages of a mapping cost
 * nothing (MAP_NORESERVE: nor do they count against overcommit). */
static void *snapshot_table(struct snapshot *snap, size_t bytes)
{
	bytes = (bytes + 15) & ~(size_t)15;
	struct snapshot_mapping *m = snap->nmaps ? &snap->maps[snap->nmaps - 1] : NULL;
	if (!m || m->bytes - m->used < bytes) {
		if (snap->nmaps == SNAPSHOT_TABLES)
			return NULL;   /* one table a mapping at worst: not reached */
		size_t size = bytes > SNAPSHOT_MAP_MIN ? bytes : SNAPSHOT_MAP_MIN;
		void *p = cv__mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		m = &snap->maps[snap->nmaps++];
		*m = (struct snapshot_mapping){ p, size, 0 };
	}
	void *table = (char *)m->p + m->used;
	m->used += bytes;
	return table;
}

#define NOT_WRITTEN_AT1 UINT32_MAX   /* by_index: a thread listed, not in the profile */

static int position_table_make(struct snapshot *snap, struct position_table *tab, size_t n)
{
	size_t slots = 2;
	while (slots < 2 * n)
		slots *= 2;
	tab->mask = slots - 1;
	return (tab->slot = snapshot_table(snap, slots * sizeof(*tab->slot))) ? 0 : -1;
}

/* Also forgets the ids the snapshot gave out: a profile retracted after a
 * failed exec is written again later, from scratch. The mappings stay
 * where the process is ending (exit, the last pthread_exit): an unmap's
 * TLB shootdown reaches every CPU the program ran on, for memory the end
 * frees anyway. */
static void snapshot_free(struct snapshot *snap, bool ending)
{
	for (size_t i = 0; i < snap->nobjs; i++) {
		if (i + OBJS_AHEAD < snap->nobjs)
			__builtin_prefetch(&snap->objs[i + OBJS_AHEAD]->dump_id, 1);
		snap->objs[i]->dump_id = 0;
	}
	dumping = NULL;
	for (size_t i = 0; i < snap->nmaps && !ending; i++)
		cv__munmap(snap->maps[i].p, snap->maps[i].bytes);
}

/* Rows by index, and of one index (a thread that ended while the snapshot
 * was taken, in both places) the ended one first: a heapsort, for the
 * writer may be in a signal handler or a fork child, where glibc's qsort
 * could call malloc. */
static bool row_before(const struct snapshot_row *a, const struct snapshot_row *b)
{
	return a->index != b->index ? a->index < b->index : a->e && !b->e;
}

static void rows_sift(struct snapshot_row *rows, size_t at, size_t n)
{
	for (size_t child; (child = 2 * at + 1) < n; at = child) {
		if (child + 1 < n && row_before(&rows[child], &rows[child + 1]))
			child++;
		if (!row_before(&rows[at], &rows[child]))
			return;
		struct snapshot_row swap = rows[at];
		rows[at] = rows[child];
		rows[child] = swap;
	}
}

static void rows_sort(struct snapshot_row *rows, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		rows_sift(rows, i, n);
	for (size_t end = n; end-- > 1;) {
		struct snapshot_row swap = rows[0];
		rows[0] = rows[end];
		rows[end] = swap;
		rows_sift(rows, 0, end);
	}
}

/* Memory comes from mmap, not the shim's allocator: a thread interrupted
 * inside cv__alloc (by the exit() of another) must not hold us up. Both
 * lists are push-only: what follows a head read once stays as it was (a
 * state being reused keeps its link: thread.c, thread_alloc). A thread
 * that ended before this write named itself is a row, its state recycled
 * (tid 0) or not; one that ends during it keeps its state whole
 * (thread.c, thread_retire), with or without its row. A state's tid is
 * read before its index: a state's new thread publishes its index
 * before its tid. */
static int snapshot_take(struct snapshot *snap)
{
	memset(snap, 0, sizeof(*snap));
	snap->merged_threads = UINT32_MAX;
	struct cv_thread *threads = cv__threads();
	size_t n = 0, nrecs = 0;
	for (struct cv_thread *t = threads; t; t = t->all_next)
		n++;
	struct cv_ended_thread *ended = cv__ended_threads();
	for (const struct cv_ended_thread *e = ended; e; e = e->next)
		n++;
	snap->rows = snapshot_table(snap, (n ? n : 1) * sizeof(*snap->rows));
	if (!snap->rows)
		return -1;
	if (position_table_make(snap, &snap->by_index, n) != 0)
		return -1;
	for (struct cv_thread *t = threads; t && snap->nthreads < n; t = t->all_next) {
		pid_t tid = __atomic_load_n(&t->tid, __ATOMIC_ACQUIRE);
		uint32_t index = CV_LOAD(&t->index);
		if (index >= snap->index_end)
			snap->index_end = index + 1;
		if (!tid) {
			/* Created, not yet running (or its create failed): nothing
			 * names it in the file. Recycled (its thread ended): its
			 * thread is its row, or the merged threads' (cv__thread_dumped). */
			if (!(CV_LOAD(&t->flags) & CV_THREAD_EXITED))
				*position_slot(&snap->by_index, index) = (struct position){ index, NOT_WRITTEN_AT1 };
			continue;
		}
		snap->rows[snap->nthreads++] = (struct snapshot_row){
			.t = t, .head = __atomic_load_n(&t->recs, __ATOMIC_ACQUIRE), .index = index,
		};
	}
	for (const struct cv_ended_thread *e = ended; e && snap->nthreads < n; e = e->next) {
		if (e->index >= snap->index_end)
			snap->index_end = e->index + 1;
		snap->rows[snap->nthreads++] = (struct snapshot_row){ .e = e, .head = e->recs, .index = e->index };
	}
	rows_sort(snap->rows, snap->nthreads);
	size_t kept = 0;
	for (size_t i = 0; i < snap->nthreads; i++)
		if (!kept || snap->rows[i].index != snap->rows[kept - 1].index)
			snap->rows[kept++] = snap->rows[i];
	snap->nthreads = kept;
	for (size_t i = 0; i < snap->nthreads; i++)
		for (struct cv_rec *r = snap->rows[i].head; r; r = r->next)
			nrecs++;
	if (!(snap->folds = snapshot_table(snap, CV_NKINDS * sizeof(*snap->folds))) ||
	    !(snap->objs = snapshot_table(snap, (nrecs ? nrecs : 1) * sizeof(*snap->objs))))
		return -1;
	for (size_t i = 0; i < snap->nthreads; i++) {
		struct snapshot_row *row = &snap->rows[i];
		*position_slot(&snap->by_index, row->index) = (struct position){ row->index, (uint32_t)i + 1 };
		if (row->t) {
			row->t->dump_index = (uint32_t)i;
			if (CV_LOAD(&row->t->tid) == -1)
				snap->merged_threads = (uint32_t)i;   /* thread.c: its tid */
		}
		for (struct cv_rec *r = row->head; r; r = r->next) {
			__builtin_prefetch(r->next, 1);
			struct cv_obj *o = cv__rec_written_under(row->t, r);
			row->folds |= o != r->obj;
			if (!o->dump_id) {
				snap->objs[snap->nobjs] = o;
				o->dump_id = (uint32_t)++snap->nobjs;
			}
			r->object = o->dump_id - 1;
			r->thread = (uint32_t)i;
		}
	}
	if (position_table_make(snap, &snap->by_id, snap->nobjs) != 0)
		return -1;
	for (size_t i = 0; i < snap->nobjs; i++) {
		if (i + OBJS_AHEAD < snap->nobjs)
			__builtin_prefetch(snap->objs[i + OBJS_AHEAD]);
		uint32_t id = snap->objs[i]->id;
		*position_slot(&snap->by_id, id) = (struct position){ id, (uint32_t)i + 1 };
	}
	dumping = snap;
	return 0;
}

uint32_t cv__dumped(uint32_t id)
{
	return dumping ? position_of(&dumping->by_id, id) : UINT32_MAX;
}

/* A listed thread's row; none for one listed but not running then, or
 * made since (its index past every listed one's; one given its index but
 * not on the list yet is taken for merged); the merged threads' row for
 * an index no state on the list has any more (a state merged and reused
 * gets a new one). */
uint32_t cv__thread_dumped(uint32_t index)
{
	if (!dumping)
		return UINT32_MAX;
	const struct position *p = position_slot(&dumping->by_index, index);
	if (p->at1)
		return p->at1 != NOT_WRITTEN_AT1 ? p->at1 - 1 : UINT32_MAX;
	return index < dumping->index_end ? dumping->merged_threads : UINT32_MAX;
}

/* What the process had used at the write's start (now), the end of every
 * row: the writer's work from there on (the snapshot, the file) is the
 * shim's. Read at their rows, the writing thread's CPU time and the
 * process's ran past the rows' lifetimes (an image exec'd from a shell:
 * 0.46 ms of CPU in a thread that lived 0.22). Other threads still running
 * are read at their rows (write_thread): what they use meanwhile is their
 * own. */
struct used_at_start {
	uint32_t        perf_valid;
	int32_t         perf_error;
	uint64_t        perf[CV_PERF_MAX];
	bool            have_usage;
	struct cv_usage usage;   /* the image's own, not its predecessors' */
};

static void read_used_at_start(struct used_at_start *u)
{
	u->perf_valid = cv__perf_read(u->perf, &u->perf_error);
	u->have_usage = cv__usage(RUSAGE_SELF, &u->usage);
	if (u->have_usage)
		cv__usage_since(&u->usage, &cv__process.usage_before);
	struct cv_thread *self = cv__my_state;
	if (self && !(CV_LOAD(&self->flags) & CV_THREAD_EXITED))
		cv__thread_finish(self);
}

static void write_process(struct writer *w, uint32_t exit_reason, uint64_t end_ns, const struct used_at_start *used,
			  const struct snapshot *snap)
{
	static char cmdline[8192] CV_LARGE_BSS;
	ssize_t n = 0;
	int fd = cv__open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC, 0);
	if (fd >= 0) {
		n = cv__read(fd, cmdline, sizeof(cmdline));
		cv__close(fd);
	}
	struct cv_process p = {
		.pid = cv__getpid(),
		.ppid = cv__process.ppid,
		.start_realtime_ns = cv__process.start_realtime_ns,
		.start_ns = cv__process.start_ns,
		.end_ns = end_ns,
		.exit_reason = exit_reason,
		.hold_sample_period = cv__config.hold_period,
		.nthreads = (uint32_t)snap->nthreads,
		.nobjects = (uint32_t)snap->nobjs,
		.forked = (uint32_t)cv__process.forked,
		.cmdline_len = n > 0 ? (uint32_t)n : 0,
		.exe_len = (uint32_t)strlen(cv__process.exe),
		.uses_unrecorded = cv__uses_unrecorded(),
		.uses_without_memory = cv__uses_without_memory(),
	};
	memcpy(p.comm, cv__process.comm, sizeof(p.comm));
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;
	p.ncpus = online > 0 ? (uint32_t)online : 0;
	p.cpus_allowed = sched_getaffinity(0, sizeof(set), &set) == 0 ? (uint32_t)CPU_COUNT(&set) : p.ncpus;
	p.perf_valid = used->perf_valid;
	p.perf_error = used->perf_error;
	memcpy(p.perf, used->perf, sizeof(p.perf));
	if (used->have_usage) {
		p.cpu_ns = used->usage.cpu_ns;
		p.voluntary_cs = used->usage.voluntary_cs;
		p.involuntary_cs = used->usage.involuntary_cs;
		p.minor_faults = used->usage.minor_faults;
		p.major_faults = used->usage.major_faults;
	}
	record(w, CV_REC_PROCESS, &p, sizeof(p), cmdline, p.cmdline_len, cv__process.exe, p.exe_len);
}

/* A condvar's monitor as written: 1 + the index of its mutex in this
 * snapshot, or 0 (none, or a mutex the snapshot does not hold: merged
 * past the objects cap and gone). */
static uint32_t monitor_id(const struct snapshot *snap, uint32_t monitor)
{
	uint32_t i = monitor ? cv__dumped(monitor - 1) : UINT32_MAX;
	return i != UINT32_MAX && CV_LOAD(&snap->objs[i]->kind) == CV_OBJ_MUTEX ? i + 1 : 0;
}

static void write_objects(struct writer *w, const struct snapshot *snap)
{
	for (size_t i = 0; i < snap->nobjs; i++) {
		if (i + OBJS_AHEAD < snap->nobjs)
			cv__prefetch_lines(snap->objs[i + OBJS_AHEAD], sizeof(struct cv_obj));
		const struct cv_obj *o = snap->objs[i];
		const char *name = __atomic_load_n(&o->name, __ATOMIC_ACQUIRE);
		struct cv_object rec = {
			.id = (uint32_t)i,
			.kind = o->kind,
			.addr = (uintptr_t)o->addr,
			.generation = o->generation,
			.flags = o->flags,
			.retired = (uint32_t)CV_LOAD(&o->retired),
			.name_len = name ? (uint32_t)strlen(name) : 0,
			.first_stack = CV_LOAD(&o->first_stack),
			.map_gen = CV_LOAD(&o->map_gen),
			.monitor = monitor_id(snap, CV_LOAD(&o->cond_mutex)),
		};
		record(w, CV_REC_OBJECT, &rec, sizeof(rec), name, rec.name_len, NULL, 0);
	}
}

/* r's counts as the file's stats record. Field by field with relaxed
 * loads: the owner may still be counting. In memory a signal or broadcast
 * is counted once, in signals or broadcasts when it found a waiter, else
 * in the _unwaited field (the no-waiter fast paths bump one counter, not
 * two: cond.c), and a reader's acquisition of an rwlock in
 * rd_acquisitions only (rwlock.c, rd_acquired); the file's signals,
 * broadcasts and acquisitions count them all. */
static void rec_stats(const struct cv_thread *t, const struct cv_rec *r, double ns_per_tick, struct cv_stats *s)
{
	*s = (struct cv_stats){
		.object = r->object,
		.thread = r->thread,
		.acquisitions = CV_LOAD(&r->acquisitions) + CV_LOAD(&r->rd_acquisitions),
		.rd_acquisitions = CV_LOAD(&r->rd_acquisitions),
		.trylocks = CV_LOAD(&r->trylocks),
		.handoffs = CV_LOAD(&r->handoffs),
		.signals = CV_LOAD(&r->signals_unwaited),
		.broadcasts = CV_LOAD(&r->broadcasts_unwaited),
		.signals_unwaited = CV_LOAD(&r->signals_unwaited),
		.broadcasts_unwaited = CV_LOAD(&r->broadcasts_unwaited),
		.hold_samples = CV_LOAD(&r->hold_samples),
		.hold_ns = (uint64_t)((double)CV_LOAD(&r->hold_ticks) * ns_per_tick),   /* ticks until here */
		.max_hold_ns = (uint64_t)((double)CV_LOAD(&r->max_hold_ticks) * ns_per_tick),
	};
	const struct cv_rec_more *m = cv__rec_more_kept(r);
	if (m) {
#define CV_COPY(f) s->f += CV_LOAD(&m->f);
		CV_REC_MORE_FIELDS(CV_COPY, CV_COPY)
#undef CV_COPY
		for (size_t i = 0; i < CV_HIST_BUCKETS; i++)
			s->wait_hist[i] = CV_LOAD(&m->hist[i]);
	}
	if (t)
		cv__wait_pending_into(t, r, s);
}

/* Up to the last counter that is not zero (after the ids): a reader
 * zero-fills a shorter struct (include/convoy/profile.h), and most
 * records use a few of its 80 counters (a lock that never waited: no
 * histogram, no condvar, rwlock or futex fields): a program with many
 * locks writes a sixth of what whole records made (docs/performance.md,
 * "Many locks"). */
static void write_stats(struct writer *w, const struct cv_stats *s)
{
	const uint64_t *word = (const uint64_t *)s;
	size_t words = sizeof(*s) / sizeof(uint64_t);
	while (words > 1 && word[words - 1] == 0)
		words--;
	record(w, CV_REC_STATS, s, words * sizeof(uint64_t), NULL, 0, NULL, 0);
}

/* Whether r is written under another object than its own (snapshot_take). */
static bool folded(const struct snapshot *snap, const struct cv_rec *r)
{
	return snap->objs[r->object] != r->obj;
}

static void write_thread(struct writer *w, const struct snapshot *snap, const struct snapshot_row *row, uint32_t at,
			 double ns_per_tick, uint64_t now)
{
	struct cv_thread *t = row->t;
	struct cv_thread_rec tr;
	if (!t) {
		tr = row->e->row;
	} else {
		if (!(CV_LOAD(&t->flags) & CV_THREAD_EXITED)) {
			if (t != cv__my_state)   /* the writer's were read at the start (read_used_at_start) */
				cv__thread_finish(t);   /* still running: its numbers as of now */
			/* (or as of its start, for one that started since now was read) */
			t->end_ns = now > t->start_ns ? now : t->start_ns;
		}
		cv__thread_row(t, now, &tr);
	}
	tr.index = at;
	record(w, CV_REC_THREAD, &tr, sizeof(tr), NULL, 0, NULL, 0);

	/* Records written under an aggregate (snapshot_take) first, summed
	 * into its row: the file has one row per (object, thread). The
	 * thread's own record of the aggregate joins that row below. */
	struct cv_stats s;
	for (const struct cv_rec *r = row->folds ? row->head : NULL; r; r = r->next) {
		cv__prefetch_lines(r->next, sizeof(*r));
		if (!folded(snap, r))
			continue;
		struct fold *f = &snap->folds[snap->objs[r->object]->kind];   /* an aggregate's: below CV_NKINDS */
		if (!f->pending)
			*f = (struct fold){ .pending = true, .s = { .object = r->object, .thread = at } };
		rec_stats(t, r, ns_per_tick, &s);
		cv_stats_merge(&f->s, &s);
	}
	for (const struct cv_rec *r = row->head; r; r = r->next) {
		cv__prefetch_lines(r->next, sizeof(*r));
		if (row->folds && folded(snap, r))
			continue;
		rec_stats(t, r, ns_per_tick, &s);
		struct fold *f = row->folds && r->obj->kind < CV_NKINDS ? &snap->folds[r->obj->kind] : NULL;
		if (f && f->pending && f->s.object == r->object) {   /* the thread's own record of the aggregate */
			cv_stats_merge(&s, &f->s);
			f->pending = false;
		}
		write_stats(w, &s);
		cv__stacks_write_rec(w, r);
	}
	for (size_t k = 0; row->folds && k < CV_NKINDS; k++)
		if (snap->folds[k].pending) {
			write_stats(w, &snap->folds[k].s);
			snap->folds[k].pending = false;
		}

	if (!t)
		return;   /* an ended row: no counters, held locks, wait or trace (thread.c, thread_retire) */
	uint32_t nc = __atomic_load_n(&t->ncounters, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < nc; i++) {
		const struct cv_named_counter *c = &t->counters[i];
		struct cv_counter cr = {
			.thread = t->dump_index,
			.kind = c->kind,
			.value = CV_LOAD(&c->value),
			.name_len = (uint32_t)strlen(c->name),
		};
		record(w, CV_REC_COUNTER, &cr, sizeof(cr), c->name, cr.name_len, NULL, 0);
	}
	cv__lockorder_write_thread(w, t);
	cv__trace_write(w, t, ns_per_tick);
}

/* ---- the file ---------------------------------------------------------- *
 * The directory may be shared with other users (a 1777 /tmp) or hostile: a
 * link or a FIFO may already sit at any name we could pick. So the profile is
 * written to a file without a name (O_TMPFILE), mode 0600 (a profile holds
 * the command line and addresses), then published under its real name
 * without replacing anything there (linkat of the descriptor, through
 * /proc/thread-self/fd), taking convoy-<comm>-<pid>-N.convoy when the name is
 * taken. A process that ends in the middle of the write (two threads in
 * exit() at once, a SIGKILL) leaves nothing behind. Where the filesystem
 * has no O_TMPFILE or /proc cannot name the descriptor, the file is written under a
 * temporary name nobody can predict, created O_EXCL|O_NOFOLLOW (never
 * through a link, never onto a file that exists) and O_NONBLOCK (a FIFO
 * planted in the window cannot hang us), and renamed (renameat2
 * RENAME_NOREPLACE, or link + unlink where the filesystem lacks it); such
 * a process's end leaves the temporary file. Names are built by hand: this
 * also runs in a fatal-signal handler, where snprintf is not promised to
 * be safe. */
#define CV_NAME_TRIES 100
#define CV_PATH_MAX (sizeof(cv__config.dir) + 128)   /* the directory, then our name */

static char tmp_path[CV_PATH_MAX] CV_LARGE_BSS;     /* a named temporary file's, while a write is in progress; "" otherwise */
static int tmp_fd = -1;                 /* the file being written, while it is open */
static char final_path[CV_PATH_MAX] CV_LARGE_BSS;   /* the profile published last */

void cv__output_after_fork(void)
{
	written = NOT_WRITTEN;   /* an exec another thread had in flight is not the child's */
	/* A write another thread of the parent had begun is not ours. Only
	 * during a write can tmp_path hold a name: it is a page of its own,
	 * which the child does not touch otherwise (even a read maps it, a
	 * fault, about 15 us here). */
	if (writer_tid)
		tmp_path[0] = '\0';
	writer_tid = 0;
	snapshot_tid = 0;
	/* Another thread of the parent was writing (a snapshot): its file is
	 * the parent's, and the child must not keep a descriptor it never
	 * opened (its lowest free number would move). */
	if (tmp_fd >= 0)
		cv__close(tmp_fd);
	tmp_fd = -1;
}

static char *put_str(char *p, char *end, const char *s)
{
	while (p && *s) {
		if (p == end)
			return NULL;
		*p++ = *s++;
	}
	return p;
}

static char *put_num(char *p, char *end, uint64_t v, unsigned base, int digits)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v || n < digits);
	while (p && n) {
		if (p == end)
			return NULL;
		*p++ = tmp[--n];
	}
	return p;
}

/* <dir>/convoy-<comm>-<pid>, the comm made safe for a file name. */
static char *put_stem(char *p, char *end)
{
	char comm[CV_NAME_MAX];
	memcpy(comm, cv__process.comm, sizeof(comm));
	comm[CV_NAME_MAX - 1] = '\0';
	for (char *c = comm; *c; c++)
		if (*c == '/' || *c == ' ' || (unsigned char)*c < 0x20)
			*c = '_';
	p = put_str(p, end, cv__config.dir);
	p = put_str(p, end, "/convoy-");
	p = put_str(p, end, comm[0] ? comm : "unknown");
	p = put_str(p, end, "-");
	return put_num(p, end, (uint64_t)cv__getpid(), 10, 1);
}

static bool terminate(char *p, char *end)
{
	if (!p || p == end)
		return false;
	*p = '\0';
	return true;
}

/* convoy-<comm>-<pid><ext>, or with -<n> before the extension. */
static bool final_name(char *buf, size_t size, unsigned n, const char *ext)
{
	char *end = buf + size, *p = put_stem(buf, end);
	if (n) {
		p = put_str(p, end, "-");
		p = put_num(p, end, n, 10, 1);
	}
	p = put_str(p, end, ext);
	return terminate(p, end);
}

/* convoy-<comm>-<pid>.<64 random bits>.tmp. getrandom never blocks here
 * (and glibc's is a cancellation point: the system call itself); where it
 * fails, the clock stands in (O_EXCL still keeps the file ours). */
static bool temp_name(char *buf, size_t size)
{
	uint64_t r;
	if (cv__sys(SYS_getrandom, (long)&r, sizeof(r), GRND_NONBLOCK, 0) != (long)sizeof(r))
		r = cv__ticks() ^ ((uint64_t)cv__getpid() << 32) ^ (uintptr_t)&r;
	char *end = buf + size, *p = put_stem(buf, end);
	p = put_str(p, end, ".");
	p = put_num(p, end, r, 16, 16);
	p = put_str(p, end, ".tmp");
	return terminate(p, end);
}

/* The file being written: unnamed where it can be (tmp_path "", tmp_by_fd
 * its name in /proc), once the name by which it will be linked is seen to
 * work. That is the thread's own descriptor table (/proc/thread-self): the
 * process's (/proc/self/fd) is the main thread's, and gone once the main
 * thread has called pthread_exit. */
static char tmp_by_fd[48];

static int create_temp(void)
{
	tmp_path[0] = '\0';
	int fd = cv__open(cv__config.dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (fd >= 0) {
		char *end = tmp_by_fd + sizeof(tmp_by_fd);
		if (terminate(put_num(put_str(tmp_by_fd, end, "/proc/thread-self/fd/"), end, (uint64_t)fd, 10, 1), end) &&
		    cv__sys(SYS_faccessat, AT_FDCWD, (long)tmp_by_fd, F_OK, 0) == 0)
			return tmp_fd = fd;
		cv__close(fd);
	}
	for (int i = 0; i < CV_NAME_TRIES; i++) {
		if (!temp_name(tmp_path, sizeof(tmp_path))) {
			errno = ENAMETOOLONG;
			break;
		}
		fd = cv__open(tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
		if (fd >= 0)
			return tmp_fd = fd;
		if (errno != EEXIST)
			break;
	}
	tmp_path[0] = '\0';   /* not ours: cv__profile_settle must not remove it */
	return -1;
}

/* Gives the file being written its final name (with extension ext)
 * without replacing anything: 0, or an errno. An unnamed file is linked
 * while its descriptor is open, a named one renamed once it is closed. */
static int publish(const char *ext)
{
	for (unsigned n = 0; n < CV_NAME_TRIES; n++) {
		if (!final_name(final_path, sizeof(final_path), n, ext))
			return ENAMETOOLONG;
		if (!tmp_path[0]) {
			if (cv__linkat(AT_FDCWD, tmp_by_fd, AT_FDCWD, final_path, AT_SYMLINK_FOLLOW) == 0)
				return 0;
		} else if (cv__renameat2(AT_FDCWD, tmp_path, AT_FDCWD, final_path, RENAME_NOREPLACE) == 0) {
			return 0;
		} else if (errno == EINVAL || errno == ENOSYS) {
			/* No RENAME_NOREPLACE on this filesystem: link() fails on an existing name too. */
			if (cv__linkat(AT_FDCWD, tmp_path, AT_FDCWD, final_path, 0) == 0) {
				cv__unlink(tmp_path);
				return 0;
			}
		}
		if (errno != EEXIST)
			return errno;
	}
	return EEXIST;
}

/* While the file exists under its temporary name, the writing thread blocks
 * every signal it can without changing the program's fate: a SIGTERM or
 * SIGINT arriving then is delivered when the write is done, instead of
 * leaving a temporary file behind. (Faults stay unblocked: a blocked SIGSEGV
 * from a fault kills at once. Another thread may still take a process-wide
 * signal meanwhile.) A write past RLIMIT_FSIZE fails with EFBIG and also
 * raises SIGXFSZ, whose default action would kill the program: one we raised
 * is taken back before the old mask returns. */
struct signal_guard {
	sigset_t old;
	bool     xfsz_was_pending;
};

static void signals_block(struct signal_guard *g)
{
	sigset_t all, pending;
	cv__all_but_faults(&all);
	g->xfsz_was_pending = cv__sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ);
	cv__sigmask(SIG_BLOCK, &all, &g->old);
}

static void signals_restore(const struct signal_guard *g)
{
	sigset_t xfsz, pending;
	sigemptyset(&xfsz);
	sigaddset(&xfsz, SIGXFSZ);
	if (!g->xfsz_was_pending && cv__sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ)) {
		static const struct timespec now;   /* glibc's sigtimedwait is a cancellation point */
		cv__sys(SYS_rt_sigtimedwait, (long)&xfsz, 0, (long)&now, _NSIG / 8);
	}
	cv__sigmask(SIG_SETMASK, &g->old, NULL);
}

static void report_failure(int error, const char *ext)
{
	static char name[CV_PATH_MAX] CV_LARGE_BSS;   /* static: a signal handler's stack may be small */
	if (!final_name(name, sizeof(name), 0, ext))
		snprintf(name, sizeof(name), "in %s", cv__config.dir);
	cv__warn("cannot write profile %s: %s", name, strerrordesc_np(error));
}

/* The profile's name, for a person at a terminal: only where stderr is
 * one. Elsewhere the line would land in what the program's stderr is
 * kept for: a log, or a parent that reads it (a shell's $(uname -m 2>&1),
 * cmake's configure step, which wrote it into CMakeSystem.cmake:
 * helper-129). */
static void announce(const char *what)
{
	static char line[CV_PATH_MAX + 64] CV_LARGE_BSS;   /* static: a signal handler's stack may be small */
	if (cv__config.quiet || !cv__stderr_is_terminal())
		return;   /* before the line's page is touched (under convoy run, every process is quiet) */
	char *p = line, *end = line + sizeof(line);
	p = put_str(p, end, "convoy: ");
	p = put_str(p, end, what);
	p = put_str(p, end, " written to ");
	p = put_str(p, end, final_path);
	p = put_str(p, end, "\n");
	if (p)
		cv__say(line, (size_t)(p - line));
}

/* Claims the one write. Another end of the process while an exec is in
 * flight waits for its outcome: the exec replaces the process (and this
 * thread with it), or fails and hands the profile back, and this end writes
 * the whole run. The wait is bounded (an exec stuck on a dead network
 * filesystem must not hold the program's exit): after 2 s, and for the
 * exec's own thread (reaching here from a signal handler, it cannot wait
 * for itself), the exec's profile stands. An end during a hang snapshot
 * waits for it alike (the two share the writer); after 2 s, or in the
 * snapshot's own thread (a crash inside it), there is no profile. */
static bool claim_write(void)
{
	pid_t me = cv__gettid();
	for (int waits = 0;; waits++) {
		int state = __atomic_load_n(&written, __ATOMIC_ACQUIRE);
		bool in_flight = state == EXEC_IN_FLIGHT || state == SNAPSHOT_IN_FLIGHT;
		pid_t owner = __atomic_load_n(state == EXEC_IN_FLIGHT ? &exec_tid : &snapshot_tid, __ATOMIC_RELAXED);
		pid_t none = 0;
		if (in_flight && waits < 2000 && owner != me) {
			struct timespec pause = { 0, 1000 * 1000 };
			cv__nanosleep(&pause);
			continue;
		}
		if (state != NOT_WRITTEN)
			return false;
		/* The writer is named before the claim, so that a thread that
		 * loses the claim and waits (cv__profile_settle) never finds the
		 * write claimed and nobody writing it, and ends the process
		 * under the write. Another claimant named: its claim decides.
		 * This thread named (a handler that interrupted its own claim):
		 * the handler goes on with it. */
		if (!__atomic_compare_exchange_n(&writer_tid, &none, me, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST) &&
		    none != me) {
			if (waits >= 2000)
				return false;   /* the named writer's claim stands; the caller's settle waits for it */
			cv__yield();
			continue;
		}
		if (__atomic_compare_exchange_n(&written, &state, WRITTEN, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			/* Named again: a snapshot that ended between the naming
			 * and the claim cleared the name. */
			__atomic_store_n(&writer_tid, me, __ATOMIC_SEQ_CST);
			return true;
		}
		pid_t named = me;
		__atomic_compare_exchange_n(&writer_tid, &named, 0, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
	}
}

static uint64_t room_to_leave;   /* cv__profile_leave_room */

void cv__profile_leave_room(uint64_t bytes)
{
	room_to_leave = bytes;
}

/* Whether the filesystem of fd, the profile written (its size `at`),
 * still has room for bytes more (at most 2^36: pending_output's bound,
 * lifecycle.c), rounded up to its allocation unit, plus
 * two units (two files, each ending partway through one). Asked of the
 * filesystem itself where it can answer: that much reserved past the
 * file's end (fallocate with FALLOC_FL_KEEP_SIZE, its size unchanged:
 * quotas and root's reserved blocks count as they will for the program's
 * own write) and given back at once. Where it cannot (EOPNOTSUPP: NFSv3,
 * some FUSE filesystems), its statfs, where it knows its size (ramfs, and
 * tmpfs without a size, report none). A raw system call: glibc's
 * fallocate is a cancellation point. */
static bool room_left(int fd, uint64_t at, uint64_t bytes)
{
	if (!bytes)
		return true;
	struct statvfs fs;
	bool statfs_ok = fstatvfs(fd, &fs) == 0 && fs.f_frsize;
	uint64_t unit = statfs_ok ? fs.f_frsize : 4096;
	uint64_t units = (bytes + unit - 1) / unit + 2, need = units * unit;
	if (cv__sys(SYS_fallocate, fd, FALLOC_FL_KEEP_SIZE, (long)at, (long)need) == 0) {
		cv__sys(SYS_fallocate, fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (long)at, (long)need);
		return true;
	}
	if (errno == ENOSPC || errno == EDQUOT)
		return false;
	return !statfs_ok || !fs.f_blocks || fs.f_bavail >= units;
}

/* Whether the write for this end is the destructor's (exit, or the return
 * from main): the end the program chose, where it runs its own exit
 * handlers, and outside a signal handler unless the program calls exit
 * from one; every other end (exec, _exit, quick_exit, a fatal signal, a
 * snapshot) is often inside one. */
static bool destructors_end(uint32_t exit_reason)
{
	return exit_reason == CV_EXIT_NORMAL || exit_reason == CV_EXIT_LAST_THREAD;
}

/* Writes and publishes the profile as convoy-<comm>-<pid><ext>, once this
 * thread holds the write, and announces it as `what` (NULL: silently):
 * whether it was published. errno is the caller's again on return. */
static bool write_file(uint32_t exit_reason, const char *ext, const char *what)
{
	/* Inside a handler the loader's lock that a module-map re-read takes may be held. */
	bool ending = destructors_end(exit_reason), any_context = !ending;
	bool published = false;
	int saved_errno = errno;
	struct cv_thread *saved = cv__guard_enter();
	final_path[0] = '\0';

	uint64_t now = cv__now_ns(), ticks = cv__ticks();
	double ns_per_tick = 1.0;
	if (ticks > cv__process.start_ticks && now > cv__process.start_ns)
		ns_per_tick = (double)(now - cv__process.start_ns) / (double)(ticks - cv__process.start_ticks);

	struct snapshot snap;
	struct writer *w = &out;
	if (!cv__config.dir[0])
		goto done;   /* said at start */
	struct used_at_start used;
	read_used_at_start(&used);
	cv__threads_settle();   /* named already (write_file_with_stack) */
	if (snapshot_take(&snap) != 0) {
		snapshot_free(&snap, ending);
		report_failure(ENOMEM, ext);
		goto done;
	}
	struct signal_guard signals;
	signals_block(&signals);
	w->fd = create_temp();
	if (w->fd < 0) {
		int error = errno;
		signals_restore(&signals);
		snapshot_free(&snap, ending);
		report_failure(error, ext);
		goto done;
	}
	w->error = 0;
	w->crc = 0;
	w->records = 0;
	w->used = 0;

	struct cv_file_header fh = { .version = CV_PROFILE_VERSION, .header_size = sizeof(fh) };
	memcpy(fh.magic, CV_PROFILE_MAGIC, sizeof(fh.magic));
	put(w, &fh, sizeof(fh));
	write_process(w, exit_reason, now, &used, &snap);
	cv__modules_write(w, !any_context);   /* modules.c: every module seen, dlclose'd ones too */
	write_objects(w, &snap);
	for (size_t i = 0; i < snap.nthreads; i++)
		write_thread(w, &snap, &snap.rows[i], (uint32_t)i, ns_per_tick, now);
	cv__lockorder_write(w);
	cv__stacks_write(w);    /* last: every stack id written above is in the table */
	struct cv_end end = { .records = w->records };
	struct cv_rec_header h = { .type = CV_REC_END, .size = sizeof(end), .fixed = sizeof(end) };
	put(w, &h, sizeof(h));
	end.crc32 = w->crc;   /* covers every byte before the end record's payload */
	put(w, &end, sizeof(end));
	flush(w);
	snapshot_free(&snap, ending);
	/* The program's own output still to come takes the room first: an
	 * unnamed file's blocks are freed at its close. */
	struct stat written;
	if (!w->error && ending && cv__fstat(w->fd, &written) == 0 && !room_left(w->fd, (uint64_t)written.st_size, room_to_leave))
		w->error = ENOSPC;
	bool unnamed = !tmp_path[0], linked = false;
	if (unnamed && !w->error)
		linked = (w->error = publish(ext)) == 0;
	tmp_fd = -1;
	if (cv__close(w->fd) != 0 && !w->error)
		w->error = errno;
	if (!unnamed && !w->error)
		w->error = publish(ext);
	if (w->error) {
		if (!unnamed)
			cv__unlink(tmp_path);
		else if (linked)
			cv__unlink(final_path);   /* the close failed: what it lost is under that name */
		final_path[0] = '\0';
	}
	tmp_path[0] = '\0';
	signals_restore(&signals);
	if (w->error) {
		report_failure(w->error, ext);
	} else {
		published = true;
		if (what)
			announce(what);
	}
done:
	__atomic_store_n(&writer_tid, 0, __ATOMIC_RELEASE);
	cv__guard_leave(saved);
	errno = saved_errno;
	return published;
}

/* The write has CV_WRITER_STACK of stack (cv__call_with_stack): at a
 * normal exit (the destructor's) the caller's where it has that much by
 * its bounds, else one of the shim's own: the thread that
 * ends the process may be deep in a small one (a PTHREAD_STACK_MIN
 * thread's, a signal handler's SIGSTKSZ alternate stack), and the write
 * takes several KiB of it (a hostile test's 16 KiB thread crashed in exit
 * with 8 KiB used). Where no stack can be had, the write takes its chance
 * on the caller's. */
#define CV_WRITER_STACK (256u << 10)

struct write_call {
	uint32_t exit_reason;
	const char *ext, *what;
	bool published;
};

static void write_with_stack(void *arg)
{
	struct write_call *w = arg;
	w->published = write_file(w->exit_reason, w->ext, w->what);
}

static bool write_file_with_stack(uint32_t exit_reason, const char *ext, const char *what)
{
	/* Writing from here on (write_file clears it): a thread whose fatal
	 * signal or _exit finds the writer claimed waits for this one
	 * (cv__profile_settle) only while it is set, so it is set before any
	 * stack switch, not after. */
	__atomic_store_n(&writer_tid, cv__gettid(), __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);   /* before the snapshot: cv__profile_writing */
	struct write_call w = { exit_reason, ext, what, false };
	if (!cv__call_with_stack(write_with_stack, &w, CV_WRITER_STACK, destructors_end(exit_reason)))
		return write_file(exit_reason, ext, what);
	return w.published;
}

bool cv__profile_writing(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);   /* the caller's unlink before the look */
	return __atomic_load_n(&writer_tid, __ATOMIC_SEQ_CST) != 0;
}

bool cv__write_profile(uint32_t exit_reason)
{
	/* A profile written before an exec is not announced: the exec may fail,
	 * and then the file is taken back and the whole run's profile announced
	 * at its real end. */
	bool exec = exit_reason == CV_EXIT_EXEC;
	if (!claim_write()) {
		/* Another thread may be writing it: an exit or _exit here would
		 * end the process under its write (no profile). */
		cv__profile_settle();
		return false;
	}
	if (!write_file_with_stack(exit_reason, "." CV_PROFILE_EXT, exec ? NULL : "profile"))
		return false;
	if (exec) {
		__atomic_store_n(&exec_tid, cv__gettid(), __ATOMIC_RELAXED);
		__atomic_store_n(&written, EXEC_IN_FLIGHT, __ATOMIC_RELEASE);
	}
	return true;
}

/* This thread is in cv__write_snapshot: a request that arrives meanwhile
 * (raising cv__snapshot_pending, from a handler or the guard's leave inside
 * the write) is taken by its loop, not by a nested write. */
static __thread bool snapshotting __attribute__((tls_model("initial-exec")));

/* The stack a snapshot's write takes on the calling thread (measured 8 KiB
 * on x86-64, in a signal handler with its frame; twice that to spare). */
#define CV_SNAPSHOT_STACK_NEED (16u << 10)

bool cv__write_snapshot(void)
{
	/* A thread without the room (deep in its stack, or in a handler on a
	 * small alternate stack, where the write's frames before its switch to
	 * a stack of its own, which a snapshot always takes, would run past
	 * that stack's end) keeps the request pending: it is written at a
	 * later guard's leave, once the thread has the room. */
	if (snapshotting || !cv__stack_room(cv__current(), (uintptr_t)__builtin_frame_address(0), CV_SNAPSHOT_STACK_NEED))
		return false;
	/* Deferred until the claim on the write is let go: the program's
	 * asynchronous type (or glibc's, around a blocking call this handler
	 * interrupted), put back by the write's own guard as it left, acted
	 * on a pending cancellation there and unwound the thread with the
	 * claim held, and every later end of the process waited for it and
	 * wrote nothing (helper-89). */
	int cancel_type;
	pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &cancel_type);
	bool published = false;
	do {
		snapshotting = true;
		while (cv__snapshot_pending) {
			cv__snapshot_pending = 0;
			int state = NOT_WRITTEN;
			if (!__atomic_compare_exchange_n(&written, &state, SNAPSHOT_IN_FLIGHT, false, __ATOMIC_ACQ_REL,
							 __ATOMIC_ACQUIRE))
				break;   /* the process's profile is written, or an exec's is in flight */
			__atomic_store_n(&snapshot_tid, cv__gettid(), __ATOMIC_RELAXED);   /* an end meanwhile waits, even before this */
			published |= write_file_with_stack(CV_EXIT_HANG_SNAPSHOT, CV_SNAPSHOT_EXT, "hang snapshot");
			final_path[0] = '\0';   /* not the process's profile: a failed exec's retract must leave it */
			__atomic_store_n(&snapshot_tid, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&written, NOT_WRITTEN, __ATOMIC_RELEASE);
		}
		snapshotting = false;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);   /* a request between the loop's test and here is seen */
	} while (cv__snapshot_pending && __atomic_load_n(&written, __ATOMIC_ACQUIRE) == NOT_WRITTEN);
	if (cancel_type == PTHREAD_CANCEL_ASYNCHRONOUS)
		pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	return published;
}

void cv__profile_retract(void)
{
	int saved_errno = errno;
	if (final_path[0])
		cv__unlink(final_path);
	final_path[0] = '\0';
	__atomic_store_n(&written, NOT_WRITTEN, __ATOMIC_RELEASE);
	errno = saved_errno;
}

void cv__profile_settle(void)
{
	int saved_errno = errno;
	pid_t me = cv__gettid(), writer;
	uint64_t seen = 0;
	for (int stalls = 0; (writer = __atomic_load_n(&writer_tid, __ATOMIC_ACQUIRE)); ) {
		if (writer == me || stalls == 200)
			break;   /* the crash is in the writer itself, or it is stuck */
		struct timespec pause = { 0, 10 * 1000 * 1000 };
		cv__nanosleep(&pause);
		uint64_t now = __atomic_load_n(&write_progress, __ATOMIC_RELAXED);
		stalls = now == seen ? stalls + 1 : 0;
		seen = now;
	}
	if (writer && tmp_path[0])
		cv__unlink(tmp_path);
	errno = saved_errno;
}
