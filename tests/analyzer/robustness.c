/* The analyzer and broken input: a missing, empty, truncated, corrupted,
 * newer or random file is rejected with exactly one "convoy:" line on stderr
 * and a non-zero exit, and nothing on stdout; it never dies of a signal. */
#include <string.h>
#include <zlib.h>

#include "convoy/profile.h"
#include "testutil.h"

/* A real profile, from a small program run under the shim. */
static char *make_profile(size_t *len, unsigned char **data)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "exit_status", "0", NULL);
	tu_assert_exit(&p, 0, "exit_status");
	char *path = tu_only_profile(dir);
	if (data)
		*data = tu_read_file(path, len);
	return path;
}

/* Runs `convoy report [--json] path` and checks the rejection contract. */
static void expect_rejected(const char *path, bool json, const char *what, const char *expect_in_msg)
{
	struct tu_proc p;
	const char *argv[] = { tu_convoy(), "report", json ? "--json" : path, json ? path : NULL, NULL };
	tu_run(&p, NULL, argv);
	cr_assert(!p.signaled, "%s: convoy report died of signal %d (%s); stderr:\n%s", what, p.sig,
		  strsignal(p.sig), p.err);
	cr_assert(p.exited && p.code != 0, "%s: convoy report exited 0 (accepted it); stdout:\n%.500s", what, p.out);
	TU_EQ(tu_count_lines(p.err), 1, "%s: stderr lines (stderr: %s)", what, p.err);
	cr_assert(strncmp(p.err, "convoy: ", 8) == 0, "%s: stderr does not start with \"convoy: \": %s", what, p.err);
	TU_EQ(p.out_len, 0, "%s: stdout bytes (stdout: %.300s)", what, p.out);
	if (expect_in_msg)
		cr_assert(strstr(p.err, expect_in_msg), "%s: message \"%s\" lacks \"%s\"", what, p.err, expect_in_msg);
}

/* Accepted, or rejected by the contract above: never a crash, never a
 * half-written report. */
