/* cond_destroyed_in_wait.c — a condvar destroyed while its woken waiter
 * is still inside pthread_cond_wait, retaking the mutex (legal: glibc's
 * destroy waits for the wake, not for the mutex), past the shim's cap of
 * retired objects (its object is merged at the destroy); then a signal
 * handler on the waiter posts semaphores it never used, whose records
 * grow the waiter's table. Before the shim pinned the waiting record
 * (preload/shim.h, struct cv_pin), the growth folded it and freed it under
 * the wait, and the wait was counted on a semaphore's record that took its
 * memory (helper-139). With "after-jumps", the waiter first leaves two
 * barrier waits by a SIGALRM handler's siglongjmp (each pinned its
 * record: a pin the jump left taken left the condvar's wait unpinned,
 * helper-140). Prints what the program posted. */
#include <setjmp.h>
#include <stdatomic.h>
#include <sys/time.h>

#include "progs.h"

#define CHURN 4200   /* retired objects: past the shim's 4,096 */
#define SEMS 64

static pthread_mutex_t churn[CHURN];
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c;
static sem_t sems[SEMS];
static atomic_int waiting, handled;
static int go, jumps;
static pthread_barrier_t lonely[2];   /* a count of 2, one thread: waits only a jump ends */
static sigjmp_buf out;

static void on_alrm(int sig)
{
	(void)sig;
	siglongjmp(out, 1);
}

static void on_usr1(int sig)
{
	(void)sig;
	for (int i = 0; i < SEMS; i++)
		sem_post(&sems[i]);
	atomic_store(&handled, 1);
}

/* A wait on b that only the SIGALRM handler's jump ends (in 5 ms). */
static void jump_out_of_wait(pthread_barrier_t *b)
{
	static const struct itimerval once = { { 0, 0 }, { 0, 5000 } };
	if (!sigsetjmp(out, 1) && setitimer(ITIMER_REAL, &once, NULL) == 0)
		pthread_barrier_wait(b);
}

static void *waiter(void *arg)
{
	mask_signal(SIG_UNBLOCK, SIGALRM);
	for (int i = 0; i < jumps; i++) {
		MUST(pthread_barrier_init(&lonely[i], NULL, 2));
		jump_out_of_wait(&lonely[i]);
	}
	MUST(pthread_mutex_lock(&m));
	atomic_store(&waiting, 1);
	while (!go)
		MUST(pthread_cond_wait(&c, &m));
	MUST(pthread_mutex_unlock(&m));
	return arg;
}

int main(int argc, char **argv)
{
	jumps = argc > 1 && strcmp(argv[1], "after-jumps") == 0 ? 2 : 0;
	handle_signal(SIGALRM, on_alrm);
	mask_signal(SIG_BLOCK, SIGALRM);   /* the waiter's alone */
	for (int i = 0; i < CHURN; i++) {
		MUST(pthread_mutex_init(&churn[i], NULL));
		MUST(pthread_mutex_lock(&churn[i]));
		MUST(pthread_mutex_unlock(&churn[i]));
		MUST(pthread_mutex_destroy(&churn[i]));
	}
	for (int i = 0; i < SEMS; i++)
		MUST(sem_init(&sems[i], 0, 0) ? errno : 0);
	handle_signal(SIGUSR1, on_usr1);
	MUST(pthread_cond_init(&c, NULL));
	pthread_t t;
	MUST(pthread_create(&t, NULL, waiter, NULL));
	while (!atomic_load(&waiting))
		sched_yield();
	MUST(pthread_mutex_lock(&m));   /* the waiter let it go: it is in the wait */
	go = 1;
	MUST(pthread_cond_broadcast(&c));
	MUST(pthread_cond_destroy(&c));
	MUST(pthread_kill(t, SIGUSR1));
	while (!atomic_load(&handled))
		sched_yield();
	MUST(pthread_mutex_unlock(&m));
	MUST(pthread_join(t, NULL));
	int posted = 0;
	for (int i = 0; i < SEMS; i++) {
		int v;
		MUST(sem_getvalue(&sems[i], &v) ? errno : 0);
		posted += v;
	}
	printf("posted %d\n", posted);
	return 0;
}
