/* A program under a seccomp filter whose action is to kill the process:
 * the shim must make no system call the program does not make once the
 * filter is in place.
 *   seccomp_filter later: two threads lock a mutex (recorded); four more
 *     start and wait; then the program allows every thread (TSYNC) only
 *     the calls it makes itself from there on (futex, write, exit, ...: no
 *     mmap, no sched_yield) and the four lock 2,000 mutexes each that they
 *     never used before, then contend on one.
 *   seccomp_filter exec: the program forbids calls it never makes but the
 *     shim did (perf_event_open, gettid, getrusage, sched_getaffinity,
 *     renameat2) and execs itself with "run" under that filter.
 * Prints the count the threads reached. Once killed by SIGSYS under the
 * shim (gettid at a thread's start, perf_event_open at load, mmap for the
 * records of the new mutexes; madvise populating the shim's pages after a
 * wait the filter came during: the filter lets madvise through only as
 * glibc calls it). */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "progs.h"

#define THREADS 4
#define ROUNDS 100000

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long count;

static void *worker(void *arg)
{
	for (int i = 0; i < ROUNDS; i++) {
		MUST(pthread_mutex_lock(&m));
		count++;
		MUST(pthread_mutex_unlock(&m));
	}
	return arg;
}

static void run_threads(int n)
{
	pthread_t t[THREADS];
	for (int i = 0; i < n; i++)
		MUST(pthread_create(&t[i], NULL, worker, NULL));
	for (int i = 0; i < n; i++)
		MUST(pthread_join(t[i], NULL));
}

#define LOAD_ARCH BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch))
#define ONLY_X86_64                                                                          \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),                        \
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)
#define LOAD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define IF_NR(nr, action) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, (action))
#define ALLOW(nr) IF_NR(nr, SECCOMP_RET_ALLOW)
#define KILL(nr) IF_NR(nr, SECCOMP_RET_KILL_PROCESS)

static void install(struct sock_filter *f, unsigned short n, bool all_threads)
{
	struct sock_fprog prog = { .len = n, .filter = f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    (all_threads ? syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog)
			 : prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) != 0) {
		perror("seccomp");
		exit(2);
	}
}

#define FRESH 2000
static pthread_barrier_t filtered;

/* Waits for the filter, then takes FRESH mutexes it never used, then the shared one. */
static void *late_worker(void *arg)
{
	static pthread_mutex_t fresh[THREADS][FRESH];
	pthread_mutex_t *mine = fresh[(intptr_t)arg];
	pthread_barrier_wait(&filtered);
	for (int i = 0; i < FRESH; i++) {
		MUST(pthread_mutex_lock(&mine[i]));
		MUST(pthread_mutex_unlock(&mine[i]));
	}
	return worker(NULL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (strcmp(mode, "later") == 0) {
		run_threads(2);
		printf("before the filter: %ld\n", count);
		fflush(stdout);
		MUST(pthread_barrier_init(&filtered, NULL, THREADS + 1));
		pthread_t t[THREADS];
		for (intptr_t i = 0; i < THREADS; i++)
			MUST(pthread_create(&t[i], NULL, late_worker, (void *)i));
		struct sock_filter only[] = {
			LOAD_ARCH, ONLY_X86_64, LOAD_NR,
			/* madvise only as glibc calls it here (a thread's stack
			 * given back at its exit, a heap trimmed) */
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_madvise, 0, 4),
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MADV_DONTNEED, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
			ALLOW(SYS_futex), ALLOW(SYS_rt_sigprocmask), ALLOW(SYS_exit),
			ALLOW(SYS_exit_group), ALLOW(SYS_write), ALLOW(SYS_rt_sigreturn), ALLOW(SYS_newfstatat),
			ALLOW(SYS_set_robust_list), ALLOW(SYS_rseq),   /* threads still starting */
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		};
		install(only, sizeof(only) / sizeof(only[0]), true);
		pthread_barrier_wait(&filtered);
		for (int i = 0; i < THREADS; i++)
			MUST(pthread_join(t[i], NULL));
	} else if (strcmp(mode, "exec") == 0) {
		struct sock_filter never[] = {
			LOAD_ARCH, ONLY_X86_64, LOAD_NR,
			KILL(SYS_perf_event_open), KILL(SYS_gettid), KILL(SYS_getrusage), KILL(SYS_sched_getaffinity),
			KILL(SYS_renameat2),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		install(never, sizeof(never) / sizeof(never[0]), false);
		execl("/proc/self/exe", argv[0], "run", (char *)NULL);
		perror("exec");
		return 3;
	} else if (strcmp(mode, "run") == 0) {
		run_threads(THREADS);
	} else {
		return 2;
	}
	printf("count: %ld\n", count);
	return 0;
}
