/* libblockread.so — loaded with dlopen by offcpu_dlopen after it started:
 * a read(2) or nanosleep(2) called from here is in a module the process did
 * not have when its first samples were unwound. Built without frame
 * pointers (tests.mk). */
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT long blockread_blocks, blockread_pauses;

/* noipa: the frames keep their names; the counts after the calls keep
 * them from being tail calls. */
EXPORT __attribute__((noipa)) int blockread_one(int fd)
{
	char c;
	int n = (int)read(fd, &c, 1);
	blockread_blocks += n == 1;
	return n;
}

EXPORT __attribute__((noipa)) void blockread_pause(void)
{
	struct timespec ms = { 0, 1000000 };
	nanosleep(&ms, NULL);
	blockread_pauses++;
}
