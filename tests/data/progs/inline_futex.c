/* inline_futex — waits the shim cannot see: threads pass a token round
 * robin, each parking until its turn with the futex system call issued
 * inline (no libc call to interpose), as Go's runtime and libgomp do. With
 * more than one thread the time they spend parked is off-CPU outside any
 * timed wait; the launcher's switch records must time it, and the sampled
 * switches name its kind (a runtime's own wait) and where it entered the
 * kernel (park_on_futex), so "other off-CPU" is split by what it was.
 * Built with frame pointers so the sampled chains reach its callers. */
#include <linux/futex.h>
#include <sys/syscall.h>

#include "data_progs.h"

#define UNITS 600
#define UNIT_NS 200000

static int token, workers;

static long raw_futex(int *word, int op, int val)
{
#if defined(__x86_64__)
	register long r10 __asm__("r10") = 0;   /* no timeout */
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_futex), "D"(word), "S"((long)op), "d"((long)val), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
#else
	return syscall(SYS_futex, word, op, val, NULL, NULL, 0);
#endif
}

__attribute__((noinline)) static void park_on_futex(int *word, int seen)
{
	raw_futex(word, FUTEX_WAIT_PRIVATE, seen);
}

__attribute__((noinline)) static void take_turn(int me)
{
	int t;
	while ((t = __atomic_load_n(&token, __ATOMIC_ACQUIRE)) != me)
		park_on_futex(&token, t);
}

static void give_turn(int me)
{
	__atomic_store_n(&token, (me + 1) % workers, __ATOMIC_RELEASE);
	raw_futex(&token, FUTEX_WAKE_PRIVATE, workers);
}

static void *worker(void *arg)
{
	int me = (int)(intptr_t)arg;
	dp_name("turnthread");
	for (int i = 0; i < UNITS / workers; i++) {
		take_turn(me);
		dp_spin(UNIT_NS);
		give_turn(me);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	workers = dp_workers(argc, argv);
	pthread_t t[64];
	for (int i = 0; i < workers; i++)
		pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
	dp_join(t, workers);
	return 0;
}
