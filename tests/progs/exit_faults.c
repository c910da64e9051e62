/* exit_faults.c — run under libconvoy.so (tests/shim/fastpath.c): the
 * profile's write at a process's end reads no page of the shim's sparse
 * tables that was never written.
 *
 * A page of anonymous memory that is only read is still a page fault (the
 * kernel maps its shared zero page), about 9 us each on the development VM.
 * The lock-order edge table is 48 pages, made at a thread's first nested
 * acquisition, and holds a few edges in most programs: the write read all
 * of it, 47 more faults for `python3 -c pass`, which takes one mutex under
 * another.
 *
 * Two kinds of child, forked from one parent, each three times: one takes
 * two mutexes in turn, the other one under the other (the table made, one
 * edge in it). Each exits, writing its profile; the parent reads each
 * child's minor faults (wait4). The nested child's least may exceed the
 * flat child's least by the pages its edge's write touched, not by the
 * table's. Counts, not timings.
 *
 * Exit 0 and "ok ..." when it does not; 1 when it does.
 */
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "progs.h"

#define ROUNDS 3
#define LIMIT  16   /* the table's write, the profile's edge record; not its 48 pages */

static pthread_mutex_t outer = PTHREAD_MUTEX_INITIALIZER, inner = PTHREAD_MUTEX_INITIALIZER;

/* The minor faults of a child that took the two mutexes (nested: one
 * under the other) and exited; -1 when it failed. */
static long child_faults(bool nested)
{
	pid_t pid = fork();
	if (pid == 0) {
		MUST(pthread_mutex_lock(&outer));
		if (!nested)
			MUST(pthread_mutex_unlock(&outer));
		MUST(pthread_mutex_lock(&inner));
		MUST(pthread_mutex_unlock(&inner));
		if (nested)
			MUST(pthread_mutex_unlock(&outer));
		exit(0);   /* the shim's destructor writes the child's profile */
	}
	int status;
	struct rusage ru;
	if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	return ru.ru_minflt;
}

static void *idle(void *arg)
{
	return arg;
}

int main(void)
{
	pthread_t th;   /* glibc's multi-threaded path, as in the programs convoy is for */
	MUST(pthread_create(&th, NULL, idle, NULL));
	MUST(pthread_join(th, NULL));
	long flat = -1, nested = -1;
	for (int i = 0; i < ROUNDS; i++) {
		long f = child_faults(false), n = child_faults(true);
		if (f < 0 || n < 0) {
			printf("a child failed\n");
			return 1;
		}
		if (flat < 0 || f < flat)
			flat = f;
		if (nested < 0 || n < nested)
			nested = n;
	}
	if (nested > flat + LIMIT) {
		printf("%ld minor faults in a child that took a mutex under another, %ld in one that took them in "
		       "turn: more than %d for one lock-order edge\n", nested, flat, LIMIT);
		return 1;
	}
	printf("ok: %ld minor faults nested, %ld in turn\n", nested, flat);
	return 0;
}