static void expect_handled(const char *path, const char *what)
{
	struct tu_proc p;
	const char *argv[] = { tu_convoy(), "report", "--json", path, NULL };
	tu_run(&p, NULL, argv);
	cr_assert(!p.signaled, "%s: convoy report died of signal %d (%s); stderr:\n%s", what, p.sig,
		  strsignal(p.sig), p.err);
	if (p.code == 0) {
		TU_EQ(p.err_len, 0, "%s: accepted, but printed on stderr: %s", what, p.err);
		json_object *r = json_tokener_parse(p.out);
		cr_assert(r && json_object_is_type(r, json_type_object), "%s: accepted, but stdout is not a JSON object", what);
		json_object_put(r);
	} else {
		TU_EQ(tu_count_lines(p.err), 1, "%s: stderr lines (stderr: %s)", what, p.err);
		cr_assert(strncmp(p.err, "convoy: ", 8) == 0, "%s: stderr: %s", what, p.err);
		TU_EQ(p.out_len, 0, "%s: stdout bytes", what);
	}
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

Test(robustness, missing_file, .timeout = 30)
{
	char *dir = tu_tmpdir(), path[4200];
	snprintf(path, sizeof(path), "%s/no-such.convoy", dir);
	expect_rejected(path, true, "missing file", "no-such.convoy");
	expect_rejected(path, false, "missing file (text)", NULL);
}

Test(robustness, empty_file_directory_and_device, .timeout = 30)
{
	char *dir = tu_tmpdir(), path[4200];
	snprintf(path, sizeof(path), "%s/empty.convoy", dir);
	tu_write_file(path, "", 0);
	expect_rejected(path, true, "empty file", NULL);
	expect_rejected(dir, true, "a directory", NULL);
	expect_rejected("/dev/null", true, "/dev/null", NULL);
}

/* Offsets where each record starts (the end record last). */
static size_t record_starts(const unsigned char *data, size_t len, size_t *starts, size_t max)
{
	struct cv_file_header fh;
	memcpy(&fh, data, sizeof(fh));
	size_t n = 0;
	for (size_t off = fh.header_size; off + sizeof(struct cv_rec_header) <= len && n < max;) {
		struct cv_rec_header h;
		memcpy(&h, data + off, sizeof(h));
		starts[n++] = off;
		off += sizeof(h) + h.size;
	}
	return n;
}

Test(robustness, truncated_every_97_bytes_and_at_record_edges, .timeout = 60)
{
	size_t len;
	unsigned char *data;
	make_profile(&len, &data);
	char *dir = tu_tmpdir(), path[4200];
	snprintf(path, sizeof(path), "%s/cut.convoy", dir);
	cr_assert(len > 200, "profile of %zu bytes", len);
	size_t starts[256], nrec = record_starts(data, len, starts, 256);
	cr_assert(nrec >= 3, "only %zu records", nrec);
	size_t cuts[512], ncuts = 0;
	for (size_t cut = 0; cut < len; cut += 97)
		cuts[ncuts++] = cut;
	for (size_t i = 0; i < nrec && ncuts + 3 < 512; i++)
		cuts[ncuts++] = starts[i] + (i % 2 ? 8 : 0);   /* whole records only, or inside a header */
	cuts[ncuts++] = len - 1;
	for (size_t i = 0; i < ncuts; i++) {
		char what[128];
		snprintf(what, sizeof(what), "profile cut to %zu of %zu bytes", cuts[i], len);
		tu_write_file(path, data, cuts[i]);
		expect_rejected(path, i % 2, what, NULL);
	}
}

Test(robustness, one_flipped_byte, .timeout = 60)
{
	size_t len;
	unsigned char *data;
	make_profile(&len, &data);
	char *dir = tu_tmpdir(), path[4200];
	snprintf(path, sizeof(path), "%s/flip.convoy", dir);
	/* One byte of each field of the file header and of the end record (its
	 * header and payload), the type or size of every record header, and
	 * every 151st byte. */
	size_t starts[256], nrec = record_starts(data, len, starts, 256);
	size_t at[1024], n = 0, end_rec = starts[nrec - 1];
	static const size_t header_bytes[] = { 0, 7, 8, 11, 12, 16, 23 };
	for (size_t i = 0; i < sizeof(header_bytes) / sizeof(header_bytes[0]); i++)
		at[n++] = header_bytes[i];
	for (size_t i = 0; i < nrec && n < 1024; i++)
		at[n++] = starts[i] + (i % 2 ? offsetof(struct cv_rec_header, size) : offsetof(struct cv_rec_header, type));
	for (size_t i = end_rec; i < len && n < 1024; i += 4)
		at[n++] = i;
	at[n++] = len - 1;
	for (size_t i = 30; i < end_rec && n < 1024; i += 151)
		at[n++] = i;
	for (size_t i = 0; i < n; i++) {
		unsigned char saved = data[at[i]];
		data[at[i]] ^= i % 2 ? 0x01 : 0x80;
		tu_write_file(path, data, len);
		data[at[i]] = saved;
		char what[128];
		snprintf(what, sizeof(what), "byte %zu of %zu flipped", at[i], len);
		expect_rejected(path, true, what, NULL);
	}
}

Test(robustness, newer_and_zero_version, .timeout = 30)
{
	size_t len;
	unsigned char *data;
	make_profile(&len, &data);
	char *dir = tu_tmpdir(), path[4200];
	snprintf(path, sizeof(path), "%s/version.convoy", dir);
	struct cv_file_header h;
	memcpy(&h, data, sizeof(h));
	TU_EQ(h.version, CV_PROFILE_VERSION, "the shim's profile version");
	static const uint32_t versions[] = { CV_PROFILE_VERSION + 1, 0x7fffffffu, 0xffffffffu };
	for (size_t i = 0; i < 3; i++) {
		h.version = versions[i];
		memcpy(data, &h, sizeof(h));
		tu_write_file(path, data, len);
		char what[128];
		snprintf(what, sizeof(what), "version %u", versions[i]);
		expect_rejected(path, true, what, "newer");
	}
	h.version = 0;
	memcpy(data, &h, sizeof(h));
	tu_write_file(path, data, len);
	expect_rejected(path, true, "version 0", NULL);
}

Test(robustness, random_garbage, .timeout = 60)
{
	char *dir = tu_tmpdir(), path[4200];
	snprintf(path, sizeof(path), "%s/garbage.convoy", dir);
	unsigned char buf[6000];
	for (int i = 0; i < 16; i++) {
		size_t len = 1 + rng() % sizeof(buf);
		for (size_t k = 0; k < len; k++)
			buf[k] = (unsigned char)rng();
		if (i >= 8 && len >= sizeof(struct cv_file_header)) {
			/* a valid file header, then garbage: the record walk must cope */
			struct cv_file_header h = { .version = CV_PROFILE_VERSION, .header_size = sizeof(h) };
			memcpy(h.magic, CV_PROFILE_MAGIC, 8);
			memcpy(buf, &h, sizeof(h));
		}
		tu_write_file(path, buf, len);
		char what[128];
		snprintf(what, sizeof(what), "garbage file %d (%zu bytes)", i, len);
		expect_rejected(path, i % 2, what, NULL);
	}
}

/* Mutations the checksum cannot see: change bytes inside the records, then
 * recompute the end record's CRC, so only the structural checks stand
 * between the bytes and the report. */
Test(robustness, mutated_records_with_valid_checksum, .timeout = 90)
{
	size_t len;
	unsigned char *orig;
	make_profile(&len, &orig);
	char *dir = tu_tmpdir(), path[4200];
	snprintf(path, sizeof(path), "%s/mutant.convoy", dir);
	size_t end_payload = len - sizeof(struct cv_end), body = end_payload - sizeof(struct cv_rec_header);
	unsigned char *data = malloc(len);
	static const unsigned char interesting[] = { 0x00, 0xff, 0x7f, 0x80, 0x01, 0x10 };
	for (int i = 0; i < 30; i++) {
		memcpy(data, orig, len);
		int n = 1 + (int)(rng() % 4);
		for (int k = 0; k < n; k++) {
			size_t at = sizeof(struct cv_file_header) + rng() % (body - sizeof(struct cv_file_header));
			data[at] = rng() % 2 ? (unsigned char)rng() : interesting[rng() % sizeof(interesting)];
		}
		uint32_t crc = (uint32_t)crc32(crc32(0, Z_NULL, 0), data, (uInt)end_payload);
		memcpy(data + end_payload + offsetof(struct cv_end, crc32), &crc, sizeof(crc));
		tu_write_file(path, data, len);
		char what[128];
		snprintf(what, sizeof(what), "mutant %d", i);
		expect_handled(path, what);
	}
}

/* Whole records deleted, duplicated or moved, with the end record's count
 * and checksum made to match: the cross-references must be checked. */
Test(robustness, records_deleted_duplicated_moved_with_valid_checksum, .timeout = 60)
{
	size_t len;
	unsigned char *orig;
	make_profile(&len, &orig);
	size_t starts[256], nrec = record_starts(orig, len, starts, 256) - 1;   /* without the end record */
	size_t end_rec = starts[nrec];
	char *dir = tu_tmpdir(), path[4200];
	snprintf(path, sizeof(path), "%s/shuffled.convoy", dir);
	unsigned char *data = malloc(len * 2);
	for (int i = 0; i < 12; i++) {
		size_t order[512], n = 0;
		for (size_t k = 0; k < nrec; k++)
			order[n++] = k;
		size_t a = rng() % nrec, b = rng() % nrec;
		switch (i % 3) {
		case 0: memmove(&order[a], &order[a + 1], (n - a - 1) * sizeof(*order)); n--; break;   /* delete */
		case 1: memmove(&order[b + 1], &order[b], (n - b) * sizeof(*order)); order[b] = a; n++; break;   /* duplicate */
		case 2: { size_t t = order[a]; order[a] = order[b]; order[b] = t; break; }   /* swap */
		}
		size_t off = starts[0];
		memcpy(data, orig, off);
		for (size_t k = 0; k < n; k++) {
			size_t r = order[k], rl = (r + 1 < nrec ? starts[r + 1] : end_rec) - starts[r];
			memcpy(data + off, orig + starts[r], rl);
			off += rl;
		}
		memcpy(data + off, orig + end_rec, sizeof(struct cv_rec_header));
		off += sizeof(struct cv_rec_header);
		struct cv_end e = { .records = n, .crc32 = (uint32_t)crc32(crc32(0, Z_NULL, 0), data, (uInt)off) };
		memcpy(data + off, &e, sizeof(e));
		off += sizeof(e);
		tu_write_file(path, data, off);
		char what[128];
		snprintf(what, sizeof(what), "records %s (%zu, %zu)", i % 3 == 0 ? "deleted" : i % 3 == 1 ? "duplicated" : "swapped", a, b);
		expect_handled(path, what);
	}
}
