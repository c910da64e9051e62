/* snapshot_small_altstack: a handler of the program runs on an alternate
 * signal stack carved from main's own stack (a local array, with a frame
 * full of known bytes below it), with room for two signal frames and
 * less than a snapshot needs; from there it sends convoy's snapshot request
 * (only ever under the shim with CONVOY_SNAPSHOT_SIGNAL set to SIGRTMAX:
 * natively the signal would end it), which is delivered on that stack
 * before sigqueue returns. Prints whether the bytes below the alternate
 * stack are intact, and the snapshots in CONVOY_DIR after the handler
 * returned and after the first use of a mutex. With argv[1] "autodisarm"
 * the stack is set with SS_AUTODISARM: the kernel reports no alternate
 * stack while the handler runs on it, and delivers the request on it all
 * the same (where the handler's stack pointer is). */
#include <signal.h>

#include "progs.h"

#define CV_SNAPSHOT_MAGIC 0x636f6e76   /* include/convoy/profile.h */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void handler(int sig)
{
	(void)sig;
	union sigval mark = { .sival_int = CV_SNAPSHOT_MAGIC };
	sigqueue(getpid(), SIGRTMAX, mark);
}

int main(int argc, char **argv)
{
	int ss_flags = argc > 1 && !strcmp(argv[1], "autodisarm") ? (int)SS_AUTODISARM : 0;
	/* Two of the kernel's signal frames and 2 KiB: the frames' room, and
	 * less than the snapshot's 16 KiB once they are in. */
	size_t size = 2 * signal_frame_depth() + 2048;
	if (size > (16 << 10))
		size = 16 << 10;
	handle_on_alt_stack(SIGUSR1, __builtin_alloca(size), size, ss_flags, handler);   /* in main's frame */
	size_t changed = changed_below_raise(SIGUSR1);
	int after_handler = hang_snapshots();
	MUST(pthread_mutex_lock(&lock));   /* its first use: the shim's slow path */
	MUST(pthread_mutex_unlock(&lock));
	printf("changed %zu, snapshots %d then %d\n", changed, after_handler, hang_snapshots());
	return 0;
}
