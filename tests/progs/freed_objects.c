/* freed_objects: what the profile says about locks whose memory in the
 * shim went back to its allocator (tests/shim/identity.c).
 *
 * Past the first 4,096 destroyed objects the shim merges each destroyed
 * one into its kind's aggregate and frees it (preload/objects.c), and the
 * next object made gets its memory. Anything that named the object by its
 * address in the shim then names the new object: a lock-order edge, a
 * condvar's monitor, a trace event, a held lock. Here: 4,100 mutexes made
 * and destroyed, then gone_a and gone_b taken in that order (an edge), a
 * condvar waited on under gone_m (its monitor), all three destroyed;
 * gone_rw write-locked and destroyed while held, reset_rw initialised
 * again while held; then new_c, new_d and
 * new_e made, used one at a time (no edge) and kept. The report must have
 * no edge naming the new locks and must not name one of them as the
 * condvar's monitor. */
#include "progs.h"

#include <convoy.h>

#define CHURN 4100   /* past preload/objects.c's CV_RETIRED_KEPT */

static pthread_cond_t kept_cond = PTHREAD_COND_INITIALIZER;

static void use(pthread_mutex_t *m)
{
	MUST(pthread_mutex_lock(m));
	MUST(pthread_mutex_unlock(m));
}

int main(void)
{
	pthread_mutex_t *churn = calloc(CHURN, sizeof(*churn));   /* each at an address of its own */
	if (!churn)
		return 99;
	for (int i = 0; i < CHURN; i++) {
		MUST(pthread_mutex_init(&churn[i], NULL));
		use(&churn[i]);
		MUST(pthread_mutex_destroy(&churn[i]));
	}
	free(churn);

	pthread_mutex_t *gone = calloc(3, sizeof(*gone));   /* a, b, m */
	if (!gone)
		return 99;
	for (int i = 0; i < 3; i++)
		MUST(pthread_mutex_init(&gone[i], NULL));
	CONVOY_NAME(&gone[0], "gone_a");
	CONVOY_NAME(&gone[1], "gone_b");
	CONVOY_NAME(&gone[2], "gone_m");
	MUST(pthread_mutex_lock(&gone[0]));
	use(&gone[1]);   /* gone_a -> gone_b */
	MUST(pthread_mutex_unlock(&gone[0]));
	struct timespec past = { 0, 0 };   /* returns at once: ETIMEDOUT */
	MUST(pthread_mutex_lock(&gone[2]));
	int rc = pthread_cond_timedwait(&kept_cond, &gone[2], &past);
	if (rc != ETIMEDOUT)
		return 99;
	MUST(pthread_mutex_unlock(&gone[2]));
	for (int i = 0; i < 3; i++)
		MUST(pthread_mutex_destroy(&gone[i]));
	free(gone);

	/* An rwlock destroyed while held (glibc's destroy says 0): no longer
	 * held, else its slot in the held set would name the new lock that
	 * gets its memory, and every lock taken alone below would get an edge
	 * from it. */
	pthread_rwlock_t *held = calloc(1, sizeof(*held));
	if (!held)
		return 99;
	MUST(pthread_rwlock_init(held, NULL));
	CONVOY_NAME(held, "gone_rw");
	MUST(pthread_rwlock_wrlock(held));
	MUST(pthread_rwlock_destroy(held));
	/* The same for an init of a held rwlock (glibc's says 0 and leaves it
	 * free): it ends the object as a destroy does. */
	MUST(pthread_rwlock_init(held, NULL));
	CONVOY_NAME(held, "reset_rw");
	MUST(pthread_rwlock_wrlock(held));
	MUST(pthread_rwlock_init(held, NULL));   /* kept to the end: a destroy would end it too */

	static pthread_mutex_t fresh[3];   /* c, d, e */
	for (int i = 0; i < 3; i++)
		MUST(pthread_mutex_init(&fresh[i], NULL));
	CONVOY_NAME(&fresh[0], "new_c");
	CONVOY_NAME(&fresh[1], "new_d");
	CONVOY_NAME(&fresh[2], "new_e");
	for (int i = 0; i < 3; i++)
		use(&fresh[i]);
	puts("done");
	return 0;
}
