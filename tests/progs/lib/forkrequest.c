/* libforkrequest.so: a fork handler that queues convoy's snapshot request
 * to its own process from inside fork. Registered by this library's
 * constructor, before the shim's handlers (this library's constructor runs
 * first), its prepare handler runs after the shim's: the request lands while
 * the forking thread is inside the shim's fork bookkeeping. */
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#define CV_SNAPSHOT_MAGIC 0x636f6e76   /* include/convoy/profile.h */

static int request_signal;

/* The next fork (only) queues sig with convoy's mark from its prepare handler. */
void forkrequest_arm(int sig)
{
	request_signal = sig;
}

static void prepare(void)
{
	if (!request_signal)
		return;
	union sigval mark = { .sival_int = CV_SNAPSHOT_MAGIC };
	sigqueue(getpid(), request_signal, mark);
	request_signal = 0;
}

__attribute__((constructor)) static void forkrequest_init(void)
{
	pthread_atfork(prepare, NULL, NULL);
}
