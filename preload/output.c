/* output.c — writing the profile (format: include/convoy/profile.h).
 *
 * Runs once per process, from the destructor, while other threads may still
 * be running and locking: it takes none of the shim's locks (the lists it
 * walks are push-only) and reads their counters with relaxed loads. It writes
 * to <name>.tmp and renames, so a reader never sees half a profile under the
 * real name. Any failure is one "convoy:" line; the program's exit status and
 * output do not change.
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "shim.h"

static int written;   /* once per process; a fork child resets it */

void cv__output_after_fork(void) { written = 0; }

struct writer {
	int      fd;
	int      error;      /* first errno */
	uint32_t crc;
	uint64_t records;
	size_t   used;
	unsigned char buf[1 << 16];
};

static struct writer out;   /* static: the destructor may run on a small stack */

static void flush(struct writer *w)
{
	size_t off = 0;
	while (off < w->used && !w->error) {
		ssize_t n = write(w->fd, w->buf + off, w->used - off);
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
	w->crc = (uint32_t)crc32(w->crc, p, (uInt)len);
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
 * fields), so every reference in the file resolves. */
struct snapshot {
	struct cv_thread **threads;
	struct cv_rec **heads;     /* each thread's newest record at snapshot time */
	size_t nthreads;
	const struct cv_obj **objs;
	size_t nobjs;
	size_t threads_bytes, heads_bytes, objs_bytes;
};

static void *map_zeroed(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void snapshot_free(struct snapshot *snap)
{
	if (snap->threads)
		munmap(snap->threads, snap->threads_bytes);
	if (snap->heads)
		munmap(snap->heads, snap->heads_bytes);
	if (snap->objs)
		munmap(snap->objs, snap->objs_bytes);
}

/* Memory comes from mmap, not the shim's allocator: a thread interrupted
 * inside cv__alloc (by the exit() of another) must not hold us up. */
static int snapshot_take(struct snapshot *snap)
{
	memset(snap, 0, sizeof(*snap));
	size_t n = 0, nrecs = 0;
	for (struct cv_thread *t = cv__threads(); t; t = t->all_next)
		n++;
	snap->threads_bytes = snap->heads_bytes = (n ? n : 1) * sizeof(void *);
	snap->threads = map_zeroed(snap->threads_bytes);
	snap->heads = map_zeroed(snap->heads_bytes);
	if (!snap->threads || !snap->heads)
		return -1;
	size_t k = n;
	for (struct cv_thread *t = cv__threads(); t && k; t = t->all_next)
		snap->threads[--k] = t;   /* the list is newest first */
	for (size_t i = k; i < n; i++) {
		struct cv_thread *t = snap->threads[i];
		if (!CV_LOAD(&t->tid))
			continue;   /* created, not yet running (or its create failed) */
		size_t j = snap->nthreads++;
		snap->threads[j] = t;
		snap->heads[j] = __atomic_load_n(&t->recs, __ATOMIC_ACQUIRE);
		for (struct cv_rec *r = snap->heads[j]; r; r = r->next)
			nrecs++;
	}
	snap->objs_bytes = (nrecs ? nrecs : 1) * sizeof(*snap->objs);
	if (!(snap->objs = map_zeroed(snap->objs_bytes)))
		return -1;
	for (size_t i = 0; i < snap->nthreads; i++) {
		snap->threads[i]->dump_index = (uint32_t)i;
		for (struct cv_rec *r = snap->heads[i]; r; r = r->next) {
			struct cv_obj *o = r->obj;
			if (!o->dump_id) {
				snap->objs[snap->nobjs] = o;
				o->dump_id = (uint32_t)++snap->nobjs;
			}
			r->s.object = o->dump_id - 1;
			r->s.thread = (uint32_t)i;
		}
	}
	return 0;
}

static void write_process(struct writer *w, uint32_t exit_reason, uint64_t end_ns,
			  const struct snapshot *snap)
{
	static char cmdline[8192];
	ssize_t n = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, cmdline, sizeof(cmdline));
		close(fd);
	}
	struct cv_process p = {
		.pid = getpid(),
		.ppid = getppid(),
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
	};
	memcpy(p.comm, cv__process.comm, sizeof(p.comm));
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;
	p.ncpus = online > 0 ? (uint32_t)online : 0;
	p.cpus_allowed = sched_getaffinity(0, sizeof(set), &set) == 0 ? (uint32_t)CPU_COUNT(&set) : p.ncpus;
	p.perf_valid = cv__perf_read(p.perf, &p.perf_error);
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		p.cpu_ns = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000u +
			   (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000u;
		p.voluntary_cs = (uint64_t)ru.ru_nvcsw;
		p.involuntary_cs = (uint64_t)ru.ru_nivcsw;
		p.minor_faults = (uint64_t)ru.ru_minflt;
		p.major_faults = (uint64_t)ru.ru_majflt;
	}
	record(w, CV_REC_PROCESS, &p, sizeof(p), cmdline, p.cmdline_len, cv__process.exe, p.exe_len);
}

static void write_objects(struct writer *w, const struct snapshot *snap)
{
	for (size_t i = 0; i < snap->nobjs; i++) {
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
		};
		record(w, CV_REC_OBJECT, &rec, sizeof(rec), name, rec.name_len, NULL, 0);
	}
}

