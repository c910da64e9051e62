/* churn_fork.c — run under libconvoy.so (tests/shim/trust.c): a fork
 * child counts the generations at an address from its own start.
 *
 * Past the cap of destroyed objects kept apart, the shim remembers the
 * generation folded at an address that kept no retired object
 * (preload/objects.c, past_cap_keep). The parent passes the cap, then
 * churns `forked` 30 times (generations 0 to 29); its child passes its
 * own cap and churns `forked` 40 times. The child's registry is its own:
 * its generations there are 0 to 39, and none reaches the 64th, which
 * would stand for later ones ("later generations merged"); with the
 * parent's count it would have at the 34th. */
#include <sys/wait.h>

#include "progs.h"

#define PAST_CAP 4200   /* past preload/objects.c's CV_RETIRED_KEPT (4,096) */

static pthread_mutex_t forked;

static void cycle(pthread_mutex_t *m)
{
	MUST(pthread_mutex_init(m, NULL));
	MUST(pthread_mutex_lock(m));
	MUST(pthread_mutex_unlock(m));
	MUST(pthread_mutex_destroy(m));
}

static void past_the_cap(void)
{
	pthread_mutex_t *m = malloc(PAST_CAP * sizeof(*m));
	if (!m)
		exit(99);
	for (int i = 0; i < PAST_CAP; i++)
		cycle(&m[i]);
	free(m);
}

int main(void)
{
	past_the_cap();
	for (int i = 0; i < 30; i++)
		cycle(&forked);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		past_the_cap();
		for (int i = 0; i < 40; i++)
			cycle(&forked);
		exit(0);
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		printf("the child failed\n");
		return 1;
	}
	printf("ok\n");
	return 0;
}
