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
 * acquisitions (the thread's two, main's), 1 contended, 1 wait.
 *
 * `pending_waits ended N`: ended_lock's case by N threads one after
 * another, each with a lock of its own in many[] (past the shim's 1,024
 * ended threads kept, the ended ones fold into one row: their waits must
 * be counted before). Every wait is on state, never on time. */
#include "progs.h"

pthread_mutex_t timed_lock = PTHREAD_MUTEX_INITIALIZER, running_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t ended_lock = PTHREAD_MUTEX_INITIALIZER;
#define MANY 2000
pthread_mutex_t many[MANY];
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
	pthread_mutex_t *m = arg;
	warm_up(m, NULL);
	MUST(pthread_mutex_lock(m));
	return NULL;   /* holding it */
}

/* Until the thread sleeps in the futex of m, then m let go. */
static void hand_over_when_waited(pthread_mutex_t *m)
{
	pid_t tid = __atomic_load_n(&waiter_tid, __ATOMIC_ACQUIRE);
	while (!sleeps_in_futex_on(tid, &m->__data.__lock))
		nap();
	MUST(pthread_mutex_unlock(m));
}

/* A thread that ends holding m, which it took after a wait. */
static void end_holding(pthread_mutex_t *m)
{
	pthread_t t;
	MUST(pthread_create(&t, NULL, ending, m));
	sem_wait_all(&warm);
	MUST(pthread_mutex_lock(m));
	MUST(sem_post(&go));
	hand_over_when_waited(m);
	MUST(pthread_join(t, NULL));
}

int main(int argc, char **argv)
{
	MUST(sem_init(&warm, 0, 0));
	MUST(sem_init(&go, 0, 0));
	MUST(sem_init(&waiting, 0, 0));
	if (argc == 3 && !strcmp(argv[1], "ended")) {
		int n = atoi(argv[2]);
		if (n < 1 || n > MANY)
			return 2;
		for (int i = 0; i < n; i++) {
			MUST(pthread_mutex_init(&many[i], NULL));
			end_holding(&many[i]);
		}
		printf("%d threads ended holding a lock taken after a wait\n", n);
		return 0;
	}
	end_holding(&ended_lock);
	pthread_t t;

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
