/* stack_switch.c — captures on stacks a thread switched to by an ordinary
 * call (as coroutine libraries do), one of them unmapped between two
 * captures at the same CFAs.
 *
 * switch_call runs a function on another stack through a frame-pointer
 * frame (CFA = rbp + 16), so an unwinder follows it back. The thread goes
 * from its own stack to s2, then to s1, and makes a mutex there (the shim
 * captures the init stack across all three stacks); unmaps s2; then goes
 * from its own stack straight to s1 and makes another at the same CFAs.
 * A capture that reused the first one's outer frames after checking them
 * on the stack would read s2 (preload/stacks.c keeps no capture with a
 * frame off the thread's own stack for that). With "carved", s1 and s2
 * are carved from an array on the thread's own stack, and s2 is made
 * unreadable instead (the chain through them is kept by no capture: not
 * one of calls on that stack). With "main", on the main thread (on_main).
 * Exits 0, "survived".
 */
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "stacks_progs.h"

/* switch_call(fn, arg, top): fn(arg) on the stack that ends at top. */
void switch_call(void (*fn)(void *), void *arg, void *top);
__asm__(".text\n.globl switch_call\n.type switch_call,@function\nswitch_call:\n"
	".cfi_startproc\n push %rbp\n .cfi_def_cfa_offset 16\n .cfi_offset rbp,-16\n"
	" mov %rsp,%rbp\n .cfi_def_cfa_register rbp\n mov %rdx,%rsp\n mov %rdi,%rax\n mov %rsi,%rdi\n"
	" call *%rax\n mov %rbp,%rsp\n pop %rbp\n .cfi_def_cfa rsp,8\n ret\n .cfi_endproc\n"
	".size switch_call,.-switch_call\n");

#define SZ (64 * 1024)
static char *s1, *s2;
static pthread_mutex_t ms[2];
static int k;

__attribute__((noinline)) static void make(void *arg)
{
	(void)arg;
	pthread_mutex_t *m = &ms[k++];
	pthread_mutex_init(m, NULL);
	pthread_mutex_lock(m);
	pthread_mutex_unlock(m);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void on_s2(void *arg)
{
	switch_call(make, arg, s1 + SZ);
	__asm__ volatile("" ::: "memory");
}

static void *nothing(void *arg)
{
	return arg;
}

static void *thread(void *arg)
{
	switch_call(on_s2, NULL, s2 + SZ);   /* own stack -> s2 -> s1: make */
	munmap(s2, SZ);
	switch_call(make, NULL, s1 + SZ);    /* own stack -> s1: make, the same CFAs on s1 */
	return arg;
}

static void *carved_thread(void *arg)
{
	char area[4 * SZ] __attribute__((aligned(4096)));
	memset(area, 0, sizeof(area));
	s1 = area;
	s2 = area + 2 * SZ;
	switch_call(on_s2, NULL, s2 + SZ);
	if (mprotect(s2, SZ, PROT_NONE) != 0)
		exit(99);
	switch_call(make, NULL, s1 + SZ);
	if (mprotect(s2, SZ, PROT_READ | PROT_WRITE) != 0)
		exit(99);
	__asm__ volatile("" ::"r"(area) : "memory");
	return arg;
}

/* With "main": s1 and s2 mapped inside the main thread's RLIMIT_STACK
 * range (a hint below the [stack] mapping, beyond the kernel's guard gap),
 * and the switches made on the main thread, whose captures the shim keeps
 * when they end in _start's frame: the chain through s1 and s2 does, and
 * lies in that range (helper-76's reproducer; 0cb8b8f crashed 3 of 3). */
static int on_main(void)
{
	uintptr_t top = ((uintptr_t)getauxval(AT_EXECFN) + 4096) & ~(uintptr_t)4095;
	struct rlimit rl;
	if (getrlimit(RLIMIT_STACK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || top < rl.rlim_cur)
		return 99;
	uintptr_t lo = top - rl.rlim_cur;
	s2 = mmap((void *)(lo + 2 * SZ), SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	s1 = mmap((void *)(lo + SZ), SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s1 == MAP_FAILED || s2 == MAP_FAILED)
		return 99;
	pthread_t t;   /* a thread made first: the process's multi-threaded paths */
	if (pthread_create(&t, NULL, nothing, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 99;
	switch_call(on_s2, NULL, s2 + SZ);
	munmap(s2, SZ);
	switch_call(make, NULL, s1 + SZ);
	printf("survived\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "main"))
		return on_main();
	int carved = argc > 1 && !strcmp(argv[1], "carved");
	pthread_attr_t a;
	if (pthread_attr_init(&a) != 0 || pthread_attr_setstacksize(&a, 8 * SZ) != 0)
		return 99;
	if (!carved) {
		/* Mapped before the thread: above its stack, where the shim
		 * lets a capture run. */
		s2 = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		s1 = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (s1 == MAP_FAILED || s2 == MAP_FAILED)
			return 99;
	}
	pthread_t t;
	if (pthread_create(&t, &a, carved ? carved_thread : thread, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 99;
	printf("survived\n");
	return 0;
}
