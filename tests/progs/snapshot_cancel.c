/* snapshot_cancel: a thread with the asynchronous cancellation type takes
 * 256 mutexes in turn (more than the shim's cache holds: much of its time
 * is inside the shim), is sent convoy's snapshot request and then, a
 * little later, cancelled; 40 such threads one after the other. Only
 * ever under the shim with CONVOY_SNAPSHOT_SIGNAL set to SIGRTMAX
 * (natively the signal would end it). Prints that it returned from main. */
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>

#include "progs.h"

#define CV_SNAPSHOT_MAGIC 0x636f6e76   /* include/convoy/profile.h */
#define LOCKS  256
#define ROUNDS 40

static pthread_mutex_t locks[LOCKS];
static volatile pid_t worker_tid;

static void *worker(void *arg)
{
	(void)arg;
	MUST(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL));
	worker_tid = (pid_t)syscall(SYS_gettid);
	for (unsigned i = 0;; i++) {
		pthread_mutex_lock(&locks[i % LOCKS]);
		pthread_mutex_unlock(&locks[i % LOCKS]);
	}
	return NULL;
}

static void pause_us(long us)
{
	struct timespec d = { 0, us * 1000 };
	while (nanosleep(&d, &d) != 0 && errno == EINTR)
		;
}

int main(void)
{
	for (int i = 0; i < LOCKS; i++)
		MUST(pthread_mutex_init(&locks[i], NULL));
	for (int r = 0; r < ROUNDS; r++) {
		pthread_t th;
		worker_tid = 0;
		MUST(pthread_create(&th, NULL, worker, NULL));
		while (!worker_tid)
			sched_yield();
		pause_us(2000);
		siginfo_t si = { .si_signo = SIGRTMAX, .si_code = SI_QUEUE, .si_pid = getpid(), .si_uid = getuid() };
		si.si_value.sival_int = CV_SNAPSHOT_MAGIC;
		MUST(syscall(SYS_rt_tgsigqueueinfo, getpid(), worker_tid, SIGRTMAX, &si) ? errno : 0);
		pause_us(200 + r % 20 * 20);   /* the cancel lands during the snapshot's write, or after it */
		MUST(pthread_cancel(th));
		MUST(pthread_join(th, NULL));
	}
	printf("main returned\n");
	return 0;
}
