/* glibc_not_entered.c — the uncontended steps the shim makes itself
 * (mutex.c, rwlock.c, spin.c, sem.c, cond.c: glibc's own compare-and-swap,
 * exchange or first test, made where it is exactly glibc's) really are
 * made there: under the shim, glibc's function is never entered for them.
 * Natively each is entered once a call, which shows the count works.
 *
 * Each object is used once before it is watched: its first use goes the
 * shim's slow way (the lookup that makes its record), which calls glibc.
 *
 * Counted by hardware breakpoints on the entry of glibc's own definition
 * of each function (dlsym on libc.so.6's handle, which the shim's
 * definitions do not shadow; perf_event_open, PERF_TYPE_BREAKPOINT,
 * HW_BREAKPOINT_X, this thread only), four at a time (four debug
 * registers). Every round also watches glibc's sem_getvalue, which the
 * shim does not interpose and the semaphores' loop calls: it must count
 * every call under the shim too, or the breakpoints are not firing. A switch that
 * turned one of the shim's own steps off (real.c: take_normal,
 * take_rwlock, take_spin, take_sem; the probes of glibc's words there)
 * shows here as calls into glibc. Counts, not timings.
 *
 * Exit 0 and "ok ..." when every count is as expected; 1 and a line per
 * count that is not; 77 when breakpoints are refused or never fire (some
 * virtual machines do not pass the debug registers through). */
#include <dlfcn.h>
#include <semaphore.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "progs.h"

#define CALLS 1000

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t spin;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static sem_t sem;

static void mutex_pairs(void)
{
	for (int i = 0; i < CALLS; i++) {
		MUST(pthread_mutex_lock(&mutex));
		MUST(pthread_mutex_unlock(&mutex));
		MUST(pthread_mutex_trylock(&mutex));
		MUST(pthread_mutex_unlock(&mutex));
	}
}

static void read_pairs(void)
{
	for (int i = 0; i < CALLS; i++) {
		MUST(pthread_rwlock_rdlock(&rwlock));
		MUST(pthread_rwlock_unlock(&rwlock));
	}
}

/* A write lock from a free write phase (what a write unlock leaves when
 * no reader waits): the shim takes it; the first of the process, from the
 * initial read phase, and the write unlocks are glibc's. */
static void write_pairs(void)
{
	MUST(pthread_rwlock_wrlock(&rwlock));
	MUST(pthread_rwlock_unlock(&rwlock));
	for (int i = 0; i < CALLS; i++) {
		MUST(pthread_rwlock_wrlock(&rwlock));
		MUST(pthread_rwlock_unlock(&rwlock));
	}
}

static void spin_pairs(void)
{
	for (int i = 0; i < CALLS; i++) {
		MUST(pthread_spin_lock(&spin));
		MUST(pthread_spin_unlock(&spin));
	}
}

static void sem_pairs(void)
{
	for (int i = 0; i < CALLS; i++) {
		int value;
		MUST(sem_wait(&sem));
		MUST(sem_post(&sem));
		MUST(sem_trywait(&sem));
		MUST(sem_post(&sem));
		MUST(sem_getvalue(&sem, &value));
	}
}

static void unwaited_signals(void)
{
	for (int i = 0; i < CALLS; i++) {
		MUST(pthread_cond_signal(&cond));
		MUST(pthread_cond_broadcast(&cond));
	}
}

/* Each round: up to three functions the shim must not enter, their calls
 * made by one loop, and sem_getvalue, the control. */
