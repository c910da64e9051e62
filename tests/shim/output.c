/* The profile file: where it goes, who may read it, and that a hostile
 * directory (links, FIFOs, files already at its names) cannot turn the
 * shim's write against the user or hang the program. */
#include <errno.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "convoy/profile.h"
#include "testutil.h"

static void assert_no_temporary_files(const char *dir, size_t planted)
{
	TU_EQ(tu_count_entries(dir, "", ".tmp", NULL), planted, "*.tmp files in %s (only the planted ones may remain)", dir);
}

Test(output, a_profile_is_readable_only_by_its_owner, .timeout = 30)
{
	struct tu_proc p;
	char *dir = tu_tmpdir();
	mode_t old = umask(0);   /* the child inherits it: any restriction must be the shim's */
	tu_run_shim(&p, dir, "exit_status", "0", NULL);
	umask(old);
	tu_assert_exit(&p, 0, "exit_status");
	struct stat st;
	char *file = tu_only_profile(dir);
	cr_assert(lstat(file, &st) == 0 && S_ISREG(st.st_mode), "%s is not a regular file", file);
	TU_EQ(st.st_mode & 07777, 0600, "mode of %s (octal %o)", file, st.st_mode & 07777);
	assert_no_temporary_files(dir, 0);
}

static void run_plant(struct tu_proc *p, const char *dir, const char *kind, bool shim)
{
	const char *argv[] = { tu_prog("plant_names"), dir, kind, NULL };
	struct tu_opts o = { .preload = shim, .dir = dir, .quiet = true, .timeout_s = 15 };
	tu_run(p, &o, argv);
}

Test(output, a_link_or_fifo_at_the_profile_names_is_left_alone, .timeout = 60)
{
	struct tu_proc native, shim;
	char *ndir = tu_tmpdir(), *sdir = tu_tmpdir(), target[4200];
	run_plant(&native, ndir, "link", false);
	snprintf(target, sizeof(target), "%s/target", sdir);
	tu_write_file(target, "untouched", 9);
	run_plant(&shim, sdir, "link", true);
	cr_assert(!shim.timed_out, "the program hung at exit under the shim (a FIFO at the temporary name?)");
	tu_assert_exit(&native, 0, "plant_names natively");
	tu_assert_exit(&shim, 0, "plant_names under the shim");
	TU_STREQ(shim.out, native.out, "stdout");

	size_t len;
	unsigned char *data = tu_read_file(target, &len);
	cr_assert(len == 9 && memcmp(data, "untouched", 9) == 0, "the link's target was written: %zu bytes", len);
	char *fifo = NULL, *profile = NULL;
	TU_EQ(tu_count_entries(sdir, "convoy-plant_names-", ".convoy", NULL), 2, "convoy-plant_names-*.convoy in %s", sdir);
	TU_EQ(tu_count_entries(sdir, "convoy-plant_names-", ".convoy.tmp", &fifo), 1, "the planted FIFO");
	TU_EQ(tu_count_entries(sdir, "convoy-plant_names-", "-1.convoy", &profile), 1, "a profile under the next free name");
	struct stat st;
	cr_assert(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "%s is no longer the planted FIFO", fifo);
	cr_assert(lstat(profile, &st) == 0 && S_ISREG(st.st_mode), "%s is not a regular file", profile);
	TU_EQ(st.st_mode & 077, 0, "group/other mode bits of %s", profile);
	json_object_put(tu_report(profile));
	assert_no_temporary_files(sdir, 1);
}

Test(output, a_file_at_the_profile_name_is_not_replaced, .timeout = 60)
{
	struct tu_proc shim;
	char *dir = tu_tmpdir();
	run_plant(&shim, dir, "file", true);
	tu_assert_exit(&shim, 0, "plant_names under the shim");
	TU_STREQ(shim.out, "planted file\n", "stdout");
	char *planted = NULL, *profile = NULL;
	TU_EQ(tu_count_entries(dir, "convoy-plant_names-", ".convoy", NULL), 2, "convoy-plant_names-*.convoy in %s", dir);
	TU_EQ(tu_count_entries(dir, "convoy-plant_names-", "-1.convoy", &profile), 1, "a profile under the next free name");
	size_t len;
	char *base = strdup(profile);
	strcpy(strstr(base, "-1.convoy"), ".convoy");
	planted = (char *)tu_read_file(base, &len);
	cr_assert(len == 7 && memcmp(planted, "planted", 7) == 0, "the planted file %s was replaced", base);
	json_object_put(tu_report(profile));
	assert_no_temporary_files(dir, 0);
}

