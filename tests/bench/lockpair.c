/* lockpair.c — the shim's overhead benchmark (make bench; not a test).
 *
 *   lockpair uncontended N   ns per lock+unlock pair, one thread, one mutex
 *   lockpair contended N     ns per pair, two threads sharing one mutex
 *   lockpair nested N        ns per inner lock+unlock pair taken while holding another
 *                            mutex, one thread (the lock-order edge lookup)
 *   lockpair nested-rdlock N, nested-spin N
 *                            the same for an rwlock's read lock and a spinlock under a mutex
 *   lockpair rdlock N        ns per pthread_rwlock_rdlock+unlock pair, one thread
 *   lockpair wrlock N        ns per pthread_rwlock_wrlock+unlock pair, one thread
 *   lockpair spin N          ns per pthread_spin_lock+unlock pair, one thread
 *   lockpair spin-contended N  the same, two threads sharing one spinlock
 *   lockpair semtry N        ns per sem_trywait+sem_post pair, one thread
 *   lockpair semwait N       ns per sem_wait+sem_post pair that never blocks, one thread
 *   lockpair trylock N       ns per pthread_mutex_trylock+unlock pair, one thread
 *   lockpair mtx N           ns per C11 mtx_lock+mtx_unlock pair, one thread
 *   lockpair recursive N, errorcheck N
 *                            lock+unlock of a PTHREAD_MUTEX_RECURSIVE or _ERRORCHECK mutex
 *   lockpair recursive2 N    lock+unlock of a recursive mutex that the thread already holds
 *   lockpair signal N        ns per pthread_cond_signal with no thread waiting, one thread
 *   lockpair broadcast N     ns per pthread_cond_broadcast with no thread waiting, one thread
 *   lockpair signal2 N       ns per pthread_cond_signal with no thread waiting, on two condvars in turn
 *   lockpair pingpong N      ns per hop of a turn passed between two threads through a
 *                            mutex and a condvar (each hop a wait, a signal and a wake)
 *   lockpair syscall N       ns per syscall(SYS_getppid) (libc's syscall())
 *   lockpair alternate N     ns per lock+unlock pair, one thread alternating between two mutexes
 *   lockpair rdlock3 N       ns per rdlock+unlock pair on three rwlocks in turn (OpenSSL 3's
 *                            library context takes several in turn), one thread
 *   lockpair spin2 N, semwait2 N
 *                            spin and semwait on two spinlocks or semaphores in turn
 *   lockpair semwait4 N      semwait on four semaphores in turn (CPython's locks are
 *                            semaphores: a program's few, taken in turn)
 *   lockpair rdlock-same-entry N
 *                            rdlock on two rwlocks in turn whose addresses pick one entry of
 *                            the shim's cache (preload/shim.h, cv__way: its hash, copied)
 *   lockpair nested-rdlock3 N
 *                            rdlock3 under a held mutex (the lock-order memo of three locks)
 *   lockpair mutex16 N, rdlock16 N
 *                            lock+unlock and rdlock+unlock on sixteen locks in turn, each in a
 *                            block of its own from malloc (a program's many locks: more than
 *                            a few cache entries hold)
 *   lockpair striped N       lock+unlock of one of 1,024 mutexes picked at random each pair (a
 *                            table's lock per bucket), one thread
 *   lockpair striped-contended N
 *                            the same table, two threads (each pair's mutex last taken by either)
 *   lockpair churn N         ns per pthread_mutex_init+lock+unlock+destroy of one mutex, one
 *                            thread (the object registry: every init and destroy is a new lock)
 *   lockpair churn-many N    the same over an array of 1,000 mutexes in turn (a new lock at
 *                            an address whose last one was destroyed: a pool, a heap)
 *   lockpair churn-late N    churn-many over 1,000 other mutexes, after 5,000 at distinct
 *                            addresses were made and destroyed first (past the shim's cap of
 *                            destroyed objects kept apart: no object of its own at these)
 *   lockpair churn-heap N    ns per life of a mutex malloc'd (init, lock, unlock, destroy, free),
 *                            20,000 live at once: each a new object at an address malloc hands
 *                            out again (a program's per-request objects, CPython's locks)
 *   lockpair churn-cond N    ns per life of a condvar as C++ makes one (std::condition_variable:
 *                            PTHREAD_COND_INITIALIZER, no init call), signalled with no waiter
 *                            and destroyed, over 1,000 condvars in turn (made on first use)
 *   lockpair threads N       ns per pthread_create+pthread_join of a thread that takes one
 *                            mutex once, one thread made at a time (a program that makes a
 *                            thread for each piece of work)
 *   lockpair churn-sig N, churn-many-sig N
 *                            churn and churn-many in a program that has installed a signal
 *                            handler (never sent): the shim then blocks signals in its own
 *                            critical sections (preload/lock.c)
 *
 * Prints one number: nanoseconds per pair (best of 5 rounds, to drop the
 * rounds a noisy neighbour stole; threads: of one round). Run it with and without LD_PRELOAD side
 * by side; tests/bench/overhead.sh does that.
 */
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER, outer = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t recursive = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP,
		       errorcheck = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
static pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_rwlock_t rwlocks[3] = { PTHREAD_RWLOCK_INITIALIZER, PTHREAD_RWLOCK_INITIALIZER,
				       PTHREAD_RWLOCK_INITIALIZER };
#define RWLOCKS_MANY 1024   /* two in one entry of the shim's cache among them */
static pthread_rwlock_t rwlocks_many[RWLOCKS_MANY];   /* zeroed: PTHREAD_RWLOCK_INITIALIZER */
#define STRIPES 1024
static pthread_mutex_t stripes[STRIPES];   /* zeroed: PTHREAD_MUTEX_INITIALIZER */
#define LOCKS_APART 16
static pthread_mutex_t *mutexes_apart[LOCKS_APART];   /* mutex16, rdlock16: each from malloc */
static pthread_rwlock_t *rwlocks_apart[LOCKS_APART];
static pthread_spinlock_t spin, spin2;
static sem_t sem, sem2, sem4[4];
static mtx_t mtx;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER, cond2 = PTHREAD_COND_INITIALIZER;
static long turn, next_id;   /* pingpong: whose turn (turn % 2), and the threads' ids */
static volatile long shared;
static long iterations;
#define CHURN_MANY 1000
#define CHURN_FIRST 5000   /* churn-late's first objects */
#define CHURN_HEAP 20000   /* churn-heap's live objects */
static const char *mode;

/* The entry of a cache of 2^bits the shim would put addr in
 * (preload/shim.h, cv__way: 64 entries for mutexes and rwlocks). */
