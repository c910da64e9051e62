/* cpuprof.c — where on-CPU time went (cpuprof.h).
 *
 * Each distinct sampled IP is symbolized once. A sample whose innermost
 * function (inlined frames included, the shim's own left out) is a lock
 * implementation's (LOCK_IMPLS) is time spent getting a lock: spinning in
 * pthread_spin_lock, glibc's adaptive mutex spin, Rust std's Mutex::spin and
 * lock_contended, parking_lot's lock_slow. Which lock: the one whose object
 * a general register of the sample points into (a lock implementation keeps
 * its lock's address in a register while it spins; the argument register
 * is tried first); without registers, or with none pointing at a lock the
 * profile knows, the time counts as "lock unknown".
 */
#include <stdlib.h>
#include <string.h>

#include "cpuprof.h"
#include "model.h"
#include "profile.h"
#include "samples.h"
#include "symbols.h"
#include "util.h"

/* X(substring of the demangled function name, what it implements). */
#define LOCK_IMPLS(X)                                         \
	X("pthread_spin_lock",            "glibc spinlock")       \
	X("pthread_mutex_lock",           "glibc mutex")          \
	X("pthread_mutex_timedlock",      "glibc mutex")          \
	X("pthread_mutex_clocklock",      "glibc mutex")          \
	X("__lll_lock_wait",              "glibc mutex")          \
	X("pthread_rwlock_wrlock",        "glibc rwlock")         \
	X("pthread_rwlock_rdlock",        "glibc rwlock")         \
	X("Mutex::lock_contended",        "Rust std Mutex")       \
	X("Mutex::spin",                  "Rust std Mutex")       \
	X("RwLock::write_contended",      "Rust std RwLock")      \
	X("RwLock::read_contended",       "Rust std RwLock")      \
	X("RwLock::spin_",                "Rust std RwLock")      \
	X("RawMutex::lock_slow",          "parking_lot Mutex")    \
	X("RawRwLock::lock_exclusive_slow", "parking_lot RwLock")

static const struct { const char *substring, *what; } lock_impls[] = {
#define CV_X(sub, what) { sub, what },
	LOCK_IMPLS(CV_X)
#undef CV_X
};

/* Matched without angle brackets: Rust's v0 demangling writes an inherent
 * method as <std::sys::sync::mutex::futex::Mutex>::lock_contended. */
static const char *lock_impl_of(const char *function)
{
	if (!function)
		return NULL;
	char plain[512];
	size_t n = 0;
	for (const char *p = function; *p && n + 1 < sizeof(plain); p++)
		if (*p != '<' && *p != '>')
			plain[n++] = *p;
	plain[n] = '\0';
	for (size_t i = 0; i < sizeof(lock_impls) / sizeof(lock_impls[0]); i++)
		if (strstr(plain, lock_impls[i].substring))
			return lock_impls[i].what;
	return NULL;
}

/* Bytes of each lock kind's object, for a register pointing inside one. */
static uint64_t lock_size(uint32_t kind)
{
	switch (kind) {
	case CV_OBJ_MUTEX:  return 40;   /* pthread_mutex_t */
	case CV_OBJ_RWLOCK: return 56;   /* pthread_rwlock_t */
	case CV_OBJ_SPIN:   return 4;
	case CV_OBJ_FUTEX:  return 4;
	default:            return 0;
	}
}

struct lock_span {
	uint64_t addr, end;
	uint32_t id;
	uint64_t acquisitions;
};

static int by_addr(const void *a, const void *b)
{
	const struct lock_span *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The lock objects by address; of several generations at one address, the
 * most used. */
static size_t lock_spans(const struct model *m, struct lock_span **out)
{
	const struct profile *p = m->p;
	struct lock_span *v = xcalloc(p->nobjects ? p->nobjects : 1, sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; i < p->nobjects; i++) {
		uint64_t size = lock_size(p->objects[i].o.kind);
		if (size)
			v[n++] = (struct lock_span){ p->objects[i].o.addr, p->objects[i].o.addr + size,
						     (uint32_t)i, m->rows[i].total.acquisitions };
	}
	qsort(v, n, sizeof(*v), by_addr);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && v[k - 1].addr == v[i].addr) {
			if (v[i].acquisitions > v[k - 1].acquisitions)
				v[k - 1] = v[i];
			continue;
		}
		v[k++] = v[i];
	}
	*out = v;
	return k;
}

