/* park_word — N workers park on one futex word, used as a condition and
 * never as a lock: each waits for the word to change (FUTEX_WAIT with the
 * value it read), and the main thread changes it and wakes one, a round at
 * a time, sleeping between rounds. The word's waits are parks: the report
 * must not count them as waiting for a lock, nor call the word a lock whose
 * uncontended acquisitions are unseen. */
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "data_progs.h"

#define ROUNDS 400

static unsigned word;
static volatile int done;

static void *parker(void *arg)
{
	(void)arg;
	dp_name("parker");
	while (!done) {
		unsigned seen = __atomic_load_n(&word, __ATOMIC_ACQUIRE);
		syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int workers = dp_workers(argc, argv);
	pthread_t p[64];
	CONVOY_NAME(&word, "park_word");
	dp_start(p, workers, parker, p, 0);
	for (int i = 0; i < ROUNDS; i++) {
		__atomic_add_fetch(&word, 1, __ATOMIC_RELEASE);
		syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		dp_sleep_ns(200000);
	}
	done = 1;
	__atomic_add_fetch(&word, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, workers, NULL, NULL, 0);
	dp_join(p, workers);
	return 0;
}
