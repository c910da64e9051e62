/* sems_in_turn.c — semaphores taken in turn, more of them than the
 * thread's cache holds (preload/shim.h, cv__sem_rec: a fixed entry and
 * CV_SEM_WAYS aside), so that records move between the fixed entry, the
 * entries aside and the thread's table; two of them destroyed and made
 * again half way, while their records sit aside. Prints, for each
 * semaphore, its acquisitions (sem_wait and sem_trywait that took a
 * token), trywaits and posts in each generation
 * (tests/shim/counts.c compares them with the profile's). */
#include <stdbool.h>

#include "progs.h"

#define SEMS 12

static sem_t sems[SEMS];
static long acquired[2][SEMS], tries[2][SEMS], posts[2][SEMS];
static int gen[SEMS];

static void *nothing(void *arg)
{
	return arg;
}

static void take(int i, bool try)
{
	if (try) {
		MUST(sem_trywait(&sems[i]) ? errno : 0);
		tries[gen[i]][i]++;
	} else {
		MUST(sem_wait(&sems[i]) ? errno : 0);
	}
	acquired[gen[i]][i]++;
	MUST(sem_post(&sems[i]) ? errno : 0);
	posts[gen[i]][i]++;
}

int main(void)
{
	pthread_t t;   /* glibc's multi-threaded paths, as a program with threads has */
	MUST(pthread_create(&t, NULL, nothing, NULL));
	MUST(pthread_join(t, NULL));
	for (int i = 0; i < SEMS; i++)
		MUST(sem_init(&sems[i], 0, 1) ? errno : 0);
	for (int r = 0; r < 3000; r++)   /* three in turn: the fixed entry and two aside */
		take(r % 3, false);
	for (int r = 0; r < 6000; r++)   /* all of them: more than the entries */
		take((r * 5) % SEMS, r % 2);
	for (int r = 0; r < 3000; r++)   /* two of them and the two to be made again */
		take((int[]){ 0, 1, 2, 7 }[r % 4], false);
	for (int i = 1; i < SEMS; i += 6) {   /* 1 and 7 */
		MUST(sem_destroy(&sems[i]) ? errno : 0);
		MUST(sem_init(&sems[i], 0, 1) ? errno : 0);
		gen[i] = 1;
	}
	for (int r = 0; r < 6000; r++)
		take((r * 7) % SEMS, r % 3 == 0);
	for (int i = 0; i < SEMS; i++)
		for (int g = 0; g <= gen[i]; g++)
			printf("sems[%d] generation %d: %ld acquired, %ld tries, %ld posts\n", i, g, acquired[g][i],
			       tries[g][i], posts[g][i]);
	return 0;
}
