/* profile.c — reading a profile.
 *
 * Only a regular file is read (opened non-blocking, so a FIFO cannot hang
 * us), and only once its header says it is a profile. It is then read into
 * memory and walked record by record. Every length is checked against what is
 * left before it is used, the end record's count and CRC must match, every
 * cross-reference (a stats record's object and thread) must resolve, and the
 * values must be possible (a profile ends after it starts, has threads, no
 * count above INT64_MAX), so a truncated, corrupt or hostile file is rejected
 * with one line instead of being half-read or explained wrongly.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "profile.h"
#include "util.h"

#define CV_MAX_PROFILE (1ull << 32)   /* 4 GiB: far beyond any real profile */

struct reader {
	const char *path;
	const unsigned char *data;
	size_t size;
	char why[256];
};

static int fail(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct reader *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	return -1;
}

static int read_all(int fd, unsigned char *buf, size_t len, size_t at)
{
	while (at < len) {
		ssize_t n = pread(fd, buf + at, len - at, (off_t)at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		at += (size_t)n;
	}
	return 0;
}

/* The file's bytes, once its header shows it is a profile: a large file of
 * something else is rejected after reading 8 bytes. */
static unsigned char *read_file(const char *path, size_t *size, char *why, size_t whylen)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		snprintf(why, whylen, "%s", strerror(errno));
		return NULL;
	}
	struct stat st;
	unsigned char *buf = NULL;
	char magic[sizeof(CV_PROFILE_MAGIC) - 1];
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		snprintf(why, whylen, "not a regular file");
	else if ((size_t)st.st_size < sizeof(magic) || read_all(fd, (unsigned char *)magic, sizeof(magic), 0) ||
		 memcmp(magic, CV_PROFILE_MAGIC, sizeof(magic)) != 0)
		snprintf(why, whylen, "not a convoy profile");
	else if ((unsigned long long)st.st_size > CV_MAX_PROFILE)
		snprintf(why, whylen, "too large to be a profile (%lld bytes)", (long long)st.st_size);
	else {
		buf = xcalloc(1, (size_t)st.st_size + 1);
		memcpy(buf, magic, sizeof(magic));
		errno = 0;   /* 0 after: the file ended early */
		if (read_all(fd, buf, (size_t)st.st_size, sizeof(magic)) != 0) {
			snprintf(why, whylen, "read error (%s)", errno ? strerror(errno) : "file shrank");
			free(buf);
			buf = NULL;
		}
		*size = (size_t)st.st_size;
	}
	close(fd);
	return buf;
}

/* Tail strings: bounds-checked copies. */
static int tail(struct reader *r, const unsigned char *payload, size_t payload_len, size_t *off,
		size_t len, const unsigned char **out)
{
	if (len > payload_len || *off > payload_len - len)
		return fail(r, "a record's variable part runs past its end");
	*out = payload + *off;
	*off += len;
	return 0;
}

static char *tail_string(struct reader *r, const unsigned char *payload, size_t payload_len,
			 size_t *off, size_t len, int *err)
{
	const unsigned char *s = NULL;
	if (tail(r, payload, payload_len, off, len, &s)) {
		*err = -1;
		return NULL;
	}
	return xstrndup((const char *)s, len);
}

#define GROW(arr, n, cap)                                                   \
	do {                                                                \
		if ((n) == (cap)) {                                         \
			(cap) = (cap) ? (cap) * 2 : 16;                     \
			(arr) = realloc((arr), (cap) * sizeof(*(arr)));     \
			if (!(arr)) { cv_error("out of memory"); abort(); } \
		}                                                           \
	} while (0)

