/* libgit2_stub.c — built as build/tests/lib/libgit2.so.1.5, the libgit2
 * that every Criterion binary loads (TEST_LIBS: linked by name, found
 * through the binary's $ORIGIN/lib).
 *
 * Debian's Criterion 2.4 needs libgit2 only to draw the diffs of
 * criterion/new/assert.h's assertions, which no test here uses, yet it
 * starts one process for every test (BoxFort execs the binary again), and
 * every one of them paid for the real library:
 *  - its init, which Criterion calls in each process, set up libgit2's TLS
 *    backend and parsed every CA certificate in
 *    /etc/ssl/certs/ca-certificates.crt: 10 ms of CPU a test (`perf stat`
 *    of a program that only calls it: 20.6 against 10.6 ms);
 *  - its loading: libgit2 brings in 14 libraries more (mbedtls, OpenSSL's
 *    libcrypto, Kerberos, libssh2), which the loader maps and relocates in
 *    every process: test_shim loaded 21 libraries, 7 with this one. A
 *    program linked with -lcriterion starts in 3.60 ms of CPU with the real
 *    libgit2, 0.78 with this (`perf stat -r 100`); test_workpool's 12 deque
 *    tests, 13 processes, took 121 ms against 61 (`perf stat -r 5`, one
 *    job, the deque suite, medians of 5 interleaved).
 * The binary names this library itself, so the loader maps it with the
 * binary's own needs, before it comes to libcriterion's: it has a
 * libgit2.so.1.5 then, and loads no other. A diff asked
 * for all the same stops the test saying why rather than running nothing.
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
	fputs("tests/common/libgit2_stub.c: a criterion/new/assert.h diff needs libgit2, which these tests "
	      "leave out; use cr_assert\n", stderr);
	abort();
}
