/* offcpu_nofp — off-CPU time whose call site only call-frame information
 * can name. Built with -O2 -fomit-frame-pointer (tests.mk), as Debian
 * builds its C library and most of its programs: no frame keeps a frame
 * pointer, so the kernel's frame-pointer chain of a thread blocked in
 * read(2) stops inside the C library.
 *
 * A worker thread reads BLOCKS one-byte blocks from a pipe in read_block,
 * called from consume; main writes them one at a time from pace, called
 * from produce, sleeping a millisecond before each, so the worker blocks in
 * read for nearly every block and main sleeps in nanosleep. The work is
 * fixed (BLOCKS blocks), whatever the machine's speed. */
#include "progs.h"

#define BLOCKS 300

static int fds[2];
static long blocks_read;

/* noipa: neither inlined nor cloned, so the frame keeps its name; the
 * count after the read keeps the call from being a tail call. */
__attribute__((noipa)) static int read_block(void)
{
	char c;
	int n = (int)read(fds[0], &c, 1);
	blocks_read += n == 1;
	return n;
}

__attribute__((noipa)) static void *consume(void *arg)
{
	while (read_block() == 1)
		continue;
	return arg;
}

__attribute__((noipa)) static int pace(void)
{
	struct timespec ms = { 0, 1000000 };
	int rc = nanosleep(&ms, NULL);
	return rc + (int)write(fds[1], "x", 1);
}

__attribute__((noipa)) static void produce(void)
{
	for (int i = 0; i < BLOCKS; i++)
		if (pace() != 1)
			exit(98);
}

int main(void)
{
	pthread_t t;
	MUST(pipe(fds));
	MUST(pthread_create(&t, NULL, consume, NULL));
	produce();
	close(fds[1]);
	MUST(pthread_join(t, NULL));
	printf("blocks read: %ld of %d\n", blocks_read, BLOCKS);
	return blocks_read == BLOCKS ? 0 : 1;
}
