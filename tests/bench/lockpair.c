/* lockpair.c — the shim's overhead benchmark (make bench; not a test).
 *
 *   lockpair uncontended N   ns per lock+unlock pair, one thread, one mutex
 *   lockpair contended N     ns per pair, two threads sharing one mutex
 *   lockpair nested N        ns per inner lock+unlock pair taken while holding another
 *                            mutex, one thread (the lock-order edge lookup)
 *   lockpair rdlock N        ns per pthread_rwlock_rdlock+unlock pair, one thread
 *   lockpair wrlock N        ns per pthread_rwlock_wrlock+unlock pair, one thread
 *   lockpair spin N          ns per pthread_spin_lock+unlock pair, one thread
 *   lockpair spin-contended N  the same, two threads sharing one spinlock
 *   lockpair semtry N        ns per sem_trywait+sem_post pair, one thread
 *   lockpair syscall N       ns per syscall(SYS_getppid) (libc's syscall())
 *
 * Prints one number: nanoseconds per pair (best of 5 rounds, to drop the
 * rounds a noisy neighbour stole). Run it with and without LD_PRELOAD side
 * by side; tests/bench/overhead.sh does that.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER, outer = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t spin;
static sem_t sem;
static volatile long shared;
static long iterations;
static const char *mode;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *loop(void *arg)
{
	(void)arg;
	if (!strcmp(mode, "rdlock")) {
		for (long i = 0; i < iterations; i++) {
			pthread_rwlock_rdlock(&rwlock);
			shared++;
			pthread_rwlock_unlock(&rwlock);
		}
	} else if (!strcmp(mode, "wrlock")) {
		for (long i = 0; i < iterations; i++) {
			pthread_rwlock_wrlock(&rwlock);
			shared++;
			pthread_rwlock_unlock(&rwlock);
		}
	} else if (!strncmp(mode, "spin", 4)) {
		for (long i = 0; i < iterations; i++) {
			pthread_spin_lock(&spin);
			shared++;
			pthread_spin_unlock(&spin);
		}
	} else if (!strcmp(mode, "semtry")) {
		for (long i = 0; i < iterations; i++) {
			sem_trywait(&sem);
			shared++;
			sem_post(&sem);
		}
	} else if (!strcmp(mode, "nested")) {
		pthread_mutex_lock(&outer);
		for (long i = 0; i < iterations; i++) {
			pthread_mutex_lock(&lock);
			shared++;
			pthread_mutex_unlock(&lock);
		}
		pthread_mutex_unlock(&outer);
	} else if (!strcmp(mode, "syscall")) {
		for (long i = 0; i < iterations; i++)
			shared += syscall(SYS_getppid);
	} else {
		for (long i = 0; i < iterations; i++) {
			pthread_mutex_lock(&lock);
			shared++;
			pthread_mutex_unlock(&lock);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const char *const modes[] = { "uncontended", "contended", "rdlock", "wrlock", "spin",
					     "spin-contended", "semtry", "syscall", "nested" };
	int known = 0;
	for (size_t i = 0; argc == 3 && i < sizeof(modes) / sizeof(modes[0]); i++)
		known |= !strcmp(argv[1], modes[i]);
	if (!known) {
		fprintf(stderr, "usage: lockpair uncontended|contended|rdlock|wrlock|spin|spin-contended|"
			"semtry|syscall|nested ITERATIONS\n");
		return 2;
	}
	mode = argv[1];
	iterations = atol(argv[2]);
	pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
	sem_init(&sem, 0, 1);
	int threads = strstr(argv[1], "contended") && strcmp(argv[1], "uncontended") ? 2 : 1;
	double best = 1e300;
	for (int round = 0; round < 5; round++) {
		pthread_t th[2];
		double t0 = now();
		for (int i = 0; i < threads; i++)
			pthread_create(&th[i], NULL, loop, NULL);
		for (int i = 0; i < threads; i++)
			pthread_join(th[i], NULL);
		double per = (now() - t0) / ((double)iterations * threads);
		if (per < best)
			best = per;
	}
	printf("%.2f\n", best);
	return 0;
}
