/* sampler.c — CPU-time and context-switch sampling from the launcher, the
 * way perf record does it (sampler.h; file format: docs/samples-format.md).
 *
 * Per CPU, two events filtered to the child's pid and inherited by all it
 * starts: the software cpu-clock, every period_ns of a thread's CPU time
 * (IP, tid, time, CPU, user call chain, user registers, a copy of the top
 * of the user stack, which unwind.c unwinds from DWARF call-frame
 * information where the kernel's frame-pointer chain stops); a dummy event
 * that records switches (context_switch: when each thread leaves and gets a
 * CPU, and whether it was preempted; they cost the program about a
 * microsecond per switch on the development VM, docs/performance.md, so by
 * default they stop past a budget: records_check); and the software
 * context-switch event in
 * frequency mode (about hz samples a second per CPU whatever the switch
 * rate, so a program that parks 100,000 times a second does not pay for
 * 100,000 call chains), whose user call chain says where a thread blocked.
 * Where the CPU offers memory-access sampling (Intel PEBS, AMD IBS), those
 * events too, with data addresses; and hardware write watchpoints on the
 * words the samples point at (watch.c). All write into one ring buffer per
 * CPU. Times are CLOCK_MONOTONIC, the profile's clock, so samples join the
 * profile by pid, tid and time.
 *
 * Inherited per-task events cannot be mmapped (the kernel refuses: every
 * child would write one buffer), hence one set per CPU. Where
 * perf_event_paranoid forbids kernel samples the events count user time
 * only (a thread inside a system call is not sampled) and the file says so.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "profile.h"
#include "sampler.h"
#include "samples.h"
#include "unwind.h"
#include "util.h"
#include "watch.h"

#define RING_PAGES 128            /* data pages per CPU: 512 KiB, ~0.5 s at the default rate */
#define MAX_FILES 256             /* processes with a file open at once */

/* The user registers recorded, in perf's x86-64 order (asm/perf_regs.h);
 * the segment registers but CS and SS are refused by the kernel. */
#if defined(__x86_64__)
#define SAMPLE_REGS_MASK 0xff0fffull
#define SAMPLE_REGS_NAMES "ax,bx,cx,dx,si,di,bp,sp,ip,flags,cs,ss,r8,r9,r10,r11,r12,r13,r14,r15"
#else
#define SAMPLE_REGS_MASK 0ull
#define SAMPLE_REGS_NAMES "-"
#endif

/* EV_CLOCK owns the ring; the others write into it (-1: not open). */
enum { EV_CLOCK, EV_SWITCH, EV_RECORDS, EV_MEM_A, EV_MEM_B, EV_COUNT };

/* Switch records within budget (SAMPLER_RECORDS_BUDGET): at about a
 * microsecond each, this many a second of the run costs the program about
 * 1% of one CPU; BURST lets a start-up flurry through. While the budget
 * watches, the drain looks every RECORDS_CHECK_MS, so a program that
 * switches hundreds of thousands of times a second pays for a few
 * milliseconds of records, not for a drain period's. */
#define RECORDS_PER_S 10000
#define RECORDS_BURST 1000
#define RECORDS_CHECK_MS 10

struct cpu_ring {
	int cpu;
	int fd[EV_COUNT];
	uint64_t id[EV_COUNT];
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	size_t size;                  /* of data: a power of two */
};

struct pid_file {
	pid_t pid;
	FILE *f;
};

struct sampler {
	pid_t pid;
	uint64_t period_ns;
	int user_only;
	int switch_samples;           /* the context-switch event opened */
	enum sampler_records records; /* switch records: off, within budget, always */
	uint64_t started_ns;          /* when draining began: the budget's clock */
	uint64_t records_off_ns;      /* when the budget stopped the records (0: never) */
	char mem_status[320];         /* the samples file's memory_sampling line */
	char watch_status[320];       /* ... and watchpoints line */
	unsigned stack_bytes;         /* of user stack copied per sample (0: none) */
	char stack_status[320];       /* the user_stacks line */
	struct unwinder *unwind;      /* NULL: the kernel's chains as they are */
	uint64_t stackless;           /* samples with no stack to unwind */
	uint64_t drain_cpu_ns;        /* CPU time spent draining */
	struct watcher *watch;        /* NULL: no watchpoints */
	struct cpu_ring *rings;
	int nrings;
	char dir[4096];
	struct pid_file files[MAX_FILES];
	int nfiles;
	pid_t *ended;                 /* a set (open addressing, 0 empty) of processes whose file was closed */
	size_t nended, capended;      /* ... when they ended; capended a power of two */
	uint64_t reclaim_ns;          /* when file_of last looked for ended processes and found none */
	uint64_t samples, switches, lost, unfiled;
	unsigned char *scratch;       /* a record that wraps the ring's end */
	int stop_pipe[2];
	pthread_t thread;
	int started;
};

static int perf_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void base_attr(struct perf_event_attr *a, int user_only)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN |
			 (SAMPLE_REGS_MASK ? PERF_SAMPLE_REGS_USER : 0);
	a->sample_regs_user = SAMPLE_REGS_MASK;
	a->exclude_callchain_kernel = 1;
	a->exclude_kernel = (unsigned)user_only;
	a->exclude_hv = 1;
	a->disabled = 1;
	a->enable_on_exec = 1;
	a->inherit = 1;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->watermark = 1;
	a->wakeup_watermark = RING_PAGES * 4096 / 4;
}

