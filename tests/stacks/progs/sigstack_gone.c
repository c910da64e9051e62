/* sigstack_gone.c — a capture in a signal handler whose interrupted stack
 * was unmapped before the next capture, at the same CFAs.
 *
 * A thread runs a coroutine (makecontext) on a stack of its own; the
 * coroutine raises a signal whose handler, on the thread's alternate
 * signal stack, makes a mutex (the shim captures the init stack: handler,
 * signal frame, the coroutine's frames). The coroutine ends, its stack is
 * unmapped, and the same signal comes again: the handler runs at the same
 * CFAs on the alternate stack. A capture that reused the previous one's
 * outer frames after checking them on the stack would read the unmapped
 * one (preload/stacks.c keeps no capture with a signal frame for that).
 * Exits 0 and prints "survived".
 */
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "stacks_progs.h"

#define SZ (256 * 1024)
static char *altstack, *costack;
static ucontext_t main_uc, co_uc;

__attribute__((noinline)) static void handler(int sig)
{
	(void)sig;
	pthread_mutex_t m;
	pthread_mutex_init(&m, NULL);
	pthread_mutex_destroy(&m);
}

static void coroutine(void)
{
	raise(SIGUSR1);
}

static void *thread(void *arg)
{
	stack_t ss = { .ss_sp = altstack, .ss_size = SZ };
	if (sigaltstack(&ss, NULL) != 0 || getcontext(&co_uc) != 0)
		exit(99);
	co_uc.uc_stack.ss_sp = costack;
	co_uc.uc_stack.ss_size = SZ;
	co_uc.uc_link = &main_uc;
	makecontext(&co_uc, coroutine, 0);
	if (swapcontext(&main_uc, &co_uc) != 0)
		exit(99);
	munmap(costack, SZ);
	raise(SIGUSR1);
	return arg;
}

int main(void)
{
	costack = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	altstack = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (costack == MAP_FAILED || altstack == MAP_FAILED)
		exit(99);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	pthread_t t;
	if (pthread_create(&t, NULL, thread, NULL) != 0 || pthread_join(t, NULL) != 0)
		exit(99);
	printf("survived\n");
	return 0;
}
