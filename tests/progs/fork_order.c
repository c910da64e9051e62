/* fork_order: a fork child's lock-order edges are its own
 * (tests/shim/lifecycle.c). The parent takes fo_p0 then fo_p1 and forks;
 * the child takes only fo_c1 then fo_c0. The child gives object ids out
 * from 0 again, as the parent did: with the parent's edge table kept, the
 * parent's edge (ids 0 -> 1) came out in the child's profile as
 * fo_c0 -> fo_c1, a false cycle (helper-66). */
#include "progs.h"

#include <sys/wait.h>

#include <convoy.h>

static void nest(pthread_mutex_t *outer, pthread_mutex_t *inner)
{
	MUST(pthread_mutex_lock(outer));
	MUST(pthread_mutex_lock(inner));
	MUST(pthread_mutex_unlock(inner));
	MUST(pthread_mutex_unlock(outer));
}

int main(void)
{
	static pthread_mutex_t p[2] = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER };
	static pthread_mutex_t c[2] = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER };
	CONVOY_NAME(&p[0], "fo_p0");
	CONVOY_NAME(&p[1], "fo_p1");
	nest(&p[0], &p[1]);
	fflush(stdout);
	pid_t child = fork();
	if (child < 0)
		return 99;
	if (child == 0) {
		CONVOY_NAME(&c[0], "fo_c0");
		CONVOY_NAME(&c[1], "fo_c1");
		nest(&c[1], &c[0]);
		puts("child done");
		return 0;
	}
	int status;
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 99;
	puts("parent done");
	return 0;
}
