/* The process ends while the shim writes its profile, in two ways that
 * once broke the write or the program:
 *   altstack:   a SIGUSR1 handler on a 1 MiB alternate stack calls _exit(3)
 *               while a helper keeps sending SIGUSR2, whose handler (also
 *               on the alternate stack) uses 16 KiB. Under the shim the
 *               nested handler was placed over the live frames (SIGSEGV).
 *   bighandler: main calls exit(3) while a helper keeps sending SIGUSR2,
 *               whose handler uses 512 KiB of stack: it overflowed the
 *               shim's writer stack (SIGSEGV).
 * Always exits 3 natively. */
#include <signal.h>

#include "progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile int go;
static volatile long nested;
static pid_t main_tid;

static __attribute__((noinline)) void use_stack(size_t bytes)
{
	volatile char *a = __builtin_alloca(bytes);
	for (size_t i = 0; i < bytes; i += 256)
		a[i] = (char)i;
}

static void on_usr2_small(int sig) { (void)sig; use_stack(16 << 10); nested++; }
static void on_usr2_big(int sig) { (void)sig; use_stack(512 << 10); nested++; }

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
	while (nested < 50)
		;
	_exit(3);
}

static void *sender(void *arg)
{
	while (!go) {
		MUST(pthread_mutex_lock(&m));
		MUST(pthread_mutex_unlock(&m));
	}
	for (;;)
		syscall(SYS_tgkill, getpid(), main_tid, SIGUSR2);
	return arg;
}

static void install(int sig, void (*handler)(int), int flags)
{
	struct sigaction sa = { .sa_handler = handler, .sa_flags = flags };
	sigemptyset(&sa.sa_mask);
	MUST(sigaction(sig, &sa, NULL));
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	main_tid = (pid_t)syscall(SYS_gettid);
	pthread_t sender_thread;
	if (strcmp(mode, "altstack") == 0) {
		stack_t ss = { .ss_sp = malloc(1 << 20), .ss_size = 1 << 20 };
		if (!ss.ss_sp || sigaltstack(&ss, NULL) != 0)
			abort();
		install(SIGUSR2, on_usr2_small, SA_ONSTACK);
		install(SIGUSR1, on_usr1, SA_ONSTACK);
	} else if (strcmp(mode, "bighandler") == 0) {
		install(SIGUSR2, on_usr2_big, 0);
	} else {
		return 2;
	}
	MUST(pthread_create(&sender_thread, NULL, sender, NULL));
	for (int i = 0; i < 100000; i++) {
		MUST(pthread_mutex_lock(&m));
		MUST(pthread_mutex_unlock(&m));
	}
	if (strcmp(mode, "altstack") == 0)
		raise(SIGUSR1);
	go = 1;
	while (nested < 50)
		;
	exit(3);
}