/* The switch records come from an event of their own (a dummy one, which
 * counts nothing), writing into the CPU's ring, so that the budget can turn
 * them off (records_check) while the samples go on. Left at -1 when off or
 * refused: the samples alone then say where threads blocked, not how long. */
static void open_records(struct sampler *s, struct cpu_ring *r, int cpu)
{
	if (s->records == SAMPLER_RECORDS_OFF)
		return;
	struct perf_event_attr a;
	base_attr(&a, s->user_only);
	a.config = PERF_COUNT_SW_DUMMY;
	a.sample_type &= ~(uint64_t)(PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_IP | PERF_SAMPLE_REGS_USER);
	a.context_switch = 1;
	r->fd[EV_RECORDS] = perf_open(&a, s->pid, cpu);
	if (r->fd[EV_RECORDS] >= 0 && ioctl(r->fd[EV_RECORDS], PERF_EVENT_IOC_SET_OUTPUT, r->fd[EV_CLOCK]) != 0) {
		close(r->fd[EV_RECORDS]);
		r->fd[EV_RECORDS] = -1;
	}
}

/* The copy of the user stack on the events whose chains unwind.c redoes. */
static void want_stack(const struct sampler *s, struct perf_event_attr *a)
{
	if (!s->stack_bytes)
		return;
	a->sample_type |= PERF_SAMPLE_STACK_USER;
	a->sample_stack_user = s->stack_bytes;
}

static int open_ring(struct sampler *s, struct cpu_ring *r, int cpu, char *why, size_t size)
{
	struct perf_event_attr a;
	r->cpu = cpu;
	base_attr(&a, s->user_only);
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = s->period_ns;
	want_stack(s, &a);
	/* An exec's records: the process's modules are another program's. */
	a.comm = a.comm_exec = s->stack_bytes != 0;
	r->fd[EV_CLOCK] = perf_open(&a, s->pid, cpu);
	if (r->fd[EV_CLOCK] < 0 && errno == EINVAL && s->stack_bytes) {
		snprintf(s->stack_status, sizeof(s->stack_status), "off perf_event_open refused user stacks of %u "
			 "bytes: %s", s->stack_bytes, strerror(errno));
		s->stack_bytes = 0;
		a.sample_type &= ~(uint64_t)PERF_SAMPLE_STACK_USER;
		a.sample_stack_user = 0;
		a.comm = a.comm_exec = 0;
		r->fd[EV_CLOCK] = perf_open(&a, s->pid, cpu);
	}
	if (r->fd[EV_CLOCK] < 0 && (errno == EACCES || errno == EPERM) && !s->user_only) {
		s->user_only = 1;   /* perf_event_paranoid >= 2 without CAP_PERFMON */
		a.exclude_kernel = 1;
		r->fd[EV_CLOCK] = perf_open(&a, s->pid, cpu);
	}
	if (r->fd[EV_CLOCK] < 0) {
		if (errno == ENODEV)
			return 1;   /* an offline CPU */
		int err = errno;
		FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
		int paranoid = 0;
		if (!f || fscanf(f, "%d", &paranoid) != 1)
			paranoid = -9;
		if (f)
			fclose(f);
		if (paranoid != -9)
			snprintf(why, size, "perf_event_open refused a cpu-clock event: %s (perf_event_paranoid is %d; "
				 "a container may forbid perf_event_open altogether)", strerror(err), paranoid);
		else
			snprintf(why, size, "perf_event_open refused a cpu-clock event: %s", strerror(err));
		return -1;
	}
	base_attr(&a, s->user_only);
	a.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	a.freq = 1;
	a.sample_freq = 1000000000ull / s->period_ns;
	want_stack(s, &a);
	r->fd[EV_SWITCH] = perf_open(&a, s->pid, cpu);
	size_t pagesz = (size_t)sysconf(_SC_PAGESIZE);
	r->size = RING_PAGES * pagesz;
	void *m = mmap(NULL, r->size + pagesz, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd[EV_CLOCK], 0);
	if (m == MAP_FAILED) {
		snprintf(why, size, "cannot map the sampling ring buffer: %s (perf_event_mlock_kb?)", strerror(errno));
		return -1;
	}
	r->meta = m;
	r->data = (unsigned char *)m + pagesz;
	if (r->fd[EV_SWITCH] >= 0 && ioctl(r->fd[EV_SWITCH], PERF_EVENT_IOC_SET_OUTPUT, r->fd[EV_CLOCK]) != 0) {
		close(r->fd[EV_SWITCH]);
		r->fd[EV_SWITCH] = -1;
	}
	open_records(s, r, cpu);
	for (int e = 0; e < EV_COUNT; e++)
		r->id[e] = r->fd[e] >= 0 && ioctl(r->fd[e], PERF_EVENT_IOC_ID, &r->id[e]) == 0 ? r->id[e] : UINT64_MAX;
	if (r->fd[EV_SWITCH] >= 0)
		s->switch_samples = 1;
	return 0;
}

static void close_rings(struct sampler *s)
{
	size_t pagesz = (size_t)sysconf(_SC_PAGESIZE);
	for (int i = 0; i < s->nrings; i++) {
		struct cpu_ring *r = &s->rings[i];
		if (r->meta)
			munmap(r->meta, r->size + pagesz);
		for (int e = 0; e < EV_COUNT; e++)
			if (r->fd[e] >= 0)
				close(r->fd[e]);
	}
	free(s->rings);
	s->rings = NULL;
	s->nrings = 0;
}

