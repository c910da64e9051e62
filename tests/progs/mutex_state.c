/* The state glibc keeps in a mutex, as the program can read it: the lock
 * word, the owner's tid, the user count, the recursive count, after each
 * step of a lock, a trylock from another thread, a condvar wait that times
 * out, an unlock, a trylock of its own and a destroy; for the mutex kinds
 * the shim takes itself (mutex.c: the initializer, PTHREAD_MUTEX_NORMAL,
 * C11's mtx_plain, PTHREAD_MUTEX_ADAPTIVE_NP, _RECURSIVE, _ERRORCHECK)
 * and one it leaves to glibc (process-shared). For the recursive and
 * errorcheck ones, the owner's relock and trylock, and the errors of an
 * unlock by another thread and of one too many. Then a lock in a thread's
 * key destructor, after the shim has seen the thread end, and one in a
 * fork child. Run natively and under the shim, the output must be the
 * same (trust::a_mutex_the_shim_takes_itself_is_left_as_glibc_leaves_it). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <threads.h>
#include <time.h>
#include <limits.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;

static void show(const char *step, pthread_mutex_t *m)
{
	printf("  %-24s lock %d owner %s users %u count %u kind %d\n", step, m->__data.__lock,
	       m->__data.__owner == 0 ? "none" : m->__data.__owner == gettid() ? "me" : "other",
	       m->__data.__nusers, m->__data.__count, m->__data.__kind);
}

static const char *result(int rc)
{
	switch (rc) {
	case 0: return "0";
	case EBUSY: return "EBUSY";
	case EDEADLK: return "EDEADLK";
	case EPERM: return "EPERM";
	default: return strerror(rc);
	}
}

static void *unlock_it(void *arg)
{
	return (void *)(long)pthread_mutex_unlock(arg);
}

/* What a recursive or errorcheck mutex checks: its owner's relock and
 * trylock, an unlock by another thread, and the owner's unlocks until one
 * fails. */
static void owner_steps(pthread_mutex_t *m)
{
	printf("  lock: %s\n", result(pthread_mutex_lock(m)));
	printf("  relock: %s\n", result(pthread_mutex_lock(m)));
	show("relocked", m);
	printf("  trylock by the owner: %s\n", result(pthread_mutex_trylock(m)));
	show("tried by the owner", m);
	pthread_t th;
	void *rc;
	pthread_create(&th, NULL, unlock_it, m);
	pthread_join(th, &rc);
	printf("  unlock from another thread: %s\n", result((int)(long)rc));
	show("after it", m);
	for (int i = 0; i < 4; i++) {
		int u = pthread_mutex_unlock(m);
		printf("  unlock: %s\n", result(u));
		show("unlocked", m);
		if (u)
			break;
	}
}

static void *try_it(void *arg)
{
	return (void *)(long)pthread_mutex_trylock(arg);
}

static void steps(const char *name, pthread_mutex_t *m)
{
	printf("%s\n", name);
	show("initialised", m);
	printf("  lock: %d\n", pthread_mutex_lock(m));
	show("locked", m);
	pthread_t th;
	void *rc;
	pthread_create(&th, NULL, try_it, m);
	pthread_join(th, &rc);
	printf("  trylock from another thread: %s\n", (long)rc == EBUSY ? "EBUSY" : strerror((int)(long)rc));
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	int w = pthread_cond_timedwait(&cond, m, &until);
	printf("  timed wait: %s\n", w == ETIMEDOUT ? "ETIMEDOUT" : strerror(w));
	show("after the wait", m);
	printf("  unlock: %d\n", pthread_mutex_unlock(m));
	show("unlocked", m);
	int again = pthread_mutex_lock(m);
	printf("  lock again: %d, unlock: %d\n", again, pthread_mutex_unlock(m));
	printf("  trylock: %d\n", pthread_mutex_trylock(m));
	show("trylocked", m);
	printf("  unlock: %d\n", pthread_mutex_unlock(m));
	printf("  destroy: %d\n", pthread_mutex_destroy(m));
}

/* A recursive mutex's relock and trylock where one more would wrap its
 * count: EAGAIN, the count left as it was. */
static void count_at_its_limit(pthread_mutexattr_t *a)
{
	pthread_mutex_t m;
	pthread_mutex_init(&m, a);
	printf("a recursive mutex's count at its limit\n");
	pthread_mutex_lock(&m);
	m.__data.__count = UINT_MAX;
	int relock = pthread_mutex_lock(&m), trylock = pthread_mutex_trylock(&m);
	printf("  relock: %s, trylock: %s\n", result(relock), result(trylock));
	show("at the limit", &m);
	m.__data.__count = 1;
	printf("  unlock: %s\n", result(pthread_mutex_unlock(&m)));
	show("unlocked", &m);
}

