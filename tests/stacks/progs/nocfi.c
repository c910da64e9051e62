/* nocfi.c — contention under a frame the unwinder cannot walk: evil() has
 * no unwind info and a garbage frame pointer. The stack must end there,
 * and the program must run on unchanged. */
#include "stacks_progs.h"

pthread_mutex_t nocfi_lock = PTHREAD_MUTEX_INITIALIZER;

void do_lock(void);
void evil(void);

__attribute__((noinline)) void do_lock(void)
{
	pthread_mutex_lock(&nocfi_lock);   /* DO_LOCK_LINE */
	pthread_mutex_unlock(&nocfi_lock);
}

/* evil: rbp = 0x1234, stack kept aligned, no CFI, calls do_lock. */
__asm__(".text\n"
	".globl evil\n"
	".type evil,@function\n"
	"evil:\n"
	"	push %rbp\n"
	"	mov $0x1234, %rbp\n"
	"	push %rbx\n"
	"	sub $8, %rsp\n"
	"	call do_lock\n"
	"	add $8, %rsp\n"
	"	pop %rbx\n"
	"	pop %rbp\n"
	"	ret\n"
	".size evil, .-evil\n");

static void *worker(void *arg)
{
	(void)arg;
	evil();
	return NULL;
}

int main(void)
{
	pthread_t th;
	pthread_mutex_lock(&nocfi_lock);
	MUST(pthread_create(&th, NULL, worker, NULL));
	wait_for_waiter(&nocfi_lock);
	pthread_mutex_unlock(&nocfi_lock);
	MUST(pthread_join(th, NULL));
	puts("nocfi: done");
	return 0;
}