static const struct lock_span *span_at(const struct lock_span *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v[mid].end <= addr)
			lo = mid + 1;
		else if (v[mid].addr > addr)
			hi = mid;
		else
			return &v[mid];
	}
	return NULL;
}

/* The lock a spinning sample's registers point into, or NULL. */
static const struct lock_span *lock_of_sample(const struct sample *x, const struct lock_span *v, size_t n)
{
	static const enum sample_reg order[] = { REG_DI, REG_SI, REG_DX, REG_CX, REG_AX, REG_BX, REG_BP, REG_R8,
						 REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15 };
	if (!x->has_regs)
		return NULL;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		const struct lock_span *s = span_at(v, n, x->regs[order[i]]);
		if (s)
			return s;
	}
	return NULL;
}

struct ip_info {
	uint64_t ip;
	uint32_t fn;                 /* index into the functions, once named */
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int by_samples(const void *a, const void *b)
{
	const struct cpu_function *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int thread_of(const struct profile *p, int32_t tid)
{
	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i].tid == tid)
			return (int)i;
	return -1;
}

static int on_cpu(const struct sample *x)
{
	return x->kind == SAMPLE_CPU || x->kind == SAMPLE_SYS;
}

/* Names each distinct IP once: by its function (the program's innermost, below). */
static void name_functions(struct cpuprof *c, const struct model *m, uint64_t *ips, size_t nips, uint32_t *fn_of_ip)
{
	c->fns = xcalloc(nips ? nips : 1, sizeof(*c->fns));
	for (size_t i = 0; i < nips; i++) {
		const struct sym_frame *f;
		size_t nf = syms__frames(m->syms, ips[i], SYMS_ANY_GEN, 0, &f);
		const char *impl = NULL;
		for (size_t k = 0; k < nf && !impl; k++)
			if (!f[k].shim)
				impl = lock_impl_of(f[k].function);
		/* Named by the program's innermost frame, inlined ones included:
		 * the function whose code it is, not the standard library's
		 * helpers inlined into it (a Rust closure's Range::next, a C++
		 * vector's operator[]). Code with no frame of the program's own
		 * is named by its outermost frame: the runtime's function that
		 * holds the code, as its symbol says (Mutex::lock_contended, not
		 * the atomic load inlined into it). */
		const struct sym_frame *own = NULL;
		for (size_t k = 0; k < nf && !own; k++)
			if (!f[k].runtime && !f[k].shim && f[k].function)
				own = &f[k];
		if (!own)
			own = &f[nf - 1];
		char name[256];
		if (own->function)
			snprintf(name, sizeof(name), "%s", own->function);
		else
			syms__frame_label(own, name, sizeof(name));
		size_t j = 0;
		while (j < c->nfns && strcmp(c->fns[j].name, name))
			j++;
		if (j == c->nfns) {
			snprintf(c->fns[j].name, sizeof(c->fns[j].name), "%s", name);
			c->fns[j].lock_impl = impl;
			c->nfns++;
		}
		fn_of_ip[i] = (uint32_t)j;
	}
}

/* The function of a sampled IP (one of ips), until c->fns is sorted. */
static struct cpu_function *function_at(struct cpuprof *c, uint64_t ip, const uint64_t *ips, size_t nips,
					const uint32_t *fn_of_ip)
{
	const uint64_t *at = bsearch(&ip, ips, nips, sizeof(*ips), cmp_u64);
	return &c->fns[fn_of_ip[at - ips]];
}