static void write_thread(struct writer *w, struct cv_thread *t, struct cv_rec *head, double ns_per_tick,
			 uint64_t now)
{
	if (!(CV_LOAD(&t->flags) & CV_THREAD_EXITED)) {
		cv__thread_finish(t);   /* still running: its numbers as of now */
		t->end_ns = now;
	}
	struct cv_thread_rec tr = {
		.index = t->dump_index,
		.tid = t->tid,
		.creator_tid = t->creator_tid,
		.flags = CV_LOAD(&t->flags),
		.start_routine = (uintptr_t)t->start_routine,
		.create_ns = CV_LOAD(&t->create_ns),
		.start_ns = t->start_ns,
		.end_ns = t->end_ns ? t->end_ns : now,
		.cpu_ns = t->cpu_ns,
		.voluntary_cs = t->voluntary_cs,
		.involuntary_cs = t->involuntary_cs,
		.join_wait_ns = CV_LOAD(&t->join_wait_ns),
		.joins = CV_LOAD(&t->joins),
		.threads_created = CV_LOAD(&t->threads_created),
		.run_delay_ns = t->run_delay_ns,
		.timeslices = t->timeslices,
		.minor_faults = t->minor_faults,
		.major_faults = t->major_faults,
	};
	memcpy(tr.name, t->name, CV_NAME_MAX);
	tr.name[CV_NAME_MAX - 1] = '\0';
	record(w, CV_REC_THREAD, &tr, sizeof(tr), NULL, 0, NULL, 0);

	for (struct cv_rec *r = head; r; r = r->next) {
		struct cv_stats s;
		/* Field by field with relaxed loads: the owner may still be counting. */
		const uint64_t *src = (const uint64_t *)&r->s;
		uint64_t *dst = (uint64_t *)&s;
		for (size_t i = 0; i < sizeof(s) / sizeof(uint64_t); i++)
			dst[i] = CV_LOAD(&src[i]);
		s.hold_ns = (uint64_t)((double)CV_LOAD(&r->hold_ticks) * ns_per_tick);
		s.max_hold_ns = (uint64_t)((double)CV_LOAD(&r->max_hold_ticks) * ns_per_tick);
		record(w, CV_REC_STATS, &s, sizeof(s), NULL, 0, NULL, 0);
		cv__stacks_write_rec(w, r);
	}

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
	cv__trace_write(w, t, ns_per_tick);
}

/* The file name: convoy-<comm>-<pid>.convoy, with the comm made safe. */
static void profile_path(char *path, size_t size, const char *suffix)
{
	char comm[CV_NAME_MAX];
	memcpy(comm, cv__process.comm, sizeof(comm));
	comm[CV_NAME_MAX - 1] = '\0';
	for (char *c = comm; *c; c++)
		if (*c == '/' || *c == ' ' || (unsigned char)*c < 0x20)
			*c = '_';
	snprintf(path, size, "%s/convoy-%s-%d.%s%s", cv__config.dir, comm[0] ? comm : "unknown",
		 (int)getpid(), CV_PROFILE_EXT, suffix);
}

void cv__write_profile(uint32_t exit_reason)
{
	if (__atomic_exchange_n(&written, 1, __ATOMIC_ACQ_REL))
		return;
	int saved_errno = errno;
	struct cv_thread *saved = cv__guard_enter();
	char path[4200], tmp[4210];
	profile_path(path, sizeof(path), "");
	profile_path(tmp, sizeof(tmp), ".tmp");

	uint64_t now = cv__now_ns(), ticks = cv__ticks();
	double ns_per_tick = 1.0;
	if (ticks > cv__process.start_ticks && now > cv__process.start_ns)
		ns_per_tick = (double)(now - cv__process.start_ns) / (double)(ticks - cv__process.start_ticks);

	struct snapshot snap;
	struct writer *w = &out;
	if (snapshot_take(&snap) != 0) {
		snapshot_free(&snap);
		cv__warn("cannot write profile %s: out of memory", path);
		goto done;
	}
	w->fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		cv__warn("cannot write profile %s: %s", path, strerror(errno));
		goto done;
	}
	w->error = 0;
	w->crc = (uint32_t)crc32(0, Z_NULL, 0);
	w->records = 0;
	w->used = 0;

	struct cv_file_header fh = { .version = CV_PROFILE_VERSION, .header_size = sizeof(fh) };
	memcpy(fh.magic, CV_PROFILE_MAGIC, sizeof(fh.magic));
	put(w, &fh, sizeof(fh));
	write_process(w, exit_reason, now, &snap);
	cv__modules_write(w);   /* modules.c: every module seen, dlclose'd ones too */
	write_objects(w, &snap);
	for (size_t i = 0; i < snap.nthreads; i++)
		write_thread(w, snap.threads[i], snap.heads[i], ns_per_tick, now);
	cv__stacks_write(w);    /* last: every stack id written above is in the table */
	struct cv_end end = { .records = w->records };
	struct cv_rec_header h = { .type = CV_REC_END, .size = sizeof(end), .fixed = sizeof(end) };
	put(w, &h, sizeof(h));
	end.crc32 = w->crc;   /* covers every byte before the end record's payload */
	put(w, &end, sizeof(end));
	flush(w);
	if (close(w->fd) != 0 && !w->error)
		w->error = errno;
	if (!w->error && rename(tmp, path) != 0)
		w->error = errno;
	if (w->error) {
		unlink(tmp);
		cv__warn("cannot write profile %s: %s", path, strerror(w->error));
		goto done;
	}
	if (!cv__config.quiet) {
		char line[4400];
		int n = snprintf(line, sizeof(line), "convoy: profile written to %s\n", path);
		if (write(STDERR_FILENO, line, (size_t)(n < (int)sizeof(line) ? n : (int)sizeof(line) - 1)) < 0) {
			/* stderr is gone: the file is still there */
		}
	}
done:
	snapshot_free(&snap);
	cv__guard_leave(saved);
	errno = saved_errno;
}
