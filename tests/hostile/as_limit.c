/* Sets RLIMIT_AS to the current address-space size + argv[1] MiB, then creates threads with
 * 64 KiB stacks that each lock a fresh mutex and park, until pthread_create fails; then
 * mallocs 64 KiB blocks until malloc fails. Prints both counts. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER; static pthread_cond_t cv = PTHREAD_COND_INITIALIZER; static int go;
static void *w(void *a){ pthread_mutex_t mm; pthread_mutex_init(&mm, 0); pthread_mutex_lock(&mm); pthread_mutex_unlock(&mm);
	pthread_mutex_lock(&gate); while (!go) pthread_cond_wait(&cv, &gate); pthread_mutex_unlock(&gate); return a; }
static long vmsize_kib(void){ FILE *f = fopen("/proc/self/status", "r"); char line[256]; long v = -1;
	while (fgets(line, sizeof line, f)) if (!strncmp(line, "VmSize:", 7)) v = atol(line + 7); fclose(f); return v; }
int main(int argc, char **argv){
	long extra = argc > 1 ? atol(argv[1]) : 16;
	static pthread_t t[100000]; int n = 0;
	struct rlimit rl = { .rlim_cur = (vmsize_kib() + extra * 1024) * 1024, .rlim_max = RLIM_INFINITY };
	if (setrlimit(RLIMIT_AS, &rl)) perror("setrlimit");
	pthread_attr_t a; pthread_attr_init(&a); pthread_attr_setstacksize(&a, 65536);
	while (n < 100000 && pthread_create(&t[n], &a, w, 0) == 0) n++;
	pthread_mutex_lock(&gate); go = 1; pthread_cond_broadcast(&cv); pthread_mutex_unlock(&gate);
	for (int i = 0; i < n; i++) pthread_join(t[i], 0);
	long blocks = 0; while (blocks < 1000000 && malloc(65536)) blocks++;
	printf("threads=%d mallocs=%ld\n", n, blocks); return 0;
}