struct cpuprof *cpuprof__load(const char *profile_path, const struct model *m)
{
	const struct profile *p = m->p;
	char path[4200];
	samples__path(path, sizeof(path), profile_path, (int32_t)p->process.pid);
	struct cpuprof *c = xcalloc(1, sizeof(*c));
	if (samples__load(&c->smp, path, (int32_t)p->process.pid, p->process.start_ns, p->process.end_ns) != 0) {
		free(c);
		return NULL;
	}
	const struct samples *s = &c->smp;
	c->thread_samples = xcalloc(p->nthreads ? p->nthreads : 1, sizeof(uint64_t));
	c->thread_spin = xcalloc(p->nthreads ? p->nthreads : 1, sizeof(uint64_t));
	c->object_spin = xcalloc(p->nobjects ? p->nobjects : 1, sizeof(uint64_t));
	int *thread = xcalloc(s->n ? s->n : 1, sizeof(int));
	uint64_t *ips = xcalloc(s->n ? s->n : 1, sizeof(uint64_t));
	size_t nips = 0;
	for (size_t i = 0; i < s->n; i++) {
		thread[i] = -1;
		if (!on_cpu(&s->v[i]))
			continue;
		thread[i] = thread_of(p, s->v[i].tid);
		if (thread[i] < 0) {
			c->untracked++;
			continue;
		}
		ips[nips++] = s->v[i].ip;
	}
	qsort(ips, nips, sizeof(*ips), cmp_u64);
	size_t k = 0;
	for (size_t i = 0; i < nips; i++)
		if (!k || ips[k - 1] != ips[i])
			ips[k++] = ips[i];
	nips = k;
	uint32_t *fn_of_ip = xcalloc(nips ? nips : 1, sizeof(uint32_t));
	name_functions(c, m, ips, nips, fn_of_ip);
	struct lock_span *spans;
	size_t nspans = lock_spans(m, &spans);
	for (size_t i = 0; i < s->n; i++) {
		const struct sample *x = &s->v[i];
		if (!on_cpu(x) || thread[i] < 0)
			continue;
		c->samples++;
		c->thread_samples[thread[i]]++;
		struct cpu_function *f = function_at(c, x->ip, ips, nips, fn_of_ip);
		f->samples++;
		if (!f->lock_impl)
			continue;
		c->lock_spin++;
		c->thread_spin[thread[i]]++;
		const struct lock_span *l = lock_of_sample(x, spans, nspans);
		if (l)
			c->object_spin[l->id]++;
		else
			c->lock_spin_unknown++;
	}
	int *mem_thread = xcalloc(s->nmem + 1, sizeof(int)), *watch_thread = xcalloc(s->nwatch + 1, sizeof(int));
	for (size_t i = 0; i < s->nmem; i++)
		mem_thread[i] = thread_of(p, s->mem[i].tid);
	for (size_t i = 0; i < s->nwatch; i++)
		watch_thread[i] = thread_of(p, s->watch[i].tid);
	cachelines__build(&c->lines, s, &(struct sample_threads){ thread, mem_thread, watch_thread }, m);
	/* Hand-written spin loops, outside any lock implementation. */
	for (size_t i = 0; i < s->n; i++)
		if (c->lines.spinning[i] && !function_at(c, s->v[i].ip, ips, nips, fn_of_ip)->lock_impl)
			c->thread_spin[thread[i]]++;
	free(mem_thread);
	free(watch_thread);
	qsort(c->fns, c->nfns, sizeof(*c->fns), by_samples);
	while (c->nfns && !c->fns[c->nfns - 1].samples)
		c->nfns--;
	free(spans);
	free(fn_of_ip);
	free(ips);
	free(thread);
	return c;
}

void cpuprof__free(struct cpuprof *c)
{
	if (!c)
		return;
	samples__free(&c->smp);
	cachelines__free(&c->lines);
	free(c->fns);
	free(c->object_spin);
	free(c->thread_samples);
	free(c->thread_spin);
	free(c);
}

double cpuprof__spin_share(const struct cpuprof *c, uint32_t object)
{
	return c && c->samples ? (double)c->object_spin[object] / (double)c->samples : 0;
}

static const char *scope_text(const struct cpuprof *c)
{
	return c->smp.user_only ? "user time only (perf_event_paranoid)" : "user and kernel time";
}

/* Lines shared by threads worth naming: at least this share of the samples. */
#define LINE_MIN_SHARE 0.01

/* Shared, or spun on (a lock-like word): worth naming. */
static int line_worth_naming(const struct cpuprof *c, const struct cache_line *l)
{
	return l->verdict != LINE_PRIVATE &&
	       (double)(l->samples + l->pmu_samples) >= LINE_MIN_SHARE * (double)(c->samples + c->lines.pmu);
}

const struct cache_line *cpuprof__top_shared_line(const struct cpuprof *c)
{
	for (size_t i = 0; c && i < c->lines.n; i++)
		if (line_worth_naming(c, &c->lines.v[i]) && c->lines.v[i].verdict != LINE_SPIN)
			return &c->lines.v[i];
	return NULL;
}

