/* signal_every_step.c — run under libconvoy.so (tests/shim/trust.c): a
 * signal handler that locks and forks, delivered at every instruction the
 * shim executes while the program takes its locks.
 *
 * The program forks a child that it traces. The child warms up (the
 * shim's caches, the records, the lock-order memos), then stops itself;
 * from there the parent single-steps it through one more round of each
 * case: mutexes (lock, trylock, a trylock under another lock, recursive
 * with its owner's relocks, error-checking and adaptive kinds), a spinlock, an rwlock read and written, two
 * semaphores in turn (one found in its cache entry's partner), a condvar
 * signalled and broadcast with nobody waiting, a mutex, the spinlock and a
 * read lock taken under another mutex and, in a round of its own, a write
 * lock (the lock-order memo's paths, warm: the memos are set), three
 * mutexes
 * whose entries in the shim's cache are one pair, taken in turn (each a
 * miss that finds its record in the thread's table under the quiet
 * guard: preload/objects.c, cv__lookup_slow), and a read lock in its
 * cache entry's partner beside the entry's destroyed lock, which its
 * next acquisition fills home (preload/shim.h, cv__ways_miss_n; the
 * handler reads both locks).
 * At
 * every step whose instruction is in libconvoy.so's code it delivers
 * SIGUSR1 once. A last round unlocks a mutex with a waiter's mark while
 * the handler destroys and unmaps it as soon as it reads released. The
 * handler tries the program's locks, locks one of its own, checks errno,
 * and forks (at every FORK_EVERY-th signal, argv[1], default 1: a fork is
 * most of a signal's cost; make test forks at every 16th, make test-deep at
 * every one): the fork child goes on from the interrupted instruction,
 * checks that every lock can still be taken and released, and exits; the
 * handler's parent waits for it. The handler then raises SIGURG, which
 * tells the tracer to go back to stepping, from the handler's return.
 *
 * Exit 0 and "ok: ..." when every call returned what it must, errno came
 * back as it went in, and no fork child failed; 1 otherwise; 77 when
 * ptrace is not allowed here.
 */
#include <signal.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/user.h>

#include "progs.h"
#include "shimtrace.h"

#include "../../preload/shim.h"

#define WARM   100
#define ROUNDS 15   /* each case of the switch below once */

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t c = PTHREAD_MUTEX_INITIALIZER, h = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t recursive, errorcheck, adaptive;
static pthread_spinlock_t spin;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
/* sem2 is taken after sem, so that one of them is in its cache entry's
 * partner; the handler takes sem3, then sem2, refilling the cache. */
static sem_t sem, sem2, sem3;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static volatile int round_case;   /* the switch's case now running */

/* The last round: a mutex in a page of its own, with a waiter's mark in
 * its lock word, unlocked while the handler frees it as soon as it reads
 * released (freeing); quiet while it is made ready. */
static pthread_mutex_t *freed_mutex;
static volatile long quiet, freeing, freed;
#define CASE_RECURSIVE 3
#define CASE_ERRORCHECK 4
#define CASE_WRLOCK 7
#define CASE_UNDER_B 10
#define CASE_MISSES 11
#define CASE_WRLOCK_UNDER_B 12
#define CASE_ADAPTIVE 13
#define CASE_PARTNER 14

/* CASE_MISSES: three of pool whose entries of the mutex cache are one
 * pair (white-box: shim.h, cv__way and cv__way_partner), so that taking
 * them in turn misses the cache each time (and finds them in the second
 * cache, made before the signals: make_second_caches); the same of
 * rwpool in the rwlock cache. */
static pthread_mutex_t pool[1024], *in_one_pair[3];
static pthread_rwlock_t rwpool[1024], *rw_in_one_pair[3];
/* CASE_PARTNER: two of rwpool in one entry of the rwlock cache, in a pair
 * of entries no other rwlock of the program's maps to. */
static pthread_rwlock_t *rw_one_entry[2];

/* The first three of count elements of size bytes at base whose entries
 * in a cache of `ways` entries are one pair (the first element's). */
