/* criterion_nogit.c — linked into every Criterion binary (TEST_LIBS).
 *
 * Debian's Criterion 2.4 calls git_libgit2_init() in every process it starts,
 * and it starts one for every test (BoxFort execs the binary again). That
 * init sets up libgit2's TLS backend, which parses every CA certificate in
 * /etc/ssl/certs/ca-certificates.crt: 10 ms of CPU a test here (`perf stat`
 * of a program that only calls it: 20.6 against 10.6 ms), about 7 of make
 * test's CPU-seconds. Criterion uses libgit2 only to draw the diffs of
 * criterion/new/assert.h's assertions, which no test here uses. These
 * definitions in the executable take the place of libgit2's; a diff asked
 * for all the same stops the test saying why rather than running libgit2
 * uninitialised.
 */
#include <stdio.h>
#include <stdlib.h>

int git_libgit2_init(void);
int git_libgit2_shutdown(void);
int git_diff_buffers(void);

int git_libgit2_init(void) { return 1; }

int git_libgit2_shutdown(void) { return 0; }

int git_diff_buffers(void)
{
	fputs("tests/common/criterion_nogit.c: a criterion/new/assert.h diff needs libgit2, which these tests "
	      "leave out; use cr_assert\n", stderr);
	abort();
}
