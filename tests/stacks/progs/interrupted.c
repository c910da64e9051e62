/* interrupted.c — a lock made in a signal handler that interrupted a
 * function at its first instruction.
 *
 * interrupted() begins with ud2: the SIGILL handler makes a mutex (the
 * shim captures its init stack: the handler, the signal frame, then the
 * interrupted function at the faulting instruction itself, not at a
 * return address) and steps the interrupted function past the ud2. A
 * reader that looked the interrupted pc up one byte early, as it must a
 * return address, would name the function laid out just before it,
 * before_interrupted. The mutex is used once, so that it is in the
 * profile. Prints "interrupted: done".
 */
#include <signal.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "stacks_progs.h"

/* Two functions side by side, with call-frame information, the second's
 * first instruction a ud2 (two bytes), the first's last byte just before
 * it: one asm block, so that nothing comes between them. */
void before_interrupted(void);
void interrupted(void);
__asm__(".text\n"
	".globl before_interrupted\n"
	".type before_interrupted, @function\n"
	"before_interrupted:\n"
	".cfi_startproc\n"
	"ret\n"
	".cfi_endproc\n"
	".size before_interrupted, .-before_interrupted\n"
	".globl interrupted\n"
	".type interrupted, @function\n"
	"interrupted:\n"
	".cfi_startproc\n"
	"ud2\n"
	"ret\n"
	".cfi_endproc\n"
	".size interrupted, .-interrupted\n");

static pthread_mutex_t *made;

static void on_sigill(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	(void)si;
	ucontext_t *uc = ucv;
	made = malloc(sizeof(*made));
	if (!made)
		_exit(99);
	pthread_mutex_init(made, NULL);   /* MADE_LINE */
	uc->uc_mcontext.gregs[REG_RIP] += 2;   /* past the ud2 */
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigill;
	sa.sa_flags = SA_SIGINFO;
	if (sigaction(SIGILL, &sa, NULL) != 0)
		return 2;
	interrupted();
	pthread_mutex_lock(made);
	pthread_mutex_unlock(made);
	puts("interrupted: done");
	return 0;
}
