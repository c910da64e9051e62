/* libclockcount.so: a clock_gettime preloaded after the shim that takes a
 * lock, as libfaketimeMT's does, and counts the calls made from the
 * shim's code, which must be none: a lock there comes back into the shim
 * as it reads the clock (trust::a_clock_gettime_that_locks_is_never_
 * called_by_the_shim). And a syscall() that does the same for
 * SYS_clock_gettime, as libfaketime built to intercept syscall() does:
 * the shim's clock, with this clock_gettime passed over, must not come
 * through it either (helper-128); the program under test makes no such
 * call itself. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long from_shim, clock_syscalls;

long syscall(long number, ...)
{
	static long (*next)(long, ...);
	va_list ap;
	va_start(ap, number);
	long a[6];
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!next)
		next = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (number != SYS_clock_gettime)
		return next(number, a[0], a[1], a[2], a[3], a[4], a[5]);
	__atomic_add_fetch(&clock_syscalls, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&lock);
	long rc = next(number, a[0], a[1], a[2], a[3], a[4], a[5]);
	pthread_mutex_unlock(&lock);
	return rc;
}

int clock_gettime(clockid_t clock, struct timespec *ts)
{
	static int (*next)(clockid_t, struct timespec *);
	Dl_info info;
	if (dladdr(__builtin_return_address(0), &info) && info.dli_fname && strstr(info.dli_fname, "libconvoy"))
		__atomic_add_fetch(&from_shim, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&lock);
	if (!next)
		next = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
	int rc = next(clock, ts);
	pthread_mutex_unlock(&lock);
	return rc;
}

__attribute__((destructor)) static void counts(void)
{
	printf("clockcount: %lu calls from the shim, %lu clock system calls\n", from_shim, clock_syscalls);
	fflush(stdout);
}
