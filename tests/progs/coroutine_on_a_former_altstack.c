/* coroutine_on_a_former_altstack: a handler runs on a 64 KiB alternate
 * stack set with SS_AUTODISARM; the program then leaves it (argv[1]
 * "disable": turns it off; "jump": siglongjmp out of the handler, which
 * leaves it disarmed) and makes the same memory a coroutine stack of one
 * page with nothing mapped below (argv[2] "reuse": mprotect in place;
 * "remap": unmapped and mapped again at that address). The coroutine, 2.5
 * KiB deep, takes eight mutexes for the first time: the shim's first-use
 * stack captures must find the room of the one page, not of the stack the
 * shim saw a handler run on there (helper-75's reproducer). Prints "ok". */
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "progs.h"

#define ALT_SIZE (64 << 10)
#define NLOCKS 8
static pthread_mutex_t locks[NLOCKS] = { [0 ... NLOCKS - 1] = PTHREAD_MUTEX_INITIALIZER };
static ucontext_t main_ctx, co_ctx;
static sigjmp_buf out;
static int jump;

static void handler(int sig)
{
	(void)sig;
	if (jump)
		siglongjmp(out, 1);
}

static __attribute__((noinline)) void lock_deep(int depth)
{
	volatile char pad[depth];
	pad[0] = 1;
	for (int i = 0; i < NLOCKS; i++) {
		pthread_mutex_lock(&locks[i]);
		pthread_mutex_unlock(&locks[i]);
	}
	(void)pad[0];
}

static void body(void)
{
	lock_deep(2500);
}

int main(int argc, char **argv)
{
	pthread_mutex_t bound = PTHREAD_MUTEX_INITIALIZER;   /* the lazy binding's frames stay off the page */
	MUST(pthread_mutex_lock(&bound));
	MUST(pthread_mutex_unlock(&bound));
	jump = argc > 1 && !strcmp(argv[1], "jump");
	int remap = argc > 2 && !strcmp(argv[2], "remap");
	long page = sysconf(_SC_PAGESIZE);
	char *alt = mmap(NULL, ALT_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	MUST(alt == MAP_FAILED ? errno : 0);
	handle_on_alt_stack(SIGUSR1, alt, ALT_SIZE, (int)SS_AUTODISARM, handler);
	if (!sigsetjmp(out, 1))
		MUST(raise(SIGUSR1));
	if (!jump) {
		stack_t off = { .ss_flags = SS_DISABLE };
		MUST(sigaltstack(&off, NULL) ? errno : 0);
	}
	if (remap) {
		MUST(munmap(alt, ALT_SIZE) ? errno : 0);
		MUST(mmap(alt, ALT_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != alt);
	}
	MUST(mprotect(alt, ALT_SIZE - page, PROT_NONE) ? errno : 0);   /* one page left, unreadable below */
	MUST(getcontext(&co_ctx) ? errno : 0);
	co_ctx.uc_stack.ss_sp = alt + ALT_SIZE - page;
	co_ctx.uc_stack.ss_size = (size_t)page;
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, body, 0);
	MUST(swapcontext(&main_ctx, &co_ctx) ? errno : 0);
	printf("ok\n");
	return 0;
}