const struct cache_line *cpuprof__top_line(const struct cpuprof *c)
{
	for (size_t i = 0; c && i < c->lines.n; i++)
		if (line_worth_naming(c, &c->lines.v[i]))
			return &c->lines.v[i];
	return NULL;
}

int cpuprof__unavailable(const struct cpuprof *c, char what[CPUPROF_UNAVAILABLE_MAX][CPUPROF_UNAVAILABLE_SIZE])
{
	int n = 0;
	if (c && !c->lines.available)
		snprintf(what[n++], CPUPROF_UNAVAILABLE_SIZE, "instruction decoding (the data addresses of the CPU "
			 "samples, which locate the cache lines): %s", decoder__why_not());
	if (c && !c->smp.mem_source[0])
		snprintf(what[n++], CPUPROF_UNAVAILABLE_SIZE, "PMU memory-access sampling (data addresses sampled by "
			 "the CPU): %s; the cache lines rest on decoded instructions",
			 c->smp.mem_unavailable[0] ? c->smp.mem_unavailable : "off");
	if (c && !c->smp.watch_on)
		snprintf(what[n++], CPUPROF_UNAVAILABLE_SIZE, "hardware watchpoints (exact writes per thread per "
			 "word): %s", c->smp.watch_unavailable[0] ? c->smp.watch_unavailable : "off");
	if (c && c->smp.stack_unavailable[0])
		snprintf(what[n++], CPUPROF_UNAVAILABLE_SIZE, "call chains through code without frame pointers (user "
			 "stacks unwound from DWARF call-frame information): %.200s; off-CPU and serial-phase call sites "
			 "may stop in the C library", c->smp.stack_unavailable);
	return n;
}

static void text_unavailable(const struct cpuprof *c, FILE *out)
{
	char what[CPUPROF_UNAVAILABLE_MAX][CPUPROF_UNAVAILABLE_SIZE];
	for (int i = 0, n = cpuprof__unavailable(c, what); i < n; i++)
		fprintf(out, "  Not measured: %s.\n", what[i]);
}

static void text_lines(const struct cpuprof *c, const struct model *m, FILE *out, int limit)
{
	char a[32], b[32], name[256];
	if (!c->lines.available) {
		text_unavailable(c, out);   /* says why */
		return;
	}
	fprintf(out, "  Cache lines used by several threads, and words spun on (data addresses of %s of the samples, decoded "
		"from the sampled instructions and registers", fmt_pct(a, sizeof(a), c->samples ? (double)c->lines.decoded / (double)c->samples : 0));
	if (c->lines.pmu)
		fprintf(out, "; %s memory samples of the PMU (%s)", fmt_count(b, sizeof(b), c->lines.pmu), c->smp.mem_source);
	fputs("):\n", out);
	int shown = 0;
	for (size_t i = 0; i < c->lines.n && (limit <= 0 || shown < limit); i++) {
		const struct cache_line *l = &c->lines.v[i];
		if (!line_worth_naming(c, l))
			continue;
		shown++;
		char pmu[48] = "";
		if (l->pmu_samples)
			snprintf(pmu, sizeof(pmu), ", %llu memory samples", (unsigned long long)l->pmu_samples);
		fprintf(out, "    line 0x%llx  %s of the CPU time%s  %s%s%s%s%s\n", (unsigned long long)l->addr,
			fmt_pct(a, sizeof(a), c->samples ? (double)l->samples / (double)c->samples : 0),
			pmu, cachelines__verdict_name(l->verdict),
			l->verdict == LINE_SPIN ? " (spin loops: a lock-like word)" : "",
			l->sync_object ? " (a sync object shares it)" : "", l->watched ? " — watchpoints: " : "",
			l->watched ? cachelines__evidence_name(l) : "");
		for (size_t u = 0; u < l->nuses; u++) {
			const struct word_use *w = &l->uses[u];
			fprintf(out, "      +%-2llu %-32s %u byte%s, thread %-7d %s writes, %s reads",
				(unsigned long long)(w->word - l->addr), cachelines__word_name(m, w->word, name, sizeof(name)),
				w->size, w->size == 1 ? "" : "s", m->p->threads[w->thread].tid,
				fmt_count(a, sizeof(a), w->writes), fmt_count(b, sizeof(b), w->reads));
			if (w->spins)
				fprintf(out, ", %s spinning", fmt_count(a, sizeof(a), w->spins));
			fputs(" sampled", out);
			if (w->watched)
				fprintf(out, "; %s writes watched in %s of its CPU", fmt_count(a, sizeof(a), w->watched_writes),
					fmt_ns(b, sizeof(b), (double)w->watched_ns));
			fputc('\n', out);
		}
	}
	if (!shown)
		fputs("    none: no line written by one thread was used by another in the samples\n", out);
	text_unavailable(c, out);
}

