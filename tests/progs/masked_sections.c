/* masked_sections.c — the shim's critical sections, in a program whose
 * signal handler it cannot wrap (installed by a raw rt_sigaction, so each
 * section blocks signals: preload/lock.c), leave the thread's signal mask
 * and errno as they were (tests/shim/trust.c).
 *   masked_sections mask   a thread that blocked SIGUSR2 and glibc's own
 *                          two signals (SIGRTMIN, SIGRTMIN + 1: only a raw
 *                          system call can) makes and uses 20,000 mutexes;
 *                          prints how many times its mask had changed after
 *                          one (glibc's pthread_sigmask, restoring, drops
 *                          those two)
 *   masked_sections errno  under a seccomp filter the shim does not see
 *                          (installed by the program's own syscall
 *                          instruction) that fails rt_sigprocmask with
 *                          EPERM: sigaction, which the shim's signals lock
 *                          guards with such a section outside its
 *                          reentrancy guard, leaves errno 0 */
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>

#include "progs.h"

/* The kernel's signal set, read and set without glibc. */
static uint64_t mask_now(void)
{
	uint64_t m = 0;
	MUST(syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &m, sizeof(m)) ? errno : 0);
	return m;
}

#define KERNEL_SA_RESTORER 0x04000000   /* not in glibc's headers */
struct kernel_sigaction { void (*handler)(int); unsigned long flags; void (*restorer)(void); uint64_t mask; };
extern void masked_sections_restorer(void);
__asm__(".text\n.globl masked_sections_restorer\nmasked_sections_restorer:\n\tmov $15, %eax\n\tsyscall\n");

static void on_usr1(int sig)
{
	(void)sig;
}

/* A handler the shim never sees installed: its sections block signals. */
static void raw_handler(void)
{
	struct kernel_sigaction a = { on_usr1, KERNEL_SA_RESTORER, masked_sections_restorer, 0 };
	MUST(syscall(SYS_rt_sigaction, SIGUSR1, &a, NULL, sizeof(a.mask)) ? errno : 0);
}

static void *churn(void *arg)
{
	uint64_t before = (1ull << (SIGUSR2 - 1)) | (3ull << (__SIGRTMIN - 1));   /* glibc's own two: 32 and 33 */
	MUST(syscall(SYS_rt_sigprocmask, SIG_SETMASK, &before, NULL, sizeof(before)) ? errno : 0);
	long changed = 0;
	for (int i = 0; i < 20000; i++) {
		pthread_mutex_t m;
		MUST(pthread_mutex_init(&m, NULL));
		MUST(pthread_mutex_lock(&m));
		MUST(pthread_mutex_unlock(&m));
		MUST(pthread_mutex_destroy(&m));
		changed += mask_now() != before;
	}
	printf("mask changed after %ld of 20000 mutexes\n", changed);
	return arg;
}

/* seccomp(SECCOMP_SET_MODE_FILTER) by the program's own instruction. */
static long own_seccomp(const struct sock_fprog *prog)
{
	long rc;
	__asm__ volatile("syscall" : "=a"(rc) : "0"((long)SYS_seccomp), "D"(SECCOMP_SET_MODE_FILTER), "S"(0), "d"(prog)
			 : "rcx", "r11", "memory");
	return rc;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	raw_handler();
	if (!strcmp(mode, "mask")) {
		pthread_t t;
		MUST(pthread_create(&t, NULL, churn, NULL));
		MUST(pthread_join(t, NULL));
	} else if (!strcmp(mode, "errno")) {
		struct sock_filter f[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigprocmask, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
		MUST(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ? errno : 0);
		MUST(own_seccomp(&prog) ? EINVAL : 0);
		int changed = 0;
		for (int i = 0; i < 3; i++) {
			errno = 0;
			struct sigaction sa = { .sa_handler = SIG_IGN };
			MUST(sigaction(SIGUSR2, &sa, NULL));
			changed += errno != 0;
		}
		printf("errno changed by %d of 3 sigaction calls\n", changed);
	} else {
		fprintf(stderr, "usage: masked_sections mask|errno\n");
		return 2;
	}
	return 0;
}
