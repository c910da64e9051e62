/* Linked against libctorlock.so, whose constructor locks ctor_lock and runs
 * a thread before main. main locks it 10 more times: 160 in all. */
#include "progs.h"

extern pthread_mutex_t ctor_lock;
extern int ctorlock_count, ctorlock_errno_kept, ctorlock_thread_rc;

int main(void)
{
	for (int i = 0; i < 10; i++) {
		pthread_mutex_lock(&ctor_lock);
		ctorlock_count++;
		pthread_mutex_unlock(&ctor_lock);
	}
	printf("constructor thread: %d %s\n", ctorlock_thread_rc, rc_name(ctorlock_thread_rc));
	printf("constructor errno kept: %s\n", ctorlock_errno_kept == 1 ? "yes" : "no");
	printf("count %d\n", ctorlock_count);
	return ctorlock_count == 160 ? 0 : 1;
}
