/* term_self: prints how it sees SIGTERM's disposition, locks term_lock 100
 * times, then sends itself SIGTERM (default action: it dies of it). */
#include <signal.h>

#include "progs.h"

pthread_mutex_t term_lock = PTHREAD_MUTEX_INITIALIZER;

int main(void)
{
	struct sigaction sa;
	MUST(sigaction(SIGTERM, NULL, &sa) ? errno : 0);
	printf("SIGTERM: %s flags %#x\n", sa.sa_handler == SIG_DFL ? "SIG_DFL" : "other", (unsigned)sa.sa_flags);
	for (int i = 0; i < 100; i++) {
		pthread_mutex_lock(&term_lock);
		pthread_mutex_unlock(&term_lock);
	}
	fflush(stdout);
	kill(getpid(), SIGTERM);
	pause();
	return 0;
}
