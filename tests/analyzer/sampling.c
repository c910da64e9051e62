/* `convoy run` samples the command's CPU time from outside it: a samples
 * file beside the profile, joined to its threads, the program untouched (no
 * descriptor of ours), lock-implementation time attributed to the lock.
 * Nothing here depends on timing: cpu-clock samples come per millisecond of
 * the threads' own CPU time, and the assertions hold for any number of them.
 * Where perf_event_open is refused, the tests that need samples skip. */
#include <string.h>
#include <unistd.h>

#include "testutil.h"

/* Runs spin_fds under convoy run --json into dir; the report, or NULL
 * (skipped) when this machine refuses sampling. */
static json_object *run_sampled(const char *dir, const char *hz, struct tu_proc *p)
{
	const char *argv[] = { tu_convoy(), "run", "-o", dir, "--json", "--sample-hz", hz, "--",
			       tu_prog("spin_fds"), NULL };
	tu_run(p, NULL, argv);
	tu_assert_exit(p, 0, "convoy run -- spin_fds");
	if (strstr(p->err, "CPU sampling off")) {
		cr_skip_test("perf_event_open refused here: %s", p->err);
		return NULL;
	}
	json_object *r = json_tokener_parse(p->out);
	cr_assert(r, "stdout is not one JSON object:\n%s", p->out);
	return r;
}

Test(sampling, run_writes_samples_beside_the_profile_joined_by_tid, .timeout = 60)
{
	char *dir = tu_tmpdir();
	struct tu_proc p;
	json_object *r = run_sampled(dir, "1000", &p);
	int64_t pid = tu_int(tu_get(r, "process"), "pid");
	char path[4200];
	snprintf(path, sizeof(path), "%s/convoy-%lld.samples", dir, (long long)pid);
	size_t len;
	char *text = (char *)tu_read_file(path, &len);
	cr_assert(!strncmp(text, "convoy-samples 1\n", 17), "samples file header: %.80s", text);
	cr_assert(strstr(text, "\nend lost "), "samples file has no end line");
	json_object *c = tu_get(r, "cpu_samples");
	TU_EQ(tu_int(c, "period_ns"), 1000000, "period at 1000 Hz");
	/* a million spinlock pairs take far more than a millisecond of CPU */
	cr_assert(tu_int(c, "samples") > 0, "no sample joined the profile's threads");
	int64_t sum = 0;
	json_object *threads = tu_array(c, "threads");
	for (size_t i = 0; i < json_object_array_length(threads); i++)
		sum += tu_int(json_object_array_get_idx(threads, i), "samples");
	TU_EQ(sum, tu_int(c, "samples"), "samples per thread add up");
	json_object_put(r);
}

Test(sampling, a_sampled_program_gets_no_descriptor_of_ours, .timeout = 60)
{
	char *dir = tu_tmpdir();
	struct tu_proc p, unsampled;
	json_object *r = run_sampled(dir, "1000", &p);
	json_object_put(run_sampled(dir, "0", &unsampled));
	/* --json sends the program's stdout to stderr */
	cr_assert(strstr(p.err, "perf_event 0"), "the program saw a perf event descriptor: %s", p.err);
	const char *fds = strstr(unsampled.err, " fds ");
	cr_assert(fds && strstr(p.err, fds), "descriptors differ from an unsampled run: '%s' vs '%s'", unsampled.err,
		  p.err);
	json_object_put(r);
}

