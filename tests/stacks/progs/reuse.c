/* reuse.c — captures in a row that share most of their frames: the shim
 * reuses the outer frames of its recent captures while their return
 * addresses are still on the stack where they were (preload/stacks.c,
 * reuse_known), and must never reuse a frame that changed.
 *
 * Mutexes are made in one loop, in turn through outer_a and outer_b, two
 * functions of one shape that call the same mid and leaf: consecutive
 * captures have the same frames at the same addresses up to the frame of
 * outer_a or outer_b, where only the return address differs. Then through
 * a recursion whose depth changes from one mutex to the next (the frames
 * move); through outer_a, outer_b and outer_c in turn (the capture two
 * back has leaf's frame where it is now, its callers no longer; the one
 * three back has mid's); through recursions 41 to 55 deep, more frames
 * than the shim keeps for a thread (it starts over); twice in a row
 * through the same path and the same call in body
 * (the whole stack is the previous one), and through a recursion deeper
 * than a capture keeps (cut, not kept for the next) then a shallower one
 * over the same frames. On a thread of its own, or with argv[1] "main" on
 * the main thread's stack. Prints "ADDR PATH RECS" for each: the function
 * the stack must show below body, and how many frames of rec it must
 * have (-1: the cut one, not checked).
 */
#include <string.h>

#include "stacks_progs.h"

#define N 8

static pthread_mutex_t ms[9 * N + 4];

static void *nothing(void *arg)
{
	return arg;
}

__attribute__((noinline)) static void leaf(pthread_mutex_t *m)
{
	pthread_mutex_init(m, NULL);
	pthread_mutex_lock(m);
	pthread_mutex_unlock(m);
}

__attribute__((noinline)) static void mid(pthread_mutex_t *m)
{
	leaf(m);
	__asm__ volatile("" ::: "memory");   /* not a tail call */
}

__attribute__((noinline)) static void outer_a(pthread_mutex_t *m)
{
	mid(m);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void outer_b(pthread_mutex_t *m)
{
	mid(m);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void outer_c(pthread_mutex_t *m)
{
	mid(m);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void rec(int depth, pthread_mutex_t *m)
{
	if (depth == 0)
		mid(m);
	else
		rec(depth - 1, m);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void depth1(pthread_mutex_t *m)
{
	rec(1, m);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void depth2(pthread_mutex_t *m)
{
	rec(2, m);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void deep(pthread_mutex_t *m)
{
	rec(200, m);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void shallow(pthread_mutex_t *m)
{
	rec(100, m);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void depthn(int depth, pthread_mutex_t *m)
{
	rec(depth, m);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void again(pthread_mutex_t *m)
{
	mid(m);
	__asm__ volatile("" ::: "memory");
}

static int twice;

/* In a thread of its own: the shim knows a created thread's stack bounds
 * (the main thread's only under a finite RLIMIT_STACK). */
static void *body(void *arg)
{
	int k = 0;
	for (int i = 0; i < N; i++) {
		pthread_mutex_t *m = &ms[k++];
		(i % 2 ? outer_b : outer_a)(m);
		printf("%p %s 0\n", (void *)m, i % 2 ? "outer_b" : "outer_a");
	}
	for (int i = 0; i < N; i++) {
		pthread_mutex_t *m = &ms[k++];
		(i % 2 ? depth2 : depth1)(m);
		printf("%p %s %d\n", (void *)m, i % 2 ? "depth2" : "depth1", i % 2 ? 3 : 2);
	}
	for (int i = 0; i < 3 * N; i++) {
		static void (*const outer[3])(pthread_mutex_t *) = { outer_a, outer_b, outer_c };
		static const char *const name[3] = { "outer_a", "outer_b", "outer_c" };
		pthread_mutex_t *m = &ms[k++];
		outer[i % 3](m);
		printf("%p %s 0\n", (void *)m, name[i % 3]);
	}
	for (int i = 0; i < 2 * N; i++) {
		int depth = 40 + (i * 7) % 15;
		pthread_mutex_t *m = &ms[k++];
		depthn(depth, m);
		printf("%p depthn %d\n", (void *)m, depth + 1);
	}
	for (int i = 0; i < twice; i++) {
		pthread_mutex_t *m = &ms[k++];
		again(m);
		printf("%p again 0\n", (void *)m);
	}
	deep(&ms[k]);
	printf("%p deep -1\n", (void *)&ms[k++]);
	shallow(&ms[k]);
	printf("%p shallow 101\n", (void *)&ms[k++]);
	return arg;
}

int main(int argc, char **argv)
{
	twice = argc > 1 ? argc : argc + 1;   /* 2, and a loop the compiler keeps */
	if (argc > 1 && !strcmp(argv[1], "main")) {   /* the main thread's stack */
		pthread_t t;   /* a thread made first: the process's multi-threaded paths */
		if (pthread_create(&t, NULL, nothing, NULL) != 0 || pthread_join(t, NULL) != 0)
			return 99;
		body(NULL);
		return 0;
	}
	pthread_t t;
	if (pthread_create(&t, NULL, body, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 99;
	return 0;
}