Test(output, a_daemon_that_chdirs_writes_where_it_started, .timeout = 30)
{
	struct tu_proc p;
	char *start = tu_tmpdir(), *away = tu_tmpdir();
	const char *argv[] = { tu_prog("chdir_away"), away, NULL };
	struct tu_opts o = { .preload = true, .cwd = start, .quiet = true };
	tu_run(&p, &o, argv);
	tu_assert_exit(&p, 0, "chdir_away");
	free(tu_only_profile(start));
	TU_EQ(tu_count_entries(away, "", "", NULL), 2, "entries in the directory it moved to (. and ..)");
}

Test(output, a_relative_convoy_dir_is_resolved_at_start, .timeout = 30)
{
	struct tu_proc p;
	char *start = tu_tmpdir(), *away = tu_tmpdir(), sub[4200], asub[4200];
	snprintf(sub, sizeof(sub), "%s/profiles", start);
	snprintf(asub, sizeof(asub), "%s/profiles", away);
	cr_assert(mkdir(sub, 0700) == 0 && mkdir(asub, 0700) == 0, "mkdir: %s", strerror(errno));
	const char *argv[] = { tu_prog("chdir_away"), away, NULL };
	struct tu_opts o = { .preload = true, .cwd = start, .dir = "profiles", .quiet = true };
	tu_run(&p, &o, argv);
	tu_assert_exit(&p, 0, "chdir_away");
	free(tu_only_profile(sub));
	TU_EQ(tu_count_entries(asub, "", "", NULL), 2, "entries in %s", asub);
}

Test(output, a_file_that_became_fd_2_gets_nothing_from_the_shim, .timeout = 30)
{
	char *dir = tu_tmpdir();
	for (int shim = 0; shim <= 1; shim++) {
		struct tu_proc p;
		char data[4200];
		snprintf(data, sizeof(data), "%s/data-%d", dir, shim);
		const char *argv[] = { tu_prog("daemon_stderr"), data, NULL };
		struct tu_opts o = { .preload = shim, .dir = dir };   /* not quiet: the shim would speak */
		tu_run(&p, &o, argv);
		tu_assert_exit(&p, 0, shim ? "daemon_stderr under the shim" : "daemon_stderr natively");
		size_t len;
		char *text = (char *)tu_read_file(data, &len);
		TU_STREQ(text, "data line\n", "the data file %s (%s)", data, shim ? "under the shim" : "natively");
	}
	free(tu_only_profile(dir));
}

/* A filesystem of 16 pages in a mount namespace of this test process alone
 * (its children inherit it; it goes away with the process). */
static bool small_filesystem(const char *dir, char *why, size_t why_len)
{
	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("convoy-test", dir, "tmpfs", 0, "size=64k,mode=0700") != 0) {
		snprintf(why, why_len, "cannot mount a 64 KiB tmpfs on %s (%s): the test needs CAP_SYS_ADMIN",
			 dir, strerror(errno));
		return false;
	}
	return true;
}

/* The profile is written unnamed and linked by /proc/thread-self/fd; where
 * /proc cannot name it (here a mount namespace with an empty tmpfs on
 * /proc) the writer falls back to a temporary name and a rename, and the
 * profile is still there, whole, with nothing else left. */
