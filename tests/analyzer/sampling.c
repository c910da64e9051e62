/* `convoy run` samples the command's CPU time from outside it: a samples
 * file beside the profile, joined to its threads, the program untouched (no
 * descriptor of ours), lock-implementation time attributed to the lock.
 * Nothing here depends on timing: cpu-clock samples come per millisecond of
 * the threads' own CPU time, and the assertions hold for any number of them.
 * Where perf_event_open is refused, the tests that need samples skip. */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

/* Runs prog under convoy run --json into dir; the report, or NULL
 * (skipped) when this machine refuses sampling. */
static json_object *run_prog_sampled(const char *prog, const char *dir, const char *hz, struct tu_proc *p)
{
	const char *argv[] = { tu_convoy(), "run", "-o", dir, "--json", "--sample-hz", hz, "--", tu_prog(prog), NULL };
	tu_run(p, NULL, argv);
	tu_assert_exit(p, 0, "convoy run");
	if (strstr(p->err, "CPU sampling off")) {
		cr_skip_test("perf_event_open refused here: %s", p->err);
		return NULL;
	}
	json_object *r = json_tokener_parse(p->out);
	cr_assert(r, "stdout is not one JSON object:\n%s", p->out);
	return r;
}

/* The same for spin_fds (a million spinlock pairs, and the descriptors it
 * finds open). */
static json_object *run_sampled(const char *dir, const char *hz, struct tu_proc *p)
{
	return run_prog_sampled("spin_fds", dir, hz, p);
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
	cr_assert(!strncmp(text, "convoy-samples 4\n", 17), "samples file header: %.80s", text);
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
					   "convoy-samples 2\npid %lld\nperiod_ns 1000\nmem 12 1 0 400000 7000 1 fetch\n",
					   "convoy-samples 2\npid %lld\nperiod_ns 1000\nwatch 12 1 7000\n",
					   /* version 3: a watch without its length, of 3 bytes, misaligned */
					   "convoy-samples 3\npid %lld\nperiod_ns 1000\nwatch 12 1 7000 5 100\n",
					   "convoy-samples 3\npid %lld\nperiod_ns 1000\nwatch 12 1 7000 5 100 3\n",
					   "convoy-samples 3\npid %lld\nperiod_ns 1000\nwatch 12 1 7002 5 100 4\n",
					   /* version 4: a sample without its unwinder, with an unknown one; a
					    * stack of no bytes */
					   "convoy-samples 4\npid %lld\nperiod_ns 1000\ncs 12 1 0 400000 - -\n",
					   "convoy-samples 4\npid %lld\nperiod_ns 1000\ncs 12 1 0 400000 - - lbr\n",
					   "convoy-samples 4\npid %lld\nperiod_ns 1000\nuser_stacks 0\n",
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

/* ---- memory samples and watchpoints (samples file versions 2 and 3) ------ */

/* A sampled run of spin_fds, its samples file rewritten: the header (the
 * version given, with memory_sampling and watchpoints lines as given) and then records,
 * whose %1$llu is a time inside the profile and %2$d, %3$d the tids of two
 * of its threads (from the real file's cpu records: a worker's samples fall
 * between the profile's start and the main thread's exit, so the records
 * join the profile; the workers, or one and the main thread). Returns the
 * profile. */
static char *rewritten(const char *dir, int version, const char *memory_sampling, const char *watchpoints,
		       const char *records)
{
	struct tu_proc p;
	json_object *r = run_sampled(dir, "1000", &p);
	int pid = (int)tu_int(tu_get(r, "process"), "pid");
	char path[4200];
	snprintf(path, sizeof(path), "%s/convoy-%d.samples", dir, pid);
	size_t len;
	char *text = (char *)tu_read_file(path, &len), *save = NULL;
	unsigned long long time = 0;
	int tids[2] = { 0, 0 };
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long t;
		int tid;
		if (sscanf(line, "cpu %llu %d", &t, &tid) != 2 || tid == pid)
			continue;
		time = t;
		if (!tids[0] || tids[0] == tid)
			tids[0] = tid;
		else
			tids[1] = tid;
	}
	if (!time)
		cr_skip_test("no sample of spin_fds' workers (a machine too fast for a millisecond of their CPU)");
	if (!tids[1])
		tids[1] = pid;   /* one worker sampled: the main thread, alive all along, is the other */
	char body[4096], file[8192];
	snprintf(body, sizeof(body), records, time, tids[0], tids[1]);
	snprintf(file, sizeof(file), "convoy-samples %d\npid %lld\nperiod_ns 1000000\nclock monotonic\nscope user\n"
		 "regs -\nmemory_sampling %s\nwatchpoints %s\n%send lost 0 switch_samples no\n",
		 version, (long long)pid, memory_sampling, watchpoints, body);
	tu_write_file(path, file, strlen(file));
	json_object_put(r);
	return tu_only_profile(dir);
}

