/* The state glibc keeps in a rwlock, word by word, after each step: read
 * locks in a read phase and their unlocks, a write lock from a free read
 * phase and from a free write phase (rwlock.c takes the first read lock,
 * releases it and takes the second write lock itself: rd_taken,
 * rd_released, wr_word_taken), the caller's own EDEADLKs, a reader after
 * a write phase, a writer waiting behind a reader, a writer and a reader
 * waiting behind two (rwlock.c leaves those unlocks to glibc) and a reader
 * waiting behind a writer; for each kind of rwlock; a write lock in the
 * child of a raw SYS_fork, whose glibc tid is the parent's. Run natively
 * and under the shim, the output must be the same
 * (trust::a_rwlock_the_shim_takes_itself_is_left_as_glibc_leaves_it). */
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/wait.h>

#include "progs.h"

#define WRPHASE  1u
#define WRLOCKED 2u
#define RWAITING 4u

static void show(const char *step, pthread_rwlock_t *rw)
{
	pid_t w = rw->__data.__cur_writer;
	printf("  %-30s readers %u phase %s%s%s, writers %u, wrphase_futex %u, writers_futex %u, writer %s\n",
	       step, rw->__data.__readers >> 3, rw->__data.__readers & WRPHASE ? "write" : "read",
	       rw->__data.__readers & WRLOCKED ? " wrlocked" : "", rw->__data.__readers & RWAITING ? " rwaiting" : "",
	       rw->__data.__writers, rw->__data.__wrphase_futex, rw->__data.__writers_futex,
	       w == 0 ? "none" : w == gettid() ? "me" : "other");
}

/* The word alone: while a thread waits, its futex words depend on how far
 * it got. */
static void show_word(const char *step, pthread_rwlock_t *rw)
{
	unsigned r = atomic_load((atomic_uint *)&rw->__data.__readers);
	printf("  %-30s readers %u phase %s%s%s\n", step, r >> 3, r & WRPHASE ? "write" : "read",
	       r & WRLOCKED ? " wrlocked" : "", r & RWAITING ? " rwaiting" : "");
}

static void *reader(void *rw)
{
	MUST(pthread_rwlock_rdlock(rw));
	MUST(pthread_rwlock_unlock(rw));
	return NULL;
}

static void *writer(void *rw)
{
	MUST(pthread_rwlock_wrlock(rw));
	MUST(pthread_rwlock_unlock(rw));
	return NULL;
}

static void *try_read(void *rw)
{
	return (void *)(long)pthread_rwlock_tryrdlock(rw);
}

/* Until the word has these bits set: a thread waiting. */
static void until_word(pthread_rwlock_t *rw, unsigned mask, unsigned want)
{
	while ((atomic_load((atomic_uint *)&rw->__data.__readers) & mask) != want)
		sched_yield();
}

