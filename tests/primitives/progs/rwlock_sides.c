/* rwlock_sides — a pthread rwlock used on both sides, with one writer made
 * to wait behind a reader and one reader made to wait behind a writer.
 *
 * Expected in the profile (table_lock): read acquisitions 1,004 (1,000 plain,
 * the read held while the writer waits, the read that waits, the read held
 * around trywrlock, one tryrdlock), write acquisitions 101, one read wait,
 * one write wait, and that write wait is behind readers; trylocks 2, one
 * failed (EBUSY).
 */
#include <pthread.h>
#include <stdatomic.h>

#include "prim_util.h"

pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static long table;
static _Atomic pid_t writer_tid, main_tid;
static atomic_int writer_about_to_lock, writer_holds, main_about_to_read;

static void *writer(void *arg)
{
	writer_tid = gettid();
	atomic_store(&writer_about_to_lock, 1);
	if (pthread_rwlock_wrlock(&table_lock))   /* behind main's read lock */
		prim_die("wrlock");
	table += 100;
	atomic_store(&writer_holds, 1);
	while (!atomic_load(&main_about_to_read))
		sched_yield();
	prim_wait_blocked(main_tid);              /* main's rdlock waits behind this writer */
	pthread_rwlock_unlock(&table_lock);
	return NULL;
}

int main(void)
{
	main_tid = gettid();
	for (int i = 0; i < 1000; i++) {
		pthread_rwlock_rdlock(&table_lock);
		long v = table;
		pthread_rwlock_unlock(&table_lock);
		(void)v;
	}
	for (int i = 0; i < 100; i++) {
		pthread_rwlock_wrlock(&table_lock);
		table++;
		pthread_rwlock_unlock(&table_lock);
	}

	pthread_t w;
	pthread_rwlock_rdlock(&table_lock);
	if (pthread_create(&w, NULL, writer, NULL))
		prim_die("pthread_create");
	while (!atomic_load(&writer_about_to_lock))
		sched_yield();
	prim_wait_blocked(writer_tid);
	pthread_rwlock_unlock(&table_lock);       /* the writer gets it */
	while (!atomic_load(&writer_holds))
		sched_yield();
	atomic_store(&main_about_to_read, 1);
	pthread_rwlock_rdlock(&table_lock);       /* waits for the writer */
	long seen = table;
	pthread_rwlock_unlock(&table_lock);
	pthread_join(w, NULL);

	pthread_rwlock_rdlock(&table_lock);
	int busy = pthread_rwlock_trywrlock(&table_lock);   /* EBUSY: we read-hold it */
	pthread_rwlock_unlock(&table_lock);
	int ok = pthread_rwlock_tryrdlock(&table_lock);
	pthread_rwlock_unlock(&table_lock);
	printf("table=%ld seen=%ld trywrlock=%s tryrdlock=%d\n", table, seen,
	       busy == EBUSY ? "EBUSY" : "other", ok);
	return 0;
}