static int parse(struct reader *r, struct profile *p)
{
	const struct cv_file_header *fh = (const void *)r->data;
	if (r->size < sizeof(*fh) || memcmp(fh->magic, CV_PROFILE_MAGIC, 8) != 0)
		return fail(r, "not a convoy profile");
	if (fh->version > CV_PROFILE_VERSION)
		return fail(r, "written by a newer convoy (format version %u; this convoy reads up to %u)",
			    fh->version, CV_PROFILE_VERSION);
	if (fh->version == 0 || fh->header_size < sizeof(*fh) || fh->header_size > r->size)
		return fail(r, "corrupt file header");

	size_t off = fh->header_size, cap_mod = 0, cap_obj = 0, cap_st = 0, cap_th = 0, cap_ct = 0;
	size_t cap_stk = 0, cap_sw = 0, cap_edge = 0, cap_ts = 0, cap_tr = 0;
	uint64_t records = 0;
	int have_process = 0, err = 0;
	for (;;) {
		if (off == r->size)
			return fail(r, "truncated (no end record after %llu records)", (unsigned long long)records);
		if (r->size - off < sizeof(struct cv_rec_header))
			return fail(r, "truncated inside a record header");
		struct cv_rec_header h;
		memcpy(&h, r->data + off, sizeof(h));
		if (h.size > r->size - off - sizeof(h))
			return fail(r, "truncated (a record of %u bytes runs past the end of the file)", h.size);
		const unsigned char *payload = r->data + off + sizeof(h);
		size_t len = h.size, t = 0;
		size_t need = 0;
		switch (h.type) {
		case CV_REC_PROCESS: need = sizeof(struct cv_process); break;
		case CV_REC_MODULE:  need = sizeof(struct cv_module); break;
		case CV_REC_OBJECT:  need = sizeof(struct cv_object); break;
		case CV_REC_STATS:   need = sizeof(struct cv_stats); break;
		case CV_REC_THREAD:  need = sizeof(struct cv_thread_rec); break;
		case CV_REC_COUNTER: need = sizeof(struct cv_counter); break;
		case CV_REC_END:     need = sizeof(struct cv_end); break;
		case CV_REC_STACK:   need = sizeof(struct cv_stack_rec); break;
		case CV_REC_STACK_WAIT: need = sizeof(struct cv_stack_wait); break;
		case CV_REC_LOCK_ORDER: need = sizeof(struct cv_lock_order); break;
		case CV_REC_LOCK_EDGE: need = sizeof(struct cv_lock_edge); break;
		case CV_REC_THREAD_STATE: need = sizeof(struct cv_thread_state); break;
		case CV_REC_TRACE:   need = sizeof(struct cv_trace_rec); break;
		default: break;   /* unknown: skipped */
		}
		if (h.fixed > len || (need && h.fixed < 8))
			return fail(r, "corrupt record (type %u: fixed part of %u bytes in %zu)", h.type, h.fixed, len);
		/* The writer's struct may be shorter (older) or longer (newer) than
		 * ours: copy what both know into a zeroed struct. */
		unsigned char fixed[4096] = { 0 };
		if (need > sizeof(fixed))
			return fail(r, "internal: record struct too large");
		memcpy(fixed, payload, h.fixed < need ? h.fixed : need);
		if (h.type != CV_REC_PROCESS && !have_process && h.type != CV_REC_END)
			return fail(r, "corrupt (first record is not the process record)");
		t = h.fixed;
		switch (h.type) {
		case CV_REC_PROCESS:
			if (have_process++)
				return fail(r, "corrupt (two process records)");
			memcpy(&p->process, fixed, need);
			{
				char *cmd = tail_string(r, payload, len, &t, p->process.cmdline_len, &err);
				if (err)
					return -1;
				for (size_t i = 0; i + 1 < p->process.cmdline_len; i++)
					if (cmd[i] == '\0')
						cmd[i] = ' ';
				p->cmdline = cmd;
				p->exe = tail_string(r, payload, len, &t, p->process.exe_len, &err);
			}
			p->process.comm[CV_NAME_MAX - 1] = '\0';
			break;
		case CV_REC_MODULE: {
			GROW(p->modules, p->nmodules, cap_mod);
			struct profile_module *m = &p->modules[p->nmodules];
			memset(m, 0, sizeof(*m));
			memcpy(&m->m, fixed, need);
			if (tail(r, payload, len, &t, m->m.build_id_len, &m->build_id))
				return -1;
			m->path = tail_string(r, payload, len, &t, m->m.path_len, &err);
			p->nmodules++;
			break;
		}
		case CV_REC_OBJECT: {
			GROW(p->objects, p->nobjects, cap_obj);
			struct profile_object *o = &p->objects[p->nobjects];
			memset(o, 0, sizeof(*o));
			memcpy(&o->o, fixed, need);
			if (o->o.name_len)
				o->name = tail_string(r, payload, len, &t, o->o.name_len, &err);
			p->nobjects++;
			break;
		}
		case CV_REC_STATS:
			GROW(p->stats, p->nstats, cap_st);
			memcpy(&p->stats[p->nstats++], fixed, need);
			break;
		case CV_REC_THREAD:
			GROW(p->threads, p->nthreads, cap_th);
			memcpy(&p->threads[p->nthreads], fixed, need);
			p->threads[p->nthreads].name[CV_NAME_MAX - 1] = '\0';
			p->nthreads++;
			break;
		case CV_REC_COUNTER: {
			GROW(p->counters, p->ncounters, cap_ct);
			struct profile_counter *c = &p->counters[p->ncounters];
			memcpy(&c->c, fixed, need);
			c->name = tail_string(r, payload, len, &t, c->c.name_len, &err);
			p->ncounters++;
			break;
		}
		case CV_REC_STACK: {
			GROW(p->stacks, p->nstacks, cap_stk);
			struct profile_stack *s = &p->stacks[p->nstacks];
			memset(s, 0, sizeof(*s));
			memcpy(&s->s, fixed, need);
			if (s->s.depth == 0 || s->s.depth > CV_STACK_MAX_DEPTH)
				return fail(r, "corrupt (stack %u has %u frames; 1 to %u allowed)", s->s.id,
					    s->s.depth, CV_STACK_MAX_DEPTH);
			const unsigned char *pcs = NULL;
			if (tail(r, payload, len, &t, (size_t)s->s.depth * sizeof(uint64_t), &pcs))
				return -1;
			s->pcs = xcalloc(s->s.depth, sizeof(uint64_t));
			memcpy(s->pcs, pcs, (size_t)s->s.depth * sizeof(uint64_t));
			p->nstacks++;
			break;
		}
		case CV_REC_STACK_WAIT:
			GROW(p->stack_waits, p->nstack_waits, cap_sw);
			memcpy(&p->stack_waits[p->nstack_waits++], fixed, need);
			break;
		case CV_REC_LOCK_ORDER:
			memcpy(&p->lock_order, fixed, need);
			p->has_lock_order = 1;
			break;
		case CV_REC_LOCK_EDGE:
			GROW(p->edges, p->nedges, cap_edge);
			memcpy(&p->edges[p->nedges++], fixed, need);
			break;
		case CV_REC_THREAD_STATE: {
			GROW(p->thread_states, p->nthread_states, cap_ts);
			struct profile_thread_state *s = &p->thread_states[p->nthread_states];
			memset(s, 0, sizeof(*s));
			memcpy(&s->s, fixed, need);
			const unsigned char *held = NULL;
			if (tail(r, payload, len, &t, (size_t)s->s.nheld * sizeof(struct cv_held_lock), &held))
				return -1;   /* the tail bounds nheld: no allocation past the record */
			s->held = xcalloc(s->s.nheld ? s->s.nheld : 1, sizeof(*s->held));
			memcpy(s->held, held, (size_t)s->s.nheld * sizeof(*s->held));
			p->nthread_states++;
			break;
		}
		case CV_REC_TRACE: {
			GROW(p->traces, p->ntraces, cap_tr);
			struct profile_trace *tr = &p->traces[p->ntraces];
			memset(tr, 0, sizeof(*tr));
			memcpy(&tr->t, fixed, need);
			size_t esize = tr->t.event_size, n = tr->t.nevents;
			if (esize < 8 || esize > 4096)
				return fail(r, "corrupt (trace events of %zu bytes)", esize);
			const unsigned char *ev = NULL;
			if (n > len / esize || tail(r, payload, len, &t, n * esize, &ev))
				return fail(r, "corrupt (a trace of %zu events runs past its record)", n);
			tr->events = xcalloc(n ? n : 1, sizeof(*tr->events));
			for (size_t i = 0; i < n; i++)   /* fields a shorter writer's events lack stay 0 */
				memcpy(&tr->events[i], ev + i * esize, esize < sizeof(*tr->events) ? esize : sizeof(*tr->events));
			p->ntraces++;
			break;
		}
		case CV_REC_END: {
			struct cv_end e;
			memcpy(&e, fixed, sizeof(e));
			uint32_t crc = (uint32_t)crc32(crc32(0, Z_NULL, 0), r->data, (uInt)(off + sizeof(h)));
			if (e.records != records)
				return fail(r, "corrupt (end record counts %llu records, file has %llu)",
					    (unsigned long long)e.records, (unsigned long long)records);
			if (e.crc32 != crc)
				return fail(r, "corrupt (checksum mismatch)");
			if (e.pad != 0)   /* the one field the checksum cannot cover */
				return fail(r, "corrupt (end record)");
			if (off + sizeof(h) + h.size != r->size)
				return fail(r, "corrupt (data after the end record)");
			if (!have_process)
				return fail(r, "corrupt (no process record)");
			return 0;
		}
		}
		if (err)
			return -1;
		off += sizeof(h) + h.size;
		records++;
	}
}

