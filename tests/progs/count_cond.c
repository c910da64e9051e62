/* Condition variables with exact signal accounting.
 *
 * idle_cond: signalled 1,000 times and broadcast 500 times with no thread
 * waiting: signals_unwaited 1000, broadcasts_unwaited 500.
 * ready_cond: 100 rounds of a handshake in which main signals (rounds 0-59)
 * or broadcasts (60-99) only after it saw, under the mutex, that the waiter
 * is inside pthread_cond_wait: 60 signals and 40 broadcasts, none unwaited. */
#include "progs.h"

#define ROUNDS 100
#define SIGNAL_ROUNDS 60

pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;
pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER;
static int waiting_round = -1, go_round = -1;

static void *cond_waiter(void *arg)
{
	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&state_lock);
		waiting_round = i;   /* released only by the wait below */
		while (go_round != i)
			pthread_cond_wait(&ready_cond, &state_lock);
		pthread_mutex_unlock(&state_lock);
	}
	return arg;
}

int main(void)
{
	for (int i = 0; i < 1000; i++)
		MUST(pthread_cond_signal(&idle_cond));
	for (int i = 0; i < 500; i++)
		MUST(pthread_cond_broadcast(&idle_cond));

	pthread_t t;
	MUST(pthread_create(&t, NULL, cond_waiter, NULL));
	for (int i = 0; i < ROUNDS; i++) {
		for (;;) {
			pthread_mutex_lock(&state_lock);
			if (waiting_round == i)
				break;   /* the waiter is blocked in the wait: it released the mutex there */
			pthread_mutex_unlock(&state_lock);
			sched_yield();
		}
		go_round = i;
		if (i < SIGNAL_ROUNDS)
			MUST(pthread_cond_signal(&ready_cond));
		else
			MUST(pthread_cond_broadcast(&ready_cond));
		pthread_mutex_unlock(&state_lock);
	}
	MUST(pthread_join(t, NULL));
	printf("rounds %d\n", ROUNDS);
	return 0;
}