/* Reads a u64 from a record and moves on; 0 past its end. */
static uint64_t take(const unsigned char **p, const unsigned char *end)
{
	uint64_t v = 0;
	if (*p + 8 <= end)
		memcpy(&v, *p, 8);
	*p += 8;
	return v;
}

/* ---- memory-access sampling (a PMU) and watchpoints ---------------------- */

static FILE *file_of(struct sampler *s, pid_t pid);

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec t;
	clock_gettime(clock, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* Where the kernel lists its PMUs; CONVOY_PMU_DIR replaces it (a test
 * describes a CPU this machine is not). */
static const char *pmu_dir(void)
{
	const char *dir = getenv("CONVOY_PMU_DIR");
	return dir && *dir ? dir : "/sys/bus/event_source/devices";
}

/* Sets one term of a sysfs event ("umask=0x1") in a, the way perf does: the
 * PMU's format/NAME says which bits of which config field hold it
 * ("config:8-15", "config1:0-15", "config:0-7,32-35"). 0, or -1. */
static int apply_term(const char *pmu, const char *name, uint64_t value, struct perf_event_attr *a)
{
	char path[512], spec[128];
	snprintf(path, sizeof(path), "%s/%s/format/%s", pmu_dir(), pmu, name);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int ok = fscanf(f, "%127s", spec) == 1;
	fclose(f);
	char *colon = ok ? strchr(spec, ':') : NULL;
	if (!colon)
		return -1;
	*colon = '\0';
	__u64 *field = !strcmp(spec, "config") ? &a->config : !strcmp(spec, "config1") ? &a->config1
			  : !strcmp(spec, "config2") ? &a->config2 : NULL;
	if (!field)
		return -1;
	for (char *save = NULL, *range = strtok_r(colon + 1, ",", &save); range; range = strtok_r(NULL, ",", &save)) {
		unsigned lo, hi;
		int n = sscanf(range, "%u-%u", &lo, &hi);
		if (n == 1)
			hi = lo;
		else if (n != 2 || hi < lo || hi > 63)
			return -1;
		for (unsigned b = lo; b <= hi; b++, value >>= 1)
			*field = (*field & ~(1ull << b)) | ((value & 1) << b);
	}
	return 0;
}

/* The attr of PMU pmu's named event (pmu/events/event: "event=0xcd,
 * umask=0x1,ldlat=3"); 0, or -1 when it has none. */
static int sysfs_event(const char *pmu, const char *event, struct perf_event_attr *a)
{
	char path[512], terms[256];
	snprintf(path, sizeof(path), "%s/%s/type", pmu_dir(), pmu);
	FILE *f = fopen(path, "re");
	unsigned type;
	int ok = f && fscanf(f, "%u", &type) == 1;
	if (f)
		fclose(f);
	if (!ok)
		return -1;
	a->type = type;
	if (!event)
		return 0;   /* the PMU itself is the event (AMD's ibs_op) */
	snprintf(path, sizeof(path), "%s/%s/events/%s", pmu_dir(), pmu, event);
	if (!(f = fopen(path, "re")))
		return -1;
	ok = fscanf(f, "%255s", terms) == 1;
	fclose(f);
	for (char *save = NULL, *t = ok ? strtok_r(terms, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');
		uint64_t v = 1;
		if (eq) {
			*eq = '\0';
			v = strtoull(eq + 1, NULL, 0);
		}
		if (apply_term(pmu, t, v, a) != 0)
			return -1;
	}
	return ok ? 0 : -1;
}

/* The memory-access events this CPU offers: Intel's PEBS loads and stores
 * (cpu/mem-loads/, cpu/mem-stores/; cpu_core on hybrid parts), else AMD's
 * IBS op sampling, which tags loads and stores alike. Returns how many (0:
 * none), named in name. */
static int memory_events(struct perf_event_attr ev[2], char *name, size_t size)
{
	static const char *const intel[] = { "cpu", "cpu_core" };
	for (size_t i = 0; i < sizeof(intel) / sizeof(intel[0]); i++) {
		memset(ev, 0, 2 * sizeof(*ev));
		if (sysfs_event(intel[i], "mem-loads", &ev[0]) == 0) {
			int n = 1 + (sysfs_event(intel[i], "mem-stores", &ev[1]) == 0);
			snprintf(name, size, "%s/mem-loads/%s", intel[i], n == 2 ? " mem-stores" : "");
			ev[0].precise_ip = ev[1].precise_ip = 2;   /* PEBS: the address of the sampled access */
			return n;
		}
	}
	memset(ev, 0, 2 * sizeof(*ev));
	if (sysfs_event("ibs_op", NULL, &ev[0]) == 0) {
		snprintf(name, size, "ibs_op");
		return 1;
	}
	return 0;
}

static void close_memory_sampling(struct sampler *s)
{
	for (int i = 0; i < s->nrings; i++)
		for (int e = EV_MEM_A; e <= EV_MEM_B; e++) {
			if (s->rings[i].fd[e] >= 0)
				close(s->rings[i].fd[e]);
			s->rings[i].fd[e] = -1;
			s->rings[i].id[e] = UINT64_MAX;
		}
}

/* Opens the PMU's memory-access sampling into each CPU's ring, at about hz
 * samples a second; where the CPU has none (a VM without a PMU: this
 * project's machines) the status line says so and the cache lines rest on
 * the decoded CPU samples alone. */
static void open_memory_sampling(struct sampler *s, unsigned hz)
{
	struct perf_event_attr ev[2];
	char name[64];
	int n = memory_events(ev, name, sizeof(name));
	if (!n) {
		snprintf(s->mem_status, sizeof(s->mem_status), "off this CPU offers no memory-access sampling "
			 "(no cpu/mem-loads/ event for Intel PEBS, no ibs_op PMU for AMD IBS in %s)", pmu_dir());
		return;
	}
	for (int i = 0; i < s->nrings; i++) {
		struct cpu_ring *r = &s->rings[i];
		for (int k = 0; k < n; k++) {
			struct perf_event_attr a;
			base_attr(&a, s->user_only);
			a.type = ev[k].type;
			a.config = ev[k].config;
			a.config1 = ev[k].config1;
			a.config2 = ev[k].config2;
			a.precise_ip = ev[k].precise_ip;
			a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
					PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU | PERF_SAMPLE_DATA_SRC;
			a.sample_regs_user = 0;
			a.exclude_callchain_kernel = 0;
			a.freq = 1;
			a.sample_freq = hz ? hz : SAMPLER_DEFAULT_HZ;
			int fd = perf_open(&a, s->pid, r->cpu);
			r->fd[EV_MEM_A + k] = fd;
			if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd[EV_CLOCK]) != 0 ||
			    ioctl(fd, PERF_EVENT_IOC_ID, &r->id[EV_MEM_A + k]) != 0) {
				snprintf(s->mem_status, sizeof(s->mem_status), "off perf_event_open refused %s: %s", name,
					 strerror(errno));
				close_memory_sampling(s);   /* on every CPU or none */
				return;
			}
		}
	}
	snprintf(s->mem_status, sizeof(s->mem_status), "%s", name);
}