static void three_in_one_pair(char *base, size_t size, size_t count, uint32_t ways, void *three[3], const char *what)
{
	static struct cv_way cache[CV_MUTEX_WAYS > CV_RWLOCK_WAYS ? CV_MUTEX_WAYS : CV_RWLOCK_WAYS];
	size_t n = 0;
	unsigned pair = (unsigned)(cv__way_n(cache, ways, base) - cache) >> 1;
	for (size_t i = 0; i < count && n < 3; i++)
		if ((unsigned)(cv__way_n(cache, ways, base + i * size) - cache) >> 1 == pair)
			three[n++] = base + i * size;
	if (n < 3) {
		fprintf(stderr, "signal_every_step: no three %s in one pair of cache entries\n", what);
		exit(1);
	}
}

static void pick_in_one_pair(void)
{
	void *three[3];
	three_in_one_pair((char *)pool, sizeof(pool[0]), sizeof(pool) / sizeof(pool[0]), CV_MUTEX_WAYS, three,
			  "mutexes");
	for (int k = 0; k < 3; k++)
		in_one_pair[k] = three[k];
	three_in_one_pair((char *)rwpool, sizeof(rwpool[0]), sizeof(rwpool) / sizeof(rwpool[0]), CV_RWLOCK_WAYS,
			  three, "rwlocks");
	for (int k = 0; k < 3; k++)
		rw_in_one_pair[k] = three[k];
	static struct cv_way cache[CV_RWLOCK_WAYS];
	unsigned taken = (unsigned)(cv__way_n(cache, CV_RWLOCK_WAYS, rw_in_one_pair[0]) - cache) >> 1,
		 rw_pair = (unsigned)(cv__way_n(cache, CV_RWLOCK_WAYS, &rw) - cache) >> 1;
	for (size_t i = sizeof(rwpool) / sizeof(rwpool[0]); i-- > 0 && !rw_one_entry[1];) {
		struct cv_way *w = cv__way_n(cache, CV_RWLOCK_WAYS, &rwpool[i]);
		unsigned pair = (unsigned)(w - cache) >> 1;
		if (pair == taken || pair == rw_pair)
			continue;
		if (!rw_one_entry[0])
			rw_one_entry[0] = &rwpool[i];
		else if (w == cv__way_n(cache, CV_RWLOCK_WAYS, rw_one_entry[0]))
			rw_one_entry[1] = &rwpool[i];
	}
	if (!rw_one_entry[1]) {
		fprintf(stderr, "signal_every_step: no two rwlocks in one cache entry\n");
		exit(1);
	}
}

/* Before the signals: the thread's second mutex and rwlock caches made
 * (shim.h, cv_thread.l2: more records than a first cache holds, then
 * enough refills of it with no lock held), so that CASE_MISSES steps
 * through their probes and fills too. */
static void make_second_caches(void)
{
	for (int k = 0; k < 100; k++) {
		pthread_mutex_lock(&pool[k]);
		pthread_mutex_unlock(&pool[k]);
		pthread_rwlock_rdlock(&rwpool[k]);
		pthread_rwlock_unlock(&rwpool[k]);
	}
	for (int i = 0; i < 300; i++)
		for (int k = 0; k < 3; k++) {
			pthread_rwlock_rdlock(rw_in_one_pair[k]);
			pthread_rwlock_unlock(rw_in_one_pair[k]);
			pthread_mutex_lock(in_one_pair[k]);
			pthread_mutex_unlock(in_one_pair[k]);
		}
}

/* Read by the tracer (the same addresses in its traced child: a fork). */
static volatile long armed, in_handler;
/* Where the handler returns, and its stack pointer there (its frame
 * address, which GCC keeps in a frame pointer once asked for it, plus the
 * saved frame pointer and the return address): the tracer runs the
 * handler's end to it under a breakpoint (single-stepped, raise's return
 * was 20 of glibc's instructions a signal, 95 % of all the steps). Not to the instruction
 * the signal interrupted: one that lands in a section of the shim's runs
 * its handler at the section's end. */
