/* A thread cancels itself (deferred: the cancel waits for a cancellation
 * point) and then ends the process with _exit(3), or replaces it with an
 * exec of this program that prints "exec'd" and exits 4. _exit and exec
 * are no cancellation points, so the process ends or is replaced as the
 * program says; the shim writes the profile on the way, and once unwound
 * the thread out of _exit and exec at the first cancellable call it made
 * there (the process went on, and ended 0 from main). Usage:
 * cancel_then_exit _exit|exec */
#include "progs.h"

static const char *how, *self;

static void *ender(void *arg)
{
	(void)arg;
	MUST(pthread_cancel(pthread_self()));
	if (strcmp(how, "exec") == 0) {
		execl(self, self, "exec'd", (char *)NULL);
		fprintf(stderr, "exec %s: %s\n", self, strerror(errno));
		_exit(9);
	}
	_exit(3);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	if (strcmp(argv[1], "exec'd") == 0) {
		printf("exec'd\n");
		return 4;
	}
	how = argv[1];
	self = argv[0];
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	MUST(pthread_mutex_lock(&m));   /* something to profile */
	MUST(pthread_mutex_unlock(&m));
	pthread_t t;
	MUST(pthread_create(&t, NULL, ender, NULL));
	pthread_join(t, NULL);
	printf("the process went on after the thread's %s\n", how);
	return 0;
}