/* Stacks are indexed by id (1..n); every reference to one must resolve, and
 * each (object, thread, stack) is described once. */
static int by_wait_key(const void *a, const void *b)
{
	const struct cv_stack_wait *x = a, *y = b;
	if (x->object != y->object)
		return x->object < y->object ? -1 : 1;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int link_stacks(struct reader *r, struct profile *p)
{
	struct profile_stack *stk = xcalloc(p->nstacks ? p->nstacks : 1, sizeof(*stk));
	for (size_t i = 0; i < p->nstacks; i++) {
		uint32_t id = p->stacks[i].s.id;
		if (id == 0 || id > p->nstacks || stk[id - 1].pcs) {
			free(stk);   /* p->stacks still owns every pcs array */
			return fail(r, "corrupt (stack ids are not 1..%zu)", p->nstacks);
		}
		stk[id - 1] = p->stacks[i];
	}
	free(p->stacks);
	p->stacks = stk;
	for (size_t i = 0; i < p->nobjects; i++)
		if (p->objects[i].o.first_stack > p->nstacks)
			return fail(r, "corrupt (object %zu names stack %u of %zu)", i,
				    p->objects[i].o.first_stack, p->nstacks);
	for (size_t i = 0; i < p->nmodules; i++) {
		const struct cv_module *m = &p->modules[i].m;
		if (m->unload_gen && m->unload_gen <= m->map_gen)
			return fail(r, "corrupt (module %zu unloaded in generation %u, loaded in %u)", i,
				    m->unload_gen, m->map_gen);
	}
	for (size_t i = 0; i < p->nstack_waits; i++) {
		const struct cv_stack_wait *w = &p->stack_waits[i];
		if (w->object >= p->nobjects || w->thread >= p->nthreads || w->stack > p->nstacks)
			return fail(r, "corrupt (a stack-wait record names object %u, thread %u, stack %u)",
				    w->object, w->thread, w->stack);
		if (w->samples == 0 || w->waits < w->samples)
			return fail(r, "corrupt (a stack-wait record has %llu samples standing for %llu waits)",
				    (unsigned long long)w->samples, (unsigned long long)w->waits);
	}
	for (size_t i = 0; i < p->nedges; i++) {
		const struct cv_lock_edge *e = &p->edges[i];
		if (e->from >= p->nobjects || e->to >= p->nobjects || e->thread >= p->nthreads || e->to_stack > p->nstacks ||
		    e->from_stack > p->nstacks)
			return fail(r, "corrupt (a lock-order edge names objects %u -> %u, thread %u, stacks %u and %u)",
				    e->from, e->to, e->thread, e->from_stack, e->to_stack);
	}
	for (size_t i = 0; i < p->nthread_states; i++) {
		const struct profile_thread_state *s = &p->thread_states[i];
		if (s->s.thread >= p->nthreads || s->s.waiting > p->nobjects || s->s.waiting_mutex > p->nobjects)
			return fail(r, "corrupt (a thread state names thread %u, objects %u and %u)", s->s.thread,
				    s->s.waiting, s->s.waiting_mutex);
		for (uint32_t k = 0; k < s->s.nheld; k++)
			if (s->held[k].object >= p->nobjects)
				return fail(r, "corrupt (thread %u holds object %u)", s->s.thread, s->held[k].object);
	}
	if (p->nstack_waits)
		qsort(p->stack_waits, p->nstack_waits, sizeof(*p->stack_waits), by_wait_key);
	for (size_t i = 1; i < p->nstack_waits; i++)
		if (!by_wait_key(&p->stack_waits[i - 1], &p->stack_waits[i]))
			return fail(r, "corrupt (two stack-wait records for object %u, thread %u, stack %u)",
				    p->stack_waits[i].object, p->stack_waits[i].thread, p->stack_waits[i].stack);
	return 0;
}

/* Counts and times are uint64 in the file and int64 (or double) in the
 * analysis: one above INT64_MAX cannot have been measured. */
static int over_int64(const uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] > INT64_MAX)
			return 1;
	return 0;
}