/* Two threads storing to words 8 bytes apart, as the PMU samples them. */
#define STORES_8_APART "mem %1$llu %2$d 0 401000 7f0000001000 2a05080144 store\n" \
		       "mem %1$llu %2$d 0 401000 7f0000001000 2a05080144 store\n" \
		       "mem %1$llu %3$d 1 401010 7f0000001008 2a05080144 store\n" \
		       "mem %1$llu %3$d 1 401010 7f0000001008 2a05080144 store\n"

static json_object *first_line(json_object *report)
{
	json_object *lines = tu_array(tu_get(report, "cpu_samples"), "cache_lines");
	return json_object_array_length(lines) ? json_object_array_get_idx(lines, 0) : NULL;
}

Test(sampling, pmu_memory_samples_locate_a_line_without_decoding, .timeout = 60)
{
	char *dir = tu_tmpdir();
	json_object *r = tu_report(rewritten(dir, 2, "cpu/mem-loads/ mem-stores", "off turned off (CONVOY_WATCHPOINTS=0)",
					     STORES_8_APART));
	json_object *c = tu_get(r, "cpu_samples"), *l = first_line(r);
	TU_STREQ(tu_str(tu_get(c, "memory_sampling"), "source"), "cpu/mem-loads/ mem-stores", "the PMU event");
	TU_EQ(tu_int(tu_get(c, "memory_sampling"), "samples"), 4, "memory samples joined");
	cr_assert(l, "no line located from the memory samples");
	TU_STREQ(tu_str(l, "verdict"), "false-sharing", "two threads' stores 8 bytes apart");
	TU_EQ(tu_int(l, "pmu_samples"), 4, "the line's memory samples");
	TU_STREQ(tu_str(l, "watchpoints"), "sampled", "no watchpoint evidence");
	json_object_put(r);
}

Test(sampling, watchpoints_confirm_a_verdict_their_counts_show, .timeout = 60)
{
	char *dir = tu_tmpdir();
	json_object *r = tu_report(rewritten(dir, 2, "cpu/mem-loads/ mem-stores", "on",
					     STORES_8_APART "watch %1$llu %2$d 7f0000001000 900 5000000\n"
					     "watch %1$llu %3$d 7f0000001008 800 5000000\n"
					     "watch %1$llu %3$d 7f0000001000 0 5000000\n"));
	json_object *l = first_line(r);
	cr_assert(l, "no line located");
	TU_STREQ(tu_str(l, "verdict"), "false-sharing", "the verdict");
	TU_STREQ(tu_str(l, "watchpoints"), "confirmed", "what the watchpoints made of it");
	TU_EQ(tu_int(l, "watched_writes"), 1700, "writes counted on the line");
	json_object *words = tu_array(l, "words");
	int64_t watched = 0;
	for (size_t i = 0; i < json_object_array_length(words); i++)
		watched += tu_bool(json_object_array_get_idx(words, i), "watched");
	TU_EQ(watched, 3, "thread-words watched");
	json_object_put(r);
}

Test(sampling, watchpoints_withdraw_a_verdict_their_counts_contradict, .timeout = 60)
{
	char *dir = tu_tmpdir();
	/* The second thread's samples said it stored to +8; watched, it never did. */
	json_object *r = tu_report(rewritten(dir, 2, "cpu/mem-loads/ mem-stores", "on",
					     STORES_8_APART "watch %1$llu %2$d 7f0000001000 900 5000000\n"
					     "watch %1$llu %3$d 7f0000001008 0 5000000\n"));
	cr_assert(!first_line(r), "a line the watchpoints showed one thread writing is still called shared");
	json_object_put(r);
}

