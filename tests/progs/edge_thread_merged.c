/* edge_thread_merged: a lock-order edge made by a thread that the shim
 * later merges (past 1,024 ended threads, preload/thread.c) is the merged
 * threads' (tests/shim/identity.c). The merged thread's state serves the
 * next thread made, which never nests: when the edge kept a pointer to
 * the state, that thread was named as its maker. Two makers take etm_a
 * and etm_b in the two orders: a cycle whose edges are both the merged
 * row's, which is not one thread. */
#include "progs.h"

#include <convoy.h>

static pthread_mutex_t etm_a = PTHREAD_MUTEX_INITIALIZER, etm_b = PTHREAD_MUTEX_INITIALIZER;

static void *nothing(void *arg)
{
	return arg;
}

static void *maker(void *arg)
{
	MUST(pthread_mutex_lock(&etm_a));
	MUST(pthread_mutex_lock(&etm_b));
	MUST(pthread_mutex_unlock(&etm_b));
	MUST(pthread_mutex_unlock(&etm_a));
	return arg;
}

static void *maker2(void *arg)
{
	MUST(pthread_mutex_lock(&etm_b));
	MUST(pthread_mutex_lock(&etm_a));
	MUST(pthread_mutex_unlock(&etm_a));
	MUST(pthread_mutex_unlock(&etm_b));
	return arg;
}

static void *bystander(void *arg)
{
	MUST(pthread_mutex_lock(&etm_a));
	MUST(pthread_mutex_unlock(&etm_a));
	return arg;
}

static void run(void *(*fn)(void *))
{
	pthread_t t;
	MUST(pthread_create(&t, NULL, fn, NULL));
	MUST(pthread_join(t, NULL));
}

int main(void)
{
	for (int i = 0; i < 1100; i++)   /* past the threads kept apart */
		run(nothing);
	run(maker);
	run(maker2);
	run(bystander);
	puts("done");
	return 0;
}
