/* What the program can see of the libraries in its process: a symbol of
 * zlib and of libgcc_s's unwinder in the global scope, and whether zlib or
 * libgcc_s is loaded at all. This program links neither, so natively all
 * are absent; the shim must not add them
 * (trust::the_shim_adds_nothing_to_the_global_scope; its unwinder is
 * linked in, stacks.c). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static void *worker(void *arg)
{
	pthread_mutex_t *m = arg;
	pthread_mutex_lock(m);
	pthread_mutex_unlock(m);
	return NULL;
}

int main(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_t th;
	if (pthread_create(&th, NULL, worker, &m) != 0 || pthread_join(th, NULL) != 0)
		return 2;
	void *z = dlopen("libz.so.1", RTLD_LAZY | RTLD_NOLOAD);
	void *gcc_s = dlopen("libgcc_s.so.1", RTLD_LAZY | RTLD_NOLOAD);
	printf("deflate in the global scope: %s\n", dlsym(RTLD_DEFAULT, "deflate") ? "yes" : "no");
	printf("_Unwind_Backtrace in the global scope: %s\n",
	       dlsym(RTLD_DEFAULT, "_Unwind_Backtrace") ? "yes" : "no");
	printf("libz.so.1 loaded: %s\n", z ? "yes" : "no");
	printf("libgcc_s.so.1 loaded: %s\n", gcc_s ? "yes" : "no");
	return 0;
}
