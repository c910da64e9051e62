/* test_fuzz.c — the fuzzer in make test: every input that once broke the
 * profile reader (tests/fuzz/regressions) still passes, and a short run from
 * real profiles finds nothing. The short run tries a fixed number of inputs
 * (a few seconds here), so a loaded machine makes it slower, never a
 * different test; `make fuzz` (in CI) is the long run. */
#include <dirent.h>

#include "testutil.h"

#define HARNESS FUZZ_DIR "/fuzz_profile"

static void expect_clean(const struct tu_proc *p, const char *what)
{
	cr_assert(p->exited && p->code == 0, "%s: the fuzzer found a crash, leak or hang (exit %d, signal %d); "
		  "its input is named on the last lines (check it into tests/fuzz/regressions with the fix):\n%s",
		  what, p->code, p->sig, p->err + (p->err_len > 3000 ? p->err_len - 3000 : 0));
}

Test(fuzz, every_regression_input_is_handled, .timeout = 120)
{
	const char *argv[512] = { HARNESS, "-runs=1" };
	size_t n = 2;
	DIR *d = opendir(REGRESSIONS_DIR);
	cr_assert(d, "%s", REGRESSIONS_DIR);
	for (struct dirent *e; (e = readdir(d)) && n < 511;) {
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "README"))
			continue;
		char *path = malloc(strlen(REGRESSIONS_DIR) + strlen(e->d_name) + 2);
		sprintf(path, "%s/%s", REGRESSIONS_DIR, e->d_name);
		argv[n++] = path;
	}
	closedir(d);
	argv[n] = NULL;
	if (n == 2)
		cr_skip_test("no regression inputs in %s", REGRESSIONS_DIR);
	struct tu_proc p;
	struct tu_opts o = { .timeout_s = 100 };
	tu_run(&p, &o, argv);
	expect_clean(&p, "regressions");
}

Test(fuzz, a_short_run_from_real_profiles_finds_nothing, .timeout = 300)
{
	char *work = tu_tmpdir(), runs[32], prefix[4200];
	snprintf(runs, sizeof(runs), "-runs=%d", FUZZ_SHORT_RUNS);
	snprintf(prefix, sizeof(prefix), "-artifact_prefix=%s/", work);
	/* New inputs go to the scratch directory; the seeds stay as they are. */
	const char *argv[] = { HARNESS, runs, "-timeout=30", "-rss_limit_mb=2048", prefix, work,
			       FUZZ_DIR "/seeds", NULL };
	struct tu_proc p;
	struct tu_opts o = { .timeout_s = 280 };
	tu_run(&p, &o, argv);
	expect_clean(&p, "short run");
}
