/* error.c — error names and the small wrappers around pthreads and clocks
 * whose failure would mean a bug (they abort, as libuv's uv_mutex_lock does).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "internal.h"

#if WP_TSAN
_Atomic unsigned wp__tsan_fence_word;
#endif

const char *wp_strerror(int err)
{
	if (err == 0)
		return "success";
	switch (-err) {
#define WP__ERR_CASE(name, value, text) case value: return text;
	WP_ERRNO_MAP(WP__ERR_CASE)
#undef WP__ERR_CASE
	default:
		break;
	}
	/* Not one of ours: strerror's table is static for known values. */
	return err < 0 ? strerror(-err) : "not an error code";
}

void wp__assert_fail(const char *what, const char *file, int line)
{
	fprintf(stderr, "workpool: assertion failed: %s (%s:%d)\n", what, file,
	        line);
	abort();
}

void wp__abort_errno(const char *what, int err)
{
	fprintf(stderr, "workpool: %s failed: %s\n", what, strerror(err));
	abort();
}

void wp__mutex_init(pthread_mutex_t *m)
{
	int err = pthread_mutex_init(m, NULL);
	if (err)
		wp__abort_errno("pthread_mutex_init", err);
}

void wp__cond_init_monotonic(pthread_cond_t *c)
{
	pthread_condattr_t attr;
	int err = pthread_condattr_init(&attr);
	if (!err)
		err = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!err)
		err = pthread_cond_init(c, &attr);
	if (err)
		wp__abort_errno("pthread_cond_init", err);
	pthread_condattr_destroy(&attr);
}

void wp__lock(pthread_mutex_t *m)
{
	int err = pthread_mutex_lock(m);
	if (WP_UNLIKELY(err))
		wp__abort_errno("pthread_mutex_lock", err);
}

void wp__unlock(pthread_mutex_t *m)
{
	int err = pthread_mutex_unlock(m);
	if (WP_UNLIKELY(err))
		wp__abort_errno("pthread_mutex_unlock", err);
}

uint64_t wp__now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct timespec wp__deadline(uint64_t ns)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t nsec = (uint64_t)ts.tv_nsec + ns % 1000000000u;
	ts.tv_sec += (time_t)(ns / 1000000000u + nsec / 1000000000u);
	ts.tv_nsec = (long)(nsec % 1000000000u);
	return ts;
}
