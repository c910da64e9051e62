/* offcpu_dlopen — off-CPU time in a library loaded with dlopen after the
 * program started (-fomit-frame-pointer, as offcpu_nofp): main first sleeps
 * a few milliseconds in code mapped from the start, then loads
 * libblockread.so from beside itself; a worker thread reads BLOCKS one-byte
 * blocks from a pipe through the library's blockread_one while main writes
 * them, pausing a millisecond before each in the library's blockread_pause.
 * The launcher's unwinder knew the process's modules before the dlopen: it
 * must read them again to name either. */
#include <dlfcn.h>
#include <limits.h>

#include "progs.h"

#define BLOCKS 300

static int fds[2];
static int (*read_one)(int fd);

static void *consume(void *arg)
{
	while (read_one(fds[0]) == 1)
		continue;
	return arg;
}

int main(void)
{
	struct timespec ms = { 0, 1000000 };
	for (int i = 0; i < 10; i++)   /* samples before the dlopen */
		nanosleep(&ms, NULL);
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
	MUST(n > 0 ? 0 : errno);
	path[n] = '\0';
	strcpy(strrchr(path, '/') + 1, "libblockread.so");
	void *lib = dlopen(path, RTLD_NOW);
	void (*pause_ms)(void) = lib ? (void (*)(void))dlsym(lib, "blockread_pause") : NULL;
	if (!lib || !pause_ms || !(read_one = (int (*)(int))dlsym(lib, "blockread_one"))) {
		fprintf(stderr, "offcpu_dlopen: %s\n", dlerror());
		return 99;
	}
	pthread_t t;
	MUST(pipe(fds));
	MUST(pthread_create(&t, NULL, consume, NULL));
	for (int i = 0; i < BLOCKS; i++) {
		pause_ms();
		MUST(write(fds[1], "x", 1) == 1 ? 0 : errno);
	}
	close(fds[1]);
	MUST(pthread_join(t, NULL));
	long *blocks = (long *)dlsym(lib, "blockread_blocks");
	printf("blocks read: %ld of %d\n", blocks ? *blocks : -1, BLOCKS);
	return blocks && *blocks == BLOCKS ? 0 : 1;
}
