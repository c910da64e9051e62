/* dlmain.c — contention inside dlopen'd libraries that are closed before the
 * process ends: dlmain LIBDIR opens libdl_one.so, makes its one_wait block,
 * closes it, then does the same with libdl_two.so. */
#include <dlfcn.h>
#include <string.h>

#include "stacks_progs.h"

static void (*wait_fn)(void);

static void *worker(void *arg)
{
	(void)arg;
	wait_fn();
	return NULL;
}

static void contend_in(const char *dir, const char *lib, const char *get, const char *wait)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, lib);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		exit(99);
	}
	pthread_mutex_t *(*get_lock)(void) = (pthread_mutex_t * (*)(void)) dlsym(h, get);
	wait_fn = (void (*)(void))dlsym(h, wait);
	if (!get_lock || !wait_fn)
		exit(99);
	pthread_mutex_t *m = get_lock();
	pthread_t th;
	pthread_mutex_lock(m);
	MUST(pthread_create(&th, NULL, worker, NULL));
	wait_for_waiter(m);
	pthread_mutex_unlock(m);
	MUST(pthread_join(th, NULL));
	MUST(dlclose(h));
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: dlmain LIBDIR\n");
		return 2;
	}
	contend_in(argv[1], "libdl_one.so", "one_get_lock", "one_wait");
	contend_in(argv[1], "libdl_two.so", "two_get_lock", "two_wait");
	puts("dlmain: done");
	return 0;
}