/* A memory sample: IDENTIFIER (taken), IP, TID, TIME, ADDR, CPU, DATA_SRC. */
static void on_memory_sample(struct sampler *s, const unsigned char *p, const unsigned char *end)
{
	uint64_t ip = take(&p, end);
	uint64_t pidtid = take(&p, end);
	uint64_t time = take(&p, end);
	uint64_t addr = take(&p, end);
	uint64_t cpu = take(&p, end);
	uint64_t src = take(&p, end);
	if (p > end || (int64_t)ip < 0 || !addr)
		return;   /* truncated, or a kernel access */
	FILE *f = file_of(s, (pid_t)(uint32_t)pidtid);
	if (!f) {
		s->unfiled++;
		return;
	}
	union perf_mem_data_src d = { .val = src };
	fprintf(f, "mem %llu %d %u %llx %llx %llx %s\n", (unsigned long long)time, (int)(uint32_t)(pidtid >> 32),
		(unsigned)(uint32_t)cpu, (unsigned long long)ip, (unsigned long long)addr, (unsigned long long)src,
		d.mem_op & PERF_MEM_OP_STORE ? "store" : "load");
}

static FILE *watch_file(void *ctx, pid_t pid)
{
	return file_of(ctx, pid);
}

static void drain_all(struct sampler *s);

static void watch_drain(void *ctx)
{
	drain_all(ctx);
}

/* CONVOY_WATCHPOINTS=0 turns them off (docs/performance.md: their cost). */
static void open_watchpoints(struct sampler *s)
{
	const char *env = getenv("CONVOY_WATCHPOINTS");
	char why[256];
	int ncpus = get_nprocs_conf(), *ring_fd = xcalloc((size_t)ncpus, sizeof(int));
	for (int c = 0; c < ncpus; c++)
		ring_fd[c] = -1;
	for (int i = 0; i < s->nrings; i++)
		if (s->rings[i].cpu < ncpus)
			ring_fd[s->rings[i].cpu] = s->rings[i].fd[EV_CLOCK];
	if (env && !strcmp(env, "0"))
		snprintf(why, sizeof(why), "turned off (CONVOY_WATCHPOINTS=0)");
	else if ((s->watch = watcher__open(s->pid, ring_fd, ncpus, watch_file, watch_drain, s, why, sizeof(why))))
		snprintf(why, sizeof(why), "on");
	snprintf(s->watch_status, sizeof(s->watch_status), "%s%s", s->watch ? "" : "off ", why);
	free(ring_fd);
}

/* A watchpoint's sample: IDENTIFIER (taken), TID, ADDR. */
static void on_watch_sample(struct sampler *s, const unsigned char *p, const unsigned char *end)
{
	uint64_t pidtid = take(&p, end);
	uint64_t addr = take(&p, end);
	if (p <= end)
		watcher__hit(s->watch, (pid_t)(uint32_t)pidtid, (pid_t)(uint32_t)(pidtid >> 32), addr);
}

/* The user stacks: on (their size) unless turned off, this launcher cannot
 * unwind them, or (open_ring) the kernel refuses them. */
static void open_unwinder(struct sampler *s, unsigned stack_bytes)
{
	char why[256];
	if (!stack_bytes)
		snprintf(s->stack_status, sizeof(s->stack_status), "off turned off (CONVOY_SAMPLE_STACK=0)");
	else if (!SAMPLE_REGS_MASK)
		snprintf(s->stack_status, sizeof(s->stack_status), "off no user registers sampled on this architecture");
	else if (!(s->unwind = unwinder__new(why, sizeof(why))))
		snprintf(s->stack_status, sizeof(s->stack_status), "off %s", why);
	else
		s->stack_bytes = stack_bytes;
}

