/* snapshot_carved_coroutine: a coroutine runs on a 16 KiB stack carved
 * from main's own frame (a local array, with 64 KiB of known bytes below
 * it), goes down until about 2 KiB more than a signal frame is left
 * (AT_MINSIGSTKSZ), and sends itself convoy's snapshot request (only ever
 * under the shim with CONVOY_SNAPSHOT_SIGNAL set to SIGRTMAX: natively the
 * signal would end it), which is delivered on that stack before sigqueue
 * returns. The stack lies within the main thread's bounds, so by them the
 * write would have room there; it must take a stack of the shim's own
 * (shim.h, cv__call_with_stack), or it runs past the coroutine's stack
 * into main's frame. Prints how many of the known bytes changed and the
 * snapshots in CONVOY_DIR. No alternate signal stack is set, so that
 * nothing but the kind of end keeps the write off the coroutine's stack
 * (one set with SS_AUTODISARM would: alloc.c, room_here). */
#include <signal.h>
#include <sys/auxv.h>
#include <ucontext.h>

#include "progs.h"

#ifndef AT_MINSIGSTKSZ
#define AT_MINSIGSTKSZ 51
#endif
#define CV_SNAPSHOT_MAGIC 0x636f6e76   /* include/convoy/profile.h */
#define COROUTINE_STACK (16 << 10)
#define KNOWN_BELOW (64 << 10)

static ucontext_t main_context, coroutine;
static size_t depth;

static __attribute__((noinline)) void deep(size_t bytes)
{
	volatile char pad[bytes];
	pad[0] = 1;
	union sigval mark = { .sival_int = CV_SNAPSHOT_MAGIC };
	MUST(sigqueue(getpid(), SIGRTMAX, mark) ? errno : 0);
	(void)pad[0];
}

static void body(void)
{
	deep(depth);
}

int main(void)
{
	size_t signal_frame = getauxval(AT_MINSIGSTKSZ);
	depth = COROUTINE_STACK - (signal_frame ? signal_frame : 2048) - 2048;
	char region[KNOWN_BELOW + COROUTINE_STACK];
	memset(region, 0xA5, sizeof(region));
	MUST(getcontext(&coroutine) ? errno : 0);
	coroutine.uc_stack.ss_sp = region + KNOWN_BELOW;
	coroutine.uc_stack.ss_size = COROUTINE_STACK;
	coroutine.uc_link = &main_context;
	makecontext(&coroutine, body, 0);
	MUST(swapcontext(&main_context, &coroutine) ? errno : 0);
	size_t changed = 0;
	for (size_t i = 0; i < KNOWN_BELOW; i++)
		changed += (unsigned char)region[i] != 0xA5;
	printf("changed %zu, snapshots %d\n", changed, hang_snapshots());
	return 0;
}
