/* barrier_after_condvar.c — one address made a condvar, then a barrier,
 * again and again (each destroyed before the other is made), past the
 * shim's 64 generations of an address, whose last object then stays
 * through re-inits: a barrier made there must still count its rounds
 * (helper-139: its count was stored in the condvar's object, and the
 * barrier's own object, made at its first wait, counted none). Prints the
 * rounds the program made. */
#include "progs.h"

#define TURNS 100
#define ROUNDS 2   /* per barrier */

static union {
	pthread_cond_t cond;
	pthread_barrier_t barrier;
} at;

int main(void)
{
	int serial = 0;
	for (int i = 0; i < TURNS; i++) {
		MUST(pthread_cond_init(&at.cond, NULL));
		MUST(pthread_cond_signal(&at.cond));
		MUST(pthread_cond_destroy(&at.cond));
		MUST(pthread_barrier_init(&at.barrier, NULL, 1));
		for (int r = 0; r < ROUNDS; r++)
			serial += pthread_barrier_wait(&at.barrier) == PTHREAD_BARRIER_SERIAL_THREAD;
		MUST(pthread_barrier_destroy(&at.barrier));
	}
	printf("rounds %d\n", serial);
	return 0;
}
