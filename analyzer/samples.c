/* samples.c — reading a samples file (samples.h, docs/samples-format.md).
 *
 * Lines the reader does not know are skipped (later versions may add
 * kinds); a line it knows but cannot parse makes the file invalid. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "samples.h"
#include "util.h"

void samples__path(char *buf, size_t size, const char *profile_path, int32_t pid)
{
	const char *slash = strrchr(profile_path, '/');
	int dirlen = slash ? (int)(slash - profile_path) : 1;
	snprintf(buf, size, "%.*s/convoy-%d.samples", dirlen, slash ? profile_path : ".", (int)pid);
}

static void *grow(void *v, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return v;
	size_t n = *cap ? *cap * 2 : 256;
	while (n < need)
		n *= 2;
	*cap = n;
	return xrealloc(v, n * elem);
}

/* A comma-separated hex list, or "-": appended to out (at most max). */
static int hex_list(char *text, uint64_t *out, size_t max, size_t *n)
{
	*n = 0;
	if (!strcmp(text, "-"))
		return 0;
	for (char *save = NULL, *tok = strtok_r(text, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		errno = 0;
		uint64_t v = strtoull(tok, &end, 16);
		if (errno || *end || *n == max)
			return -1;
		out[(*n)++] = v;
	}
	return 0;
}

/* Version 4 added which unwinder made the chain (cfi or fp). */
static int parse_sample(struct samples *s, enum sample_kind kind, char *rest, int version, uint64_t from,
			uint64_t to, size_t *cap, size_t *pcap)
{
	char chain[16384], regs[1024], unwinder[8] = "fp";
	unsigned long long time, ip;
	int tid;
	unsigned cpu;
	int fields = sscanf(rest, "%llu %d %u %llx %16383s %1023s %7s", &time, &tid, &cpu, &ip, chain, regs, unwinder);
	if (fields != (version >= 4 ? 7 : 6) || (strcmp(unwinder, "fp") && strcmp(unwinder, "cfi")))
		return -1;
	uint64_t pcs[128];
	size_t npcs, nregs;
	struct sample x = { .time_ns = time, .tid = tid, .cpu = cpu, .kind = kind, .ip = ip,
			    .cfi = !strcmp(unwinder, "cfi") };
	if (hex_list(chain, pcs, 128, &npcs) || hex_list(regs, x.regs, SAMPLES_NREGS, &nregs) ||
	    (nregs && nregs != SAMPLES_NREGS))
		return -1;
	if (time < from || time > to)
		return 0;
	x.has_regs = nregs == SAMPLES_NREGS;
	x.chain = (uint32_t)s->npcs;
	x.nchain = (uint32_t)npcs;
	if (npcs) { /* an empty chain leaves s->pcs as it is (NULL until the first) */
		s->pcs = grow(s->pcs, pcap, s->npcs + npcs, sizeof(*s->pcs));
		memcpy(s->pcs + s->npcs, pcs, npcs * sizeof(*pcs));
		s->npcs += npcs;
	}
	s->v = grow(s->v, cap, s->n + 1, sizeof(*s->v));
	s->v[s->n++] = x;
	return 0;
}

static int parse_switch(struct samples *s, enum switch_kind kind, const char *rest, uint64_t from, uint64_t to,
			size_t *cap)
{
	unsigned long long time;
	int tid;
	unsigned cpu;
	if (sscanf(rest, "%llu %d %u", &time, &tid, &cpu) != 3)
		return -1;
	if (time < from || time > to)
		return 0;
	s->sw = grow(s->sw, cap, s->nsw + 1, sizeof(*s->sw));
	s->sw[s->nsw++] = (struct switch_rec){ time, tid, cpu, kind };
	return 0;
}

static int parse_mem(struct samples *s, const char *rest, uint64_t from, uint64_t to, size_t *cap)
{
	unsigned long long time, ip, addr, src;
	int tid;
	unsigned cpu;
	char op[8];
	if (sscanf(rest, "%llu %d %u %llx %llx %llx %7s", &time, &tid, &cpu, &ip, &addr, &src, op) != 7 ||
	    (strcmp(op, "load") && strcmp(op, "store")))
		return -1;
	if (time < from || time > to)
		return 0;
	s->mem = grow(s->mem, cap, s->nmem + 1, sizeof(*s->mem));
	s->mem[s->nmem++] = (struct mem_sample){ time, tid, cpu, ip, addr, src, op[0] == 's' };
	return 0;
}

/* Version 3 added the watchpoint's length; version 2's were 8 bytes. */
static int parse_watch(struct samples *s, const char *rest, int version, uint64_t from, uint64_t to, size_t *cap)
{
	unsigned long long time, addr, writes, running;
	unsigned len = 8;
	int tid;
	int fields = sscanf(rest, "%llu %d %llx %llu %llu %u", &time, &tid, &addr, &writes, &running, &len);
	if (fields != (version >= 3 ? 6 : 5) || (len != 1 && len != 2 && len != 4 && len != 8) || addr % len)
		return -1;
	if (time < from || time > to)
		return 0;
	s->watch = grow(s->watch, cap, s->nwatch + 1, sizeof(*s->watch));
	s->watch[s->nwatch++] = (struct watch_rec){ time, tid, addr, len, writes, running };
	return 0;
}

/* "NAME" or "off REASON..." (memory_sampling, watchpoints): 1 when on. */
static int on_or_why(const char *rest, char *name, size_t nsize, char *why, size_t wsize)
{
	if (!strncmp(rest, "off", 3) && (rest[3] == ' ' || !rest[3])) {
		snprintf(why, wsize, "%s", rest[3] ? rest + 4 : "no reason given");
		return 0;
	}
	if (name)
		snprintf(name, nsize, "%s", rest);
	return 1;
}

int samples__load(struct samples *s, const char *path, int32_t pid, uint64_t from_ns, uint64_t to_ns)
{
	memset(s, 0, sizeof(*s));
	FILE *f = cv_fopen_regular(path);
	if (!f)
		return errno == ENOENT ? 1 : (cv_error("cannot read %s: %s", path, strerror(errno)), -1);
	char line[20000];
	size_t cap = 0, pcap = 0, swcap = 0, mcap = 0, wcap = 0, lineno = 0;
	int version = 0, filepid = -1, rc = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		line[strcspn(line, "\n")] = '\0';
		char *rest = strchr(line, ' ');
		if (rest)
			*rest++ = '\0';
		else
			rest = line + strlen(line);
		int bad = 0;
		if (lineno == 1)
			bad = strcmp(line, "convoy-samples") || sscanf(rest, "%d", &version) != 1 || version < 1 ||
			      version > SAMPLES_VERSION;
		else if (!strcmp(line, "pid"))
			bad = sscanf(rest, "%d", &filepid) != 1 || filepid != pid;
		else if (!strcmp(line, "period_ns"))
			bad = sscanf(rest, "%llu", (unsigned long long *)&s->period_ns) != 1 || !s->period_ns;
		else if (!strcmp(line, "scope"))
			s->user_only = !strcmp(rest, "user");
		else if (!strcmp(line, "cpu") || !strcmp(line, "sys") || !strcmp(line, "cs"))
			bad = parse_sample(s, line[0] == 'c' && line[1] == 'p' ? SAMPLE_CPU : line[0] == 's' ? SAMPLE_SYS
					   : SAMPLE_SWITCH, rest, version, from_ns, to_ns, &cap, &pcap);
		else if (!strcmp(line, "in") || !strcmp(line, "out") || !strcmp(line, "preempted"))
			bad = parse_switch(s, line[0] == 'i' ? SWITCH_IN : line[0] == 'o' ? SWITCH_OUT : SWITCH_PREEMPTED,
					   rest, from_ns, to_ns, &swcap);
		else if (!strcmp(line, "records_off"))
			bad = sscanf(rest, "%llu", (unsigned long long *)&s->records_off_ns) != 1;
		else if (!strcmp(line, "memory_sampling"))
			on_or_why(rest, s->mem_source, sizeof(s->mem_source), s->mem_unavailable,
				  sizeof(s->mem_unavailable));
		else if (!strcmp(line, "watchpoints"))
			s->watch_on = on_or_why(rest, NULL, 0, s->watch_unavailable, sizeof(s->watch_unavailable));
		else if (!strcmp(line, "user_stacks"))
			bad = on_or_why(rest, NULL, 0, s->stack_unavailable, sizeof(s->stack_unavailable)) &&
			      (sscanf(rest, "%u", &s->stack_bytes) != 1 || !s->stack_bytes);
		else if (!strcmp(line, "unwound"))
			bad = !(s->has_unwound = sscanf(rest, "%llu %llu %llu", (unsigned long long *)&s->unwound_cfi,
							(unsigned long long *)&s->unwound_kept,
							(unsigned long long *)&s->unwound_stackless) == 3);
		else if (!strcmp(line, "drain_cpu_ns"))
			bad = sscanf(rest, "%llu", (unsigned long long *)&s->drain_cpu_ns) != 1;
		else if (!strcmp(line, "mem"))
			bad = parse_mem(s, rest, from_ns, to_ns, &mcap);
		else if (!strcmp(line, "watch"))
			bad = parse_watch(s, rest, version, from_ns, to_ns, &wcap);
		else if (!strcmp(line, "end")) {
			char yes[8];
			bad = sscanf(rest, "lost %llu switch_samples %7s", (unsigned long long *)&s->lost, yes) != 2;
			s->switch_samples = !bad && !strcmp(yes, "yes");
		}
		if (bad) {
			cv_error("%s:%zu: not a convoy samples file of process %d (versions 1 to %d)", path, lineno,
				 (int)pid, SAMPLES_VERSION);
			rc = -1;
			break;
		}
	}
	fclose(f);
	if (rc == 0 && (!version || filepid != pid || !s->period_ns)) {
		cv_error("%s: not a convoy samples file of process %d (versions 1 to %d)", path, (int)pid,
			 SAMPLES_VERSION);
		rc = -1;
	}
	s->pid = pid;
	if (version == 1) {   /* written before memory sampling and watchpoints existed */
		snprintf(s->mem_unavailable, sizeof(s->mem_unavailable), "not recorded (samples file version 1)");
		snprintf(s->watch_unavailable, sizeof(s->watch_unavailable), "not recorded (samples file version 1)");
	}
	if (rc)
		samples__free(s);
	return rc;
}

void samples__free(struct samples *s)
{
	free(s->v);
	free(s->sw);
	free(s->pcs);
	free(s->mem);
	free(s->watch);
	memset(s, 0, sizeof(*s));
}