struct sampler *sampler__open(pid_t pid, unsigned hz, enum sampler_records records, unsigned stack_bytes,
			      char *why, size_t size)
{
	struct sampler *s = xcalloc(1, sizeof(*s));
	s->pid = pid;
	s->records = records;
	open_unwinder(s, stack_bytes);
	s->period_ns = hz ? 1000000000ull / hz : 1000000ull;
	if (s->period_ns == 0)
		s->period_ns = 1;
	s->stop_pipe[0] = s->stop_pipe[1] = -1;
	int ncpu = get_nprocs_conf();
	s->rings = xcalloc((size_t)ncpu, sizeof(*s->rings));
	for (int cpu = 0; cpu < ncpu; cpu++) {
		struct cpu_ring *r = &s->rings[s->nrings];
		for (int e = 0; e < EV_COUNT; e++)
			r->fd[e] = -1;
		int rc = open_ring(s, r, cpu, why, size);
		if (rc < 0) {
			s->nrings++;
			close_rings(s);
			unwinder__free(s->unwind);
			free(s);
			return NULL;
		}
		if (rc == 0)
			s->nrings++;
	}
	if (s->nrings == 0) {
		snprintf(why, size, "no CPU accepted a sampling event");
		free(s->rings);
		unwinder__free(s->unwind);
		free(s);
		return NULL;
	}
	if (s->stack_bytes)
		snprintf(s->stack_status, sizeof(s->stack_status), "%u", s->stack_bytes);
	else if (s->unwind) {   /* the kernel refused them (open_ring) */
		unwinder__free(s->unwind);
		s->unwind = NULL;
	}
	s->scratch = xcalloc(1, 65536);
	open_memory_sampling(s, hz);
	open_watchpoints(s);
	return s;
}

/* The samples file of process pid. */
static const char *samples_path(const struct sampler *s, pid_t pid, char *path, size_t size)
{
	snprintf(path, size, "%s/convoy-%d.samples", s->dir, (int)pid);
	return path;
}

/* Whether process pid has ended (kill(pid, 0): signal.h's REG_ names clash
 * with samples.h's). A zombie has not: its parent may not have waited yet. */
static int ended(pid_t pid)
{
	return syscall(SYS_kill, pid, 0) != 0 && errno == ESRCH;
}

/* Whether process pid has ended or is a zombie: all its threads gone, its
 * parent not yet told (/proc/PID/stat: state Z with one thread; a main
 * thread that called pthread_exit is Z too while others run). */
