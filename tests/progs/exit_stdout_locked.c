/* exit() while another thread holds stdout's lock for ever: prints a line
 * (left in the buffer: stdout is a pipe or a file), starts a thread that
 * takes stdout's lock and waits for good, locks a mutex and exits 0. The C
 * library's final flush takes no lock, so the line still comes out. */
#include "progs.h"

pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t locked;

static void *hold_stdout(void *arg)
{
	(void)arg;
	flockfile(stdout);
	sem_post(&locked);
	for (;;)
		pause();
	return NULL;
}

int main(void)
{
	pthread_t t;
	printf("printed before exit\n");
	MUST(sem_init(&locked, 0, 0) ? errno : 0);
	MUST(pthread_create(&t, NULL, hold_stdout, NULL));
	sem_wait_all(&locked);
	pthread_mutex_lock(&held_lock);
	pthread_mutex_unlock(&held_lock);
	exit(0);
}