static const struct round {
	void (*pairs)(void);
	const char *fn[3];
	long native[3];   /* calls each gets natively */
	long control;     /* sem_getvalue's calls in the loop */
} rounds[] = {
	{ sem_pairs, { "sem_wait", "sem_trywait", "sem_post" }, { CALLS, CALLS, 2 * CALLS }, CALLS },   /* first: it tells the breakpoints work */
	{ mutex_pairs, { "pthread_mutex_lock", "pthread_mutex_trylock", "pthread_mutex_unlock" }, { CALLS, CALLS, 2 * CALLS }, 0 },
	{ read_pairs, { "pthread_rwlock_rdlock", "pthread_rwlock_unlock" }, { CALLS, CALLS }, 0 },
	{ write_pairs, { "pthread_rwlock_wrlock" }, { CALLS + 1 }, 0 },
	{ spin_pairs, { "pthread_spin_lock", "pthread_spin_unlock" }, { CALLS, CALLS }, 0 },
	{ unwaited_signals, { "pthread_cond_signal", "pthread_cond_broadcast" }, { CALLS, CALLS }, 0 },
};

/* A counting breakpoint on code at addr, for this thread; -1 if refused. */
static int breakpoint(void *addr)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.type = PERF_TYPE_BREAKPOINT;
	a.size = sizeof a;
	a.bp_type = HW_BREAKPOINT_X;
	a.bp_addr = (unsigned long)addr;
	a.bp_len = sizeof(long);
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.disabled = 1;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

static long count(int fd)
{
	long n = 0;
	return read(fd, &n, sizeof n) == sizeof n ? n : -1;
}

static void *nothing(void *arg)
{
	return arg;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	pthread_t th;
	MUST(pthread_create(&th, NULL, nothing, NULL));   /* a process with threads: the shim's steps are on */
	MUST(pthread_join(th, NULL));
	MUST(pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE));
	MUST(sem_init(&sem, 0, 1));

	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *glibc_post = libc ? dlsym(libc, "sem_post") : NULL, *glibc_getvalue = libc ? dlsym(libc, "sem_getvalue") : NULL;
	if (!glibc_post || !glibc_getvalue) {
		printf("no libc.so.6 to look into\n");
		return 77;
	}
	bool shim = dlsym(RTLD_DEFAULT, "sem_post") != glibc_post;
	int bad = 0;
	for (size_t r = 0; r < sizeof rounds / sizeof rounds[0]; r++) {
		const struct round *rd = &rounds[r];
		int fd[4] = { -1, -1, -1, -1 };
		fd[3] = breakpoint(glibc_getvalue);
		for (int i = 0; i < 3 && rd->fn[i]; i++) {
			void *at = dlsym(libc, rd->fn[i]);
			if (!at || (fd[i] = breakpoint(at)) < 0) {
				printf("no breakpoint on glibc's %s: %s\n", rd->fn[i], at ? strerror(errno) : "not found");
				return 77;
			}
		}
		if (fd[3] < 0) {
			printf("no breakpoint on glibc's sem_getvalue: %s\n", strerror(errno));
			return 77;
		}
		rd->pairs();   /* unwatched: each object's first use, which goes the slow way, done */
		for (int i = 0; i < 4; i++)
			if (fd[i] >= 0)
				ioctl(fd[i], PERF_EVENT_IOC_ENABLE, 0);
		rd->pairs();
		for (int i = 0; i < 4; i++)
			if (fd[i] >= 0)
				ioctl(fd[i], PERF_EVENT_IOC_DISABLE, 0);
		long control = count(fd[3]);
		if (control != rd->control) {
			if (rd->control && control == 0) {
				printf("breakpoints never fire here (glibc's sem_getvalue counted 0 of %ld calls)\n", rd->control);
				return 77;
			}
			printf("glibc's sem_getvalue: %ld calls, not %ld\n", control, rd->control);
			bad++;
		}
		for (int i = 0; i < 3 && rd->fn[i]; i++) {
			long n = count(fd[i]), want = shim ? 0 : rd->native[i];
			if (n != want) {
				printf("glibc's %s: entered %ld times, not %ld\n", rd->fn[i], n, want);
				bad++;
			}
			close(fd[i]);
		}
		close(fd[3]);
	}
	if (bad)
		return 1;
	printf("ok: %s, glibc's lock functions entered %s\n", shim ? "under the shim" : "natively",
	       shim ? "for none of the uncontended steps" : "once a call");
	return 0;
}
