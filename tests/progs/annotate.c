/* The annotation API (include/convoy.h). Runs unchanged without the shim;
 * under it:
 *   worker "annot-w": counters items = 300, depth = 7 (set);
 *                     progress batches = 50, bytes = 10,000
 *   main:             counter items = 5
 *   q_lock is named "work queue" (the name came from a stack buffer that is
 *   overwritten afterwards), done_cond "done signal", and check_lock, an
 *   errorcheck mutex, "checked" (its type must still read errorcheck). */
#include <convoy.h>

#include "progs.h"

pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;
pthread_mutex_t check_lock;

static void *annot_worker(void *arg)
{
	pthread_setname_np(pthread_self(), "annot-w");
	for (int i = 0; i < 100; i++) {
		pthread_mutex_lock(&q_lock);
		CONVOY_COUNTER_ADD("items", 3);
		pthread_mutex_unlock(&q_lock);
	}
	for (int i = 0; i < 50; i++)
		CONVOY_PROGRESS("batches");
	for (int i = 0; i < 10; i++)
		CONVOY_PROGRESS_N("bytes", 1000);
	CONVOY_COUNTER_SET("depth", 99);
	CONVOY_COUNTER_SET("depth", 7);
	return arg;
}

int main(void)
{
	char name[32];
	snprintf(name, sizeof(name), "work queue");
	CONVOY_NAME(&q_lock, name);
	memset(name, 'x', sizeof(name) - 1);   /* the shim must have kept a copy */
	CONVOY_NAME(&done_cond, "done signal");

	pthread_mutexattr_t a;
	MUST(pthread_mutexattr_init(&a));
	MUST(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK));
	MUST(pthread_mutex_init(&check_lock, &a));
	CONVOY_NAME(&check_lock, "checked");
	for (int i = 0; i < 4; i++) {
		pthread_mutex_lock(&check_lock);
		pthread_mutex_unlock(&check_lock);
	}

	pthread_t t;
	MUST(pthread_create(&t, NULL, annot_worker, NULL));
	MUST(pthread_join(t, NULL));
	for (int i = 0; i < 5; i++)
		CONVOY_COUNTER_ADD("items", 1);
	MUST(pthread_cond_signal(&done_cond));
	printf("annotated\n");
	return 0;
}
