/* handler_lock_small_altstack: a handler of the program runs on an
 * alternate signal stack cut from main's own stack (a local array, with a
 * frame full of known bytes below it), a kernel signal frame and 1 KiB;
 * it locks a mutex another thread holds, which that thread releases once
 * main sleeps in the futex wait on it (read from /proc, never timed):
 * a contended acquisition, whose slow path under the shim would take a
 * stack capture. Prints whether the bytes below the alternate stack are
 * intact. The stack is set with sigaltstack, or with argv[1]
 * "autodisarm" with SS_AUTODISARM (the kernel then reports no alternate
 * stack while the handler runs on it), or "syscall" through syscall(). */
#include <signal.h>

#include "progs.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t held;
static pid_t main_tid;

static void *holder(void *arg)
{
	(void)arg;
	MUST(pthread_mutex_lock(&lock));
	MUST(sem_post(&held) ? errno : 0);
	while (!sleeps_in_futex_on(main_tid, &lock))
		sched_yield();
	MUST(pthread_mutex_unlock(&lock));
	return NULL;
}

static void handler(int sig)
{
	(void)sig;
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "sigaltstack";
	size_t size = signal_frame_depth() + 1024;
	char *alt = __builtin_alloca(size);   /* in main's frame */
	if (!strcmp(how, "syscall")) {
		handle_on_alt_stack(SIGUSR1, alt, size, 0, handler);
		stack_t off = { .ss_flags = SS_DISABLE }, ss = { .ss_sp = alt, .ss_size = size };
		MUST(sigaltstack(&off, NULL) ? errno : 0);
		MUST(syscall(SYS_sigaltstack, &ss, NULL) ? errno : 0);
	} else {
		handle_on_alt_stack(SIGUSR1, alt, size, strcmp(how, "autodisarm") ? 0 : (int)SS_AUTODISARM, handler);
	}
	main_tid = gettid();
	MUST(sem_init(&held, 0, 0) ? errno : 0);
	pthread_t t;
	MUST(pthread_create(&t, NULL, holder, NULL));
	sem_wait_all(&held);
	size_t changed = changed_below_raise(SIGUSR1);
	MUST(pthread_join(t, NULL));
	printf("changed %zu\n", changed);
	return 0;
}
