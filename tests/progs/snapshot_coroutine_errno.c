/* snapshot_coroutine_errno: main runs a coroutine on a 12 KiB stack of its
 * own (16 KiB of guard below it) that takes a mutex another thread holds; that
 * thread sends convoy's snapshot request (only ever under the shim with
 * CONVOY_SNAPSHOT_SIGNAL set to SIGRTMAX: natively the signal would end it)
 * once main sleeps in the futex wait on it (read from /proc, never timed),
 * then releases it. The snapshot needs more room than the coroutine's
 * stack has, so it waits, and every later call into the shim looks again.
 * Prints errno as the coroutine set it before each of three calls. */
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "progs.h"

#define CV_SNAPSHOT_MAGIC 0x636f6e76   /* include/convoy/profile.h */
#define CO_STACK (12 << 10)
#define GUARD    (16 << 10)   /* the probe's every page below the stack: none readable */

static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER, other = PTHREAD_MUTEX_INITIALIZER;
static sem_t held;
static pid_t main_tid;
static ucontext_t main_ctx, co_ctx;
static int seen[3];

static void *holder(void *arg)
{
	(void)arg;
	sigset_t request;
	sigemptyset(&request);
	sigaddset(&request, SIGRTMAX);
	MUST(pthread_sigmask(SIG_BLOCK, &request, NULL));   /* the request goes to main */
	MUST(pthread_mutex_lock(&held_lock));
	MUST(sem_post(&held) ? errno : 0);
	while (!sleeps_in_futex_on(main_tid, &held_lock))
		sched_yield();
	union sigval mark = { .sival_int = CV_SNAPSHOT_MAGIC };
	MUST(sigqueue(getpid(), SIGRTMAX, mark) ? errno : 0);
	MUST(pthread_mutex_unlock(&held_lock));
	return NULL;
}

static void coroutine(void)
{
	pthread_t t;
	MUST(pthread_create(&t, NULL, holder, NULL));
	sem_wait_all(&held);
	errno = 1234;
	pthread_mutex_lock(&held_lock);   /* contended: the request lands in its wait */
	seen[0] = errno;
	pthread_mutex_unlock(&held_lock);
	errno = 4321;
	pthread_mutex_lock(&other);
	pthread_mutex_unlock(&other);
	seen[1] = errno;
	MUST(pthread_join(t, NULL));
	errno = 777;
	pthread_mutex_lock(&other);
	seen[2] = errno;
	pthread_mutex_unlock(&other);
}

int main(void)
{
	main_tid = gettid();
	MUST(sem_init(&held, 0, 0) ? errno : 0);
	char *map = mmap(NULL, GUARD + CO_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	MUST(map == MAP_FAILED ? errno : 0);
	MUST(mprotect(map, GUARD, PROT_NONE) ? errno : 0);
	MUST(getcontext(&co_ctx) ? errno : 0);
	co_ctx.uc_stack.ss_sp = map + GUARD;
	co_ctx.uc_stack.ss_size = CO_STACK;
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, coroutine, 0);
	MUST(swapcontext(&main_ctx, &co_ctx) ? errno : 0);
	printf("errno %d %d %d\n", seen[0], seen[1], seen[2]);
	return 0;
}
