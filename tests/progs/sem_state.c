/* The state glibc keeps in a semaphore (its 64-bit word: the value, and
 * the waiters registered above it) and each call's result and errno,
 * after each step: waits and trywaits that find a token (sem.c takes it
 * itself: token_taken), a trywait with none, a wait that blocks until a
 * post, a wait after a cancellation request (sem_wait is a cancellation
 * point even when a token is there), and a process-shared semaphore. Run
 * natively and under the shim, the output must be the same
 * (trust::a_semaphore_the_shim_takes_itself_is_left_as_glibc_leaves_it). */
#include <stdatomic.h>
#include <stdint.h>

#include "progs.h"

static void show(const char *step, sem_t *s)
{
	uint64_t w = atomic_load((_Atomic uint64_t *)(void *)s);
	printf("  %-26s value %u waiters %u\n", step, (unsigned)w, (unsigned)(w >> 32));
}

static void call(const char *what, int rc)
{
	printf("  %-26s %d %s\n", what, rc, rc == 0 ? "" : rc_name(errno));
}

static void *waiter(void *s)
{
	MUST(sem_wait(s));
	return NULL;
}

static void *cancelled(void *s)
{
	pthread_cancel(pthread_self());   /* pending: deferred cancellation */
	sem_wait(s);                      /* acts on it before taking a token */
	return (void *)1;
}

static void steps(const char *name, sem_t *s)
{
	pthread_t th;
	void *res;
	printf("%s\n", name);
	show("initialised (2)", s);
	call("wait", sem_wait(s));
	show("after a wait", s);
	call("trywait", sem_trywait(s));
	show("after a trywait", s);
	errno = 0;
	call("trywait with none", sem_trywait(s));
	show("still none", s);
	call("post, post", sem_post(s) | sem_post(s));
	show("two tokens", s);
	call("wait, wait", sem_wait(s) | sem_wait(s));

	MUST(pthread_create(&th, NULL, waiter, s));
	while ((atomic_load((_Atomic uint64_t *)(void *)s) >> 32) == 0)
		sched_yield();   /* until the waiter registered */
	show("a thread waits", s);
	call("post", sem_post(s));
	MUST(pthread_join(th, NULL));
	show("after the waiter", s);

	call("post", sem_post(s));
	MUST(pthread_create(&th, NULL, cancelled, s));
	MUST(pthread_join(th, &res));
	printf("  cancelled wait: %s\n", res == PTHREAD_CANCELED ? "cancelled" : "returned");
	show("after the cancelled wait", s);
	call("trywait", sem_trywait(s));
	call("destroy", sem_destroy(s));
}

static void *nothing(void *arg)
{
	return arg;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	pthread_t th;
	MUST(pthread_create(&th, NULL, nothing, NULL));   /* a process with threads */
	MUST(pthread_join(th, NULL));
	sem_t s;
	MUST(sem_init(&s, 0, 2));
	steps("private", &s);
	MUST(sem_init(&s, 1, 2));
	steps("process-shared", &s);
	return 0;
}
