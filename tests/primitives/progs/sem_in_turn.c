/* sem_in_turn — one thread takes semaphores in turn, in a process that has
 * created a thread. 1,000 rounds of a sem_trywait and sem_post of `first`
 * and a sem_wait and sem_post of `second` (two in turn: in the shim's
 * cache one of them is found in its fixed entry's partner: preload/shim.h,
 * cv__sem_miss), then 1,000 rounds of a sem_wait and sem_post of `first`,
 * every 100th with a sem_wait and sem_post of `rare` too (a hot semaphore
 * and a rare one). Nobody else waits.
 * Expected: first 1,000 trywaits, 2,000 acquisitions, 2,000 posts, all
 * with no waiter; second 1,000 acquisitions and posts; rare 10 of each.
 */
#include <pthread.h>
#include <semaphore.h>

#include "prim_util.h"

sem_t first, second, rare;

static void *nothing(void *arg)
{
	return arg;
}

int main(void)
{
	pthread_t t;   /* glibc's multi-threaded path */
	if (pthread_create(&t, NULL, nothing, NULL) || pthread_join(t, NULL))
		prim_die("pthread_create");
	if (sem_init(&first, 0, 1) || sem_init(&second, 0, 1) || sem_init(&rare, 0, 1))
		prim_die("sem_init");
	long taken = 0;
	for (int i = 0; i < 1000; i++) {
		if (sem_trywait(&first))
			prim_die("sem_trywait(first)");
		sem_post(&first);
		if (sem_wait(&second))
			prim_die("sem_wait(second)");
		sem_post(&second);
		taken += 2;
	}
	for (int i = 0; i < 1000; i++) {
		if (sem_wait(&first))
			prim_die("sem_wait(first)");
		sem_post(&first);
		taken++;
		if (i % 100 == 0) {
			if (sem_wait(&rare))
				prim_die("sem_wait(rare)");
			sem_post(&rare);
			taken++;
		}
	}
	printf("taken=%ld\n", taken);
	return 0;
}