static int ended_or_zombie(pid_t pid)
{
	if (ended(pid))
		return 1;
	char path[64], stat[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, stat, sizeof(stat) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	stat[n] = '\0';
	const char *after = strrchr(stat, ')');   /* past the name, which may hold anything */
	char state = 0;
	long threads = 0;   /* the 20th field, the 18th after the name */
	if (!after || sscanf(after, ") %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %ld", &state,
			     &threads) != 2)
		return 0;
	return (state == 'Z' || state == 'X') && threads <= 1;
}

/* The samples file of process pid if it is open, else NULL. */
static FILE *open_file(const struct sampler *s, pid_t pid)
{
	for (int i = 0; i < s->nfiles; i++)
		if (s->files[i].pid == pid)
			return s->files[i].f;
	return NULL;
}

static size_t ended_slot(const struct sampler *s, pid_t pid)
{
	size_t i = (size_t)((uint32_t)pid * 0x9E3779B9u) & (s->capended - 1);
	while (s->ended[i] && s->ended[i] != pid)
		i = (i + 1) & (s->capended - 1);
	return i;
}

static int in_ended(const struct sampler *s, pid_t pid)
{
	return s->capended && s->ended[ended_slot(s, pid)] == pid;
}

static void add_ended(struct sampler *s, pid_t pid)
{
	if (2 * (s->nended + 1) > s->capended) {   /* at most half full */
		pid_t *old = s->ended;
		size_t oldcap = s->capended;
		s->capended = oldcap ? 2 * oldcap : 256;
		s->ended = xcalloc(s->capended, sizeof(*s->ended));
		for (size_t i = 0; i < oldcap; i++)
			if (old[i])
				s->ended[ended_slot(s, old[i])] = old[i];
		free(old);
	}
	size_t i = ended_slot(s, pid);
	if (!s->ended[i]) {
		s->ended[i] = pid;
		s->nended++;
	}
}

/* A command that runs more processes than there are open files (a build, a
 * long script) leaves a file for each: when the table is full (or the
 * launcher has no descriptor left: force), the files of the processes
 * that ended are closed (their last lines come at the end, sampler__stop)
 * and their places taken by the new ones. While none has, looked for at
 * most every 50 ms (a look reads /proc for each: zombies count as ended).
 * Returns whether one had. */
static int reclaim_ended(struct sampler *s, int force)
{
	uint64_t now = now_ns();
	if (!force && now - s->reclaim_ns < 50000000)
		return 0;
	int kept = 0;
	for (int i = 0; i < s->nfiles; i++) {
		if (!ended_or_zombie(s->files[i].pid)) {
			s->files[kept++] = s->files[i];
			continue;
		}
		if (fclose(s->files[i].f) != 0)
			cv_error("sampling: cannot write the samples of process %d: %s", (int)s->files[i].pid,
				 strerror(errno));
		add_ended(s, s->files[i].pid);
	}
	int any = kept < s->nfiles;
	s->nfiles = kept;
	if (!any)
		s->reclaim_ns = now;
	return any;
}

static FILE *file_of(struct sampler *s, pid_t pid)
{
	FILE *f = open_file(s, pid);
	if (f)
		return f;
	if (s->nfiles == MAX_FILES && !reclaim_ended(s, 0))
		return NULL;
	char path[4200];
	/* A pid used again in the run (or a zombie's late records): they go on
	 * in the same file (the analyzer keeps those of its profile's lifetime). */
	int again = in_ended(s, pid);
	samples_path(s, pid, path, sizeof(path));
	f = fopen(path, again ? "ae" : "we");
	if (!f && (errno == EMFILE || errno == ENFILE) && reclaim_ended(s, 1))
		f = fopen(path, again ? "ae" : "we");
	if (!f)
		return NULL;
	if (!again)
		fprintf(f, "convoy-samples %d\npid %d\nperiod_ns %llu\nclock monotonic\nscope %s\nregs %s\n"
			"memory_sampling %s\nwatchpoints %s\nuser_stacks %s\n", SAMPLES_VERSION, (int)pid,
			(unsigned long long)s->period_ns, s->user_only ? "user" : "user+kernel", SAMPLE_REGS_NAMES,
			s->mem_status, s->watch_status, s->stack_status);
	s->files[s->nfiles].pid = pid;
	s->files[s->nfiles].f = f;
	s->nfiles++;
	return f;
}

static void write_hex_list(FILE *f, const uint64_t *v, size_t n)
{
	if (n == 0) {
		fputs(" -", f);
		return;
	}
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%c%llx", i ? ',' : ' ', (unsigned long long)v[i]);
}

static void on_sample(struct sampler *s, const struct cpu_ring *r, const unsigned char *p, const unsigned char *end)
{
	uint64_t id = take(&p, end);
	if (id == r->id[EV_MEM_A] || id == r->id[EV_MEM_B]) {
		on_memory_sample(s, p, end);
		return;
	}
	if (s->watch && watcher__owns(s->watch, id)) {
		on_watch_sample(s, p, end);
		return;
	}
	uint64_t ip = take(&p, end);
	uint64_t pidtid = take(&p, end);
	uint64_t time = take(&p, end);
	uint64_t cpu = take(&p, end);
	uint64_t nr = take(&p, end);
	if (p > end || nr > (uint64_t)(end - p) / 8)
		return;
	/* User frames only: the context markers are skipped, and the first
	 * user entry is the IP itself. */
	uint64_t chain[PERF_MAX_STACK_DEPTH];
	size_t n = 0;
	int first = 1;
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t pc = take(&p, end);
		if (pc >= (uint64_t)PERF_CONTEXT_MAX)
			continue;
		if (first) {
			first = 0;
			if (pc == ip)
				continue;   /* a user sample's chain starts with its IP */
		}
		if (n < PERF_MAX_STACK_DEPTH)
			chain[n++] = pc;
	}
	uint64_t regs[32];
	size_t nregs = 0;
	uint64_t abi = SAMPLE_REGS_MASK ? take(&p, end) : PERF_SAMPLE_REGS_ABI_NONE;
	if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
		nregs = (size_t)__builtin_popcountll(SAMPLE_REGS_MASK);
		for (size_t i = 0; i < nregs; i++)
			regs[i] = take(&p, end);
	}
	/* The user stack: its size (0 without user registers), the bytes, and
	 * how many of them the kernel could copy. */
	const unsigned char *stack = NULL;
	uint64_t stack_len = 0;
	if (s->stack_bytes) {
		uint64_t stack_size = take(&p, end);
		if (p > end || stack_size > (uint64_t)(end - p))
			return;
		stack = p;
		p += stack_size;
		if (stack_size)
			stack_len = take(&p, end);
		if (stack_len > stack_size)
			stack_len = stack_size;
	}
	if (p > end)
		return;
	pid_t pid = (pid_t)(uint32_t)pidtid, tid = (pid_t)(uint32_t)(pidtid >> 32);
	FILE *f = file_of(s, pid);
	if (!f) {
		s->unfiled++;
		return;
	}
	/* Taken in the kernel (a system call, a fault, the switch itself): the
	 * user position is where the thread entered it, the chain's first entry. */
	int in_kernel = (int64_t)ip < 0;
	if (in_kernel) {
		ip = n ? chain[0] : 0;
		if (n)
			memmove(chain, chain + 1, --n * sizeof(*chain));
	}
	/* A 32-bit process's registers are not x86-64's (unwind.c's order). */
	int cfi = 0;
	if (s->unwind && abi == PERF_SAMPLE_REGS_ABI_64 && stack_len) {
		struct unwind_sample u = { pid, tid, regs, stack, (size_t)stack_len };
		cfi = unwinder__chain(s->unwind, &u, chain, &n, PERF_MAX_STACK_DEPTH);
	} else if (s->unwind) {
		s->stackless++;
	}
	int is_switch = id == r->id[EV_SWITCH];
	s->samples += !is_switch;
	fprintf(f, "%s %llu %d %u %llx", is_switch ? "cs" : in_kernel ? "sys" : "cpu", (unsigned long long)time,
		(int)tid, (unsigned)(uint32_t)cpu, (unsigned long long)ip);
	write_hex_list(f, chain, n);
	write_hex_list(f, regs, nregs);
	fputs(cfi ? " cfi\n" : " fp\n", f);
	if (s->watch && !is_switch && !in_kernel && nregs)
		watcher__sample(s->watch, pid, ip, regs);
}

