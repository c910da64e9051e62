/* c11_mtx — C11 <threads.h>: mtx_lock contended once (the other thread
 * sleeps in mtx_lock while main holds it), 500 uncontended pairs, an
 * mtx_trylock that fails (thrd_busy: main holds it), and cnd_signal sent 5
 * times with nobody waiting then once to a sleeping waiter.
 *
 * Expected: c11_lock is a mutex of type "normal c11" with 504 acquisitions
 * (500, main's hold, the other thread's, main's relock to signal, main's
 * hold around the trylock), 1 contended, 1 trylock that failed; c11_cond 6
 * signals, 5 unwaited, 1 wake-up.
 */
#include <stdatomic.h>
#include <threads.h>

#include "prim_util.h"

mtx_t c11_lock;
cnd_t c11_cond;
static long counter;
static int go;
static _Atomic pid_t other_tid;
static atomic_int phase;

static int other(void *arg)
{
	other_tid = gettid();
	atomic_store(&phase, 1);
	mtx_lock(&c11_lock);   /* main holds it */
	counter++;
	atomic_store(&phase, 2);
	while (!go)
		cnd_wait(&c11_cond, &c11_lock);
	mtx_unlock(&c11_lock);
	return 0;
}

int main(void)
{
	if (mtx_init(&c11_lock, mtx_plain) != thrd_success || cnd_init(&c11_cond) != thrd_success)
		prim_die("init");
	for (int i = 0; i < 500; i++) {
		mtx_lock(&c11_lock);
		counter++;
		mtx_unlock(&c11_lock);
	}
	for (int i = 0; i < 5; i++)
		cnd_signal(&c11_cond);
	mtx_lock(&c11_lock);
	thrd_t t;
	if (thrd_create(&t, other, NULL) != thrd_success)
		prim_die("thrd_create");
	while (atomic_load(&phase) != 1)
		thrd_yield();
	prim_wait_blocked(other_tid);   /* asleep in mtx_lock */
	mtx_unlock(&c11_lock);
	while (atomic_load(&phase) != 2)
		thrd_yield();
	prim_wait_blocked(other_tid);   /* asleep in cnd_wait */
	mtx_lock(&c11_lock);
	go = 1;
	cnd_signal(&c11_cond);
	mtx_unlock(&c11_lock);
	thrd_join(t, NULL);
	mtx_lock(&c11_lock);
	int busy = mtx_trylock(&c11_lock) == thrd_busy;
	mtx_unlock(&c11_lock);
	mtx_destroy(&c11_lock);
	cnd_destroy(&c11_cond);
	printf("counter=%ld busy=%d\n", counter, busy);
	return 0;
}
