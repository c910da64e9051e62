/* c11.c — C11 <threads.h> mutexes and condition variables.
 *
 * glibc (2.28+, in libc proper since 2.34) implements mtx_t as a
 * pthread_mutex_t and cnd_t as a pthread_cond_t, and each mtx_* / cnd_*
 * function calls the internal __pthread_* function directly, not through
 * the PLT: interposing pthread_mutex_lock does not see mtx_lock. So the
 * C11 names are interposed themselves and each does what glibc's does
 * (nptl/mtx_*.c, cnd_*.c: the same pthread call, then thrd_err_map), but
 * through the shim's pthread wrappers, so a C11 mutex is a mutex record like
 * any other (flagged CV_MUTEX_C11 by mtx_init) and a C11 condvar a condvar.
 *
 * Not interposed: thrd_* and call_once (they are not synchronisation
 * objects the report has rows for; threads made with thrd_create go through
 * glibc's internal pthread_create and appear untracked on their first
 * wrapped call).
 *
 * mtx_lock and mtx_unlock are in mutex.c: they are its fast paths.
 */
#include <errno.h>

#include "shim.h"

CV_EXPORT int mtx_init(mtx_t *m, int type)
{
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	switch (type) {
	case mtx_plain | mtx_recursive:
	case mtx_timed | mtx_recursive:
		pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
		break;
	default:   /* mtx_plain, mtx_timed: no difference in glibc */
		pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_NORMAL);
		break;
	}
	int rc = pthread_mutex_init((pthread_mutex_t *)m, &attr);
	struct cv_thread *t = cv__current();
	if (rc == 0 && t) {
		int err = errno;
		struct cv_rec *r = cv__mutex_rec(t, m);
		__atomic_fetch_or(&r->obj->flags, CV_MUTEX_C11, __ATOMIC_RELAXED);
		errno = err;
	}
	return cv__thrd_err_map(rc);
}

CV_EXPORT void mtx_destroy(mtx_t *m)
{
	pthread_mutex_destroy((pthread_mutex_t *)m);
}

CV_EXPORT int mtx_trylock(mtx_t *m)
{
	return cv__thrd_err_map(pthread_mutex_trylock((pthread_mutex_t *)m));
}

CV_EXPORT int mtx_timedlock(mtx_t *restrict m, const struct timespec *restrict abstime)
{
	return cv__thrd_err_map(pthread_mutex_timedlock((pthread_mutex_t *)m, abstime));
}

CV_EXPORT int cnd_init(cnd_t *c)
{
	return cv__thrd_err_map(pthread_cond_init((pthread_cond_t *)c, NULL));
}

CV_EXPORT void cnd_destroy(cnd_t *c)
{
	pthread_cond_destroy((pthread_cond_t *)c);
}

CV_EXPORT int cnd_signal(cnd_t *c)
{
	return cv__thrd_err_map(pthread_cond_signal((pthread_cond_t *)c));
}

CV_EXPORT int cnd_broadcast(cnd_t *c)
{
	return cv__thrd_err_map(pthread_cond_broadcast((pthread_cond_t *)c));
}

CV_EXPORT int cnd_wait(cnd_t *c, mtx_t *m)
{
	return cv__thrd_err_map(pthread_cond_wait((pthread_cond_t *)c, (pthread_mutex_t *)m));
}

CV_EXPORT int cnd_timedwait(cnd_t *restrict c, mtx_t *restrict m, const struct timespec *restrict abstime)
{
	return cv__thrd_err_map(pthread_cond_timedwait((pthread_cond_t *)c, (pthread_mutex_t *)m, abstime));
}