#define U64_FIELDS(ptr, type, first) \
	((const uint64_t *)((const char *)(ptr) + offsetof(type, first))), \
	((sizeof(type) - offsetof(type, first)) / sizeof(uint64_t))

/* Values no run could have written: the analysis would turn them into
 * "18446744074 s profiled" rather than an error. */
static int check_values(struct reader *r, const struct profile *p)
{
	const struct cv_process *pr = &p->process;
	if (pr->end_ns < pr->start_ns)
		return fail(r, "corrupt (the profile ends before it starts)");
	if (over_int64(&pr->start_ns, 2) || over_int64(U64_FIELDS(pr, struct cv_process, cpu_ns)))
		return fail(r, "corrupt (a process time or count above %lld)", (long long)INT64_MAX);
	if (p->nthreads == 0)
		return fail(r, "corrupt (no threads)");
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct cv_thread_rec *t = &p->threads[i];
		if (t->end_ns < t->start_ns)
			return fail(r, "corrupt (thread %zu ends before it starts)", i);
		if (over_int64(&t->create_ns, 1) || over_int64(&t->start_ns, 2) ||
		    over_int64(&t->cpu_ns, 6) || over_int64(U64_FIELDS(t, struct cv_thread_rec, run_delay_ns)))
			return fail(r, "corrupt (thread %zu has a time or count above %lld)", i, (long long)INT64_MAX);
	}
	for (size_t i = 0; i < p->nstats; i++)
		if (over_int64(U64_FIELDS(&p->stats[i], struct cv_stats, acquisitions)))
			return fail(r, "corrupt (a stats record of object %u has a count above %lld)",
				    p->stats[i].object, (long long)INT64_MAX);
	for (size_t i = 0; i < p->nstack_waits; i++)
		if (over_int64(&p->stack_waits[i].samples, 3))
			return fail(r, "corrupt (a stack-wait record has a count above %lld)", (long long)INT64_MAX);
	return 0;
}

