/* progs.h — shared by the small programs the shim tests run.
 *
 * Each program exercises one behaviour and prints every return code with its
 * name ("relock: 35 EDEADLK"), so a test can diff its output with and without
 * the shim and read the diff. Set-up calls that must succeed go through
 * MUST(), which exits with status 99 (and says why) when one fails.
 */
#ifndef CONVOY_TEST_PROGS_H
#define CONVOY_TEST_PROGS_H

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static inline const char *rc_name(int rc)
{
	if (rc == 0)
		return "OK";
	const char *n = strerrorname_np(rc);
	return n ? n : "?";
}

/* Prints "label: rc NAME" and yields rc. */
#define SHOW(label, expr)                                                  \
	({                                                                 \
		int show_rc_ = (expr);                                     \
		printf("%s: %d %s\n", (label), show_rc_, rc_name(show_rc_)); \
		show_rc_;                                                  \
	})

#define MUST(expr)                                                                     \
	do {                                                                           \
		int must_rc_ = (expr);                                                 \
		if (must_rc_ != 0) {                                                   \
			fprintf(stderr, "%s:%d: %s: %d %s\n", __FILE__, __LINE__, #expr, \
				must_rc_, rc_name(must_rc_));                          \
			exit(99);                                                      \
		}                                                                      \
	} while (0)

/* An absolute deadline ms milliseconds from now on clock clk. */
static inline struct timespec deadline_ms(clockid_t clk, long ms)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

/* Semaphores are not interposed: they order the threads of a program
 * without adding to the counts the tests check. */
static inline void sem_wait_all(sem_t *s)
{
	while (sem_wait(s) != 0 && errno == EINTR)
		;
}

/* Whether thread tid of this process sleeps in a futex call now, on word
 * if it is not NULL (/proc/.../syscall: the number, then the arguments). */
static inline int sleeps_in_futex_on(pid_t tid, const void *word)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	FILE *f = fopen(path, "re");
	long nr = -1;
	unsigned long long arg = 0;
	if (f) {
		if (fscanf(f, "%ld %llx", &nr, &arg) < 1)
			nr = -1;
		fclose(f);
	}
	return nr == SYS_futex && (!word || arg == (unsigned long long)(uintptr_t)word);
}

static inline int sleeps_in_futex(pid_t tid)
{
	return sleeps_in_futex_on(tid, NULL);
}

/* handler on sig, with no flags and no signal blocked while it runs. */
static inline void handle_signal(int sig, void (*handler)(int))
{
	struct sigaction sa = { .sa_handler = handler };
	sigemptyset(&sa.sa_mask);
	MUST(sigaction(sig, &sa, NULL) ? errno : 0);
}

/* sig blocked (how: SIG_BLOCK) or let through (SIG_UNBLOCK) in the
 * calling thread. */
static inline void mask_signal(int how, int sig)
{
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	MUST(pthread_sigmask(how, &one, NULL));
}

/* A poller's pause while it waits for what another thread or process
 * makes: asleep for 100 us, so that on a busy machine the CPU goes to the
 * thread it waits for (sched_yield gave it to any other, and the waits
 * took seconds). */
static inline void nap(void)
{
	nanosleep(&(struct timespec){ .tv_nsec = 100000 }, NULL);
}

/* handler on SIGALRM (SA_RESTART), sent every us microseconds by the
 * real-time timer from now on; alarm_stop: no more. */
static inline void alarm_every(void (*handler)(int), long us)
{
	struct sigaction sa = { .sa_handler = handler, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	MUST(sigaction(SIGALRM, &sa, NULL));
	struct itimerval it = { .it_interval = { 0, us }, .it_value = { 0, us } };
	MUST(setitimer(ITIMER_REAL, &it, NULL));
}

static inline void alarm_stop(void)
{
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	MUST(setitimer(ITIMER_REAL, &off, NULL));
}

/* How many hang snapshots (.hang) the shim has written into CONVOY_DIR. */
static inline int hang_snapshots(void)
{
	DIR *d = opendir(getenv("CONVOY_DIR"));
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		n += len > 5 && !strcmp(e->d_name + len - 5, ".hang");
	}
	if (d)
		closedir(d);
	return n;
}

#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31)   /* linux/signal.h's, whose header conflicts with glibc's signal.h */
#endif

/* sig handled by handler on an alternate signal stack of size bytes at
 * alt (the caller cuts it from its own frame with alloca, above
 * changed_below_raise's), set with ss_flags (SS_AUTODISARM or 0). */
static __attribute__((unused)) void handle_on_alt_stack(int sig, char *alt, size_t size, int ss_flags,
							void (*handler)(int))
{
	stack_t ss = { .ss_sp = alt, .ss_size = size, .ss_flags = ss_flags };
	MUST(sigaltstack(&ss, NULL) ? errno : 0);
	struct sigaction sa = { .sa_handler = handler, .sa_flags = SA_ONSTACK };
	sigemptyset(&sa.sa_mask);
	MUST(sigaction(sig, &sa, NULL) ? errno : 0);
}

static char frame_probe_stack[64 << 10];
static size_t frame_probe_depth;
static void frame_probe(int sig)
{
	(void)sig;
	char here;
	frame_probe_depth = (size_t)(frame_probe_stack + sizeof(frame_probe_stack) - &here);
}

/* How deep a handler's frame starts below the top of its alternate stack:
 * the kernel's signal frame as this CPU writes it (AT_MINSIGSTKSZ counts
 * state only a program that asked for it has: 11,952 bytes with AMX's
 * tiles, whose frames take about 3.4 KiB). Leaves SIGUSR2 at SIG_DFL and
 * no alternate stack. */
static __attribute__((unused)) size_t signal_frame_depth(void)
{
	handle_on_alt_stack(SIGUSR2, frame_probe_stack, sizeof(frame_probe_stack), 0, frame_probe);
	MUST(raise(SIGUSR2));
	MUST(frame_probe_depth ? 0 : EINVAL);   /* SIGUSR2 blocked by an inherited mask */
	signal(SIGUSR2, SIG_DFL);
	stack_t off = { .ss_flags = SS_DISABLE };
	MUST(sigaltstack(&off, NULL) ? errno : 0);
	return frame_probe_depth;
}

/* Raises sig from a frame of 64 KiB of known bytes and says how many of
 * them the signal's handling changed: an alternate signal stack cut from
 * the caller's frame lies just above them, and anything that runs past
 * its end writes here. */
static __attribute__((noinline, unused)) size_t changed_below_raise(int sig)
{
	volatile unsigned char known[64 << 10];
	memset((void *)known, 0xAA, sizeof(known));
	MUST(raise(sig));
	size_t changed = 0;
	for (size_t i = 0; i < sizeof(known); i++)
		changed += known[i] != 0xAA;
	return changed;
}

#endif
