/* snapshot_altstack: runs its signal handlers on a small alternate signal
 * stack (4 KiB: enough for its own, which do nothing), locks a mutex, and
 * sends itself convoy's snapshot request (only ever under the shim with
 * CONVOY_SNAPSHOT_SIGNAL set to SIGRTMAX: natively the signal would end it).
 * Prints that it went on. */
#include <signal.h>

#include "progs.h"

#define CV_SNAPSHOT_MAGIC 0x636f6e76   /* include/convoy/profile.h */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int main(void)
{
	static char altstack[4096];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	MUST(sigaltstack(&ss, NULL) ? errno : 0);
	MUST(pthread_mutex_lock(&lock));
	MUST(pthread_mutex_unlock(&lock));
	union sigval mark = { .sival_int = CV_SNAPSHOT_MAGIC };
	MUST(sigqueue(getpid(), SIGRTMAX, mark) ? errno : 0);   /* taken before sigqueue returns: one thread */
	printf("went on\n");
	return 0;
}
