/* syscall_passthrough — libc's syscall() for numbers other than SYS_futex
 * (and futex calls that fail) must return exactly what they return without
 * the shim, errno included, and leave errno alone on success. Prints one
 * line per call; the test compares the output with and without the shim.
 */
#include <fcntl.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "prim_util.h"

static void show(const char *what, long rc, int err)
{
	printf("%-34s rc=%ld errno=%d%s%s\n", what, rc, rc == -1 ? err : 0,
	       rc == -1 ? " " : "", rc == -1 ? strerror(err) : "");
}

#define CALL(what, ...)                              \
	do {                                         \
		errno = 0;                           \
		long rc_ = syscall(__VA_ARGS__);     \
		show(what, rc_, errno);              \
	} while (0)

int main(void)
{
	/* Values that differ from run to run are compared, not printed. */
	printf("getpid matches: %d\n", syscall(SYS_getpid) == getpid());
	printf("gettid matches: %d\n", syscall(SYS_gettid) == gettid());

	errno = 4242;
	long rc = syscall(SYS_getppid);
	printf("errno kept on success: %d (rc>0: %d)\n", errno, rc > 0);

	CALL("close(-1)", SYS_close, -1);
	CALL("unknown number 100000", 100000L);
	CALL("negative number", -1L);
	CALL("read bad fd", SYS_read, 12345, NULL, 0);

	int p[2];
	if (pipe(p))
		prim_die("pipe");
	CALL("write 5 bytes", SYS_write, p[1], "hello", 5);
	char buf[16] = { 0 };
	CALL("read 16 into 5 available", SYS_read, p[0], buf, sizeof(buf));
	printf("read back: %s\n", buf);

	/* Six arguments, the sixth on the stack: mmap a file at a page offset. */
	int fd = memfd_create("passthrough", 0);
	if (fd < 0)
		prim_die("memfd_create");
	long page = sysconf(_SC_PAGESIZE);
	if (ftruncate(fd, 2 * page))
		prim_die("ftruncate");
	if (pwrite(fd, "second page", 11, page) != 11)
		prim_die("pwrite");
	errno = 0;
	void *m = (void *)syscall(SYS_mmap, NULL, page, PROT_READ, MAP_PRIVATE, fd, page);
	printf("mmap with offset: %s\n", m == MAP_FAILED ? strerror(errno) : (char *)m);
	CALL("munmap", SYS_munmap, m, page);
	CALL("mmap bad fd", SYS_mmap, NULL, page, PROT_READ, MAP_PRIVATE, 9999, 0);
	char six[12] = { 0 };
	CALL("pread64 at page offset", SYS_pread64, fd, six, 6, page);
	printf("pread back: %s\n", six);
	struct iovec iov = { six, 3 };
	CALL("preadv2 (6 args) at offset", SYS_preadv2, fd, &iov, 1, page + 7, 0, 0);

	/* futex calls that fail or do nothing pass through unchanged too. */
	int word = 5;
	struct timespec short_wait = { 0, 1000000 };
	CALL("futex WAIT wrong value", SYS_futex, &word, FUTEX_WAIT, 6, NULL, NULL, 0);
	CALL("futex WAIT timeout", SYS_futex, &word, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 5, &short_wait, NULL, 0);
	CALL("futex WAIT_BITSET bitset 0", SYS_futex, &word, FUTEX_WAIT_BITSET, 5, NULL, NULL, 0);
	CALL("futex WAKE nobody", SYS_futex, &word, FUTEX_WAKE, 1, NULL, NULL, 0);
	CALL("futex WAKE NULL", SYS_futex, NULL, FUTEX_WAKE, 1, NULL, NULL, 0);
	CALL("futex WAIT NULL", SYS_futex, NULL, FUTEX_WAIT, 0, NULL, NULL, 0);
	CALL("futex bad op", SYS_futex, &word, 99, 0, NULL, NULL, 0);
	CALL("futex CMP_REQUEUE mismatch", SYS_futex, &word, FUTEX_CMP_REQUEUE, 1, (void *)1, &word + 1, 7);
	CALL("futex WAKE_OP", SYS_futex, &word, FUTEX_WAKE_OP, 1, (void *)1, &word + 1, FUTEX_OP(FUTEX_OP_SET, 1, FUTEX_OP_CMP_EQ, 0));
	CALL("futex UNLOCK_PI not owner", SYS_futex, &word, FUTEX_UNLOCK_PI, 0, NULL, NULL, 0);
	errno = 777;
	rc = syscall(SYS_futex, &word, FUTEX_WAKE, 1, NULL, NULL, 0);
	printf("errno kept on futex success: %d (rc %ld)\n", errno, rc);
#ifdef SYS_futex_waitv
	CALL("futex_waitv none", SYS_futex_waitv, NULL, 0, 0, NULL, 0);
#endif
	return 0;
}
