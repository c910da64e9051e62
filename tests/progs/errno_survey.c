/* errno_survey — about 180 calls of every primitive the shim wraps, each
 * printed with its return value and errno (set to 777 before the call, so a
 * call that succeeds and still changes errno shows): mutex types (normal,
 * errorcheck, recursive, robust with an owner's death, PI, PP) with bad and
 * past timeouts and bad clocks, rwlocks, condvars, semaphores, spinlocks,
 * barriers, joins, C11 threads, futexes through syscall(), and the fatal
 * signals' dispositions through sigaction, signal and sigset. Every result
 * is decided by the calls themselves, never by timing; the output must be
 * the same under the shim as natively. (First written as a hostile test.) */
#include <pthread.h>
#include <semaphore.h>
#include <threads.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>
#include <time.h>
#include <stdlib.h>
#include <unistd.h>
#include <signal.h>
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"   /* sigset: the call under test */
#include <sys/syscall.h>
#include <linux/futex.h>
#define T(expr) do { errno = 777; long _r = (long)(expr); printf("%-70s rc=%ld errno=%d\n", #expr, _r, errno); } while (0)
static void *thr(void *a) { return a; }
static void *waiter(void *go) { sem_wait(go); return NULL; }
static void *lock_and_die(void *m) { pthread_mutex_lock(m); return NULL; }   /* a robust mutex's owner dies */
static int thrd_thr(void *a) { (void)a; return 0; }
static pthread_mutex_t gm = PTHREAD_MUTEX_INITIALIZER;
static void *locker(void *a) { pthread_mutex_lock(&gm); return a; }
int main(void) {
	setvbuf(stdout, NULL, _IONBF, 0);
	pthread_mutex_t m, me, mr, mrb, mpi, mpp;
	pthread_mutexattr_t a;
	struct timespec bad1 = {0, -1}, bad2 = {0, 1000000000}, past = {0, 0}, neg = {-1, 0};
	T(pthread_mutex_init(&m, NULL));
	T(pthread_mutexattr_init(&a));
	T(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK));
	T(pthread_mutex_init(&me, &a));
	T(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE));
	T(pthread_mutex_init(&mr, &a));
	T(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_NORMAL));
	T(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST));
	T(pthread_mutex_init(&mrb, &a));
	T(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_STALLED));
	T(pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT));
	T(pthread_mutex_init(&mpi, &a));
	T(pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_PROTECT));
	T(pthread_mutexattr_setprioceiling(&a, 99));
	T(pthread_mutex_init(&mpp, &a));
	T(pthread_mutex_lock(&mpp));
	T(pthread_mutex_unlock(&mpp));
	T(pthread_mutex_lock(&m));
	T(pthread_mutex_trylock(&m));
	T(pthread_mutex_timedlock(&m, &bad1));
	T(pthread_mutex_timedlock(&m, &bad2));
	T(pthread_mutex_timedlock(&m, &past));
	T(pthread_mutex_timedlock(&m, &neg));
	T(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &past));
	T(pthread_mutex_clocklock(&m, CLOCK_PROCESS_CPUTIME_ID, &past));
	T(pthread_mutex_clocklock(&m, 12345, &past));
	T(pthread_mutex_destroy(&m));
	T(pthread_mutex_unlock(&m));
	T(pthread_mutex_unlock(&m));
	T(pthread_mutex_destroy(&m));
	T(pthread_mutex_lock(&me));
	T(pthread_mutex_lock(&me));
	T(pthread_mutex_trylock(&me));
	T(pthread_mutex_timedlock(&me, &past));
	T(pthread_mutex_timedlock(&me, &bad1));
	T(pthread_mutex_unlock(&me));
	T(pthread_mutex_unlock(&me));
	T(pthread_mutex_lock(&mr));
	T(pthread_mutex_lock(&mr));
	T(pthread_mutex_trylock(&mr));
	T(pthread_mutex_unlock(&mr));
	T(pthread_mutex_unlock(&mr));
	T(pthread_mutex_unlock(&mr));
	T(pthread_mutex_unlock(&mr));
	T(pthread_mutex_lock(&mpi));
	T(pthread_mutex_trylock(&mpi));
	T(pthread_mutex_unlock(&mpi));
	T(pthread_mutex_unlock(&mpi));
	/* robust: owner death */
	pthread_t t;
	T(pthread_create(&t, NULL, lock_and_die, &mrb));
	T(pthread_join(t, NULL));
	T(pthread_mutex_lock(&mrb));
	T(pthread_mutex_unlock(&mrb));
	T(pthread_mutex_lock(&mrb));
	T(pthread_mutex_unlock(&mrb));
	T(pthread_mutex_lock(&mrb));
	T(pthread_mutex_consistent(&mrb));
	T(pthread_mutex_unlock(&mrb));
	T(pthread_mutex_lock(&mrb));
	T(pthread_mutex_unlock(&mrb));
	T(pthread_create(&t, NULL, lock_and_die, &mrb));
	T(pthread_join(t, NULL));
	T(pthread_mutex_timedlock(&mrb, &past));
	T(pthread_mutex_unlock(&mrb));
	T(pthread_mutex_timedlock(&mrb, &past));
	/* errorcheck unlock from other thread */
	T(pthread_create(&t, NULL, locker, NULL));
	T(pthread_join(t, NULL));
	T(pthread_mutex_unlock(&gm));
	/* rwlock */
	pthread_rwlock_t rw;
	T(pthread_rwlock_init(&rw, NULL));
	T(pthread_rwlock_wrlock(&rw));
	T(pthread_rwlock_wrlock(&rw));
	T(pthread_rwlock_rdlock(&rw));
	T(pthread_rwlock_tryrdlock(&rw));
	T(pthread_rwlock_trywrlock(&rw));
	T(pthread_rwlock_timedrdlock(&rw, &bad1));
	T(pthread_rwlock_timedwrlock(&rw, &bad2));
	T(pthread_rwlock_timedwrlock(&rw, &past));
	T(pthread_rwlock_clockwrlock(&rw, 999, &past));
	T(pthread_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &neg));
	T(pthread_rwlock_destroy(&rw));
	T(pthread_rwlock_unlock(&rw));
	T(pthread_rwlock_unlock(&rw));
	T(pthread_rwlock_rdlock(&rw));
	T(pthread_rwlock_timedrdlock(&rw, &bad1));
	T(pthread_rwlock_unlock(&rw));
	T(pthread_rwlock_destroy(&rw));
	/* cond */
	pthread_cond_t c; pthread_condattr_t ca;
	T(pthread_condattr_init(&ca));
	T(pthread_condattr_setclock(&ca, CLOCK_MONOTONIC));
	T(pthread_cond_init(&c, &ca));
	T(pthread_mutex_init(&m, NULL));
	T(pthread_mutex_lock(&m));
	T(pthread_cond_timedwait(&c, &m, &bad1));
	T(pthread_cond_timedwait(&c, &m, &bad2));
	T(pthread_cond_timedwait(&c, &m, &past));
	T(pthread_cond_timedwait(&c, &m, &neg));
	T(pthread_cond_clockwait(&c, &m, 999, &past));
	T(pthread_cond_clockwait(&c, &m, CLOCK_REALTIME, &past));
	T(pthread_cond_signal(&c));
	T(pthread_cond_broadcast(&c));
	T(pthread_mutex_unlock(&m));
	T(pthread_cond_timedwait(&c, &me, &past));
	T(pthread_cond_destroy(&c));
	/* sem */
	sem_t s;
	T(sem_init(&s, 0, 0));
	T(sem_init(&s, 0, 0x7fffffffu + 1u));
	T(sem_trywait(&s));
	T(sem_timedwait(&s, &bad1));
	T(sem_timedwait(&s, &bad2));
	T(sem_timedwait(&s, &past));
	T(sem_timedwait(&s, &neg));
	T(sem_clockwait(&s, 999, &past));
	T(sem_clockwait(&s, CLOCK_MONOTONIC, &bad1));
	T(sem_post(&s));
	T(sem_timedwait(&s, &bad1));
	T(sem_post(&s));
	T(sem_wait(&s));
	T(sem_init(&s, 0, 0x7fffffff));
	T(sem_post(&s));
	T(sem_destroy(&s));
	/* spin */
	pthread_spinlock_t sp;
	T(pthread_spin_init(&sp, 0));
	T(pthread_spin_lock(&sp));
	T(pthread_spin_trylock(&sp));
	T(pthread_spin_unlock(&sp));
	T(pthread_spin_destroy(&sp));
	/* barrier */
	pthread_barrier_t b;
	T(pthread_barrier_init(&b, NULL, 0));
	T(pthread_barrier_init(&b, NULL, 1));
	T(pthread_barrier_wait(&b));
	T(pthread_barrier_destroy(&b));
	/* threads */
	pthread_attr_t at; pthread_attr_init(&at);
	T(pthread_attr_setstacksize(&at, 1));
	T(pthread_create(&t, NULL, thr, NULL));
	T(pthread_join(t, NULL));
	T(pthread_join(pthread_self(), NULL));
	T(pthread_create(&t, NULL, thr, NULL));
	T(pthread_detach(t));
	sem_t go;
	T(sem_init(&go, 0, 0));
	T(pthread_create(&t, NULL, waiter, &go));   /* running until go is posted */
	T(pthread_tryjoin_np(t, NULL));
	T(pthread_timedjoin_np(t, NULL, &past));   /* (with tv_nsec -1, glibc 2.36 spins for good) */
	T(sem_post(&go));
	T(pthread_timedjoin_np(t, NULL, NULL));
	T(pthread_setname_np(pthread_self(), "abcdefghijklmnopqrstu"));
	T(pthread_setname_np(pthread_self(), "okname"));
	/* C11 */
	mtx_t cm; cnd_t cc;
	T(mtx_init(&cm, mtx_timed));
	T(mtx_lock(&cm));
	T(mtx_trylock(&cm));
	T(mtx_timedlock(&cm, &past));
	T(mtx_timedlock(&cm, &bad1));
	T(cnd_init(&cc));
	T(cnd_timedwait(&cc, &cm, &past));
	T(cnd_timedwait(&cc, &cm, &bad1));
	T(mtx_unlock(&cm));
	T(mtx_init(&cm, mtx_plain | mtx_recursive));
	T(mtx_lock(&cm));
	T(mtx_lock(&cm));
	T(mtx_unlock(&cm));
	T(mtx_unlock(&cm));
	T(mtx_init(&cm, 12345));
	thrd_t th;
	T(thrd_create(&th, thrd_thr, NULL));
	T(thrd_join(th, NULL));
	/* syscall */
	int fw = 0;
	T(syscall(SYS_futex, &fw, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0));
	T(syscall(SYS_futex, &fw, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0));
	T(syscall(SYS_futex, &fw, FUTEX_WAIT_PRIVATE, 0, &bad1, NULL, 0));
	T(syscall(SYS_futex, &fw, FUTEX_WAIT_PRIVATE, 0, &past, NULL, 0));
	T(syscall(SYS_futex, &fw, 9999, 0, NULL, NULL, 0));
	T(syscall(SYS_getpid) == getpid());
	T(syscall(-1));
	T(syscall(SYS_close, 9999));
	/* signals */
	struct sigaction sa, old;
	T(sigaction(SIGSEGV, NULL, &old)); printf("old handler %p flags %x\n", (void*)old.sa_handler, old.sa_flags);
	T(sigaction(SIGABRT, NULL, &old)); printf("old handler %p flags %x\n", (void*)old.sa_handler, old.sa_flags);
	T(sigaction(SIGUSR1, NULL, &old)); printf("old handler %p flags %x\n", (void*)old.sa_handler, old.sa_flags);
	T(sigaction(SIGKILL, NULL, &old));
	T(sigaction(0, NULL, &old));
	T(sigaction(65, NULL, &old));
	memset(&sa, 0, sizeof sa); sa.sa_handler = SIG_DFL;
	T(sigaction(SIGKILL, &sa, &old));
	T(sigaction(SIGSEGV, &sa, &old)); printf("old handler %p flags %x\n", (void*)old.sa_handler, old.sa_flags);
	T(sigaction(SIGSEGV, NULL, &old)); printf("old handler %p flags %x mask0 %lx\n", (void*)old.sa_handler, old.sa_flags, old.sa_mask.__val[0]);
	T(signal(SIGSEGV, SIG_IGN));
	T(signal(SIGSEGV, SIG_DFL));
	T(signal(SIGSEGV, SIG_DFL));
	T(signal(999, SIG_DFL));
	T(sigset(SIGBUS, SIG_HOLD));
	T(sigset(SIGBUS, SIG_DFL));
	T(sigset(SIGBUS, SIG_DFL));
	T(execl("/nonexistent", "x", (char*)0));
	T(execlp("nonexistent-cmd-xyz", "x", (char*)0));
	return 0;
}