/* Two threads storing to 4-byte ints in one 8-byte word, as the PMU samples
 * them (its address, not its size). */
#define STORES_4_APART "mem %1$llu %2$d 0 401000 7f0000001000 2a05080144 store\n" \
		       "mem %1$llu %2$d 0 401000 7f0000001000 2a05080144 store\n" \
		       "mem %1$llu %3$d 1 401010 7f0000001004 2a05080144 store\n" \
		       "mem %1$llu %3$d 1 401010 7f0000001004 2a05080144 store\n"

Test(sampling, watchpoints_as_wide_as_the_data_confirm_ints_in_one_word_are_false_sharing, .timeout = 60)
{
	char *dir = tu_tmpdir();
	json_object *r = tu_report(rewritten(dir, 3, "cpu/mem-loads/ mem-stores", "on",
					     STORES_4_APART "watch %1$llu %2$d 7f0000001000 900 5000000 4\n"
					     "watch %1$llu %3$d 7f0000001000 0 5000000 4\n"
					     "watch %1$llu %2$d 7f0000001004 0 5000000 4\n"
					     "watch %1$llu %3$d 7f0000001004 800 5000000 4\n"));
	json_object *l = first_line(r);
	cr_assert(l, "no line located");
	TU_STREQ(tu_str(l, "verdict"), "false-sharing", "two threads' ints in one 8-byte word");
	TU_STREQ(tu_str(l, "watchpoints"), "confirmed", "what the 4-byte watchpoints made of it");
	TU_EQ(tu_int(l, "watched_writes"), 1700, "writes counted on the line");
	json_object_put(r);
}

Test(sampling, a_watchpoint_wider_than_the_data_under_it_is_no_evidence, .timeout = 60)
{
	char *dir = tu_tmpdir();
	/* version 2: 8 bytes over both ints, so both threads' writes counted */
	json_object *r = tu_report(rewritten(dir, 2, "cpu/mem-loads/ mem-stores", "on",
					     STORES_4_APART "watch %1$llu %2$d 7f0000001000 900 5000000\n"
					     "watch %1$llu %3$d 7f0000001000 800 5000000\n"));
	json_object *l = first_line(r);
	cr_assert(l, "no line located");
	TU_STREQ(tu_str(l, "verdict"), "false-sharing", "the samples' verdict stands");
	TU_STREQ(tu_str(l, "watchpoints"), "sampled", "an 8-byte count over two ints taken as evidence");
	json_object_put(r);
}

Test(sampling, without_a_pmu_or_watchpoints_the_report_says_what_was_not_measured, .timeout = 60)
{
	char *dir = tu_tmpdir();
	char *profile = rewritten(dir, 2, "off this CPU offers no memory-access sampling (test)",
				  "off perf_event_open refused a write watchpoint (test)", "");
	json_object *r = tu_report(profile), *c = tu_get(r, "cpu_samples");
	TU_STREQ(tu_str(tu_get(c, "memory_sampling"), "unavailable"), "this CPU offers no memory-access sampling (test)",
		 "why no memory sampling");
	cr_assert(!tu_bool(tu_get(c, "watchpoints"), "on"), "watchpoints said on");
	TU_STREQ(tu_str(tu_get(c, "watchpoints"), "unavailable"), "perf_event_open refused a write watchpoint (test)",
		 "why no watchpoints");
	const char *argv[] = { tu_convoy(), "report", profile, NULL };
	struct tu_proc p;
	tu_run(&p, NULL, argv);
	tu_assert_exit(&p, 0, "convoy report");
	cr_assert(strstr(p.out, "Not measured: PMU memory-access sampling (data addresses sampled by the CPU): this CPU "
			 "offers no memory-access sampling (test)"), "the report does not say memory sampling was missing:\n%s",
		  p.out);
	cr_assert(strstr(p.out, "Not measured: hardware watchpoints"), "the report does not say watchpoints were missing");
	json_object_put(r);
}

