/* futex_lock — a lock built on syscall(SYS_futex) (Drepper's "Futexes are
 * tricky", mutex 2: 0 free, 1 locked, 2 locked with waiters), contended 20
 * times on purpose: main holds it until the other thread sleeps in
 * FUTEX_WAIT. Then 7 FUTEX_WAKEs on a word nobody waits on, and the
 * priority-inheritance calls on a third word.
 *
 * Expected: futex_word (kind futex, role lock) 20 waits that slept, 20
 * wake-ups with a latency, 20 wakes waking 20 threads; lonely_word 7 wakes,
 * all woke nobody; pi_word 3 PI operations.
 */
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>

#include "prim_util.h"

#define ROUNDS 20
atomic_int futex_word;
atomic_int lonely_word;
atomic_int pi_word;
static _Atomic pid_t other_tid;
static atomic_int other_round = -1;
static atomic_long counter;

static long futex(atomic_int *word, int op, int val)
{
	return syscall(SYS_futex, word, op | FUTEX_PRIVATE_FLAG, val, NULL, NULL, 0);
}

static void lock(void)
{
	int c = 0;
	if (atomic_compare_exchange_strong(&futex_word, &c, 1))
		return;
	if (c != 2)
		c = atomic_exchange(&futex_word, 2);
	while (c != 0) {
		futex(&futex_word, FUTEX_WAIT, 2);
		c = atomic_exchange(&futex_word, 2);
	}
}

static void unlock(void)
{
	if (atomic_fetch_sub(&futex_word, 1) != 1) {
		atomic_store(&futex_word, 0);
		futex(&futex_word, FUTEX_WAKE, 1);
	}
}

static void *other(void *arg)
{
	other_tid = gettid();
	for (int i = 0; i < ROUNDS; i++) {
		atomic_store(&other_round, i);
		lock();
		counter++;
		unlock();
		while (atomic_load(&other_round) == i)   /* main moves it on */
			sched_yield();
	}
	return NULL;
}

int main(void)
{
	pthread_t t;
	lock();
	if (pthread_create(&t, NULL, other, NULL))
		prim_die("pthread_create");
	for (int i = 0; i < ROUNDS; i++) {
		while (atomic_load(&other_round) != i)
			sched_yield();
		prim_wait_blocked(other_tid);   /* asleep in FUTEX_WAIT */
		unlock();
		/* wait for the other thread to take and release it, then take it again */
		while (atomic_load(&futex_word) != 0 || counter != i + 1)
			sched_yield();
		lock();
		atomic_store(&other_round, i + 100);
	}
	unlock();
	pthread_join(t, NULL);

	int woke = 0;
	for (int i = 0; i < 7; i++)
		woke += (int)futex(&lonely_word, FUTEX_WAKE, 1);
	long a = syscall(SYS_futex, &pi_word, FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG, 0, NULL, NULL, 0);
	long b = syscall(SYS_futex, &pi_word, FUTEX_TRYLOCK_PI | FUTEX_PRIVATE_FLAG, 0, NULL, NULL, 0);
	int e = errno;
	long c = syscall(SYS_futex, &pi_word, FUTEX_UNLOCK_PI | FUTEX_PRIVATE_FLAG, 0, NULL, NULL, 0);
	printf("counter=%ld woke=%d lock_pi=%ld trylock_pi=%ld/%s unlock_pi=%ld\n", counter, woke, a, b,
	       b == -1 && e == EDEADLK ? "EDEADLK" : "?", c);
	return 0;
}
