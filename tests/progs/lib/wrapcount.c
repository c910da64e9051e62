/* libwrapcount.so: the C library's system-call wrappers, preloaded after
 * the shim, each counting its calls. The shim makes its own system calls
 * straight to the kernel (shim.h, cv__sys6), so that a wrapper the program
 * or another preloaded library defines never runs inside the shim's
 * bookkeeping or its signal handlers: its clock_gettime takes a lock, as
 * libfaketimeMT's does, which came back into the shim as it read the
 * clock (helper-127); a syscall() that does the same for
 * SYS_clock_gettime, as libfaketime built to intercept syscall() does
 * (helper-128); an mmap that runs hooks (tcmalloc's). The programs run
 * under it (trust::the_shim_never_calls_a_wrapper_the_program_may_define)
 * make their own calls, if any, alike with the shim and without (the C
 * library's own calls do not come through these definitions). Prints one
 * line, "wrapcount: NAME N ..." for the calls counted, "wrapcount: none"
 * when there were none. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define WRAPPERS(X)                                                                                       \
	X(clock_gettime) X(clock_syscall) X(getpid) X(gettid) X(getppid) X(sched_yield) X(mmap) X(munmap) \
	X(mprotect) X(madvise) X(pthread_sigmask) X(sigprocmask) X(sigpending) X(fstat) X(stat)          \
	X(unlink) X(linkat) X(link) X(renameat2) X(readlink) X(getrusage) X(getrlimit) X(process_vm_readv)

enum {
#define ENUM(name) N_##name,
	WRAPPERS(ENUM)
#undef ENUM
	N_COUNT
};
static const char *const names[] = {
#define NAME(name) #name,
	WRAPPERS(NAME)
#undef NAME
};
static unsigned long counts[N_COUNT];
static pthread_mutex_t clock_lock = PTHREAD_MUTEX_INITIALIZER;

#define COUNT(name) __atomic_add_fetch(&counts[N_##name], 1, __ATOMIC_RELAXED)
#define NEXT(name)                        \
	static __typeof__(name) *next;    \
	if (!next)                        \
		next = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

long syscall(long number, ...)
{
	va_list ap;
	va_start(ap, number);
	long a[6];
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	NEXT(syscall);
	if (number != SYS_clock_gettime)
		return next(number, a[0], a[1], a[2], a[3], a[4], a[5]);
	COUNT(clock_syscall);
	pthread_mutex_lock(&clock_lock);
	long rc = next(number, a[0], a[1], a[2], a[3], a[4], a[5]);
	pthread_mutex_unlock(&clock_lock);
	return rc;
}

int clock_gettime(clockid_t clock, struct timespec *ts)
{
	COUNT(clock_gettime);
	NEXT(clock_gettime);
	pthread_mutex_lock(&clock_lock);
	int rc = next(clock, ts);
	pthread_mutex_unlock(&clock_lock);
	return rc;
}

pid_t getpid(void) { COUNT(getpid); NEXT(getpid); return next(); }
pid_t gettid(void) { COUNT(gettid); NEXT(gettid); return next(); }
pid_t getppid(void) { COUNT(getppid); NEXT(getppid); return next(); }
int sched_yield(void) { COUNT(sched_yield); NEXT(sched_yield); return next(); }

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	COUNT(mmap);
	NEXT(mmap);
	return next(addr, len, prot, flags, fd, off);
}
int munmap(void *addr, size_t len) { COUNT(munmap); NEXT(munmap); return next(addr, len); }
int mprotect(void *addr, size_t len, int prot)
{
	COUNT(mprotect);
	NEXT(mprotect);
	return next(addr, len, prot);
}
int madvise(void *addr, size_t len, int advice)
{
	COUNT(madvise);
	NEXT(madvise);
	return next(addr, len, advice);
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	COUNT(pthread_sigmask);
	NEXT(pthread_sigmask);
	return next(how, set, old);
}
int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	COUNT(sigprocmask);
	NEXT(sigprocmask);
	return next(how, set, old);
}
int sigpending(sigset_t *set) { COUNT(sigpending); NEXT(sigpending); return next(set); }

int fstat(int fd, struct stat *st) { COUNT(fstat); NEXT(fstat); return next(fd, st); }
int stat(const char *path, struct stat *st)
{
	COUNT(stat);
	NEXT(stat);
	return next(path, st);
}
int unlink(const char *path) { COUNT(unlink); NEXT(unlink); return next(path); }
int linkat(int from_dir, const char *from, int to_dir, const char *to, int flags)
{
	COUNT(linkat);
	NEXT(linkat);
	return next(from_dir, from, to_dir, to, flags);
}
int link(const char *from, const char *to)
{
	COUNT(link);
	NEXT(link);
	return next(from, to);
}
int renameat2(int from_dir, const char *from, int to_dir, const char *to, unsigned flags)
{
	COUNT(renameat2);
	NEXT(renameat2);
	return next(from_dir, from, to_dir, to, flags);
}
ssize_t readlink(const char *path, char *buf, size_t size)
{
	COUNT(readlink);
	NEXT(readlink);
	return next(path, buf, size);
}
int getrusage(__rusage_who_t who, struct rusage *ru)
{
	COUNT(getrusage);
	NEXT(getrusage);
	return next(who, ru);
}
int getrlimit(__rlimit_resource_t resource, struct rlimit *rl)
{
	COUNT(getrlimit);
	NEXT(getrlimit);
	return next(resource, rl);
}
ssize_t process_vm_readv(pid_t pid, const struct iovec *local, unsigned long nlocal, const struct iovec *remote,
			 unsigned long nremote, unsigned long flags)
{
	COUNT(process_vm_readv);
	NEXT(process_vm_readv);
	return next(pid, local, nlocal, remote, nremote, flags);
}

/* From a destructor, which runs after the shim's, where the profile is
 * written at exit: a shim that published it through linkat is counted. */
__attribute__((destructor)) static void report(void)
{
	char line[1024];
	int n = snprintf(line, sizeof(line), "wrapcount:");
	int none = 1;
	for (int i = 0; i < N_COUNT; i++)
		if (counts[i]) {
			n += snprintf(line + n, sizeof(line) - (size_t)n, " %s %lu", names[i], counts[i]);
			none = 0;
		}
	if (none)
		n += snprintf(line + n, sizeof(line) - (size_t)n, " none");
	line[n++] = '\n';
	ssize_t w = write(STDOUT_FILENO, line, (size_t)n);
	(void)w;
}
