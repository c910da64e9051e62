/* hang_own_rtmax: a program that uses SIGRTMAX itself. Its handler posts the
 * semaphore main waits on, which nothing else posts: main hangs, with no
 * deadline, until a SIGRTMAX comes, then prints so and exits 0. */
#include <signal.h>

#include "progs.h"

static sem_t wake;

static void on_rtmax(int sig)
{
	sem_post(&wake);
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_rtmax, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	MUST(sem_init(&wake, 0, 0));
	MUST(sigaction(SIGRTMAX, &sa, NULL) ? errno : 0);
	while (sem_wait(&wake) != 0)
		MUST(errno == EINTR ? 0 : errno);
	printf("woken by SIGRTMAX\n");
	return 0;
}
