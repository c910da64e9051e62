/* barrier_rounds — three threads meet at a pthread barrier 50 times; the
 * third always arrives after a little more work than the others.
 *
 * Expected (phase_barrier): count 3, 150 arrivals, 50 rounds, 100 wake-ups
 * (every arrival but the last of its round parks and is woken), imbalance
 * recorded for each round.
 */
#include <pthread.h>

#include "prim_util.h"

#define ROUNDS 50
pthread_barrier_t phase_barrier;
static volatile unsigned long sink;
static int serial;

static void *worker(void *arg)
{
	long me = (long)arg;
	for (int r = 0; r < ROUNDS; r++) {
		for (unsigned long i = 0; i < (me == 2 ? 200000ul : 1000ul); i++)
			sink += i;
		int rc = pthread_barrier_wait(&phase_barrier);
		if (rc == PTHREAD_BARRIER_SERIAL_THREAD)
			__atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED);
		else if (rc != 0)
			prim_die("pthread_barrier_wait");
	}
	return NULL;
}

int main(void)
{
	pthread_barrier_init(&phase_barrier, NULL, 3);
	pthread_t t[2];
	for (long i = 1; i < 3; i++)
		if (pthread_create(&t[i - 1], NULL, worker, (void *)i))
			prim_die("pthread_create");
	worker((void *)0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&phase_barrier);
	printf("rounds=%d serial=%d\n", ROUNDS, serial);
	return 0;
}