static volatile unsigned long handler_return, handler_cfa;
static volatile long bad, errno_lost, child_failed, forks;
static volatile int in_fork_child, no_fork;
static long fork_every = 1, signals_handled;

/* rc of a trylock of a mutex the interrupted code may hold: 0 (then
 * released) or EBUSY. */
static void try_and_release(pthread_mutex_t *m, bool may_be_held)
{
	int rc = pthread_mutex_trylock(m);
	if (rc == 0)
		pthread_mutex_unlock(m);
	else if (rc != EBUSY || !may_be_held)
		bad++;
}

/* An unlock of a recursive or errorcheck mutex the thread took: 0, or
 * EPERM in a fork child made since (glibc ties the owner to the thread id,
 * new in the child; in_fork_child is read after the call, which the fork
 * may interrupt: forks come only from signals at the shim's
 * instructions). */
static void unlock_owned(pthread_mutex_t *m)
{
	int rc = pthread_mutex_unlock(m);
	if (rc != 0 && (rc != EPERM || !in_fork_child))
		bad++;
}

/* A free recursive mutex tried, relocked and tried again by its owner,
 * then released as often: trylock, lock and trylock 0, unlocks 0 (EBUSY
 * and EPERM in a fork child made since the first trylock). The relock by
 * lock is left out in such a child, and the handler makes no child while
 * it runs (no_fork): natively too such a child would wait for ever for
 * the parent's thread. */
static void recursive_round(pthread_mutex_t *m)
{
	if (pthread_mutex_trylock(m) != 0) {
		bad++;
		return;
	}
	if (!in_fork_child) {
		no_fork = 1;
		if (pthread_mutex_lock(m) != 0)
			bad++;
		no_fork = 0;
		int rc = pthread_mutex_trylock(m);
		if (rc == 0)
			unlock_owned(m);
		else if (rc != EBUSY || !in_fork_child)
			bad++;
		unlock_owned(m);
	}
	unlock_owned(m);
}

/* An errorcheck mutex tried, then locked (not in a fork child made since:
 * its unlock may leave it held by the parent's thread), each released. */
static void errorcheck_round(pthread_mutex_t *m)
{
	try_and_release(m, false);
	if (!in_fork_child) {
		if (pthread_mutex_lock(m) != 0 && !in_fork_child)
			bad++;
		unlock_owned(m);
	}
}

/* A program may destroy and free a mutex as soon as it is released: glibc
 * reads nothing of it after the release (the futex wake names only its
 * address), and neither may the shim. */
static void free_once_released(void)
{
	if (!freed && __atomic_load_n(&freed_mutex->__data.__lock, __ATOMIC_RELAXED) == 0) {
		pthread_mutex_destroy(freed_mutex);
		munmap(freed_mutex, sizeof(*freed_mutex));
		freed = 1;
	}
}

