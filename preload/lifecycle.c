/* lifecycle.c — the ends of a process, each of which writes its profile.
 *
 * docs/lifecycle.md lists every path and the ones that cannot write.
 *
 * Normal end: return from main, exit() from any thread, and the exit(0)
 * glibc makes when the last thread calls pthread_exit all run the C
 * runtime's exit handlers; ours is the shim's destructor, run by the loader's
 * exit handler. The C library flushes stdio only after every exit handler,
 * so on a nearly full filesystem the profile would take the space the
 * program's buffered output still needs: the destructor flushes stdout and
 * stderr first. It only tries their locks (a thread blocked in a read of
 * stdin holds its lock for ever, and glibc's own final flush takes none); a
 * stream another thread holds is flushed later by the C library, as always.
 */
#include <errno.h>
#include <stdio.h>

#include "shim.h"

static void flush_standard_streams(void)
{
	FILE *streams[] = { stdout, stderr };
	for (size_t i = 0; i < sizeof(streams) / sizeof(streams[0]); i++) {
		if (ftrylockfile(streams[i]) == 0) {
			fflush_unlocked(streams[i]);
			funlockfile(streams[i]);
		}
	}
}

__attribute__((destructor)) static void convoy_end(void)
{
	if (!cv__process.ready || cv__process.disabled)
		return;
	struct cv_thread *main_thread = NULL;
	for (struct cv_thread *t = cv__threads(); t; t = t->all_next)
		if (t->flags & CV_THREAD_MAIN)
			main_thread = t;
	bool last_thread = main_thread && (main_thread->flags & CV_THREAD_PTHREAD_EXIT);
	int saved_errno = errno;
	flush_standard_streams();
	errno = saved_errno;
	cv__write_profile(last_thread ? CV_EXIT_LAST_THREAD : CV_EXIT_NORMAL);
}
