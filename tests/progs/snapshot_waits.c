/* snapshot_waits [send]: three threads block, in sem_wait, in
 * pthread_cond_wait and in pthread_mutex_lock (main holds the mutex). With
 * "send" (only ever under the shim with CONVOY_SNAPSHOT_SIGNAL set to
 * SIGRTMAX: natively the signal would end the program), each is sent
 * convoy's snapshot request while it sleeps in its futex wait, and main
 * waits for the snapshot file and for the thread to sleep again (or to
 * return). Then main releases them, and each prints what its call returned
 * and its errno: the same as a run that sent nothing. It also prints how it
 * sees SIGRTMAX's disposition. Every wait is on state (/proc, the snapshot
 * files), never on time.
 */
#include <dirent.h>
#include <signal.h>
#include <sys/syscall.h>

#include "progs.h"

#define CV_SNAPSHOT_MAGIC 0x636f6e76   /* include/convoy/profile.h */

static sem_t sem;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER, cond_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int released;
static pid_t tids[3];
static int done[3];
static char results[3][64];

static void *in_sem(void *arg)
{
	__atomic_store_n(&tids[0], gettid(), __ATOMIC_RELEASE);
	errno = EDOM;
	int rc = sem_wait(&sem);
	snprintf(results[0], sizeof(results[0]), "sem_wait: %d errno %s", rc, rc_name(errno));
	__atomic_store_n(&done[0], 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *in_cond(void *arg)
{
	MUST(pthread_mutex_lock(&cond_lock));
	__atomic_store_n(&tids[1], gettid(), __ATOMIC_RELEASE);
	int rc = 0, wakes = 0;
	errno = EDOM;
	while (!released) {
		rc = pthread_cond_wait(&cond, &cond_lock);
		wakes++;
	}
	MUST(pthread_mutex_unlock(&cond_lock));
	snprintf(results[1], sizeof(results[1]), "pthread_cond_wait: %s errno %s", rc_name(rc), rc_name(errno));
	(void)wakes;   /* a spurious wake-up is allowed; the result is what must not change */
	__atomic_store_n(&done[1], 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *in_lock(void *arg)
{
	__atomic_store_n(&tids[2], gettid(), __ATOMIC_RELEASE);
	errno = EDOM;
	int rc = pthread_mutex_lock(&lock);
	snprintf(results[2], sizeof(results[2]), "pthread_mutex_lock: %s errno %s", rc_name(rc), rc_name(errno));
	MUST(pthread_mutex_unlock(&lock));
	__atomic_store_n(&done[2], 1, __ATOMIC_RELEASE);
	return NULL;
}


int main(int argc, char **argv)
{
	int send = argc > 1 && !strcmp(argv[1], "send");
	struct sigaction sa;
	MUST(sigaction(SIGRTMAX, NULL, &sa) ? errno : 0);
	printf("SIGRTMAX: %s flags %#x\n", sa.sa_handler == SIG_DFL ? "SIG_DFL" : "other", (unsigned)sa.sa_flags);
	MUST(sem_init(&sem, 0, 0));
	MUST(pthread_mutex_lock(&lock));
	pthread_t t[3];
	void *(*fn[3])(void *) = { in_sem, in_cond, in_lock };
	for (int i = 0; i < 3; i++) {
		MUST(pthread_create(&t[i], NULL, fn[i], NULL));
		while (!__atomic_load_n(&tids[i], __ATOMIC_ACQUIRE) || !sleeps_in_futex(tids[i]))
			nap();
		if (!send)
			continue;
		int before = hang_snapshots();
		union sigval mark = { .sival_int = CV_SNAPSHOT_MAGIC };
		MUST(pthread_sigqueue(t[i], SIGRTMAX, mark));
		while (hang_snapshots() == before)
			nap();
		while (!__atomic_load_n(&done[i], __ATOMIC_ACQUIRE) && !sleeps_in_futex(tids[i]))
			nap();
	}
	MUST(sem_post(&sem));
	MUST(pthread_mutex_lock(&cond_lock));
	released = 1;
	MUST(pthread_cond_signal(&cond));
	MUST(pthread_mutex_unlock(&cond_lock));
	MUST(pthread_mutex_unlock(&lock));
	for (int i = 0; i < 3; i++) {
		MUST(pthread_join(t[i], NULL));
		printf("%s\n", results[i]);
	}
	return 0;
}