static void handler(int sig)
{
	(void)sig;
	in_handler = 1;
	handler_return = (unsigned long)__builtin_return_address(0);
	handler_cfa = (unsigned long)__builtin_frame_address(0) + 16;
	if (quiet || freeing) {
		if (freeing)
			free_once_released();
		in_handler = 0;
		raise(SIGURG);
		return;
	}
	int saved = errno;
	errno = 4242;
	try_and_release(&a, true);
	try_and_release(&c, false);
	try_and_release(&recursive, true);   /* held by the interrupted code: recursive, so 0 */
	try_and_release(&adaptive, true);
	pthread_mutex_lock(&h);
	pthread_mutex_unlock(&h);
	int rc = pthread_spin_trylock(&spin);   /* EBUSY: the interrupted code holds it */
	if (rc == 0)
		pthread_spin_unlock(&spin);
	else if (rc != EBUSY)
		bad++;
	rc = pthread_rwlock_tryrdlock(&rw);   /* EBUSY: held for writing */
	if (rc == 0)
		pthread_rwlock_unlock(&rw);
	else if (rc != EBUSY)
		bad++;
	for (int k = 0; k < 2; k++) {   /* read-locked or being destroyed by the interrupted code: either */
		rc = pthread_rwlock_tryrdlock(rw_one_entry[k]);
		if (rc == 0)
			pthread_rwlock_unlock(rw_one_entry[k]);
		else if (rc != EBUSY && rc != EINVAL)
			bad++;
	}
	if (errno != 4242)
		errno_lost++;
	if (sem_trywait(&sem) == 0)   /* EAGAIN: the interrupted code has the token */
		sem_post(&sem);
	else if (errno != EAGAIN)
		bad++;
	if (sem_trywait(&sem3) == 0)
		sem_post(&sem3);
	else
		bad++;
	if (sem_trywait(&sem2) == 0)
		sem_post(&sem2);
	else if (errno != EAGAIN)
		bad++;
	errno = 4242;
	pthread_cond_signal(&cond);
	if (errno != 4242)
		errno_lost++;
	if (!in_fork_child && !no_fork && signals_handled++ % fork_every == 0) {
		pid_t child = fork();
		if (child == 0) {
			in_fork_child = 1;   /* goes on from the interrupted instruction */
		} else if (child > 0) {
			int status, rc;
			forks++;
			while ((rc = waitpid(child, &status, 0)) < 0 && errno == EINTR)
				;
			if (rc < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
				child_failed++;
		}
	}
	errno = saved;
	in_handler = 0;
	if (armed && !in_fork_child)
		raise(SIGURG);   /* the tracer steps again */
}

/* Every lock free. In a fork child made during the round of a lock whose
 * release glibc ties to the taker's thread id, new in the child, that
 * lock is left out: natively too, the recursive and error-checking
 * mutexes say EPERM there, and the rwlock's write lock is released as a
 * reader's (the reader count goes below zero, the lock stays taken). */
static void all_free(bool in_child)
{
	int taken_by_parent = in_child ? round_case : -1;
	pthread_mutex_t *mutexes[] = { &a, &b, &c, &h, &recursive, &errorcheck, &adaptive, in_one_pair[0],
				       in_one_pair[1], in_one_pair[2] };
	for (size_t i = 0; i < sizeof(mutexes) / sizeof(mutexes[0]); i++) {
		if (!(mutexes[i] == &recursive && taken_by_parent == CASE_RECURSIVE) &&
		    !(mutexes[i] == &errorcheck && taken_by_parent == CASE_ERRORCHECK))
			try_and_release(mutexes[i], false);
	}
	if (pthread_spin_trylock(&spin) != 0)
		bad++;
	else
		pthread_spin_unlock(&spin);
	if (taken_by_parent != CASE_WRLOCK && taken_by_parent != CASE_WRLOCK_UNDER_B) {
		if (pthread_rwlock_trywrlock(&rw) != 0)
			bad++;
		else
			pthread_rwlock_unlock(&rw);
	}
	for (int k = 0; k < 2; k++) {
		if (pthread_rwlock_trywrlock(rw_one_entry[k]) != 0)
			bad++;
		else
			pthread_rwlock_unlock(rw_one_entry[k]);
	}
	sem_t *sems[] = { &sem, &sem2 };
	for (int i = 0; i < 2; i++) {
		if (sem_trywait(sems[i]) != 0)
			bad++;
		else
			sem_post(sems[i]);
	}
}

/* A fork child made by the handler, once the interrupted call and the
 * round it was in are done: every lock free, and lock order still kept. */
static void fork_child_checks(void)
{
	all_free(true);
	for (int i = 0; i < 5; i++) {
		pthread_mutex_lock(&b);
		try_and_release(&a, false);
		pthread_mutex_unlock(&b);
	}
	_exit(bad || errno_lost ? 3 : 0);
}

/* The last round (freed_mutex). The condvar wait that times out at once
 * re-takes the mutex as a waiter would, leaving 2 in its lock word: the
 * unlock then wakes, the path whose stamp must not read the mutex. */
static void unlock_then_free(void)
{
	static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
	quiet = 1;
	freed_mutex = mmap(NULL, sizeof(*freed_mutex), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (freed_mutex == MAP_FAILED || pthread_mutex_init(freed_mutex, NULL) != 0) {
		bad++;
		return;
	}
	pthread_mutex_lock(freed_mutex);
	struct timespec past = { 0, 0 };
	if (pthread_cond_timedwait(&never, freed_mutex, &past) != ETIMEDOUT)
		bad++;
	quiet = 0;
	freeing = 1;
	pthread_mutex_unlock(freed_mutex);
	freeing = 0;
	if (!freed) {
		bad++;   /* the handler never saw it released */
		pthread_mutex_destroy(freed_mutex);
		munmap(freed_mutex, sizeof(*freed_mutex));
	}
}

static void *nothing(void *arg)
{
	return arg;
}

static int traced(void)
{
	pthread_mutexattr_t attr;
	MUST(pthread_mutexattr_init(&attr));
	MUST(pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE));
	MUST(pthread_mutex_init(&recursive, &attr));
	MUST(pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK));
	MUST(pthread_mutex_init(&errorcheck, &attr));
	MUST(pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP));
	MUST(pthread_mutex_init(&adaptive, &attr));
	MUST(pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE));
	MUST(sem_init(&sem, 0, 1));
	MUST(sem_init(&sem2, 0, 1));
	MUST(sem_init(&sem3, 0, 1));
	pick_in_one_pair();
	struct sigaction sa = { .sa_handler = handler };
	MUST(sigaction(SIGUSR1, &sa, NULL));
	pthread_t t;   /* glibc's multi-threaded path, which the shim takes over */
	MUST(pthread_create(&t, NULL, nothing, NULL));
	MUST(pthread_join(t, NULL));
	make_second_caches();
	for (int i = 0; i < WARM + ROUNDS; i++) {
		if (i == WARM) {
			armed = 1;
			raise(SIGSTOP);   /* the tracer single-steps from here */
		}
		if (in_fork_child)
			fork_child_checks();
		round_case = i % ROUNDS;
		switch (round_case) {
		case 0:
			try_and_release(&a, false);
			break;
		case 1:
			pthread_mutex_lock(&b);
			try_and_release(&a, false);
			pthread_mutex_unlock(&b);
			break;
		case 2:
			pthread_mutex_lock(&a);
			pthread_mutex_unlock(&a);
			break;
		case CASE_RECURSIVE:
			recursive_round(&recursive);
			break;
		case CASE_ERRORCHECK:
			errorcheck_round(&errorcheck);
			break;
		case 5:
			pthread_spin_lock(&spin);
			pthread_spin_unlock(&spin);
			break;
		case 6:
			pthread_rwlock_rdlock(&rw);
			pthread_rwlock_unlock(&rw);
			break;
		case CASE_WRLOCK:
			pthread_rwlock_wrlock(&rw);
			pthread_rwlock_unlock(&rw);
			break;
		case 8:
			sem_wait(&sem);
			sem_post(&sem);
			sem_wait(&sem2);
			sem_post(&sem2);
			break;
		case 9:
			pthread_cond_signal(&cond);
			pthread_cond_broadcast(&cond);
			break;
		case CASE_UNDER_B:
			pthread_mutex_lock(&b);
			pthread_mutex_lock(&a);
			pthread_mutex_unlock(&a);
			pthread_spin_lock(&spin);
			pthread_spin_unlock(&spin);
			pthread_rwlock_rdlock(&rw);
			pthread_rwlock_unlock(&rw);
			pthread_mutex_unlock(&b);
			break;
		case CASE_MISSES:
			for (int k = 0; k < 3; k++) {
				if (pthread_rwlock_rdlock(rw_in_one_pair[k]) || pthread_rwlock_unlock(rw_in_one_pair[k]))
					bad++;
				pthread_mutex_lock(&b);
				if (pthread_rwlock_rdlock(rw_in_one_pair[k]) || pthread_rwlock_unlock(rw_in_one_pair[k]))
					bad++;
				pthread_mutex_unlock(&b);
				pthread_mutex_lock(in_one_pair[k]);
				pthread_mutex_unlock(in_one_pair[k]);
			}
			/* writes last: a fork child's unlock of a write lock leaves it taken (all_free) */
			for (int k = 0; k < 3; k++)
				if (pthread_rwlock_wrlock(rw_in_one_pair[k]) || pthread_rwlock_unlock(rw_in_one_pair[k]))
					bad++;
			break;
		case CASE_WRLOCK_UNDER_B:
			pthread_mutex_lock(&b);
			pthread_rwlock_wrlock(&rw);
			pthread_rwlock_unlock(&rw);
			pthread_mutex_unlock(&b);
			break;
		case CASE_ADAPTIVE:
			pthread_mutex_lock(&adaptive);
			pthread_mutex_unlock(&adaptive);
			break;
		case CASE_PARTNER:   /* 0 to the partner, 1 destroyed, 0 beside it: filled home */
			for (int k = 0; k < 2; k++)
				if (pthread_rwlock_rdlock(rw_one_entry[k]) || pthread_rwlock_unlock(rw_one_entry[k]))
					bad++;
			if (pthread_rwlock_destroy(rw_one_entry[1]) || pthread_rwlock_init(rw_one_entry[1], NULL))
				bad++;
			if (pthread_rwlock_rdlock(rw_one_entry[0]) || pthread_rwlock_unlock(rw_one_entry[0]))
				bad++;
			break;
		}
	}
	if (in_fork_child)
		fork_child_checks();
	unlock_then_free();
	armed = 0;
	all_free(false);
	printf("forks %ld, children failed %ld, wrong results %ld, errno lost %ld\n", forks, child_failed, bad,
	       errno_lost);
	return bad || errno_lost || child_failed || forks == 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && (fork_every = atol(argv[1])) < 1)
		return 2;
	pid_t pid = traced_child(traced);
	if (pid <= 0) {
		printf("%s\n", pid ? "fork or waitpid failed" : "ptrace is not allowed here");
		return pid ? 1 : 77;
	}
	int status;
	long signals = 0;
	if (!resume_until(pid, PTRACE_CONT, 0, SIGSTOP, &status))   /* to the warm-up's end */
		goto ended;
	unsigned long lo, hi;
	if (!shim_mapping(pid, &lo, &hi, NULL, NULL, 0)) {
		printf("libconvoy.so is not loaded: run this under the shim\n");
		kill(pid, SIGKILL);
		return 1;
	}
	unsigned long long last = 0;
	while (peek(pid, &armed) == 1) {
		struct user_regs_struct regs;
		if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) != 0)
			goto ended;
		bool signal_here = false;
		if (regs.rip == last)
			last = 0;   /* back from the handler at the instruction it interrupted: step over it */
		else
			signal_here = regs.rip >= lo && regs.rip < hi && peek(pid, &in_handler) == 0;
		if (signal_here) {
			last = regs.rip;
			signals++;
			if (!resume_until(pid, PTRACE_CONT, SIGUSR1, SIGURG, &status) ||
			    run_to(pid, peek(pid, &handler_return), peek(pid, &handler_cfa), &status) < 0)
				goto ended;
		} else if (!resume_until(pid, PTRACE_SINGLESTEP, 0, SIGTRAP, &status)) {
			goto ended;
		}
	}
	if (ptrace(PTRACE_CONT, pid, NULL, NULL) != 0 || waitpid(pid, &status, 0) < 0)
		return 1;
ended:
	if (WIFSIGNALED(status)) {
		printf("the traced program was killed by signal %d (%s) after %ld signals\n", WTERMSIG(status),
		       strsignal(WTERMSIG(status)), signals);
		return 1;
	}
	if (!WIFEXITED(status)) {
		printf("the traced program stopped unexpectedly (status %#x)\n", status);
		kill(pid, SIGKILL);
		return 1;
	}
	if (WEXITSTATUS(status) != 0) {
		printf("the traced program failed (exit %d) after %ld signals\n", WEXITSTATUS(status), signals);
		return 1;
	}
	printf("ok: %ld signals, one at each instruction of the shim's\n", signals);
	return 0;
}