Test(output, without_proc_the_profile_is_written_under_a_temporary_name_first, .timeout = 60)
{
	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("convoy-test", "/proc", "tmpfs", 0, "size=4k,mode=0555") != 0)
		cr_skip_test("cannot hide /proc in a mount namespace (%s): the test needs CAP_SYS_ADMIN", strerror(errno));
	cr_assert(access("/proc/thread-self/fd", F_OK) != 0, "/proc is still there");
	struct tu_proc p;
	char *dir = tu_tmpdir();
	tu_run_shim(&p, dir, "exit_status", "0", NULL);
	tu_assert_exit(&p, 0, "exit_status");
	/* Without /proc/self/exe the lock has no name: its count says it is there. */
	json_object *locks = tu_array(tu_report(tu_only_profile(dir)), "locks");
	TU_EQ(json_object_array_length(locks), 1, "locks");
	TU_EQ(tu_int(json_object_array_get_idx(locks, 0), "acquisitions"), 100, "exit_lock's acquisitions");
	assert_no_temporary_files(dir, 0);
}

Test(output, program_output_takes_the_disk_before_the_profile, .timeout = 60)
{
	char *dir = tu_tmpdir(), why[4400];
	if (!small_filesystem(dir, why, sizeof(why)))
		cr_skip_test("%s", why);
	for (int shim = 0; shim <= 1; shim++) {
		struct tu_proc p;
		char out[4200];
		snprintf(out, sizeof(out), "%s/out", dir);
		const char *argv[] = { tu_prog("fill_stdout"), out, "63000", NULL };
		struct tu_opts o = { .preload = shim, .dir = dir };
		tu_run(&p, &o, argv);
		tu_assert_exit(&p, 0, shim ? "fill_stdout under the shim" : "fill_stdout natively");
		struct stat st;
		cr_assert(stat(out, &st) == 0, "stat %s: %s", out, strerror(errno));
		TU_EQ(st.st_size, 63000, "bytes of output %s", shim ? "under the shim" : "natively");
		cr_assert(unlink(out) == 0, "unlink %s", out);
		if (shim) {
			TU_EQ(tu_count_lines(p.err), 1, "stderr lines (stderr: %s)", p.err);
			cr_assert(strncmp(p.err, "convoy: cannot write profile", 28) == 0 &&
				  strstr(p.err, "No space left on device"), "stderr: %s", p.err);
			size_t n;
			tu_profiles(dir, &n);
			TU_EQ(n, 0, "profiles on the full filesystem");
			assert_no_temporary_files(dir, 0);
		}
	}
	umount2(dir, MNT_DETACH);   /* so that the directory under it can be removed */
}

/* stdout and stderr on one file in the profile's directory: the shim's
 * destructor leaves stdout's last buffer where it is (it once flushed it
 * to give the program's output the disk first), so a library destructor
 * that runs after the shim's still writes before it (helper-111). */
Test(output, output_after_the_shims_destructor_keeps_its_order, .timeout = 30)
{
	char *dir = tu_tmpdir(), cmd[4400];
	for (int shim = 0; shim <= 1; shim++) {
		snprintf(cmd, sizeof(cmd), "exec %s >%s/out%d 2>&1", tu_prog("dtor_order"), dir, shim);
		const char *argv[] = { "/bin/sh", "-c", cmd, NULL };
		struct tu_opts o = { .preload = shim, .dir = dir, .quiet = true };
		struct tu_proc p;
		tu_run(&p, &o, argv);
		tu_assert_exit(&p, 0, shim ? "dtor_order under the shim" : "dtor_order natively");
	}
	char path[4400];
	size_t len;
	snprintf(path, sizeof(path), "%s/out0", dir);
	char *native = (char *)tu_read_file(path, &len);
	snprintf(path, sizeof(path), "%s/out1", dir);
	char *shim = (char *)tu_read_file(path, &len);
	cr_assert(strcmp(native, "libdtorsay: destructor, on stderr\nmain: on stdout\n") == 0, "natively:\n%s", native);
	cr_assert(strcmp(native, shim) == 0, "natively:\n%s\nunder the shim:\n%s", native, shim);
	size_t n;
	tu_profiles(dir, &n);
	TU_EQ(n, 1, "profiles");
}

