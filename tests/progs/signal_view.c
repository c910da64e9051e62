/* What a program sees of the fatal signals' dispositions. For SIGSEGV,
 * SIGBUS, SIGABRT, SIGFPE and SIGILL it prints sigaction's view (handler,
 * flags, mask), then sets and reads them back through signal(), sigset(),
 * sysv_signal() and sigaction(). Then handlers of its own for other
 * signals (which the shim runs behind its trampoline), through every
 * interface, read back, raised, and after SA_RESETHAND took one away; as
 * a vfork child sees them (it shares the shim's memory, not its
 * dispositions); and a bad old-action pointer,
 * whose fault the program's handler jumps out of.
 * Then with "handle" it installs its own SIGSEGV handler, which prints
 * and calls _exit(42), and crashes. */
#include <setjmp.h>
#include <signal.h>
#include <sys/wait.h>

#include "progs.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"   /* sigset: the program under test uses it */

extern __sighandler_t sysv_signal(int, __sighandler_t);

pthread_mutex_t view_lock = PTHREAD_MUTEX_INITIALIZER;
static int *volatile null_ptr;

static const char *name(void (*h)(int))
{
	return h == SIG_DFL ? "SIG_DFL" : h == SIG_IGN ? "SIG_IGN" : h == SIG_ERR ? "SIG_ERR" : "handler";
}

static void on_segv(int sig)
{
	static const char msg[] = "own handler ran\n";
	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(98);
	_exit(42);
}

static void ignore(int sig) { (void)sig; }

static volatile sig_atomic_t usr_calls, info_calls, info_code;
static void on_usr(int sig) { (void)sig; usr_calls++; }
static void on_info(int sig, siginfo_t *si, void *context)
{
	(void)sig;
	(void)context;
	info_calls++;
	info_code = si->si_code;
}

static const char *whose(void (*h)(int))
{
	return h == on_usr ? "on_usr" : (void *)h == (void *)on_info ? "on_info" : h == ignore ? "ignore" : name(h);
}

static void show(int sig)
{
	struct sigaction sa;
	MUST(sigaction(sig, NULL, &sa) ? errno : 0);
	unsigned long mask = 0;
	for (int s = 1; s < 64; s++)
		if (sigismember(&sa.sa_mask, s) == 1)
			mask |= 1ul << s;
	printf("  %s: %s flags %#x mask %#lx\n", sigabbrev_np(sig), whose(sa.sa_handler), (unsigned)sa.sa_flags, mask);
}

static void program_handlers(void)
{
	printf("handlers of the program's own:\n");
	printf("signal(SIGUSR1, on_usr) returned %s\n", whose(signal(SIGUSR1, on_usr)));
	show(SIGUSR1);
	MUST(siginterrupt(SIGUSR1, 1) ? errno : 0);
	show(SIGUSR1);
	printf("signal(SIGUSR1, on_usr) again returned %s\n", whose(signal(SIGUSR1, on_usr)));
	show(SIGUSR1);
	MUST(raise(SIGUSR1));
	printf("sysv_signal(SIGUSR2, on_usr) returned %s\n", whose(sysv_signal(SIGUSR2, on_usr)));
	show(SIGUSR2);
	MUST(raise(SIGUSR2));
	printf("after SIGUSR2 was raised (SA_RESETHAND):\n");
	show(SIGUSR2);
	printf("sigset(SIGHUP, on_usr) returned %s\n", whose(sigset(SIGHUP, on_usr)));
	printf("sigset(SIGHUP, SIG_HOLD) returned %s\n", whose(sigset(SIGHUP, SIG_HOLD)));
	printf("sigset(SIGHUP, on_usr) returned %s\n", whose(sigset(SIGHUP, on_usr)));
	show(SIGHUP);
	struct sigaction sa = { .sa_sigaction = on_info, .sa_flags = SA_SIGINFO | SA_ONSTACK }, old;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	MUST(sigaction(SIGALRM, &sa, &old) ? errno : 0);
	printf("sigaction(SIGALRM, on_info) old %s flags %#x\n", whose(old.sa_handler), (unsigned)old.sa_flags);
	show(SIGALRM);
	union sigval v = { .sival_int = 7 };
	MUST(sigqueue(getpid(), SIGALRM, v) ? errno : 0);
	sa.sa_handler = SIG_IGN;
	sa.sa_flags = 0;
	MUST(sigaction(SIGALRM, &sa, &old) ? errno : 0);
	printf("sigaction(SIGALRM, SIG_IGN) old %s flags %#x\n", whose(old.sa_handler), (unsigned)old.sa_flags);
	show(SIGALRM);
	printf("on_usr ran %d times, on_info %d (si_code %d)\n", (int)usr_calls, (int)info_calls, (int)info_code);
}

