/* exit_on_carved_altstack: a handler of the program's runs on an alternate
 * signal stack of 6 KiB carved from a frame on the main thread's stack
 * (64 KiB of known bytes below it) and calls exit(3) there: the process's
 * normal end, whose profile the shim writes from its destructor. By the
 * thread's bounds that stack has room; the write must not run on it
 * (preload/alloc.c, room_here), or it runs past its 6 KiB into the frame
 * below. This program traces a child that does it and, stopped at the
 * child's exit (PTRACE_O_TRACEEXIT: after the destructors, before the
 * memory goes), counts the known bytes that changed. argv[1]: "plain" (a
 * stack the kernel reports while the handler is on it), "autodisarm"
 * (SS_AUTODISARM: reported as none; the shim's trampoline notes it) or
 * "raw" (SS_AUTODISARM, and a handler installed with a raw rt_sigaction,
 * which no trampoline of the shim's runs). Prints "changed N, exit S";
 * exits 77 where ptrace is refused. */
#include <signal.h>
#include <sys/syscall.h>

#include "progs.h"
#include "shimtrace.h"

#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31)
#endif
#define ALT_STACK 6144
#define KNOWN_BELOW (64 << 10)

static const char *mode;
static unsigned char *volatile known;   /* in the child; read by the tracer at the same address */

static void on_usr1(int sig)
{
	(void)sig;
	exit(3);
}

/* The kernel's struct for rt_sigaction (x86-64). */
struct kernel_sigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	unsigned long mask;
};

/* SIGUSR1's disposition, set by sigaction (through the shim's trampoline),
 * made over with a raw rt_sigaction: on_usr1 itself, glibc's restorer
 * kept, so that no trampoline of the shim's runs it. */
static void handle_raw(void)
{
	struct kernel_sigaction k;
	MUST(syscall(SYS_rt_sigaction, SIGUSR1, NULL, &k, 8) ? errno : 0);
	k.handler = on_usr1;
	MUST(syscall(SYS_rt_sigaction, SIGUSR1, &k, NULL, 8) ? errno : 0);
}

static __attribute__((noinline)) int child(void)
{
	char frame[KNOWN_BELOW + ALT_STACK];
	memset(frame, 0xA5, sizeof(frame));
	known = (unsigned char *)frame;
	int flags = strcmp(mode, "plain") != 0 ? (int)SS_AUTODISARM : 0;
	handle_on_alt_stack(SIGUSR1, frame + KNOWN_BELOW, ALT_STACK, flags, on_usr1);
	if (!strcmp(mode, "raw"))
		handle_raw();
	raise(SIGUSR1);
	return 99;   /* not reached: the handler exits */
}

int main(int argc, char **argv)
{
	mode = argc > 1 ? argv[1] : "plain";
	pid_t pid = traced_child(child);
	if (pid == 0) {
		puts("ptrace is not allowed here");
		return 77;
	}
	MUST(pid < 0 || ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)PTRACE_O_TRACEEXIT) ? errno : 0);
	int status, sig = 0;
	for (;;) {   /* on to its exit, its own signals passed on */
		MUST(ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig) || waitpid(pid, &status, 0) < 0 ? errno : 0);
		MUST(WIFSTOPPED(status) ? 0 : ECHILD);
		if (status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8)))
			break;
		sig = WSTOPSIG(status);
	}
	unsigned long code;
	MUST(ptrace(PTRACE_GETEVENTMSG, pid, NULL, &code) ? errno : 0);
	errno = 0;
	const unsigned char *at = (const unsigned char *)peek(pid, &known);
	MUST(errno);
	size_t changed = 0;
	for (size_t i = 0; i < KNOWN_BELOW; i += sizeof(long)) {
		long word = peek(pid, at + i);
		MUST(errno);
		for (size_t b = 0; b < sizeof(long); b++)
			changed += ((unsigned long)word >> (8 * b) & 0xff) != 0xA5;
	}
	MUST(ptrace(PTRACE_CONT, pid, NULL, NULL) || waitpid(pid, &status, 0) < 0 ? errno : 0);
	printf("changed %zu, exit %d\n", changed, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