/* Objects and threads are indexed by id; stats and counters must point at
 * ones that exist. */
static int link_up(struct reader *r, struct profile *p)
{
	struct profile_object *objs = xcalloc(p->nobjects, sizeof(*objs));
	char *seen = xcalloc(p->nobjects, 1);
	for (size_t i = 0; i < p->nobjects; i++) {
		uint32_t id = p->objects[i].o.id;
		if (id >= p->nobjects || seen[id]) {
			free(objs);
			free(seen);
			return fail(r, "corrupt (object ids are not 0..%zu)", p->nobjects - 1);
		}
		seen[id] = 1;
		objs[id] = p->objects[i];
	}
	free(seen);
	free(p->objects);
	p->objects = objs;

	struct cv_thread_rec *ths = xcalloc(p->nthreads, sizeof(*ths));
	seen = xcalloc(p->nthreads, 1);
	for (size_t i = 0; i < p->nthreads; i++) {
		uint32_t ix = p->threads[i].index;
		if (ix >= p->nthreads || seen[ix]) {
			free(ths);
			free(seen);
			return fail(r, "corrupt (thread indexes are not 0..%zu)", p->nthreads - 1);
		}
		seen[ix] = 1;
		ths[ix] = p->threads[i];
	}
	free(seen);
	free(p->threads);
	p->threads = ths;

	for (size_t i = 0; i < p->nstats; i++)
		if (p->stats[i].object >= p->nobjects || p->stats[i].thread >= p->nthreads)
			return fail(r, "corrupt (a stats record names object %u, thread %u)",
				    p->stats[i].object, p->stats[i].thread);
	for (size_t i = 0; i < p->nobjects; i++) {
		uint32_t mon = p->objects[i].o.monitor;
		if (mon && (p->objects[i].o.kind != CV_OBJ_COND || mon > p->nobjects ||
			    p->objects[mon - 1].o.kind != CV_OBJ_MUTEX))
			return fail(r, "corrupt (object %zu names object %u as its mutex)", i, mon - 1);
	}
	for (size_t i = 0; i < p->ncounters; i++)
		if (p->counters[i].c.thread >= p->nthreads)
			return fail(r, "corrupt (a counter names thread %u)", p->counters[i].c.thread);
	for (size_t i = 0; i < p->ntraces; i++) {
		const struct profile_trace *tr = &p->traces[i];
		if (tr->t.thread >= p->nthreads)
			return fail(r, "corrupt (a trace names thread %u)", tr->t.thread);
		for (size_t k = 0; k < tr->t.nevents; k++) {
			const struct cv_trace_event *e = &tr->events[k];
			if ((e->object >= p->nobjects && e->object != CV_TRACE_NO_OBJECT) ||
			    e->type < CV_TRACE_WAIT || e->type > CV_TRACE_WOKEN)
				return fail(r, "corrupt (trace event %zu of thread %u: object %u, type %u)", k,
					    tr->t.thread, e->object, e->type);
		}
	}
	return link_stacks(r, p);
}

