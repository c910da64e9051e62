/* libclockcount.so: a clock_gettime preloaded after the shim that takes a
 * lock, as libfaketimeMT's does, and counts the calls made from the
 * shim's code, which must be none: a lock there comes back into the shim
 * as it reads the clock (trust::a_clock_gettime_that_locks_is_never_
 * called_by_the_shim). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long from_shim;

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
	printf("clockcount: %lu calls from the shim\n", from_shim);
	fflush(stdout);
}