static void steps(const char *name, pthread_rwlock_t *rw)
{
	pthread_t th;
	void *rc;
	printf("%s\n", name);
	show("initialised", rw);
	printf("  rdlock: %s\n", rc_name(pthread_rwlock_rdlock(rw)));
	show("read-locked", rw);
	printf("  rdlock again: %s\n", rc_name(pthread_rwlock_rdlock(rw)));
	show("read-locked twice", rw);
	int a = pthread_rwlock_unlock(rw), b = pthread_rwlock_unlock(rw);   /* in this order */
	printf("  unlock, unlock: %s %s\n", rc_name(a), rc_name(b));
	show("free read phase", rw);

	printf("  wrlock: %s\n", rc_name(pthread_rwlock_wrlock(rw)));
	show("write-locked", rw);
	printf("  unlock: %s\n", rc_name(pthread_rwlock_unlock(rw)));
	show("free write phase", rw);
	printf("  wrlock: %s\n", rc_name(pthread_rwlock_wrlock(rw)));
	show("write-locked again", rw);
	a = pthread_rwlock_rdlock(rw);
	b = pthread_rwlock_wrlock(rw);
	printf("  rdlock, wrlock by the writer: %s %s\n", rc_name(a), rc_name(b));
	MUST(pthread_create(&th, NULL, try_read, rw));
	MUST(pthread_join(th, &rc));
	printf("  tryrdlock from another thread: %s\n", rc_name((int)(long)rc));
	printf("  unlock: %s\n", rc_name(pthread_rwlock_unlock(rw)));
	show("free write phase again", rw);

	printf("  rdlock: %s\n", rc_name(pthread_rwlock_rdlock(rw)));
	show("read-locked after writes", rw);
	MUST(pthread_create(&th, NULL, writer, rw));
	until_word(rw, WRLOCKED, WRLOCKED);
	show_word("a writer waits", rw);
	printf("  unlock: %s\n", rc_name(pthread_rwlock_unlock(rw)));
	MUST(pthread_join(th, NULL));
	show("after the writer", rw);

	/* Two read locks, a writer waiting behind them and a reader after it,
	 * which waits (RWAITING) only where writers are preferred: the first
	 * unlock leaves one reader, the last starts the write phase and wakes
	 * both. */
	bool readers_wait = rw->__data.__flags == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP;
	pthread_t late;
	a = pthread_rwlock_rdlock(rw);
	b = pthread_rwlock_rdlock(rw);
	printf("  rdlock, rdlock: %s %s\n", rc_name(a), rc_name(b));
	MUST(pthread_create(&th, NULL, writer, rw));
	until_word(rw, WRLOCKED, WRLOCKED);
	MUST(pthread_create(&late, NULL, reader, rw));
	if (readers_wait)
		until_word(rw, RWAITING, RWAITING);
	else
		MUST(pthread_join(late, NULL));
	show_word("a writer, then a reader", rw);
	printf("  unlock: %s\n", rc_name(pthread_rwlock_unlock(rw)));
	show_word("one reader left", rw);
	printf("  unlock: %s\n", rc_name(pthread_rwlock_unlock(rw)));
	MUST(pthread_join(th, NULL));
	if (readers_wait)
		MUST(pthread_join(late, NULL));
	show("after the writer and the reader", rw);

	printf("  wrlock: %s\n", rc_name(pthread_rwlock_wrlock(rw)));
	MUST(pthread_create(&th, NULL, reader, rw));
	until_word(rw, ~7u, 8);
	show_word("a reader waits", rw);
	printf("  unlock: %s\n", rc_name(pthread_rwlock_unlock(rw)));
	MUST(pthread_join(th, NULL));
	show("after the reader", rw);
	a = pthread_rwlock_wrlock(rw);
	b = pthread_rwlock_unlock(rw);
	printf("  wrlock, unlock: %s %s\n", rc_name(a), rc_name(b));
	show("written again", rw);
	printf("  destroy: %s\n", rc_name(pthread_rwlock_destroy(rw)));
}

/* In the child of a raw SYS_fork glibc's own idea of the thread's tid is
 * still the parent's (only _Fork has the kernel write it), and that is the
 * writer it records and compares for EDEADLK. */
static void raw_fork_child(void)
{
	pid_t parent = gettid();
	long child = syscall(SYS_fork);
	if (child == 0) {
		pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
		printf("raw fork child\n");
		alarm(10);   /* a hang fails the test, not the suite */
		int a = pthread_rwlock_wrlock(&rw), b = 0, c = 0;
		if (a == 0)
			a = pthread_rwlock_unlock(&rw);
		if (a == 0)
			a = pthread_rwlock_wrlock(&rw);   /* on a free write phase */
		pid_t w = rw.__data.__cur_writer;
		printf("  wrlock twice: %s, writer %s\n", rc_name(a),
		       w == parent ? "the parent's tid" : w == gettid() ? "the child's tid" : "other");
		b = pthread_rwlock_rdlock(&rw);
		c = pthread_rwlock_wrlock(&rw);
		printf("  rdlock, wrlock by the writer: %s %s\n", rc_name(b), rc_name(c));
		_exit(0);
	}
	int status;
	MUST(waitpid((pid_t)child, &status, 0) == child ? 0 : -1);
	printf("raw fork child %s %d\n", WIFEXITED(status) ? "exited" : "killed by", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

static void *nothing(void *arg)
{
	return arg;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	pthread_t th;
	MUST(pthread_create(&th, NULL, nothing, NULL));   /* a process with threads */
	MUST(pthread_join(th, NULL));

	pthread_rwlock_t plain = PTHREAD_RWLOCK_INITIALIZER;
	steps("initializer", &plain);

	static const struct { const char *name; int kind, pshared; } kinds[] = {
		{ "prefer-reader", PTHREAD_RWLOCK_PREFER_READER_NP, PTHREAD_PROCESS_PRIVATE },
		{ "prefer-writer-nonrecursive", PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP, PTHREAD_PROCESS_PRIVATE },
		{ "process-shared", PTHREAD_RWLOCK_PREFER_READER_NP, PTHREAD_PROCESS_SHARED },
	};
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		pthread_rwlockattr_t a;
		pthread_rwlock_t rw;
		MUST(pthread_rwlockattr_init(&a));
		MUST(pthread_rwlockattr_setkind_np(&a, kinds[i].kind));
		MUST(pthread_rwlockattr_setpshared(&a, kinds[i].pshared));
		MUST(pthread_rwlock_init(&rw, &a));
		steps(kinds[i].name, &rw);
		MUST(pthread_rwlockattr_destroy(&a));
	}
	raw_fork_child();
	return 0;
}