Test(output, a_file_size_limit_does_not_end_the_program, .timeout = 30)
{
	struct tu_proc native, shim;
	char *dir = tu_tmpdir();
	const char *argv[] = { tu_prog("fsize_limit"), "512", NULL };
	tu_run(&native, &(struct tu_opts){ .dir = dir }, argv);
	tu_run(&shim, &(struct tu_opts){ .preload = true, .dir = dir }, argv);
	tu_assert_exit(&native, 3, "fsize_limit natively");
	tu_assert_exit(&shim, 3, "fsize_limit under the shim");
	TU_STREQ(shim.out, native.out, "stdout");
	TU_EQ(tu_count_lines(shim.err), 1, "stderr lines (stderr: %s)", shim.err);
	cr_assert(strstr(shim.err, "convoy: cannot write profile") && strstr(shim.err, "File too large"),
		  "stderr: %s", shim.err);
	assert_no_temporary_files(dir, 0);
}

/* Every bad setting the shim reads, and a directory it cannot write to,
 * each with what its warning must name. */
static const struct { const char *setting, *named; } bad_settings[] = {
	{ "CONVOY_PERF=bogus", "CONVOY_PERF=bogus" },
	{ "CONVOY_HOLD_SAMPLE=3", "CONVOY_HOLD_SAMPLE=3" },
	{ "CONVOY_STACKS=off", "CONVOY_STACKS=off" },
	{ "CONVOY_STACK_STATS=yes", "CONVOY_STACK_STATS=yes" },
	{ "CONVOY_STACK_FIRST=-1", "CONVOY_STACK_FIRST=-1" },
	{ "CONVOY_STACK_PERIOD=0", "CONVOY_STACK_PERIOD=0" },
	{ "CONVOY_FOLLOW=maybe", "CONVOY_FOLLOW=maybe" },
	{ "CONVOY_DIR=/nonexistent/dir", "/nonexistent/dir" },
};
#define NBAD (sizeof(bad_settings) / sizeof(bad_settings[0]))

static void run_with_bad_settings(struct tu_proc *p, bool quiet)
{
	const char *env[NBAD + 2];
	for (size_t i = 0; i < NBAD; i++)
		env[i] = bad_settings[i].setting;
	env[NBAD] = quiet ? "CONVOY_QUIET=1" : "CONVOY_QUIET";
	env[NBAD + 1] = NULL;
	const char *argv[] = { tu_prog("exit_status"), "4", NULL };
	tu_run(p, &(struct tu_opts){ .preload = true, .env = env }, argv);
}

Test(quiet, quiet_silences_bad_settings_and_an_unwritable_dir, .timeout = 30)
{
	struct tu_proc native, shim;
	const char *argv[] = { tu_prog("exit_status"), "4", NULL };
	tu_run(&native, &(struct tu_opts){ 0 }, argv);
	run_with_bad_settings(&shim, true);
	tu_assert_exit(&shim, 4, "exit_status under the shim");
	TU_STREQ(shim.out, native.out, "stdout");
	TU_EQ(shim.err_len, 0, "stderr bytes with CONVOY_QUIET=1 (stderr: %s)", shim.err);
}

Test(quiet, each_bad_setting_gets_one_warning, .timeout = 30)
{
	struct tu_proc shim;
	run_with_bad_settings(&shim, false);
	tu_assert_exit(&shim, 4, "exit_status under the shim");
	for (size_t i = 0; i < NBAD; i++) {
		const char *hit = strstr(shim.err, bad_settings[i].named);
		cr_assert(hit, "no warning names %s; stderr:\n%s", bad_settings[i].named, shim.err);
		cr_assert(!strstr(hit + 1, bad_settings[i].named), "%s is named twice; stderr:\n%s",
			  bad_settings[i].named, shim.err);
	}
	TU_EQ(tu_count_lines(shim.err), NBAD, "stderr lines (stderr:\n%s)", shim.err);
	for (const char *line = shim.err; *line; line = strchr(line, '\n') + 1)
		cr_assert(strncmp(line, "convoy: ", 8) == 0, "a line without \"convoy: \": %s", line);
}

