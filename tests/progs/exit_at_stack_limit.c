/* The main thread lowers RLIMIT_STACK to what its stack has mapped, deep
 * in that stack (ROOM bytes above the mapping's end), and calls exit(7)
 * there, after one locked mutex, so the shim has a profile to write. exit
 * needs less than ROOM, so this exits 7 natively; the shim writes its
 * profile on the way out, and must take none of this stack for it: the
 * kernel grows it no further. */
#include <stdint.h>
#include <sys/resource.h>

#include "progs.h"

#define ROOM ((uintptr_t)4 << 10)

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static struct rlimit limit;

/* The [stack] mapping's bounds, from /proc/self/maps. */
static void stack_mapping(uintptr_t *lo, uintptr_t *hi)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	if (!f)
		exit(99);
	*lo = *hi = 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]"))
			sscanf(line, "%lx-%lx", lo, hi);
	fclose(f);
	if (!*lo)
		exit(99);
}

static __attribute__((noinline)) void limit_and_exit(void)
{
	if (setrlimit(RLIMIT_STACK, &limit) != 0)
		_exit(99);
	exit(7);
}

/* Down to ROOM above the mapping's end, every page touched on the way
 * (it is mapped already: the kernel maps 128 KiB and more at exec), then
 * the limit and the exit. */
static __attribute__((noinline)) void descend(void)
{
	uintptr_t lo, hi, here = (uintptr_t)__builtin_frame_address(0);
	stack_mapping(&lo, &hi);
	MUST(getrlimit(RLIMIT_STACK, &limit));
	limit.rlim_cur = hi - lo;   /* no growth */
	size_t depth = here - lo > 2 * ROOM ? here - lo - ROOM : 0;
	volatile char *a = __builtin_alloca(depth + 1);
	for (size_t i = depth + 1; i-- > 0;)
		if (i % 1024 == 0)
			a[i] = 1;
	limit_and_exit();
}

int main(void)
{
	MUST(pthread_mutex_lock(&m));
	MUST(pthread_mutex_unlock(&m));
	fflush(stdout);
	descend();
	return 0;
}
