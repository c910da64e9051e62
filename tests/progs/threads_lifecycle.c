/* Thread names, start routines, creators, detached threads, and 100
 * short-lived threads that each lock short_lock once.
 *
 *   main            names itself "main-thr"
 *   self_named      pthread_setname_np(pthread_self(), "self-named")
 *   other_named     named "by-creator" by main
 *   detached_attr   created with PTHREAD_CREATE_DETACHED, names itself "det-attr"
 *   self_detach     pthread_detach(pthread_self()), names itself "det-self"
 *   creator_detached  detached by main right after pthread_create, "det-creator"
 *   nested_parent   "nest-parent", creates nested_child ("nest-child")
 *   short_worker x100 */
#include <sched.h>

#include "progs.h"

#define SHORT_THREADS 100

pthread_mutex_t short_lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t detached_done, named, may_exit;
static pid_t nested_parent_tid;

static void *self_named(void *arg)
{
	MUST(pthread_setname_np(pthread_self(), "self-named"));
	return arg;
}

static void *other_named(void *arg)
{
	sem_wait_all(&named);
	return arg;
}

static void *detached_attr(void *arg)
{
	pthread_setname_np(pthread_self(), "det-attr");
	sem_post(&detached_done);
	sem_wait_all(&may_exit);
	return arg;
}

static void *self_detach(void *arg)
{
	pthread_detach(pthread_self());
	pthread_setname_np(pthread_self(), "det-self");
	sem_post(&detached_done);
	sem_wait_all(&may_exit);
	return arg;
}

static void *creator_detached(void *arg)
{
	pthread_setname_np(pthread_self(), "det-creator");
	sem_post(&detached_done);
	sem_wait_all(&may_exit);
	return arg;
}

static void *nested_child(void *arg)
{
	pthread_setname_np(pthread_self(), "nest-child");
	return arg;
}

static void *nested_parent(void *arg)
{
	pthread_setname_np(pthread_self(), "nest-parent");
	nested_parent_tid = gettid();
	pthread_t t;
	MUST(pthread_create(&t, NULL, nested_child, NULL));
	MUST(pthread_join(t, NULL));
	return arg;
}

static void *short_worker(void *arg)
{
	pthread_mutex_lock(&short_lock);
	pthread_mutex_unlock(&short_lock);
	return arg;
}

int main(void)
{
	sem_init(&detached_done, 0, 0);
	sem_init(&named, 0, 0);
	sem_init(&may_exit, 0, 0);
	MUST(pthread_setname_np(pthread_self(), "main-thr"));

	pthread_t t1, t2, t3, t4, t5, t6;
	MUST(pthread_create(&t1, NULL, self_named, NULL));
	MUST(pthread_join(t1, NULL));
	MUST(pthread_create(&t2, NULL, other_named, NULL));
	MUST(pthread_setname_np(t2, "by-creator"));
	sem_post(&named);
	MUST(pthread_join(t2, NULL));

	pthread_attr_t a;
	MUST(pthread_attr_init(&a));
	MUST(pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED));
	MUST(pthread_create(&t3, &a, detached_attr, NULL));
	MUST(pthread_create(&t4, NULL, self_detach, NULL));
	/* On one CPU with main, the new thread usually has not started when main
	 * detaches it: the detach must be recorded all the same. */
	cpu_set_t all, one;
	MUST(sched_getaffinity(0, sizeof(all), &all) ? errno : 0);
	CPU_ZERO(&one);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &all)) {
			CPU_SET(c, &one);
			break;
		}
	MUST(sched_setaffinity(0, sizeof(one), &one) ? errno : 0);
	MUST(pthread_create(&t6, NULL, creator_detached, NULL));
	MUST(pthread_detach(t6));
	MUST(sched_setaffinity(0, sizeof(all), &all) ? errno : 0);
	for (int i = 0; i < 3; i++)
		sem_wait_all(&detached_done);

	MUST(pthread_create(&t5, NULL, nested_parent, NULL));
	MUST(pthread_join(t5, NULL));

	for (int i = 0; i < SHORT_THREADS; i++) {
		pthread_t t;
		MUST(pthread_create(&t, NULL, short_worker, NULL));
		MUST(pthread_join(t, NULL));
	}
	printf("main tid %d\nnest-parent tid %d\n", gettid(), nested_parent_tid);
	for (int i = 0; i < 3; i++)
		sem_post(&may_exit);
	return 0;
}
