/* snapshot_small_altstack: a handler of the program runs on an alternate
 * signal stack carved from main's own stack (a local array, with a frame
 * full of known bytes below it) and just large enough for two signal
 * frames and a little more; from there it sends convoy's snapshot request
 * (only ever under the shim with CONVOY_SNAPSHOT_SIGNAL set to SIGRTMAX:
 * natively the signal would end it), which is delivered on that stack
 * before sigqueue returns. Prints whether the bytes below the alternate
 * stack are intact, and the snapshots in CONVOY_DIR after the handler
 * returned and after the first use of a mutex. */
#include <signal.h>

#include "progs.h"

#define CV_SNAPSHOT_MAGIC 0x636f6e76   /* include/convoy/profile.h */
#define BELOW (64 << 10)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void handler(int sig)
{
	(void)sig;
	union sigval mark = { .sival_int = CV_SNAPSHOT_MAGIC };
	sigqueue(getpid(), SIGRTMAX, mark);
}

static int snapshots(void)
{
	const char *dir = getenv("CONVOY_DIR");
	DIR *d = opendir(dir ? dir : ".");
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		size_t len = strlen(e->d_name);
		n += len > 5 && !strcmp(e->d_name + len - 5, ".hang");
	}
	if (d)
		closedir(d);
	return n;
}

/* Below the alternate stack: its bytes, changed by anything that runs past
 * that stack's end. */
static __attribute__((noinline)) size_t below_and_raise(void)
{
	volatile unsigned char known[BELOW];
	memset((void *)known, 0xAA, sizeof(known));
	MUST(raise(SIGUSR1));
	size_t changed = 0;
	for (size_t i = 0; i < sizeof(known); i++)
		changed += known[i] != 0xAA;
	return changed;
}

int main(void)
{
	long frame = sysconf(_SC_MINSIGSTKSZ);   /* the kernel's signal frame (AT_MINSIGSTKSZ) */
	size_t size = 2 * (size_t)(frame > 0 ? frame : MINSIGSTKSZ) + 2048;
	char *alt = __builtin_alloca(size);      /* main's frame, above below_and_raise's */
	stack_t ss = { .ss_sp = alt, .ss_size = size };
	MUST(sigaltstack(&ss, NULL) ? errno : 0);
	struct sigaction sa = { .sa_handler = handler, .sa_flags = SA_ONSTACK };
	sigemptyset(&sa.sa_mask);
	MUST(sigaction(SIGUSR1, &sa, NULL) ? errno : 0);
	size_t changed = below_and_raise();
	int after_handler = snapshots();
	MUST(pthread_mutex_lock(&lock));   /* its first use: the shim's slow path */
	MUST(pthread_mutex_unlock(&lock));
	printf("changed %zu, snapshots %d then %d\n", changed, after_handler, snapshots());
	return 0;
}