/* A recursive mutex at an odd address (as in a packed struct), relocked:
 * its inner unlock leaves it held, as another thread's trylock sees. The
 * shim's held set keys a lock by its address with bit 0 flipped for an
 * unlock that must test more (preload/shim.h, cv__held_key): set, not
 * flipped, that bit made such a mutex's inner unlock release it. */
static _Alignas(64) char odd_memory[1 + sizeof(pthread_mutex_t)];

static void at_an_odd_address(pthread_mutexattr_t *a)
{
	pthread_mutex_t *m = (pthread_mutex_t *)(void *)(odd_memory + 1);
	pthread_mutex_init(m, a);
	printf("a recursive mutex at an odd address\n");
	int lock = pthread_mutex_lock(m), relock = pthread_mutex_lock(m), unlock = pthread_mutex_unlock(m);
	printf("  lock, relock, unlock: %s %s %s\n", result(lock), result(relock), result(unlock));
	show("after the inner unlock", m);
	pthread_t th;
	void *rc;
	pthread_create(&th, NULL, try_it, m);
	pthread_join(th, &rc);
	printf("  trylock from another thread: %s\n", result((int)(long)rc));
	printf("  unlock: %s\n", result(pthread_mutex_unlock(m)));
	show("unlocked", m);
}

/* A process-shared mutex of each type the shim takes when private, in
 * shared memory, which a fork child waits for while the parent holds it
 * (its waiter sleeps on a shared futex: the shim leaves such a mutex to
 * glibc, whose unlock wakes it). */
static void shared_with_a_child(pthread_mutexattr_t *a, int type, const char *name)
{
	pthread_mutexattr_settype(a, type);
	pthread_mutex_t *m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return;
	pthread_mutex_init(m, a);
	printf("a process-shared %s mutex, waited for by a child\n", name);
	pthread_mutex_lock(m);
	pid_t child = fork();
	if (child == 0) {
		int rc = pthread_mutex_lock(m);
		printf("  child's lock: %s, owner %s\n", result(rc), m->__data.__owner == gettid() ? "me" : "other");
		printf("  child's unlock: %s\n", result(pthread_mutex_unlock(m)));
		_exit(0);
	}
	/* The child waits, most likely (the words then depend on whether it
	 * did: not shown). */
	nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
	int rc = pthread_mutex_unlock(m), status;
	waitpid(child, &status, 0);
	printf("  parent's unlock: %s\n", result(rc));
	show("after the child", m);
	munmap(m, sizeof(*m));
}

static pthread_mutex_t late = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t key;

static void at_thread_end(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&late);
	printf("key destructor\n");
	show("locked", &late);
	pthread_mutex_unlock(&late);
	show("unlocked", &late);
	pthread_mutex_trylock(&late);
	show("trylocked", &late);
	pthread_mutex_unlock(&late);
}

static void *with_key(void *arg)
{
	pthread_setspecific(key, arg);
	return NULL;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	pthread_mutex_t plain = PTHREAD_MUTEX_INITIALIZER;
	steps("initializer", &plain);

	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_NORMAL);
	pthread_mutex_t normal;
	pthread_mutex_init(&normal, &a);
	steps("PTHREAD_MUTEX_NORMAL", &normal);

	mtx_t c11;
	mtx_init(&c11, mtx_plain);
	steps("mtx_plain", (pthread_mutex_t *)&c11);

	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_t adaptive;
	pthread_mutex_init(&adaptive, &a);
	steps("PTHREAD_MUTEX_ADAPTIVE_NP", &adaptive);

	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_t recursive;
	pthread_mutex_init(&recursive, &a);
	steps("PTHREAD_MUTEX_RECURSIVE", &recursive);
	pthread_mutex_init(&recursive, &a);
	owner_steps(&recursive);
	count_at_its_limit(&a);
	at_an_odd_address(&a);

	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_t check;
	pthread_mutex_init(&check, &a);
	steps("PTHREAD_MUTEX_ERRORCHECK", &check);
	pthread_mutex_init(&check, &a);
	owner_steps(&check);

	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_NORMAL);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutex_t shared;
	pthread_mutex_init(&shared, &a);
	steps("PTHREAD_PROCESS_SHARED", &shared);
	shared_with_a_child(&a, PTHREAD_MUTEX_NORMAL, "normal");
	shared_with_a_child(&a, PTHREAD_MUTEX_ADAPTIVE_NP, "adaptive");
	shared_with_a_child(&a, PTHREAD_MUTEX_RECURSIVE, "recursive");
	shared_with_a_child(&a, PTHREAD_MUTEX_ERRORCHECK, "errorcheck");

	pthread_key_create(&key, at_thread_end);
	pthread_t th;
	pthread_create(&th, NULL, with_key, &key);
	pthread_join(th, NULL);

	pid_t child = fork();
	if (child == 0) {
		pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
		printf("fork child\n");
		pthread_mutex_lock(&m);
		show("locked", &m);
		pthread_mutex_unlock(&m);
		show("unlocked", &m);
		_exit(0);
	}
	int status;
	waitpid(child, &status, 0);
	return 0;
}
