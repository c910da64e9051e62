/* futex_monitor — a monitor built without pthread_mutex: its lock is a
 * futex word (0 free, 1 locked, 2 locked with waiters, as glibc's
 * lowlevellock and Rust's std Mutex), its condition a semaphore, the way
 * runtimes build their interpreter and turn locks. A thread takes the turn
 * under the lock, waiting on the semaphore while another has it; giving it
 * back hands it to a waiter by posting the semaphore under the lock, so the
 * woken thread often finds the lock still held and waits on the futex too. Threads run one at a
 * time: the finding must be lock-contention on one monitor naming the futex
 * word and the semaphore, not two unrelated findings. */
#include <linux/futex.h>
#include <semaphore.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "data_progs.h"

#define UNITS 2000
#define UNIT_NS 50000

static int lock_word;   /* the monitor's lock */
static sem_t turn;      /* its condition: the turn was given back */
static int busy, waiting, workers;

static void futex_lock(int *w)
{
	int c = 0;
	if (__atomic_compare_exchange_n(w, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	if (c != 2)
		c = __atomic_exchange_n(w, 2, __ATOMIC_ACQUIRE);
	while (c != 0) {
		syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
		c = __atomic_exchange_n(w, 2, __ATOMIC_ACQUIRE);
	}
}

static void futex_unlock(int *w)
{
	if (__atomic_exchange_n(w, 0, __ATOMIC_RELEASE) == 2)
		syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* The turn is handed over: a thread giving it back while others wait
 * passes it to one of them (busy stays set), so threads alternate. */
static void take_turn(void)
{
	futex_lock(&lock_word);
	if (busy) {
		waiting++;
		futex_unlock(&lock_word);
		sem_wait(&turn);   /* handed to us */
		futex_lock(&lock_word);
		waiting--;
	}
	busy = 1;
	futex_unlock(&lock_word);
}

static void give_turn(void)
{
	futex_lock(&lock_word);
	if (waiting)
		sem_post(&turn);   /* under the lock: the woken thread may wait for it */
	else
		busy = 0;
	futex_unlock(&lock_word);
}

static void *worker(void *arg)
{
	(void)arg;
	dp_name("turnthread");
	for (int i = 0; i < UNITS / workers; i++) {
		take_turn();
		dp_spin(UNIT_NS);
		give_turn();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	workers = dp_workers(argc, argv);
	sem_init(&turn, 0, 0);
	CONVOY_NAME(&lock_word, "turn_lock");
	CONVOY_NAME(&turn, "turn_sem");
	pthread_t t[64];
	dp_start(t, workers, worker, t, 0);
	dp_join(t, workers);
	sem_destroy(&turn);
	return 0;
}