static unsigned way_of(const void *addr, unsigned bits)
{
	return (unsigned)(((uintptr_t)addr * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

static void on_signal(int sig)
{
	(void)sig;
}

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
	} else if (!strcmp(mode, "spin2")) {
		for (long i = 0; i < iterations; i += 2) {
			pthread_spin_lock(&spin);
			shared++;
			pthread_spin_unlock(&spin);
			pthread_spin_lock(&spin2);
			shared++;
			pthread_spin_unlock(&spin2);
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
	} else if (!strcmp(mode, "semwait")) {
		for (long i = 0; i < iterations; i++) {
			sem_wait(&sem);
			shared++;
			sem_post(&sem);
		}
	} else if (!strcmp(mode, "trylock")) {
		for (long i = 0; i < iterations; i++) {
			pthread_mutex_trylock(&lock);
			shared++;
			pthread_mutex_unlock(&lock);
		}
	} else if (!strcmp(mode, "signal2")) {
		for (long i = 0; i < iterations; i += 2) {
			pthread_cond_signal(&cond);
			shared++;
			pthread_cond_signal(&cond2);
			shared++;
		}
	} else if (!strcmp(mode, "broadcast")) {
		for (long i = 0; i < iterations; i++) {
			pthread_cond_broadcast(&cond);
			shared++;
		}
	} else if (!strcmp(mode, "mtx")) {
		for (long i = 0; i < iterations; i++) {
			mtx_lock(&mtx);
			shared++;
			mtx_unlock(&mtx);
		}
	} else if (!strcmp(mode, "signal")) {
		for (long i = 0; i < iterations; i++) {
			pthread_cond_signal(&cond);
			shared++;
		}
	} else if (!strcmp(mode, "pingpong")) {
		pthread_mutex_lock(&lock);
		long me = next_id++ % 2;
		for (long i = 0; i < iterations; i++) {
			while (turn % 2 != me)
				pthread_cond_wait(&cond, &lock);
			turn++;
			pthread_cond_signal(&cond);
		}
		pthread_mutex_unlock(&lock);
	} else if (!strcmp(mode, "nested")) {
		pthread_mutex_lock(&outer);
		for (long i = 0; i < iterations; i++) {
			pthread_mutex_lock(&lock);
			shared++;
			pthread_mutex_unlock(&lock);
		}
		pthread_mutex_unlock(&outer);
	} else if (!strcmp(mode, "nested-rdlock")) {
		pthread_mutex_lock(&outer);
		for (long i = 0; i < iterations; i++) {
			pthread_rwlock_rdlock(&rwlock);
			shared++;
			pthread_rwlock_unlock(&rwlock);
		}
		pthread_mutex_unlock(&outer);
	} else if (!strcmp(mode, "nested-spin")) {
		pthread_mutex_lock(&outer);
		for (long i = 0; i < iterations; i++) {
			pthread_spin_lock(&spin);
			shared++;
			pthread_spin_unlock(&spin);
		}
		pthread_mutex_unlock(&outer);
	} else if (!strcmp(mode, "rdlock-same-entry")) {
		pthread_rwlock_t *a = &rwlocks_many[0], *b = NULL;
		for (int i = 1; i < RWLOCKS_MANY && !b; i++)
			if (way_of(&rwlocks_many[i], 6) == way_of(a, 6))   /* one entry of the rwlock cache */
				b = &rwlocks_many[i];
		for (long i = 0; b && i < iterations; i += 2) {
			pthread_rwlock_rdlock(a);
			shared++;
			pthread_rwlock_unlock(a);
			pthread_rwlock_rdlock(b);
			shared++;
			pthread_rwlock_unlock(b);
		}
	} else if (!strcmp(mode, "nested-rdlock3")) {
		pthread_mutex_lock(&outer);
		for (long i = 0; i < iterations; i++) {
			pthread_rwlock_t *rw = &rwlocks[i % 3];
			pthread_rwlock_rdlock(rw);
			shared++;
			pthread_rwlock_unlock(rw);
		}
		pthread_mutex_unlock(&outer);
	} else if (!strcmp(mode, "mutex16")) {
		for (long i = 0; i < iterations; i++) {
			pthread_mutex_t *m = mutexes_apart[i % LOCKS_APART];
			pthread_mutex_lock(m);
			shared++;
			pthread_mutex_unlock(m);
		}
	} else if (!strncmp(mode, "striped", 7)) {
		uint64_t x = (uintptr_t)&x;   /* each thread its own sequence */
		for (long i = 0; i < iterations; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			pthread_mutex_t *m = &stripes[(x >> 33) % STRIPES];
			pthread_mutex_lock(m);
			shared++;
			pthread_mutex_unlock(m);
		}
	} else if (!strcmp(mode, "rdlock16")) {
		for (long i = 0; i < iterations; i++) {
			pthread_rwlock_t *rw = rwlocks_apart[i % LOCKS_APART];
			pthread_rwlock_rdlock(rw);
			shared++;
			pthread_rwlock_unlock(rw);
		}
	} else if (!strcmp(mode, "rdlock3")) {
		for (long i = 0; i < iterations; i++) {
			pthread_rwlock_t *rw = &rwlocks[i % 3];
			pthread_rwlock_rdlock(rw);
			shared++;
			pthread_rwlock_unlock(rw);
		}
	} else if (!strcmp(mode, "semwait2")) {
		for (long i = 0; i < iterations; i += 2) {
			sem_wait(&sem);
			shared++;
			sem_post(&sem);
			sem_wait(&sem2);
			shared++;
			sem_post(&sem2);
		}
	} else if (!strcmp(mode, "semwait4")) {
		for (long i = 0; i < iterations; i++) {
			sem_wait(&sem4[i % 4]);
			shared++;
			sem_post(&sem4[i % 4]);
		}
	} else if (!strcmp(mode, "alternate")) {
		for (long i = 0; i < iterations; i += 2) {
			pthread_mutex_lock(&lock);
			shared++;
			pthread_mutex_unlock(&lock);
			pthread_mutex_lock(&outer);
			shared++;
			pthread_mutex_unlock(&outer);
		}
	} else if (!strcmp(mode, "churn")) {
		pthread_mutex_t m;
		for (long i = 0; i < iterations; i++) {
			pthread_mutex_init(&m, NULL);
			pthread_mutex_lock(&m);
			shared++;
			pthread_mutex_unlock(&m);
			pthread_mutex_destroy(&m);
		}
	} else if (!strcmp(mode, "churn-many") || !strcmp(mode, "churn-late")) {
		static pthread_mutex_t many[CHURN_MANY];
		for (long i = 0; i < iterations; i++) {
			pthread_mutex_t *m = &many[i % CHURN_MANY];
			pthread_mutex_init(m, NULL);
			pthread_mutex_lock(m);
			shared++;
			pthread_mutex_unlock(m);
			pthread_mutex_destroy(m);
		}
	} else if (!strcmp(mode, "churn-heap")) {
		static pthread_mutex_t *live[CHURN_HEAP];
		for (long i = 0; i < iterations; i++) {
			pthread_mutex_t **m = &live[i % CHURN_HEAP];
			if (*m) {
				pthread_mutex_destroy(*m);
				free(*m);
			}
			/* sizes as a program's objects vary: malloc's addresses are not one stride */
			if (!(*m = malloc(sizeof(**m) + (size_t)(i % 7) * 16)))
				abort();
			pthread_mutex_init(*m, NULL);
			pthread_mutex_lock(*m);
			shared++;
			pthread_mutex_unlock(*m);
		}
	} else if (!strcmp(mode, "churn-cond")) {
		static pthread_cond_t many[CHURN_MANY];
		for (long i = 0; i < iterations; i++) {
			pthread_cond_t *c = &many[i % CHURN_MANY];
			*c = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
			pthread_cond_signal(c);
			shared++;
			pthread_cond_destroy(c);
		}
	} else if (!strcmp(mode, "recursive") || !strcmp(mode, "errorcheck") || !strcmp(mode, "recursive2")) {
		pthread_mutex_t *m = !strcmp(mode, "errorcheck") ? &errorcheck : &recursive;
		bool held = !strcmp(mode, "recursive2");   /* each pair a relock */
		if (held)
			pthread_mutex_lock(m);
		for (long i = 0; i < iterations; i++) {
			pthread_mutex_lock(m);
			shared++;
			pthread_mutex_unlock(m);
		}
		if (held)
			pthread_mutex_unlock(m);
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

/* "threads": one short thread's work. */
static void *short_thread(void *arg)
{
	pthread_mutex_lock(&lock);
	shared++;
	pthread_mutex_unlock(&lock);
	return arg;
}

int main(int argc, char **argv)
{
	static const char *const modes[] = { "uncontended", "contended", "rdlock", "wrlock", "spin",
					     "spin-contended", "semtry", "syscall", "nested", "nested-rdlock", "nested-spin", "mtx", "signal", "pingpong",
					     "alternate", "churn", "churn-many", "churn-late", "churn-heap", "churn-cond", "churn-sig", "churn-many-sig", "semwait", "trylock", "broadcast",
					     "signal2", "rdlock3", "spin2", "semwait2", "semwait4", "rdlock-same-entry", "nested-rdlock3",
					     "mutex16", "rdlock16", "recursive", "recursive2", "errorcheck", "striped",
					     "striped-contended", "threads" };
	int known = 0;
	for (size_t i = 0; argc == 3 && i < sizeof(modes) / sizeof(modes[0]); i++)
		known |= !strcmp(argv[1], modes[i]);
	if (!known) {
		fprintf(stderr, "usage: lockpair uncontended|contended|rdlock|wrlock|spin|spin-contended|"
			"semtry|semwait|trylock|syscall|nested|nested-rdlock|nested-spin|mtx|recursive|recursive2|errorcheck|signal|signal2|broadcast|pingpong|alternate|rdlock3|spin2|semwait2|semwait4|rdlock-same-entry|nested-rdlock3|mutex16|rdlock16|striped|striped-contended|churn|churn-many|churn-late|churn-heap|churn-cond|churn-sig|churn-many-sig|threads ITERATIONS\n");
		return 2;
	}
	mode = argv[1];
	size_t len = strlen(mode);
	if (len > 4 && !strcmp(mode + len - 4, "-sig")) {
		struct sigaction sa = { .sa_handler = on_signal };
		sigemptyset(&sa.sa_mask);
		sigaction(SIGURG, &sa, NULL);
		mode = strndup(mode, len - 4);
	}
	iterations = atol(argv[2]);
	pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&spin2, PTHREAD_PROCESS_PRIVATE);
	sem_init(&sem, 0, 1);
	sem_init(&sem2, 0, 1);
	for (int i = 0; i < 4; i++)
		sem_init(&sem4[i], 0, 1);
	mtx_init(&mtx, mtx_plain);
	if (!strcmp(mode, "churn-late")) {   /* 5,000 made and destroyed, each at its own address */
		pthread_mutex_t *first = calloc(CHURN_FIRST, sizeof(*first));
		if (!first)
			return 1;
		for (int i = 0; i < CHURN_FIRST; i++) {
			pthread_mutex_init(&first[i], NULL);
			pthread_mutex_lock(&first[i]);
			pthread_mutex_unlock(&first[i]);
			pthread_mutex_destroy(&first[i]);
		}
		free(first);
	}
	for (int i = 0; i < LOCKS_APART; i++) {
		mutexes_apart[i] = malloc(sizeof(*mutexes_apart[i]));
		rwlocks_apart[i] = malloc(sizeof(*rwlocks_apart[i]));
		if (!mutexes_apart[i] || !rwlocks_apart[i])
			return 1;
		pthread_mutex_init(mutexes_apart[i], NULL);
		pthread_rwlock_init(rwlocks_apart[i], NULL);
	}
	int threads = (strstr(argv[1], "contended") && strcmp(argv[1], "uncontended")) ||
		      !strcmp(argv[1], "pingpong") ? 2 : 1;
	double best = 1e300;
	/* threads: one round, the shim's first 1,024 ended threads (kept one
	 * by one; thread.c) being what most programs make */
	int rounds = strcmp(mode, "threads") ? 5 : 1;
	for (int round = 0; round < rounds; round++) {
		pthread_t th[2];
		turn = 0;
		double t0 = now();
		for (long i = 0; !strcmp(mode, "threads") && i < iterations; i++) {
			pthread_create(&th[0], NULL, short_thread, NULL);
			pthread_join(th[0], NULL);
		}
		for (int i = 0; strcmp(mode, "threads") && i < threads; i++)
			pthread_create(&th[i], NULL, loop, NULL);
		for (int i = 0; strcmp(mode, "threads") && i < threads; i++)
			pthread_join(th[i], NULL);
		double per = (now() - t0) / ((double)iterations * threads);
		if (per < best)
			best = per;
	}
	printf("%.2f\n", best);
	return 0;
}
