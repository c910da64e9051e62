/* crash HOW: locks crash_lock 100 times, prints "crashing" and dies the way
 * named: segv (a store through NULL), bus (a load past the end of a mapped
 * file), abort, fpe (an integer division by zero), ill (an invalid
 * instruction), raise-segv (SIGSEGV sent to itself), thread-segv (a store
 * through NULL in a second thread), threads-segv (four threads leave a
 * barrier together and each stores through NULL). It sets its core-file limit to 0
 * first: the tests leave no core files behind. */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "progs.h"

pthread_mutex_t crash_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int zero, one = 1;
static int *volatile null_ptr;

static pthread_barrier_t together;

static void *segv_thread(void *arg)
{
	if (arg)
		pthread_barrier_wait(&together);
	*null_ptr = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	const char *how = argv[1];
	struct rlimit no_core = { 0, 0 };
	MUST(setrlimit(RLIMIT_CORE, &no_core) ? errno : 0);
	for (int i = 0; i < 100; i++) {
		pthread_mutex_lock(&crash_lock);
		pthread_mutex_unlock(&crash_lock);
	}
	printf("crashing\n");
	fflush(stdout);
	if (!strcmp(how, "segv")) {
		*null_ptr = 1;
	} else if (!strcmp(how, "bus")) {
		FILE *f = tmpfile();
		MUST(f ? 0 : errno);
		volatile char *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fileno(f), 0);
		MUST(p == MAP_FAILED ? errno : 0);
		printf("%d\n", p[0]);   /* the file is empty: SIGBUS */
	} else if (!strcmp(how, "abort")) {
		abort();
	} else if (!strcmp(how, "fpe")) {
		printf("%d\n", one / zero);
	} else if (!strcmp(how, "ill")) {
		__builtin_trap();
	} else if (!strcmp(how, "raise-segv")) {
		raise(SIGSEGV);
	} else if (!strcmp(how, "thread-segv")) {
		pthread_t t;
		MUST(pthread_create(&t, NULL, segv_thread, NULL));
		pthread_join(t, NULL);
	} else if (!strcmp(how, "threads-segv")) {
		pthread_t t[4];
		MUST(pthread_barrier_init(&together, NULL, 4));
		for (int i = 0; i < 4; i++)
			MUST(pthread_create(&t[i], NULL, segv_thread, &together));
		pthread_join(t[0], NULL);
	} else {
		return 2;
	}
	printf("survived %s\n", how);
	return 1;
}
