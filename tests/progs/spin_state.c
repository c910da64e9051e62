/* Prints a spinlock's word after each step: lock, unlock, a trylock of a
 * held lock, a second thread waiting for it (glibc's waiter decrements
 * once, then only reads) and taking it, all in a
 * process with a thread. spin.c takes spinlocks itself (take_spin): the word
 * must come out as glibc's own lock and unlock leave it
 * (trust::a_spinlock_the_shim_takes_itself_is_left_as_glibc_leaves_it). */
#include <stdatomic.h>

#include "progs.h"

static pthread_spinlock_t spin;
static atomic_int waiting;

static void show(const char *step)
{
	printf("%s: word %d\n", step, (int)atomic_load((atomic_int *)&spin));
}

static void *waiter(void *arg)
{
	atomic_store(&waiting, 1);
	MUST(pthread_spin_lock(&spin));   /* waits for main's unlock */
	show("taken by the waiter");
	MUST(pthread_spin_unlock(&spin));
	return arg;
}

static void *nothing(void *arg)
{
	return arg;
}

int main(void)
{
	pthread_t t;
	MUST(pthread_create(&t, NULL, nothing, NULL));   /* a process with threads */
	MUST(pthread_join(t, NULL));
	MUST(pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE));
	show("init");
	MUST(pthread_spin_lock(&spin));
	show("locked");
	printf("trylock of the held lock: %s\n", pthread_spin_trylock(&spin) == EBUSY ? "EBUSY" : "other");
	show("after the trylock");
	MUST(pthread_spin_unlock(&spin));
	show("unlocked");
	MUST(pthread_spin_lock(&spin));
	MUST(pthread_create(&t, NULL, waiter, NULL));
	while (!atomic_load(&waiting) || atomic_load((atomic_int *)&spin) >= 0)
		sched_yield();   /* until the waiter's decrement failed */
	for (volatile int i = 0; i < 100000; i++)
		;   /* a waiter that decremented twice would have done it by now */
	show("while a thread waits");
	MUST(pthread_spin_unlock(&spin));
	MUST(pthread_join(t, NULL));
	show("after the waiter");
	MUST(pthread_spin_destroy(&spin));
	return 0;
}
