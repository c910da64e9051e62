/* fork_in_handler: locks released right after a signal handler forked
 * leave the thread's held set (tests/shim/fastpath.c). The fork's parent
 * leaves the shim's guard with no state to put back, so the thread's
 * state is inert until the shim takes it back; the unlocks' slow paths
 * must take it back as the locks' do, or the locks stay "held" for good
 * (helper-65): false edges from them, and the true ones into them skipped
 * as "already held". A mutex, a read lock and a spinlock are held across
 * the handler; afterwards the program takes each only under x: the
 * report must have x -> each and no edge from any of them to x. */
#include "progs.h"

#include <signal.h>
#include <sys/wait.h>

#include <convoy.h>

static pthread_mutex_t fih_a = PTHREAD_MUTEX_INITIALIZER, fih_x = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t fih_r = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t fih_s;

static void handler(int sig)
{
	(void)sig;
	pid_t child = fork();
	if (child == 0)
		_exit(0);
	if (child > 0)
		waitpid(child, NULL, 0);
}

int main(void)
{
	MUST(pthread_spin_init(&fih_s, PTHREAD_PROCESS_PRIVATE));
	struct sigaction sa = { .sa_handler = handler };
	sigemptyset(&sa.sa_mask);
	MUST(sigaction(SIGUSR1, &sa, NULL));
	for (int which = 0; which < 3; which++) {
		switch (which) {
		case 0: MUST(pthread_mutex_lock(&fih_a)); break;
		case 1: MUST(pthread_rwlock_rdlock(&fih_r)); break;
		case 2: MUST(pthread_spin_lock(&fih_s)); break;
		}
		raise(SIGUSR1);
		switch (which) {
		case 0: MUST(pthread_mutex_unlock(&fih_a)); break;
		case 1: MUST(pthread_rwlock_unlock(&fih_r)); break;
		case 2: MUST(pthread_spin_unlock(&fih_s)); break;
		}
		MUST(pthread_mutex_lock(&fih_x));   /* nothing held */
		MUST(pthread_mutex_unlock(&fih_x));
	}
	MUST(pthread_mutex_lock(&fih_x));   /* x -> a, x -> r, x -> s: the only orders */
	MUST(pthread_mutex_lock(&fih_a));
	MUST(pthread_mutex_unlock(&fih_a));
	MUST(pthread_rwlock_rdlock(&fih_r));
	MUST(pthread_rwlock_unlock(&fih_r));
	MUST(pthread_spin_lock(&fih_s));
	MUST(pthread_spin_unlock(&fih_s));
	MUST(pthread_mutex_unlock(&fih_x));
	return 0;
}
