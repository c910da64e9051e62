/* setstack_coroutine DEPTH: a thread on a stack the program gives
 * (pthread_attr_setstack) switches to a coroutine on a 4 KiB stack mapped
 * just above it, which locks 64 fresh mutexes DEPTH bytes down (each a
 * first use: the shim's stack capture and module-map look must see that
 * this is not the thread's own stack, whose top it once did not know). */
#include <sys/mman.h>
#include <ucontext.h>

#include "progs.h"

#define PAGE 4096

static ucontext_t thread_ctx, coroutine;
static int depth;
static pthread_mutex_t fresh[64];

__attribute__((noinline)) static void lock_deep(int d)
{
	volatile char pad[d > 0 ? d : 1];
	pad[0] = 1;
	for (int i = 0; i < 64; i++) {
		MUST(pthread_mutex_lock(&fresh[i]));
		MUST(pthread_mutex_unlock(&fresh[i]));
	}
	(void)pad[0];
}

static void body(void)
{
	lock_deep(depth);
}

static void *thread(void *coroutine_stack)
{
	MUST(getcontext(&coroutine));
	coroutine.uc_stack.ss_sp = coroutine_stack;
	coroutine.uc_stack.ss_size = PAGE;
	coroutine.uc_link = &thread_ctx;
	makecontext(&coroutine, body, 0);
	MUST(swapcontext(&thread_ctx, &coroutine));
	return NULL;
}

int main(int argc, char **argv)
{
	depth = argc > 1 ? atoi(argv[1]) : 2500;
	size_t stack_size = 1 << 20;
	/* [thread stack][guard][coroutine stack][guard] */
	char *arena = mmap(NULL, stack_size + 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (arena == MAP_FAILED)
		MUST(errno);
	MUST(mprotect(arena + stack_size, PAGE, PROT_NONE));
	char *coroutine_stack = arena + stack_size + PAGE;
	MUST(mprotect(coroutine_stack + PAGE, PAGE, PROT_NONE));
	/* The lock functions bound here, on the main stack: a lazy binding
	 * on the coroutine's (2.5 KiB with xsavec) overflows it natively. */
	static pthread_mutex_t warm = PTHREAD_MUTEX_INITIALIZER;
	MUST(pthread_mutex_lock(&warm));
	MUST(pthread_mutex_unlock(&warm));
	pthread_attr_t attr;
	MUST(pthread_attr_init(&attr));
	MUST(pthread_attr_setstack(&attr, arena, stack_size));
	pthread_t t;
	MUST(pthread_create(&t, &attr, thread, coroutine_stack));
	MUST(pthread_join(t, NULL));
	printf("64 fresh mutexes locked %d bytes deep in a coroutine\n", depth);
	return 0;
}
