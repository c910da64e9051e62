/* forge.c — profiles written record by record: forge.h. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "forge.h"
#include "testutil.h"

void forge_put(struct forge *f, const void *data, size_t n)
{
	if (f->len + n > f->cap) {
		f->cap = (f->len + n) * 2;
		f->buf = realloc(f->buf, f->cap);
		cr_assert(f->buf);
	}
	if (n)
		memcpy(f->buf + f->len, data, n);
	f->len += n;
}

void forge_record(struct forge *f, uint32_t type, const void *fixed, size_t fixed_len, const void *tail,
		  size_t tail_len)
{
	size_t size = (fixed_len + tail_len + 7) & ~(size_t)7;
	struct cv_rec_header h = { .type = type, .size = (uint32_t)size, .fixed = (uint32_t)fixed_len };
	forge_put(f, &h, sizeof(h));
	forge_put(f, fixed, fixed_len);
	forge_put(f, tail, tail_len);
	static const unsigned char zeros[8];
	forge_put(f, zeros, size - fixed_len - tail_len);
	f->records++;
}

void forge_begin(struct forge *f, const char *comm)
{
	memset(f, 0, sizeof(*f));
	struct cv_file_header fh = { .version = CV_PROFILE_VERSION, .header_size = sizeof(fh) };
	memcpy(fh.magic, CV_PROFILE_MAGIC, 8);
	forge_put(f, &fh, sizeof(fh));
	struct cv_process p = { .pid = 100, .ppid = 1, .start_ns = 1000000000, .end_ns = 2000000000,
				.exit_reason = CV_EXIT_NORMAL, .hold_sample_period = 1, .ncpus = 2, .cpus_allowed = 2 };
	memcpy(p.comm, comm, strnlen(comm, sizeof(p.comm)));
	forge_record(f, CV_REC_PROCESS, &p, sizeof(p), NULL, 0);
}

struct cv_thread_rec forge_thread(uint32_t index, const char *name)
{
	struct cv_thread_rec t = { .index = index, .tid = 100 + (int32_t)index, .start_ns = 1000000000,
				   .end_ns = 2000000000, .cpu_ns = 500000000, .flags = index ? 0 : CV_THREAD_MAIN };
	memcpy(t.name, name, strnlen(name, sizeof(t.name)));
	return t;
}

void forge_add_thread(struct forge *f, const struct cv_thread_rec *t)
{
	forge_record(f, CV_REC_THREAD, t, sizeof(*t), NULL, 0);
}

struct cv_object forge_object(uint32_t id, uint32_t kind)
{
	return (struct cv_object){ .id = id, .kind = kind, .addr = 0x1000 + 64 * id };
}

void forge_add_object(struct forge *f, struct cv_object o, const char *name, const struct cv_stats *st)
{
	o.name_len = (uint32_t)strlen(name);
	forge_record(f, CV_REC_OBJECT, &o, sizeof(o), name, strlen(name));
	struct cv_stats s = st ? *st : (struct cv_stats){ .acquisitions = 1000, .contended = 100, .waits = 100,
							  .wait_ns = 100000000, .max_wait_ns = 5000000,
							  .hold_samples = 1000, .hold_ns = 2000000 };
	s.object = o.id;
	for (uint32_t t = 0; t < 2; t++) {
		s.thread = t;
		forge_record(f, CV_REC_STATS, &s, sizeof(s), NULL, 0);
	}
}

void forge_add_lock(struct forge *f, uint32_t id, const char *name, const struct cv_stats *st)
{
	forge_add_object(f, forge_object(id, CV_OBJ_MUTEX), name, st);
}

char *forge_write_as(struct forge *f, const char *name)
{
	struct cv_rec_header h = { .type = CV_REC_END, .size = sizeof(struct cv_end), .fixed = sizeof(struct cv_end) };
	forge_put(f, &h, sizeof(h));
	struct cv_end e = { .records = f->records };
	e.crc32 = (uint32_t)crc32(crc32(0, Z_NULL, 0), f->buf, (uInt)f->len);
	forge_put(f, &e, sizeof(e));
	char *path = malloc(4200);
	snprintf(path, 4200, "%s/%s.convoy", tu_tmpdir(), name);
	tu_write_file(path, f->buf, f->len);
	const char *keep = getenv("FORGE_KEEP");
	if (keep) {
		char copy[4200];
		bool one = !strcmp(name, "forged");   /* forge_write's: the test's only profile */
		snprintf(copy, sizeof(copy), "%s/%s%s%s.convoy", keep, criterion_current_test->name, one ? "" : "-",
			 one ? "" : name);
		tu_write_file(copy, f->buf, f->len);
	}
	free(f->buf);
	return path;
}

char *forge_write(struct forge *f)
{
	return forge_write_as(f, "forged");
}

void forge_two_threads(struct forge *f, const char *comm, const char *thread_name)
{
	forge_begin(f, comm);
	struct cv_thread_rec t0 = forge_thread(0, "main"), t1 = forge_thread(1, thread_name);
	forge_add_thread(f, &t0);
	forge_add_thread(f, &t1);
}

void forge_ordinary(struct forge *f, const char *comm, const char *thread_name, const char *lock_name)
{
	forge_two_threads(f, comm, thread_name);
	forge_add_lock(f, 0, lock_name, NULL);
}