Test(sampling, time_in_a_spinlock_is_attributed_to_that_spinlock, .timeout = 60)
{
	char *dir = tu_tmpdir();
	struct tu_proc p;
	json_object *r = run_sampled(dir, "4000", &p);
	json_object *c = tu_get(r, "cpu_samples");
	/* Every sample inside glibc's spinlock names the lock by the register
	 * that holds its address; the only lock the program made is
	 * counter_spin. On a busy machine a sample may also land in one of
	 * glibc's own locks (stdio, thread exit), which no profile names: such
	 * samples are the unknown ones, never the spinlock's. */
	int64_t unknown = tu_int(c, "lock_samples_unknown_lock"), in_spin = 0;
	json_object *fns = tu_array(c, "functions");
	for (size_t i = 0; i < json_object_array_length(fns); i++) {
		json_object *f = json_object_array_get_idx(fns, i);
		if (!strcmp(tu_str(f, "function"), "__pthread_spin_lock"))
			in_spin += tu_int(f, "samples");
	}
	cr_assert(tu_int(c, "lock_samples") - unknown >= in_spin,
		  "samples in glibc's spinlock whose lock was not told: %lld lock samples, %lld unknown, %lld in "
		  "__pthread_spin_lock", (long long)tu_int(c, "lock_samples"), (long long)unknown,
		  (long long)in_spin);
	json_object *locks = tu_array(c, "locks");
	if (tu_int(c, "lock_samples") > unknown) {
		TU_EQ(json_object_array_length(locks), 1, "locks with samples");
		TU_STREQ(tu_str(json_object_array_get_idx(locks, 0), "name"), "counter_spin", "the lock");
		TU_EQ(tu_int(json_object_array_get_idx(locks, 0), "samples"), tu_int(c, "lock_samples") - unknown,
		      "all told lock samples on counter_spin");
	}
	json_object_put(r);
}

Test(sampling, sample_hz_zero_samples_nothing, .timeout = 60)
{
	char *dir = tu_tmpdir();
	const char *argv[] = { tu_convoy(), "run", "-o", dir, "--json", "--sample-hz", "0", "--",
			       tu_prog("spin_fds"), NULL };
	struct tu_proc p;
	tu_run(&p, NULL, argv);
	tu_assert_exit(&p, 0, "convoy run --sample-hz 0");
	TU_EQ(tu_count_entries(dir, "convoy-", ".samples", NULL), 0, "samples files");
	json_object *r = json_tokener_parse(p.out);
	cr_assert(r && !json_object_object_get_ex(r, "cpu_samples", NULL), "cpu_samples in an unsampled report");
	json_object_put(r);
}

Test(sampling, a_corrupt_samples_file_is_one_line_and_the_report_goes_on, .timeout = 60)
{
	char *dir = tu_tmpdir();
	const char *argv[] = { tu_convoy(), "run", "-o", dir, "--sample-hz", "0", "--", tu_prog("spin_fds"), NULL };
	struct tu_proc p;
	tu_run(&p, NULL, argv);
	tu_assert_exit(&p, 0, "convoy run --sample-hz 0");
	char *profile = tu_only_profile(dir);
	json_object *r = tu_report(profile);
	char path[4200];
	snprintf(path, sizeof(path), "%s/convoy-%lld.samples", dir, (long long)tu_int(tu_get(r, "process"), "pid"));
	/* not a samples file, a missing period, a line that does not parse, a later version */
	static const char *const bad[] = { "garbage\n", "convoy-samples 1\npid %lld\n",
					   "convoy-samples 1\npid %lld\nperiod_ns 1000\ncpu 12 x\n",
					   "convoy-samples 99\n" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[256];
		snprintf(text, sizeof(text), bad[i], (long long)tu_int(tu_get(r, "process"), "pid"));
		tu_write_file(path, text, strlen(text));
		const char *rargv[] = { tu_convoy(), "report", profile, NULL };
		struct tu_proc q;
		tu_run(&q, NULL, rargv);
		tu_assert_exit(&q, 0, "report beside a corrupt samples file");
		TU_EQ(tu_count_lines(q.err), 1, "stderr lines for case %zu (stderr: %s)", i, q.err);
		cr_assert(strstr(q.err, "convoy: ") == q.err && strstr(q.err, ".samples"), "stderr: %s", q.err);
	}
	json_object_put(r);
}