/* What a vfork child's sigaction and signal() say of the parent's SIGUSR1
 * handler. */
static void vfork_child(void)
{
	signal(SIGUSR1, on_usr);
	int status;
	pid_t pid = vfork();
	if (pid == 0) {
		struct sigaction q;
		if (sigaction(SIGUSR1, NULL, &q) != 0)
			_exit(0);
		_exit((q.sa_handler == on_usr) * 2 + (signal(SIGUSR1, SIG_DFL) == on_usr));
	}
	MUST(waitpid(pid, &status, 0) == pid ? 0 : errno);
	printf("a vfork child sees SIGUSR1's handler: %s\n", WEXITSTATUS(status) == 3 ? "yes" : "no");
}

static sigjmp_buf fault_jump;
static void on_fault(int sig)
{
	(void)sig;
	siglongjmp(fault_jump, 1);
}

/* sigaction with an old-action pointer that faults (glibc writes it): the
 * program's SIGSEGV handler jumps out, and signals and dispositions work
 * on as before. */
static void bad_old_pointer(void)
{
	struct sigaction fault = { .sa_handler = on_fault }, usr = { .sa_handler = on_usr }, saved;
	sigemptyset(&fault.sa_mask);
	sigemptyset(&usr.sa_mask);
	MUST(sigaction(SIGSEGV, &fault, &saved) ? errno : 0);
	if (sigsetjmp(fault_jump, 1) == 0) {
		sigaction(SIGUSR2, &usr, (struct sigaction *)8);
		printf("no fault\n");
	}
	MUST(sigaction(SIGSEGV, &saved, NULL) ? errno : 0);
	usr_calls = 0;
	MUST(raise(SIGUSR1));
	printf("after the fault: on_usr ran %d times, signal() returned %s\n", (int)usr_calls,
	       whose(signal(SIGUSR2, on_usr)));
}

int main(int argc, char **argv)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };
	pthread_mutex_lock(&view_lock);
	pthread_mutex_unlock(&view_lock);
	printf("at start:\n");
	for (int i = 0; i < 5; i++)
		show(sigs[i]);
	printf("signal(SIGBUS, h) returned %s\n", name(signal(SIGBUS, ignore)));
	printf("signal(SIGBUS, SIG_DFL) returned %s\n", name(signal(SIGBUS, SIG_DFL)));
	printf("sigset(SIGFPE, SIG_IGN) returned %s\n", name(sigset(SIGFPE, SIG_IGN)));
	printf("sysv_signal(SIGFPE, SIG_DFL) returned %s\n", name(sysv_signal(SIGFPE, SIG_DFL)));
	struct sigaction sa = { .sa_handler = SIG_DFL, .sa_flags = SA_RESTART }, old;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR1);
	MUST(sigaction(SIGILL, &sa, &old) ? errno : 0);
	printf("sigaction(SIGILL, SIG_DFL with SA_RESTART) old %s flags %#x\n", name(old.sa_handler),
	       (unsigned)old.sa_flags);
	printf("after:\n");
	for (int i = 0; i < 5; i++)
		show(sigs[i]);
	program_handlers();
	vfork_child();
	bad_old_pointer();
	if (argc > 1 && !strcmp(argv[1], "handle")) {
		struct sigaction mine = { .sa_handler = on_segv };
		sigemptyset(&mine.sa_mask);
		MUST(sigaction(SIGSEGV, &mine, &old) ? errno : 0);
		printf("own handler installed over %s flags %#x\n", name(old.sa_handler), (unsigned)old.sa_flags);
		show(SIGSEGV);
		fflush(stdout);
		*null_ptr = 1;
	}
	return 0;
}