static void on_switch(struct sampler *s, uint16_t misc, const unsigned char *p, const unsigned char *end)
{
	/* sample_id: TID, TIME, CPU, IDENTIFIER */
	uint64_t pidtid = take(&p, end);
	uint64_t time = take(&p, end);
	uint64_t cpu = take(&p, end);
	if (p > end)
		return;
	FILE *f = file_of(s, (pid_t)(uint32_t)pidtid);
	if (!f) {
		s->unfiled++;
		return;
	}
	const char *what = !(misc & PERF_RECORD_MISC_SWITCH_OUT) ? "in"
			   : (misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) ? "preempted" : "out";
	s->switches++;
	fprintf(f, "%s %llu %d %u\n", what, (unsigned long long)time, (int)(uint32_t)(pidtid >> 32),
		(unsigned)(uint32_t)cpu);
}

static void drain(struct sampler *s, struct cpu_ring *r)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	while (tail + sizeof(struct perf_event_header) <= head) {
		size_t off = (size_t)(tail & (r->size - 1));
		struct perf_event_header h;
		for (size_t i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = r->data[(off + i) & (r->size - 1)];
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		const unsigned char *rec = r->data + off;
		if (off + h.size > r->size) {   /* wraps: copy it whole */
			size_t first = r->size - off;
			memcpy(s->scratch, r->data + off, first);
			memcpy(s->scratch + first, r->data, h.size - first);
			rec = s->scratch;
		}
		const unsigned char *body = rec + sizeof(h), *end = rec + h.size;
		if (h.type == PERF_RECORD_SAMPLE)
			on_sample(s, r, body, end);
		else if (h.type == PERF_RECORD_SWITCH)
			on_switch(s, h.misc, body, end);
		else if (h.type == PERF_RECORD_LOST)
			s->lost += body + 16 <= end ? ((const uint64_t *)body)[1] : 0;
		else if (h.type == PERF_RECORD_COMM && (h.misc & PERF_RECORD_MISC_COMM_EXEC) && s->unwind &&
			 body + 4 <= end)
			unwinder__forget(s->unwind, *(const int32_t *)body);   /* { u32 pid, tid; comm } */
		tail += h.size;
		/* Each record's space back to the kernel as soon as it is
		 * read: unwinding a sample takes microseconds, and the ring
		 * holds only some tens of samples with their stacks. */
		__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	}
}

static void drain_all(struct sampler *s)
{
	for (int i = 0; i < s->nrings; i++)
		drain(s, &s->rings[i]);
}

/* Within budget, the records stop once the run has had more than its share
 * (RECORDS_PER_S of its time so far, plus RECORDS_BURST): a program that
 * parks 100,000 times a second would otherwise pay a tenth of its time for
 * them. The time they stopped goes into every file: the analyzer times the
 * switches sampled before it. Disabling the event disables the copies the
 * program's threads and children inherited; a disabled event still costs
 * each context switch a little (about 0.2 µs, docs/performance.md), but
 * closing it costs far more: the kernel then tears down every inherited
 * copy while the program runs (a park-heavy run took 6× as long). */
static void records_check(struct sampler *s)
{
	if (s->records != SAMPLER_RECORDS_BUDGET || s->records_off_ns)
		return;
	uint64_t now = now_ns();
	if (s->switches <= RECORDS_BURST + (now - s->started_ns) / (1000000000ull / RECORDS_PER_S))
		return;
	for (int i = 0; i < s->nrings; i++)
		if (s->rings[i].fd[EV_RECORDS] >= 0)
			ioctl(s->rings[i].fd[EV_RECORDS], PERF_EVENT_IOC_DISABLE, 0);
	s->records_off_ns = now;
}

static void *drain_loop(void *arg)
{
	struct sampler *s = arg;
	struct pollfd *pf = xcalloc((size_t)s->nrings + 1, sizeof(*pf));
	for (int i = 0; i < s->nrings; i++)
		pf[i] = (struct pollfd){ .fd = s->rings[i].fd[EV_CLOCK], .events = POLLIN };
	pf[s->nrings] = (struct pollfd){ .fd = s->stop_pipe[0], .events = POLLIN };
	for (;;) {
		int timeout = s->records == SAMPLER_RECORDS_BUDGET && !s->records_off_ns ? RECORDS_CHECK_MS : 100;
		if (s->watch) {
			int due = watcher__tick(s->watch, now_ns());
			timeout = due < timeout ? due : timeout;
		}
		int n = poll(pf, (nfds_t)s->nrings + 1, timeout);
		if (n < 0 && errno != EINTR)
			break;
		drain_all(s);
		records_check(s);
		if (n > 0 && pf[s->nrings].revents)
			break;
		/* Every task the event followed has exited: it reports POLLHUP from
		 * now on, so poll it no more (what is left is drained at the stop). */
		for (int i = 0; i < s->nrings; i++)
			if (pf[i].revents & (POLLHUP | POLLERR))
				pf[i].fd = -1;
	}
	free(pf);
	s->drain_cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

int sampler__start(struct sampler *s, const char *dir, char *why, size_t size)
{
	snprintf(s->dir, sizeof(s->dir), "%s", dir);
	if (pipe2(s->stop_pipe, O_CLOEXEC) != 0) {
		snprintf(why, size, "pipe: %s", strerror(errno));
		return -1;
	}
	int rc = pthread_create(&s->thread, NULL, drain_loop, s);
	if (rc != 0) {
		snprintf(why, size, "cannot start the sampling thread: %s", strerror(rc));
		return -1;
	}
	s->started = 1;
	s->started_ns = now_ns();
	return 0;
}

static int by_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return x < y ? -1 : x > y;
}