/* The shim writes each stats record only up to its last counter that is
 * not zero (preload/output.c); a reader zero-fills a shorter fixed struct
 * (include/convoy/profile.h). So the report must be the one the same
 * records give written whole: the profile is rewritten here with every
 * stats record padded to a whole struct cv_stats, and both reported. */
Test(output, stats_records_cut_after_their_last_counter_read_as_written_whole, .timeout = 60)
{
	char *dir = tu_tmpdir();
	struct tu_proc p;
	tu_run_shim(&p, dir, "count_cond", NULL);
	tu_assert_exit(&p, 0, "count_cond");
	char *cut = tu_only_profile(dir);
	size_t len, whole_len = 0, shorter = 0, nrecords = 0;
	unsigned char *d = tu_read_file(cut, &len);
	for (size_t at = sizeof(struct cv_file_header); at + sizeof(struct cv_rec_header) <= len; nrecords++) {
		struct cv_rec_header h;
		memcpy(&h, d + at, sizeof(h));
		at += sizeof(h) + h.size;
	}
	unsigned char *whole = calloc(1, len + nrecords * sizeof(struct cv_stats));   /* each record at most whole */
	cr_assert(whole);
	size_t off = sizeof(struct cv_file_header);
	memcpy(whole, d, off);
	whole_len = off;
	while (off + sizeof(struct cv_rec_header) <= len) {
		struct cv_rec_header h;
		memcpy(&h, d + off, sizeof(h));
		if (h.type == CV_REC_END) {
			memcpy(whole + whole_len, d + off, sizeof(h) + h.size);
			uint32_t crc = (uint32_t)crc32(crc32(0, Z_NULL, 0), whole, (uInt)(whole_len + sizeof(h)));
			memcpy(whole + whole_len + sizeof(h) + offsetof(struct cv_end, crc32), &crc, sizeof(crc));
			whole_len += sizeof(h) + h.size;
			break;
		}
		if (h.type == CV_REC_STATS) {
			cr_assert(h.fixed == h.size && h.fixed <= sizeof(struct cv_stats) && h.fixed % 8 == 0,
				  "a stats record of %u bytes, %u of them its struct", h.size, h.fixed);
			shorter += h.fixed < sizeof(struct cv_stats);
			struct cv_rec_header wh = { .type = h.type, .size = sizeof(struct cv_stats), .fixed = sizeof(struct cv_stats) };
			memcpy(whole + whole_len, &wh, sizeof(wh));
			memcpy(whole + whole_len + sizeof(wh), d + off + sizeof(h), h.fixed);   /* the rest stays zero */
			whole_len += sizeof(wh) + sizeof(struct cv_stats);
		} else {
			memcpy(whole + whole_len, d + off, sizeof(h) + h.size);
			whole_len += sizeof(h) + h.size;
		}
		off += sizeof(h) + h.size;
	}
	cr_assert(shorter > 0, "no stats record was cut: count_cond's locks never waited");
	char padded[4200];
	snprintf(padded, sizeof(padded), "%s/whole.convoy", tu_tmpdir());
	tu_write_file(padded, whole, whole_len);
	struct tu_proc a, b;
	tu_run(&a, NULL, (const char *[]){ tu_convoy(), "report", "--json", cut, NULL });
	tu_run(&b, NULL, (const char *[]){ tu_convoy(), "report", "--json", padded, NULL });
	cr_assert(a.exited && a.code == 0 && b.exited && b.code == 0, "convoy report: %s / %s", a.err, b.err);
	json_object *ra = json_tokener_parse(a.out), *rb = json_tokener_parse(b.out);
	cr_assert(ra && rb, "convoy report --json: no JSON");
	json_object_object_del(tu_get(ra, "process"), "profile");   /* the file's path, the one difference */
	json_object_object_del(tu_get(rb, "process"), "profile");
	cr_assert(json_object_equal(ra, rb), "the report of %zu cut stats records differs from the whole ones':\n%s\n---\n%s",
		  shorter, json_object_to_json_string(ra), json_object_to_json_string(rb));
	free(d);
	free(whole);
}
