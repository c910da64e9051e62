/* libjumpalarm.so: its constructor, which runs before the shim's, installs
 * a SIGALRM handler that siglongjmps to jumpalarm_back while
 * jumpalarm_armed: one the shim's trampoline does not wrap
 * (tests/progs/jump_before_shim.c). */
#include <setjmp.h>
#include <signal.h>

sigjmp_buf jumpalarm_back;
volatile sig_atomic_t jumpalarm_armed;

static void on_alarm(int sig)
{
	(void)sig;
	if (jumpalarm_armed) {
		jumpalarm_armed = 0;
		siglongjmp(jumpalarm_back, 1);
	}
}

__attribute__((constructor)) static void jumpalarm_init(void)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
}
