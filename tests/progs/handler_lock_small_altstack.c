/* handler_lock_small_altstack: a handler of the program runs on an
 * alternate signal stack cut from main's own stack (a local array, with a
 * frame full of known bytes below it), a kernel signal frame and 1 KiB;
 * it locks a mutex another thread holds, which that thread releases once
 * the handler's thread sleeps in the futex wait on it (read from /proc,
 * never timed): a contended acquisition, whose slow path under the shim
 * would take a stack capture. Prints whether the bytes below the
 * alternate stack are intact. argv[1], how the stack is set or changed
 * first:
 *   none        set with sigaltstack
 *   syscall     set through syscall()
 *   revert      a handler on the normal stack turns the alternate stack
 *               off; the kernel puts it back at the handler's return
 *   vfork       a vfork child turns it off (its own, not the parent's)
 *   disable-in  the handler turns it off before it locks (the kernel says
 *               "none" while it still runs on it)
 *   rearm-in    the handler sets the same stack again before it locks (the
 *               kernel says "armed, not in use" while it runs on it)
 *   nested      the handler raises a second signal, whose handler locks on
 *               the same stack
 *   fork        the handler forks; the child takes the contended lock in
 *               the handler
 * argv[2] "autodisarm": the stack is set with SS_AUTODISARM (the kernel
 * then reports no alternate stack while a handler runs on it). */
#include <signal.h>
#include <sys/wait.h>

#include "progs.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t held;
static pid_t waiter_tid;
static const char *how;
static stack_t armed;   /* the stack as set */

static void *holder(void *arg)
{
	(void)arg;
	MUST(pthread_mutex_lock(&lock));
	MUST(sem_post(&held) ? errno : 0);
	while (!sleeps_in_futex_on(waiter_tid, &lock))
		sched_yield();
	MUST(pthread_mutex_unlock(&lock));
	return NULL;
}

/* A holder for the calling thread's contended lock (holder waits until
 * that thread sleeps on the lock). */
static pthread_t start_holder(void)
{
	waiter_tid = gettid();
	pthread_t t;
	MUST(pthread_create(&t, NULL, holder, NULL));
	sem_wait_all(&held);
	return t;
}

static void handler(int sig)
{
	if (!strcmp(how, "nested") && sig == SIGUSR1) {
		MUST(raise(SIGUSR2));   /* its handler, on this stack, locks */
		return;
	}
	if (!strcmp(how, "fork")) {
		pid_t child = fork();
		if (child == 0) {   /* the parent's holder is not in the child */
			pthread_t t = start_holder();
			pthread_mutex_lock(&lock);
			pthread_mutex_unlock(&lock);
			MUST(pthread_join(t, NULL));
			_exit(0);
		}
		int status;
		MUST(child < 0 || waitpid(child, &status, 0) != child ? errno : 0);
		printf("child %s %d\n", WIFEXITED(status) ? "exit" : "signal",
		       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		return;
	}
	if (!strcmp(how, "disable-in")) {
		stack_t off = { .ss_flags = SS_DISABLE };
		sigaltstack(&off, NULL);   /* EPERM on a stack it cannot be taken off */
	} else if (!strcmp(how, "rearm-in")) {
		sigaltstack(&armed, NULL);   /* EPERM likewise */
	}
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
}

/* On the normal stack (no SA_ONSTACK). */
static void disabler(int sig)
{
	(void)sig;
	stack_t off = { .ss_flags = SS_DISABLE };
	MUST(sigaltstack(&off, NULL) ? errno : 0);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);   /* the fork child's line before the parent's */
	how = argc > 1 ? argv[1] : "";
	int ss_flags = argc > 2 && !strcmp(argv[2], "autodisarm") ? (int)SS_AUTODISARM : 0;
	size_t depth = signal_frame_depth(), size = depth + 1024;
	if (!strcmp(how, "nested"))
		size = 2 * depth + 2048;
	else if (!strcmp(how, "fork"))
		size = depth + (32 << 10);   /* room for fork itself */
	char *alt = __builtin_alloca(size);   /* in main's frame */
	handle_on_alt_stack(SIGUSR1, alt, size, ss_flags, handler);
	armed = (stack_t){ .ss_sp = alt, .ss_size = size, .ss_flags = ss_flags };
	if (!strcmp(how, "syscall")) {
		stack_t off = { .ss_flags = SS_DISABLE };
		MUST(sigaltstack(&off, NULL) ? errno : 0);
		MUST(syscall(SYS_sigaltstack, &armed, NULL) ? errno : 0);
	} else if (!strcmp(how, "nested")) {
		handle_on_alt_stack(SIGUSR2, alt, size, ss_flags, handler);
	} else if (!strcmp(how, "revert")) {
		signal(SIGUSR2, disabler);
		MUST(raise(SIGUSR2));
	} else if (!strcmp(how, "vfork")) {
		pid_t child = vfork();
		if (child == 0) {
			stack_t off = { .ss_flags = SS_DISABLE };
			sigaltstack(&off, NULL);
			_exit(0);
		}
		int status;
		MUST(child < 0 || waitpid(child, &status, 0) != child ? errno : 0);
	}
	MUST(sem_init(&held, 0, 0) ? errno : 0);
	int forks = !strcmp(how, "fork");
	pthread_t t = forks ? 0 : start_holder();
	size_t changed = changed_below_raise(SIGUSR1);
	MUST(forks ? 0 : pthread_join(t, NULL));
	printf("changed %zu\n", changed);
	return 0;
}
