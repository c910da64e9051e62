/* A key destructor that calls pthread_exit (twice, then lets the thread
 * go), in a thread that ended by returning (argv[1] "return") or by
 * pthread_exit ("exit"). glibc runs the destructors again each time. With
 * the shim's trampoline left as the thread's current cancellation buffer
 * after pthread_exit's unwind, the destructor's pthread_exit jumped into
 * the trampoline's dead frame: SIGSEGV
 * (trust::a_key_destructor_may_call_pthread_exit). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_key_t key;
static int rounds;

static void destructor(void *arg)
{
	if (++rounds < 3) {
		pthread_setspecific(key, arg);
		pthread_exit((void *)7);
	}
}

static void *worker(void *arg)
{
	pthread_setspecific(key, arg);
	if (!strcmp(arg, "exit"))
		pthread_exit((void *)3);
	return (void *)4;
}

int main(int argc, char **argv)
{
	pthread_key_create(&key, destructor);
	pthread_t th;
	void *ret;
	pthread_create(&th, NULL, worker, argc > 1 ? argv[1] : "return");
	pthread_join(th, &ret);
	printf("destructor rounds %d, thread's value %ld\n", rounds, (long)ret);
	return 0;
}