struct profile *profile__parse(const unsigned char *data, size_t size, const char *path)
{
	struct reader r = { .path = path, .data = data, .size = size };
	struct profile *p = xcalloc(1, sizeof(*p));
	p->path = xstrndup(path, strlen(path));
	int rc = parse(&r, p);
	if (rc == 0)
		rc = link_up(&r, p);
	if (rc == 0)
		rc = check_values(&r, p);
	if (rc) {
		cv_error("%s: %s", path, r.why);
		for (size_t i = 0; i < p->nmodules; i++)
			p->modules[i].build_id = NULL;   /* they point into data */
		profile__free(p);
		return NULL;
	}
	/* Build-ids point into data: copy them before it goes. */
	for (size_t i = 0; i < p->nmodules; i++) {
		unsigned char *id = xcalloc(1, p->modules[i].m.build_id_len);
		memcpy(id, p->modules[i].build_id, p->modules[i].m.build_id_len);
		p->modules[i].build_id = id;
	}
	return p;
}

struct profile *profile__load(const char *path)
{
	char why[256];
	size_t size = 0;
	unsigned char *data = read_file(path, &size, why, sizeof(why));
	if (!data) {
		cv_error("cannot read profile %s: %s", path, why);
		return NULL;
	}
	struct profile *p = profile__parse(data, size, path);
	free(data);
	return p;
}

void profile__free(struct profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nmodules; i++) {
		free((void *)p->modules[i].build_id);
		free(p->modules[i].path);
	}
	for (size_t i = 0; i < p->nobjects; i++)
		free(p->objects[i].name);
	for (size_t i = 0; i < p->ncounters; i++)
		free(p->counters[i].name);
	free(p->modules);
	free(p->objects);
	free(p->stats);
	free(p->threads);
	free(p->counters);
	for (size_t i = 0; i < p->nstacks; i++)
		free(p->stacks[i].pcs);
	free(p->stacks);
	free(p->stack_waits);
	free(p->edges);
	for (size_t i = 0; i < p->nthread_states; i++)
		free(p->thread_states[i].held);
	free(p->thread_states);
	for (size_t i = 0; i < p->ntraces; i++)
		free(p->traces[i].events);
	free(p->traces);
	free(p->cmdline);
	free(p->exe);
	free(p->path);
	free(p);
}

int profile__has_magic(const char *path)
{
	FILE *f = cv_fopen_regular(path);
	char magic[sizeof(CV_PROFILE_MAGIC) - 1] = { 0 };
	if (!f)
		return 0;
	size_t n = fread(magic, 1, sizeof(magic), f);
	fclose(f);
	return n == sizeof(magic) && !memcmp(magic, CV_PROFILE_MAGIC, sizeof(magic));
}