/* The pids the profiles and snapshots at a hang in dir could be of, sorted,
 * into *pids (NULL when dir cannot be read). Their names are
 * convoy-<comm>-<pid>[-<n>].convoy or .hang, and a comm may hold dashes
 * and digits: every number between a dash and a dot or a dash counts. */
static size_t profiled_pids(const char *dir, pid_t **pids)
{
	DIR *d = opendir(dir);
	size_t n = 0, cap = 0;
	*pids = NULL;
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));) {
		const char *name = e->d_name;
		size_t len = strlen(name);
		if (strncmp(name, "convoy-", 7) ||
		    !((len > 7 && !strcmp(name + len - 7, "." CV_PROFILE_EXT)) ||
		      (len > 5 && !strcmp(name + len - 5, CV_SNAPSHOT_EXT))))
			continue;
		for (const char *c = name + 6; (c = strchr(c, '-'));) {
			char *end;
			long v = strtol(++c, &end, 10);
			if (end == c || (*end != '.' && *end != '-') || v <= 0 || v > INT_MAX)
				continue;
			if (n == cap)
				*pids = xrealloc(*pids, (cap = cap ? cap * 2 : 64) * sizeof(**pids));
			(*pids)[n++] = (pid_t)v;
		}
	}
	closedir(d);
	if (!*pids)
		*pids = xrealloc(NULL, sizeof(**pids));
	qsort(*pids, n, sizeof(**pids), by_pid);
	return n;
}

/* The samples of a process that ended without a profile are of no use: the
 * shim writes none for a process the command started that had nothing to
 * add (docs/lifecycle.md), a script's true or sed, and a directory of such
 * files beside one profile would only hide it. For a process that had
 * ended before dir was read into pids (NULL: dir could not be read, and
 * every file stays). Returns whether the file went. */
static int remove_unprofiled(struct sampler *s, const pid_t *pids, size_t n, pid_t pid)
{
	if (!pids || bsearch(&pid, pids, n, sizeof(*pids), by_pid))
		return 0;
	char path[4200];
	return unlink(samples_path(s, pid, path, sizeof(path))) == 0;
}

/* A file's last lines: counts of the whole run (docs/samples-format.md). */
static void finish_file(struct sampler *s, FILE *f, pid_t pid, const struct unwind_stats *u)
{
	if (s->records_off_ns)
		fprintf(f, "records_off %llu\n", (unsigned long long)s->records_off_ns);
	if (s->unwind)
		fprintf(f, "unwound %llu %llu %llu\n", (unsigned long long)u->cfi, (unsigned long long)u->kept,
			(unsigned long long)s->stackless);
	fprintf(f, "drain_cpu_ns %llu\n", (unsigned long long)s->drain_cpu_ns);
	fprintf(f, "end lost %llu switch_samples %s\n", (unsigned long long)s->lost, s->switch_samples ? "yes" : "no");
	if (fclose(f) != 0)
		cv_error("sampling: cannot write the samples of process %d: %s", (int)pid, strerror(errno));
}

void sampler__stop(struct sampler *s)
{
	if (!s)
		return;
	if (s->started) {
		char c = 0;
		if (write(s->stop_pipe[1], &c, 1) != 1)
			pthread_cancel(s->thread);
		pthread_join(s->thread, NULL);
	}
	for (int i = 0; i < s->nrings; i++)
		for (int e = 0; e < EV_COUNT; e++)
			if (s->rings[i].fd[e] >= 0)
				ioctl(s->rings[i].fd[e], PERF_EVENT_IOC_DISABLE, 0);
	uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	drain_all(s);
	s->drain_cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
	watcher__close(s->watch);
	struct unwind_stats u;
	unwinder__stats(s->unwind, &u);
	/* Which processes have ended, asked before the directory is read: one
	 * that ends in between has its profile there by then (helper-125). */
	int *gone = xcalloc((size_t)s->nfiles + s->capended + 1, sizeof(*gone));
	for (int i = 0; i < s->nfiles; i++)
		gone[i] = ended(s->files[i].pid);
	for (size_t i = 0; i < s->capended; i++)
		gone[s->nfiles + i] = s->ended[i] && !open_file(s, s->ended[i]) && ended(s->ended[i]);
	pid_t *pids;
	size_t npids = profiled_pids(s->dir, &pids);
	for (int i = 0; i < s->nfiles; i++) {
		finish_file(s, s->files[i].f, s->files[i].pid, &u);
		if (gone[i])
			remove_unprofiled(s, pids, npids, s->files[i].pid);
	}
	for (size_t i = 0; i < s->capended; i++) {
		pid_t pid = s->ended[i];
		if (!pid || open_file(s, pid) || (gone[s->nfiles + i] && remove_unprofiled(s, pids, npids, pid)))
			continue;
		char path[4200];
		FILE *f = fopen(samples_path(s, pid, path, sizeof(path)), "ae");
		if (f)
			finish_file(s, f, pid, &u);
		else
			cv_error("sampling: cannot finish the samples of process %d: %s", (int)pid, strerror(errno));
	}
	free(gone);
	free(pids);
	free(s->ended);
	if (s->unfiled)
		cv_error("sampling: %llu samples were dropped: their process had no samples file (more than %d "
			 "processes running at once, or no file descriptor left)",
			 (unsigned long long)s->unfiled, MAX_FILES);
	close_rings(s);
	for (int i = 0; i < 2; i++)
		if (s->stop_pipe[i] >= 0)
			close(s->stop_pipe[i]);
	unwinder__free(s->unwind);
	free(s->scratch);
	free(s);
}
