/* edge_classes: 50 pairs of mutexes made by one function, each pair taken
 * nested (outer, then inner) by one function: 50 lock-order edges of one
 * class (objects made at the same stacks, taken at the same call sites),
 * whose stacks the shim captures once. Then pair 7 is taken the other way
 * round by another function, an edge of its own class: a cycle between
 * outer_7 and inner_7, one edge of it with its class's stacks. */
#include "progs.h"

#include <convoy.h>

#define PAIRS 50   /* tests/shim/fastpath.c says the same */
#define BACKWARDS 7

struct pair {
	pthread_mutex_t outer, inner;
	char outer_name[16], inner_name[16];
};

static __attribute__((noinline)) struct pair *make_pair(int i)
{
	struct pair *p = malloc(sizeof(*p));
	if (!p)
		exit(99);
	MUST(pthread_mutex_init(&p->outer, NULL));
	MUST(pthread_mutex_init(&p->inner, NULL));
	snprintf(p->outer_name, sizeof p->outer_name, "outer_%d", i);
	snprintf(p->inner_name, sizeof p->inner_name, "inner_%d", i);
	CONVOY_NAME(&p->outer, p->outer_name);
	CONVOY_NAME(&p->inner, p->inner_name);
	return p;
}

static __attribute__((noinline)) void forwards(struct pair *p)
{
	MUST(pthread_mutex_lock(&p->outer));
	MUST(pthread_mutex_lock(&p->inner));
	MUST(pthread_mutex_unlock(&p->inner));
	MUST(pthread_mutex_unlock(&p->outer));
}

static __attribute__((noinline)) void backwards(struct pair *p)
{
	MUST(pthread_mutex_lock(&p->inner));
	MUST(pthread_mutex_lock(&p->outer));
	MUST(pthread_mutex_unlock(&p->outer));
	MUST(pthread_mutex_unlock(&p->inner));
}

static void *nothing(void *arg)
{
	return arg;
}

int main(void)
{
	pthread_t th;   /* the multi-threaded path */
	MUST(pthread_create(&th, NULL, nothing, NULL));
	MUST(pthread_join(th, NULL));
	struct pair *pairs[PAIRS];
	for (int i = 0; i < PAIRS; i++)
		pairs[i] = make_pair(i);
	for (int i = 0; i < PAIRS; i++)
		forwards(pairs[i]);
	backwards(pairs[BACKWARDS]);
	printf("ok\n");
	return 0;
}