void cpuprof__text(const struct cpuprof *c, const struct model *m, FILE *out, int limit)
{
	char a[32], b[32], d[32];
	fprintf(out, "\nWhere the CPU time went (%s samples, one per %s of a thread's CPU, %s",
		fmt_count(a, sizeof(a), c->samples), fmt_ns(b, sizeof(b), (double)c->smp.period_ns), scope_text(c));
	if (c->smp.lost)
		fprintf(out, "; %s records lost", fmt_count(d, sizeof(d), c->smp.lost));
	fputs(")\n", out);
	if (!c->samples) {
		fputs("  no sample fell on the profile's threads\n", out);
		text_unavailable(c, out);
		return;
	}
	for (size_t i = 0; i < c->nfns && (limit <= 0 || (int)i < limit); i++) {
		fprintf(out, "  %6s  %s", fmt_pct(a, sizeof(a), (double)c->fns[i].samples / (double)c->samples),
			c->fns[i].name);
		if (c->fns[i].lock_impl)
			fprintf(out, "  [getting a lock: %s]", c->fns[i].lock_impl);
		fputc('\n', out);
	}
	text_lines(c, m, out, limit);
	if (!c->lock_spin)
		return;
	fprintf(out, "  Getting locks: %s of the CPU time\n",
		fmt_pct(a, sizeof(a), (double)c->lock_spin / (double)c->samples));
	for (size_t i = 0; i < m->p->nobjects; i++)
		if (c->object_spin[i])
			fprintf(out, "    %6s  %s %s\n", fmt_pct(a, sizeof(a), cpuprof__spin_share(c, (uint32_t)i)),
				kind_name(m->p->objects[i].o.kind), m->rows[i].name);
	if (c->lock_spin_unknown)
		fprintf(out, "    %6s  a lock no register of the samples pointed at\n",
			fmt_pct(a, sizeof(a), (double)c->lock_spin_unknown / (double)c->samples));
}

