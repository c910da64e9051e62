/* fuzz_profile.c — libFuzzer harness for the profile reader and the layer
 * that consumes what it read: profile__parse() on the input, then, for a
 * profile it accepts, the module map (syms__load: layering, opening the files
 * the profile names) and every lookup the report makes with the profile's
 * own addresses (stack frames, object addresses, start routines). Built with
 * clang -fsanitize=fuzzer,address,undefined (tests/fuzz/fuzz.mk). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile.h"
#include "symbols.h"

/* The reader says why it rejects an input through the stderr stream: one
 * line per input would bury libFuzzer's own output, which (like the
 * sanitizers' reports) keeps going to file descriptor 2. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	FILE *null = getenv("FUZZ_VERBOSE") ? NULL : fopen("/dev/null", "w");
	if (null)
		stderr = null;
	return 0;
}

/* A mutation almost never keeps the end record's count and checksum right,
 * and the reader would reject it there, before the cross-reference and
 * value checks and the module layer ever see it. So the harness makes them
 * match, as a writer would have (the checksum test itself is in
 * tests/analyzer/robustness.c). */
static void fix_end_record(uint8_t *d, size_t n)
{
	struct cv_file_header fh;
	if (n < sizeof(fh))
		return;
	memcpy(&fh, d, sizeof(fh));
	uint64_t records = 0;
	for (size_t off = fh.header_size; off <= n && n - off >= sizeof(struct cv_rec_header); records++) {
		struct cv_rec_header h;
		memcpy(&h, d + off, sizeof(h));
		size_t payload = off + sizeof(h);
		if (h.size > n - payload)
			return;
		if (h.type == CV_REC_END && h.size >= sizeof(struct cv_end) && payload + h.size == n) {
			struct cv_end e = { .records = records, .pad = 0 };
			e.crc32 = (uint32_t)crc32(crc32(0, Z_NULL, 0), d, (uInt)payload);
			memcpy(d + payload, &e, sizeof(e));
			return;
		}
		off = payload + h.size;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	memcpy(copy, data, size);
	fix_end_record(copy, size);
	struct profile *p = profile__parse(copy, size, "fuzz-input");
	free(copy);
	if (!p)
		return 0;
	struct syms *s = syms__load(p, 1);
	char buf[512];
	uint64_t off;
	for (size_t i = 0; i < p->nstacks; i++)
		for (uint32_t d = 0; d < p->stacks[i].s.depth; d++) {
			const struct sym_frame *f;
			size_t n = syms__frames(s, p->stacks[i].pcs[d], p->stacks[i].s.map_gen, d > 0, &f);
			for (size_t k = 0; k < n; k++)
				syms__frame_label(&f[k], buf, sizeof(buf));
			syms__module_of(s, p->stacks[i].pcs[d], p->stacks[i].s.map_gen, &off);
		}
	for (size_t i = 0; i < p->nobjects; i++)
		syms__data_name(s, p->objects[i].o.addr, p->objects[i].o.map_gen, buf, sizeof(buf));
	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i].start_routine)
			syms__name(s, p->threads[i].start_routine, buf, sizeof(buf));
	syms__free(s);
	profile__free(p);
	return 0;
}
