/* Contended mutex acquisitions whose waits the shim counts once the
 * program has left the critical section (preload/mutex.c, wait_pending).
 * A thread takes each lock while main holds it (main lets go once the
 * thread sleeps in the lock's futex), then:
 *
 *   timed_lock (pthread_mutex_timedlock): lets it go; the unlock, which
 *     finds the word glibc's wait left (a waiter may be parked), counts it.
 *   running_lock: waits on a condvar with it, for good (the wait lets the
 *     lock go inside glibc); main returns from main meanwhile: the
 *     profile's writer adds the wait.
 *   ended_lock: ends holding it (joined): its end counts the wait.
 *
 * The thread takes each lock once first, uncontended. Each lock: 3
 * acquisitions (the thread's two, main's), 1 contended, 1 wait. Every wait
 * is on state, never on time. */
#include "progs.h"

pthread_mutex_t timed_lock = PTHREAD_MUTEX_INITIALIZER, running_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t ended_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never_signalled = PTHREAD_COND_INITIALIZER;
static sem_t warm, go, waiting;
static pid_t waiter_tid;

/* The thread's first, uncontended acquisition of each of its locks; then
 * it waits for main to hold them. */
static void warm_up(pthread_mutex_t *a, pthread_mutex_t *b)
{
	for (pthread_mutex_t *m = a; m; m = m == a ? b : NULL) {
		MUST(pthread_mutex_lock(m));
		MUST(pthread_mutex_unlock(m));
	}
	__atomic_store_n(&waiter_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	MUST(sem_post(&warm));
	sem_wait_all(&go);
}

static void *running(void *arg)
{
	warm_up(&timed_lock, &running_lock);
	struct timespec far = deadline_ms(CLOCK_REALTIME, 3600 * 1000L);
	MUST(pthread_mutex_timedlock(&timed_lock, &far));
	MUST(pthread_mutex_unlock(&timed_lock));
	MUST(pthread_mutex_lock(&running_lock));
	MUST(sem_post(&waiting));
	for (;;)   /* main exits meanwhile */
		MUST(pthread_cond_wait(&never_signalled, &running_lock));
	return arg;
}

static void *ending(void *arg)
{
	warm_up(&ended_lock, NULL);
	MUST(pthread_mutex_lock(&ended_lock));
	return arg;   /* holding it */
}

/* Until the thread sleeps in the futex of m, then m let go. */
static void hand_over_when_waited(pthread_mutex_t *m)
{
	pid_t tid = __atomic_load_n(&waiter_tid, __ATOMIC_ACQUIRE);
	while (!sleeps_in_futex_on(tid, &m->__data.__lock))
		nap();
	MUST(pthread_mutex_unlock(m));
}

int main(void)
{
	MUST(sem_init(&warm, 0, 0));
	MUST(sem_init(&go, 0, 0));
	MUST(sem_init(&waiting, 0, 0));
	pthread_t t;
	MUST(pthread_create(&t, NULL, ending, NULL));
	sem_wait_all(&warm);
	MUST(pthread_mutex_lock(&ended_lock));
	MUST(sem_post(&go));
	hand_over_when_waited(&ended_lock);
	MUST(pthread_join(t, NULL));

	MUST(pthread_create(&t, NULL, running, NULL));
	sem_wait_all(&warm);
	MUST(pthread_mutex_lock(&timed_lock));
	MUST(pthread_mutex_lock(&running_lock));
	MUST(sem_post(&go));
	hand_over_when_waited(&timed_lock);
	hand_over_when_waited(&running_lock);
	sem_wait_all(&waiting);
	printf("handed over 3 locks\n");
	return 0;
}
