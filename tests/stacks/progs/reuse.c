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
 * three back has mid's); through recursions 41 to 55 deep down paths of
 * their own (rec calls itself from one of two places), more frames than
 * the shim keeps for a thread (it starts over); through a function whose
 * frame's size its pc does not fix (alloca), reached through two callers
 * of different frame sizes from one call site, so that the frame inside
 * it is where it was and its own is not (the other caller's frame never
 * written, its old return-address slots still there); a capture kept, one not kept, and
 * the first one's stack again; twice in a row
 * through the same path and the same call in body
 * (the whole stack is the previous one), and through a recursion deeper
 * than a capture keeps (cut, not kept for the next) then a shallower one
 * over the same frames. On a thread of its own, or with argv[1] "main" on
 * the main thread's stack. Prints "ADDR PATH RECS" for each: the function
 * the stack must show below body, and how many frames of rec it must
 * have (-1: the cut one, not checked).
 */
#include <alloca.h>
#include <stdint.h>
#include <string.h>

#include "stacks_progs.h"

#define N 8

static pthread_mutex_t ms[9 * N + 14];

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

static unsigned variant;   /* bit d: rec at depth d calls itself from its second call */

__attribute__((noinline)) static void rec(int depth, pthread_mutex_t *m)
{
	if (depth == 0) {
		mid(m);
	} else if ((variant >> (depth & 31)) & 1) {
		rec(depth - 1, m);
		__asm__ volatile("nop" ::: "memory");   /* another return address */
	} else {
		rec(depth - 1, m);
	}
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

/* A function whose frame's size its pc does not fix. probing: where its
 * alloca lands (f_alloca_at), without making a mutex. */
static int probing;
static uintptr_t f_alloca_at;

__attribute__((noinline)) static void f_alloca(size_t n, pthread_mutex_t *m)
{
	char *p = alloca(n);
	__asm__ volatile("" : : "r"(p) : "memory");
	f_alloca_at = (uintptr_t)p;
	if (!probing)
		mid(m);
	__asm__ volatile("" ::: "memory");
}

/* via_a's and via_b's frames are never written: the return-address slot
 * of f_alloca's call from via_a lies in via_b's, and stays as it was. */
__attribute__((noinline)) static void via_a(size_t n, pthread_mutex_t *m)
{
	volatile char pad[256];
	__asm__ volatile("" : : "r"(pad) : "memory");
	f_alloca(n, m);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void via_b(size_t n, pthread_mutex_t *m)
{
	volatile char pad[512];
	__asm__ volatile("" : : "r"(pad) : "memory");
	f_alloca(n, m);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void via_c(size_t n, pthread_mutex_t *m)
{
	volatile char pad[4096];
	__asm__ volatile("" : : "r"(pad) : "memory");
	mid(m);
	__asm__ volatile("" ::: "memory");
}

/* One call site for the three: the return address into the caller is
 * the same whichever is called. */
static void (*volatile const vias[3])(size_t, pthread_mutex_t *) = { via_a, via_b, via_c };

__attribute__((noinline)) static void call_via(int which, size_t n, pthread_mutex_t *m)
{
	vias[which](n, m);
	__asm__ volatile("" ::: "memory");
}

/* f_alloca's size through via_b that puts its alloca, so mid's frame,
 * where via_a's of n puts them; 0: none found. */
static size_t same_place(size_t n)
{
	probing = 1;
	call_via(0, n, NULL);
	uintptr_t want = f_alloca_at;
	call_via(1, n, NULL);
	size_t other = n - (want - f_alloca_at);
	call_via(1, other, NULL);
	probing = 0;
	return f_alloca_at == want ? other : 0;
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
		variant = 0x9e3779b9u * (unsigned)(i + 1);
		depthn(depth, m);
		printf("%p depthn %d\n", (void *)m, depth + 1);
	}
	variant = 0;
	/* Through via_a, via_c, via_b and via_c in turn, twice, from one
	 * call site (call_via's): under via_b mid's frame is where via_a had
	 * it and f_alloca's is not (helper-88's program). Printed after:
	 * printf would write over the old slots. */
	size_t n = 2048, other = same_place(n);
	static const int order[8] = { 0, 2, 1, 2, 0, 2, 1, 2 };
	static const char *const path[3] = { "f_alloca,via_a,call_via", "f_alloca,via_b,call_via", "via_c,call_via" };
	pthread_mutex_t *made[8];
	for (int i = 0; i < 8; i++)
		made[i] = &ms[k++];
	for (int i = 0; i < 8; i++)
		if (order[i] != 1 || other)
			call_via(order[i], order[i] == 1 ? other : n, made[i]);
	for (int i = 0; i < 8; i++)
		printf("%p %s %d\n", (void *)made[i], path[order[i]], order[i] != 1 || other ? 0 : -1);
	/* A kept capture, one not kept, then the kept one's stack again. */
	for (int i = 0; i < 2; i++) {
		again(&ms[k]);
		printf("%p again 0\n", (void *)&ms[k++]);
		deep(&ms[k]);
		printf("%p deep -1\n", (void *)&ms[k++]);
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