Test(sampling, a_sampled_run_says_which_data_evidence_it_had, .timeout = 60)
{
	char *dir = tu_tmpdir();
	struct tu_proc p;
	json_object *r = run_sampled(dir, "1000", &p);
	json_object *c = tu_get(r, "cpu_samples"), *mem = tu_get(c, "memory_sampling"), *w = tu_get(c, "watchpoints");
	/* each either had or says why not, whatever the machine */
	json_object *src, *why;
	json_object_object_get_ex(mem, "source", &src);
	json_object_object_get_ex(mem, "unavailable", &why);
	cr_assert(!src != !why, "memory sampling both had and unavailable, or neither");
	json_object_object_get_ex(w, "unavailable", &why);
	cr_assert(tu_bool(w, "on") == !why, "watchpoints both on and unavailable, or neither");
	json_object_put(r);
}

Test(sampling, watchpoint_records_name_only_the_programs_threads, .timeout = 60)
{
	char *dir = tu_tmpdir();
	struct tu_proc p;
	json_object *r = run_sampled(dir, "1000", &p);
	char path[4200];
	snprintf(path, sizeof(path), "%s/convoy-%lld.samples", dir, (long long)tu_int(tu_get(r, "process"), "pid"));
	size_t len;
	char *text = (char *)tu_read_file(path, &len), *save = NULL;
	json_object *threads = tu_array(r, "threads");
	/* however many windows the run had (none on a short or busy run) */
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long time, addr, writes, running, length = 8;   /* version 2: always 8 bytes */
		int tid;
		if (strncmp(line, "watch ", 6))
			continue;
		cr_assert(sscanf(line, "watch %llu %d %llx %llu %llu %llu", &time, &tid, &addr, &writes, &running,
				 &length) >= 5,
			  "a watch record that does not parse: %s", line);
		cr_assert((length == 1 || length == 2 || length == 4 || length == 8) && addr % length == 0 && running > 0,
			  "a watch record of no aligned word or no running time: %s", line);
		bool known = false;
		for (size_t i = 0; i < json_object_array_length(threads); i++)
			known |= tu_int(json_object_array_get_idx(threads, i), "tid") == tid;
		cr_assert(known, "a watch record of a thread the profile does not have: %s", line);
	}
	json_object_put(r);
}

/* The launcher's watchpoints take the threads' debug registers for the run
 * (docs/samples-format.md); with them off, a program's own hardware
 * breakpoint works under convoy run as it does alone. */
Test(sampling, with_watchpoints_off_a_program_may_set_its_own_hardware_breakpoint, .timeout = 60)
{
	struct tu_proc native;
	tu_run_native(&native, "own_breakpoint", NULL);
	tu_assert_exit(&native, 0, "own_breakpoint");
	if (strstr(native.out, "refused"))
		cr_skip_test("this machine refuses hardware breakpoints: %s", native.out);
	if (strstr(native.out, "counted 0 writes"))
		cr_skip_test("this machine's hardware breakpoints never fire, even natively: %s", native.out);
	char *dir = tu_tmpdir();
	const char *env[] = { "CONVOY_WATCHPOINTS=0", NULL };
	const char *argv[] = { tu_convoy(), "run", "-o", dir, "--", tu_prog("own_breakpoint"), NULL };
	struct tu_proc p;
	tu_run(&p, &(struct tu_opts){ .env = env }, argv);
	tu_assert_exit(&p, 0, "convoy run -- own_breakpoint");
	cr_assert(strstr(p.out, "breakpoint counted 100 writes"), "natively: %s; under convoy run: %s", native.out, p.out);
}

/* A CPU that lists Intel's PEBS memory events (a fake sysfs: this machine
 * has no PMU): convoy finds and encodes them, the kernel refuses them, and
 * the run falls back to decoding, saying which event was refused and why. */
