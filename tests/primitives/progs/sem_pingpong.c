/* sem_pingpong — two threads hand a token back and forth through two
 * semaphores, 200 times each way, and each hand-over goes to a thread that
 * is already asleep in sem_wait: every one of the 400 is a park and a wake.
 *
 * Then, on a third semaphore: 50 posts with nobody waiting, 50 successful
 * sem_trywait and one that fails (EAGAIN), one sem_timedwait that times out.
 * Expected: ping and pong each 200 blocked waits, 200 wake-ups with a
 * latency, 200 posts, 0 posts with no waiter; spare 50 posts all with no
 * waiter, trywaits 51 (1 failed), 1 timeout.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>

#include "prim_util.h"

#define ROUNDS 200

sem_t ping, pong, spare;
static _Atomic pid_t main_tid, peer_tid;
static atomic_int main_round = -1, peer_round = -1;
static long token;

static void *peer(void *arg)
{
	peer_tid = gettid();
	for (int i = 0; i < ROUNDS; i++) {
		atomic_store(&peer_round, i);
		if (sem_wait(&ping))
			prim_die("sem_wait(ping)");
		token++;
		while (atomic_load(&main_round) != i)
			sched_yield();
		prim_wait_blocked(main_tid);   /* main sleeps in sem_wait(pong) */
		sem_post(&pong);
	}
	return NULL;
}

int main(void)
{
	main_tid = gettid();
	sem_init(&ping, 0, 0);
	sem_init(&pong, 0, 0);
	sem_init(&spare, 0, 0);
	pthread_t t;
	if (pthread_create(&t, NULL, peer, NULL))
		prim_die("pthread_create");
	for (int i = 0; i < ROUNDS; i++) {
		while (atomic_load(&peer_round) != i)
			sched_yield();
		prim_wait_blocked(peer_tid);   /* the peer sleeps in sem_wait(ping) */
		atomic_store(&main_round, i);
		sem_post(&ping);
		if (sem_wait(&pong))
			prim_die("sem_wait(pong)");
		token++;
	}
	pthread_join(t, NULL);

	for (int i = 0; i < 50; i++)
		sem_post(&spare);
	int got = 0;
	while (sem_trywait(&spare) == 0)
		got++;
	int again = errno == EAGAIN;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	int rc = sem_timedwait(&spare, &ts);
	int timed_out = rc == -1 && errno == ETIMEDOUT;
	printf("token=%ld trywait=%d eagain=%d timedout=%d\n", token, got, again, timed_out);
	sem_destroy(&ping);
	sem_destroy(&pong);
	sem_destroy(&spare);
	return 0;
}
