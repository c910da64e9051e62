/* runtime_state.c — a lock inside an exported data symbol that a runtime
 * is known by: the layout of CPython's _PyRuntime (its GIL's mutex and
 * condvar inline, at an offset), in a binary stripped to its exported
 * symbols as Debian's python3 is. The lock is named _PyRuntime+OFFSET and
 * said to be inside CPython's runtime state (symbols.c, runtime_states). */
#include "stacks_progs.h"

struct runtime_state {
	long before[45];             /* what precedes the GIL in the real state */
	pthread_mutex_t mutex;
	pthread_cond_t cond;
};

struct runtime_state _PyRuntime = { .mutex = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&_PyRuntime.mutex);
	pthread_mutex_unlock(&_PyRuntime.mutex);
	return NULL;
}

int main(void)
{
	pthread_t th;
	pthread_mutex_lock(&_PyRuntime.mutex);
	MUST(pthread_create(&th, NULL, worker, NULL));
	wait_for_waiter(&_PyRuntime.mutex);
	pthread_mutex_unlock(&_PyRuntime.mutex);
	MUST(pthread_join(th, NULL));
	puts("runtime_state: done");
	return 0;
}