Test(sampling, a_refused_pmu_memory_event_falls_back_to_decoding_and_says_so, .timeout = 60)
{
	char *dir = tu_tmpdir(), pmu[4200], path[4300];
	snprintf(pmu, sizeof(pmu), "%s/pmu", dir);
	static const char *const files[][2] = {
		{ "cpu/type", "4\n" },
		{ "cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n" },
		{ "cpu/events/mem-stores", "event=0xd0,umask=0x82\n" },
		{ "cpu/format/event", "config:0-7\n" },
		{ "cpu/format/umask", "config:8-15\n" },
		{ "cpu/format/ldlat", "config1:0-15\n" },
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", pmu, files[i][0]);
		for (char *slash = strchr(path + strlen(dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
			*slash = '\0';
			mkdir(path, 0755);
			*slash = '/';
		}
		tu_write_file(path, files[i][1], strlen(files[i][1]));
	}
	char env_pmu[4300];
	snprintf(env_pmu, sizeof(env_pmu), "CONVOY_PMU_DIR=%s", pmu);
	const char *env[] = { env_pmu, NULL };
	const char *argv[] = { tu_convoy(), "run", "-o", dir, "--json", "--sample-hz", "1000", "--", tu_prog("spin_fds"), NULL };
	struct tu_proc p;
	tu_run(&p, &(struct tu_opts){ .env = env }, argv);
	tu_assert_exit(&p, 0, "convoy run -- spin_fds");
	if (strstr(p.err, "CPU sampling off"))
		cr_skip_test("perf_event_open refused here: %s", p.err);
	json_object *r = json_tokener_parse(p.out);
	cr_assert(r, "stdout is not one JSON object:\n%s", p.out);
	json_object *c = tu_get(r, "cpu_samples"), *mem = tu_get(c, "memory_sampling"), *src;
	if (json_object_object_get_ex(mem, "source", &src) && src)
		cr_skip_test("this machine took the raw PEBS events: %s", json_object_get_string(src));
	const char *why = tu_str(mem, "unavailable");
	cr_assert(strstr(why, "perf_event_open refused cpu/mem-loads/ mem-stores: "), "memory sampling: %s", why);
	cr_assert(tu_int(c, "samples") > 0, "no CPU samples beside the refused memory events");
	json_object_put(r);
}

/* Two uncontended mutexes on one line, each its own thread's: the samples
 * in glibc's lock code are by shape a cmpxchg retry loop, but nobody else
 * touches either word, so neither is spun on; two threads write one line:
 * false sharing of the two locks. Enough samples for any load: 20M lock
 * pairs take hundreds of milliseconds of CPU. */
Test(sampling, adjacent_uncontended_locks_are_false_sharing_not_spinning, .timeout = 60)
{
	struct tu_proc p;
	json_object *r = run_prog_sampled("adjacent_locks", tu_tmpdir(), "1000", &p);
	json_object *l = json_object_array_get_idx(tu_array(tu_get(r, "cpu_samples"), "cache_lines"), 0);
	cr_assert(l, "no line located: %s", json_object_to_json_string(tu_get(r, "cpu_samples")));
	TU_STREQ(tu_str(l, "verdict"), "false-sharing", "the line's verdict");
	int in = 0, out = 0;
	json_object *words = tu_array(l, "words");
	for (size_t i = 0; i < json_object_array_length(words); i++) {
		const char *name = tu_str(json_object_array_get_idx(words, i), "name");
		in |= !strcmp(name, "ingest.in_lock");
		out |= !strcmp(name, "ingest.out_lock");
	}
	cr_assert(in && out, "both locks named: %s", json_object_to_json_string(l));
	json_object_put(r);
}

/* ---- call chains through code without frame pointers (version 4) -------- */

/* `convoy run` of prog (text report) with env added to its environment;
 * skipped where this machine refuses sampling. */
static void run_text(const char *prog, const char *const *env, struct tu_proc *p)
{
	const char *argv[] = { tu_convoy(), "run", "-o", tu_tmpdir(), "--", tu_prog(prog), NULL };
	struct tu_opts o = { .env = env };
	tu_run(p, &o, argv);
	tu_assert_exit(p, 0, prog);
	if (strstr(p->err, "CPU sampling off"))
		cr_skip_test("perf_event_open refused here: %s", p->err);
}

/* The paragraph of a text report that starts with label, its wrapped lines
 * joined by single spaces (a new string, "" when there is none). */
static char *paragraph(const char *text, const char *label)
{
	const char *at = strstr(text, label);
	char *out = calloc(1, at ? strlen(at) + 1 : 1), *o = out;
	cr_assert(out);
	for (const char *c = at; c && *c && !(c[0] == '\n' && c[1] != ' '); c++) {
		if (*c == '\n')
			while (c[1] == ' ')
				c++;
		*o++ = *c == '\n' ? ' ' : *c;
	}
	return out;
}

/* offcpu_nofp (-fomit-frame-pointer, as Debian builds) blocks in read(2)
 * from read_block and sleeps from pace: the frame-pointer chain stops in the
 * C library, the unwind from call-frame information reaches the program.
 * Whichever thread the report explains, its first site is the program's
 * function that made the call. */
Test(sampling, an_off_cpu_site_in_code_without_frame_pointers_is_the_programs_function, .timeout = 60)
{
	struct tu_proc p;
	run_text("offcpu_nofp", NULL, &p);
	char *text = paragraph(p.out, "Off-CPU outside waits: ");
	cr_assert(text[0], "no off-CPU paragraph in the report:\n%s", p.out);
	char *first = strtok(text, ";");
	cr_assert(strstr(first, "called from read_block (offcpu_nofp.c:") ||
		  strstr(first, "called from pace (offcpu_nofp.c:"), "the first site is not the program's call: %s", first);
	free(text);
}

/* The same through a library the program loaded with dlopen after its
 * first samples were unwound: the unwinder reads the process's modules
 * again when a frame lies in none it knows. The library's call is one of
 * the sites, not always the first: on a host short of CPU, main's ten
 * 1 ms sleeps before the dlopen took 175 ms and came first (2026-12-07). */
Test(sampling, an_off_cpu_site_in_a_library_loaded_later_is_named, .timeout = 60)
{
	struct tu_proc p;
	run_text("offcpu_dlopen", NULL, &p);
	char *text = paragraph(p.out, "Off-CPU outside waits: ");
	cr_assert(text[0], "no off-CPU paragraph in the report:\n%s", p.out);
	cr_assert(strstr(text, "called from blockread_one (blockread.c:") ||
		  strstr(text, "called from blockread_pause (blockread.c:"), "no site is the library's call: %s", text);
	free(text);
}

/* serial_nofp's main thread clears a table alone (memset, called from
 * clear_table, called from prepare) before its workers start: the serial
 * phase's CPU samples are in the C library, and the site named is the
 * program's code that called it, with its caller. */
Test(sampling, a_serial_phase_in_the_c_library_is_named_with_the_programs_caller, .timeout = 60)
{
	struct tu_proc p;
	run_text("serial_nofp", NULL, &p);
	char *text = paragraph(p.out, "Serial phase: ");
	cr_assert(strstr(text, "main (tid ") == text + strlen("Serial phase: "), "no serial phase of main:\n%s", p.out);
	cr_assert(strstr(text, "its own code mostly in clear_table (serial_nofp.c:") &&
		  strstr(text, ") in prepare (serial_nofp.c:"), "serial phase: %s", text);
	free(text);
}

/* CONVOY_SAMPLE_STACK=0: no stacks; the samples file and the report say so. */
Test(sampling, without_user_stacks_the_report_says_call_sites_may_stop_in_the_c_library, .timeout = 60)
{
	static const char *const env[] = { "CONVOY_SAMPLE_STACK=0", NULL };
	struct tu_proc p;
	run_text("offcpu_nofp", env, &p);
	char *text = paragraph(p.out, "  Not measured: call chains");
	cr_assert(strstr(text, "frame pointers") && strstr(text, "turned off (CONVOY_SAMPLE_STACK=0)"),
		  "the report does not say the stacks were off:\n%s", p.out);
	free(text);
}

Test(sampling, a_bad_sample_stack_size_is_one_error_line, .timeout = 60)
{
	static const char *const sizes[] = { "12", "-8", "65536", "lots" };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char var[64];
		snprintf(var, sizeof(var), "CONVOY_SAMPLE_STACK=%s", sizes[i]);
		const char *const env[] = { var, NULL };
		const char *argv[] = { tu_convoy(), "run", "-o", tu_tmpdir(), "--", "/bin/true", NULL };
		struct tu_opts o = { .env = env };
		struct tu_proc p;
		tu_run(&p, &o, argv);
		cr_assert(p.exited && p.code != 0, "CONVOY_SAMPLE_STACK=%s: exit %d", sizes[i], p.code);
		TU_EQ(tu_count_lines(p.err), 1, "stderr lines for %s (stderr: %s)", sizes[i], p.err);
		cr_assert(strstr(p.err, "convoy: ") == p.err && strstr(p.err, "CONVOY_SAMPLE_STACK"), "stderr: %s", p.err);
	}
}

/* A command that runs more processes than the sampler keeps files open
 * (256: a build, a long script) still has the samples of one it starts
 * after them: the files of processes that ended make room. */
Test(sampling, a_process_started_after_hundreds_of_others_still_has_its_samples, .timeout = 120)
{
	char *dir = tu_tmpdir();
	struct tu_proc p;
	const char *script = "i=0; while [ $i -lt 300 ]; do /bin/true; i=$((i+1)); done; \"$0\"; :";
	const char *argv[] = { tu_convoy(), "run", "-o", dir, "--json", "--sample-hz", "1000", "--",
			       "/bin/sh", "-c", script, tu_prog("spin_fds"), NULL };
	tu_run(&p, NULL, argv);
	tu_assert_exit(&p, 0, "convoy run");
	if (strstr(p.err, "CPU sampling off"))
		cr_skip_test("perf_event_open refused here: %s", p.err);
	cr_assert(!strstr(p.err, "were dropped"), "stderr:\n%s", p.err);
	json_object *r = json_tokener_parse(p.out);
	cr_assert(r, "stdout is not one JSON object:\n%s", p.out);
	TU_STREQ(tu_str(tu_get(r, "process"), "comm"), "spin_fds", "the process analysed");
	/* a million spinlock pairs take far more than a millisecond of CPU */
	cr_assert(tu_int(tu_get(r, "cpu_samples"), "samples") > 0, "no sample of spin_fds joined its profile; stderr:\n%s",
		  p.err);
	json_object_put(r);
}

/* A process sampled in one image that execs another: the launcher's
 * decoder drops the first image's modules and their symbol indexes
 * (watch.c, index_removed; a wrong free there aborted the launcher). */
Test(sampling, a_process_sampled_before_and_after_an_exec_is_reported, .timeout = 120)
{
	char *dir = tu_tmpdir();
	struct tu_proc p;
	const char *argv[] = { tu_convoy(), "run", "-o", dir, "--json", "--sample-hz", "1000", "--", "/bin/bash", "-c",
			       "for ((i = 0; i < 300000; i++)); do :; done; exec \"$0\"", tu_prog("spin_fds"), NULL };
	if (access(argv[8], X_OK) != 0)
		cr_skip_test("no /bin/bash");
	tu_run(&p, NULL, argv);
	tu_assert_exit(&p, 0, "convoy run -- bash -c 'LOOP; exec spin_fds'");
	if (strstr(p.err, "CPU sampling off"))
		cr_skip_test("perf_event_open refused here: %s", p.err);
	json_object *r = json_tokener_parse(p.out);
	cr_assert(r, "stdout is not one JSON object:\n%s", p.out);
	TU_STREQ(tu_str(tu_get(r, "process"), "comm"), "spin_fds", "the process analysed");
	int64_t samples = tu_int(tu_get(r, "cpu_samples"), "samples");
	json_object_put(r);
	/* spin_fds' CPU is in two workers that live some milliseconds: a
	 * launcher slowed down (ASan, a loaded machine: once in CI) may find
	 * them only after they ended. What is tested is the report across the
	 * exec (the decoder once aborted there); the join, where there was
	 * something to join. */
	if (samples == 0)
		cr_skip_test("the sampler took no sample of spin_fds' workers (they ended before it saw them)");
}