json_object *cpuprof__json(const struct cpuprof *c, const struct model *m, int limit)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "samples", json_object_new_uint64(c->samples));
	json_object_object_add(o, "period_ns", json_object_new_uint64(c->smp.period_ns));
	json_object_object_add(o, "scope", json_object_new_string(c->smp.user_only ? "user" : "user+kernel"));
	json_object_object_add(o, "lost", json_object_new_uint64(c->smp.lost));
	json_object_object_add(o, "untracked_threads_samples", json_object_new_uint64(c->untracked));
	json_object *fns = json_object_new_array();
	for (size_t i = 0; i < c->nfns && (limit < 0 || (int)i < limit); i++) {
		json_object *f = json_object_new_object();
		json_object_object_add(f, "function", json_object_new_string(c->fns[i].name));
		json_object_object_add(f, "samples", json_object_new_uint64(c->fns[i].samples));
		json_object_object_add(f, "lock_implementation",
				       c->fns[i].lock_impl ? json_object_new_string(c->fns[i].lock_impl) : NULL);
		json_object_array_add(fns, f);
	}
	json_object_object_add(o, "functions", fns);
	json_object *locks = json_object_new_array();
	for (size_t i = 0; i < m->p->nobjects; i++) {
		if (!c->object_spin[i])
			continue;
		json_object *l = json_object_new_object();
		json_object_object_add(l, "name", json_object_new_string(m->rows[i].name));
		json_object_object_add(l, "kind", json_object_new_string(kind_name(m->p->objects[i].o.kind)));
		json_object_object_add(l, "samples", json_object_new_uint64(c->object_spin[i]));
		json_object_array_add(locks, l);
	}
	json_object_object_add(o, "lock_samples", json_object_new_uint64(c->lock_spin));
	json_object_object_add(o, "lock_samples_unknown_lock", json_object_new_uint64(c->lock_spin_unknown));
	json_object_object_add(o, "locks", locks);
	json_object *threads = json_object_new_array();
	for (size_t i = 0; i < m->p->nthreads; i++) {
		json_object *t = json_object_new_object();
		json_object_object_add(t, "tid", json_object_new_int(m->p->threads[i].tid));
		json_object_object_add(t, "samples", json_object_new_uint64(c->thread_samples[i]));
		json_object_array_add(threads, t);
	}
	json_object_object_add(o, "threads", threads);
	json_object *lines = json_object_new_array();
	for (size_t i = 0; i < c->lines.n; i++) {
		const struct cache_line *l = &c->lines.v[i];
		if (!line_worth_naming(c, l))
			continue;
		json_object *j = json_object_new_object(), *words = json_object_new_array();
		char addr[32], name[256];
		snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)l->addr);
		json_object_object_add(j, "line", json_object_new_string(addr));
		json_object_object_add(j, "verdict", json_object_new_string(cachelines__verdict_name(l->verdict)));
		json_object_object_add(j, "samples", json_object_new_uint64(l->samples));
		json_object_object_add(j, "sync_object", json_object_new_boolean(l->sync_object));
		json_object_object_add(j, "sampled_verdict", json_object_new_string(cachelines__verdict_name(l->sampled_verdict)));
		json_object_object_add(j, "watchpoints", json_object_new_string(cachelines__evidence_name(l)));
		json_object_object_add(j, "watched_writes", json_object_new_uint64(l->watched_writes));
		json_object_object_add(j, "pmu_samples", json_object_new_uint64(l->pmu_samples));
		for (size_t u = 0; u < l->nuses; u++) {
			json_object *w = json_object_new_object();
			json_object_object_add(w, "offset", json_object_new_uint64(l->uses[u].word - l->addr));
			json_object_object_add(w, "size", json_object_new_uint64(l->uses[u].size));
			json_object_object_add(w, "name", json_object_new_string(
				cachelines__word_name(m, l->uses[u].word, name, sizeof(name))));
			json_object_object_add(w, "tid", json_object_new_int(m->p->threads[l->uses[u].thread].tid));
			json_object_object_add(w, "writes", json_object_new_uint64(l->uses[u].writes));
			json_object_object_add(w, "reads", json_object_new_uint64(l->uses[u].reads));
			json_object_object_add(w, "spins", json_object_new_uint64(l->uses[u].spins));
			json_object_object_add(w, "watched", json_object_new_boolean(l->uses[u].watched));
			json_object_object_add(w, "watched_writes", json_object_new_uint64(l->uses[u].watched_writes));
			json_object_object_add(w, "watched_ns", json_object_new_uint64(l->uses[u].watched_ns));
			json_object_array_add(words, w);
		}
		json_object_object_add(j, "words", words);
		json_object_array_add(lines, j);
	}
	json_object_object_add(o, "decoded_samples", json_object_new_uint64(c->lines.decoded));
	json_object_object_add(o, "decoder_unavailable",
			       c->lines.available ? NULL : json_object_new_string(decoder__why_not()));
	json_object_object_add(o, "spin_loop_samples", json_object_new_uint64(c->lines.spin_loop));
	json_object *mem = json_object_new_object(), *watch = json_object_new_object();
	json_object_object_add(mem, "source", c->smp.mem_source[0] ? json_object_new_string(c->smp.mem_source) : NULL);
	json_object_object_add(mem, "unavailable",
			       c->smp.mem_source[0] ? NULL : json_object_new_string(c->smp.mem_unavailable));
	json_object_object_add(mem, "samples", json_object_new_uint64(c->lines.pmu));
	json_object_object_add(o, "memory_sampling", mem);
	json_object_object_add(watch, "on", json_object_new_boolean(c->smp.watch_on));
	json_object_object_add(watch, "unavailable",
			       c->smp.watch_on ? NULL : json_object_new_string(c->smp.watch_unavailable));
	json_object_object_add(watch, "windows", json_object_new_uint64(c->smp.nwatch));
	json_object_object_add(o, "watchpoints", watch);
	json_object_object_add(o, "cache_lines", lines);
	return o;
}
