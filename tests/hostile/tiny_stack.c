/* A thread on a PTHREAD_STACK_MIN stack recurses argv[2] KiB deep and then does argv[1]:
 * exit | lock (contended) | cond (timed wait) | create (a thread, joins it) | pexit | sem | rw */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER; static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER; static sem_t sem;
static const char *what; static int kib;
static void *nothing(void *a){ return a; }
__attribute__((noinline)) static int act(void){
	if (!strcmp(what,"exit")) { printf("exiting\n"); exit(3); }
	if (!strcmp(what,"pexit")) pthread_exit(0);
	for (int i = 0; i < 20; i++) {
		if (!strcmp(what,"lock")) { pthread_mutex_lock(&m); pthread_mutex_unlock(&m); }
		if (!strcmp(what,"rw")) { pthread_rwlock_wrlock(&rw); pthread_rwlock_unlock(&rw); }
		if (!strcmp(what,"sem")) sem_wait(&sem);
		if (!strcmp(what,"cond")) { struct timespec ts; clock_gettime(CLOCK_REALTIME,&ts); ts.tv_nsec += 1000000; if (ts.tv_nsec >= 1000000000) { ts.tv_sec++; ts.tv_nsec -= 1000000000; }
			pthread_mutex_lock(&m); pthread_cond_timedwait(&cv,&m,&ts); pthread_mutex_unlock(&m); }
		if (!strcmp(what,"create")) { pthread_t t; pthread_attr_t a; pthread_attr_init(&a); pthread_attr_setstacksize(&a, PTHREAD_STACK_MIN);
			if (pthread_create(&t,&a,nothing,0)==0) pthread_join(t,0); }
	}
	return 1;
}
__attribute__((noinline)) static int descend(int k){ volatile char f[1024]; f[0]=(char)k; if (k>1) return descend(k-1)+f[0]; return act()+f[0]; }
static void *worker(void *a){ return (void *)(long)descend(kib); }
static void *holder(void *a){ for (int i = 0; i < 200; i++) { pthread_mutex_lock(&m); pthread_rwlock_wrlock(&rw); usleep(200); pthread_rwlock_unlock(&rw); pthread_mutex_unlock(&m); sem_post(&sem); usleep(50);} return a; }
int main(int argc, char **argv){
	what = argc > 1 ? argv[1] : "lock"; kib = argc > 2 ? atoi(argv[2]) : 8;
	sem_init(&sem, 0, 0);
	pthread_attr_t a; pthread_attr_init(&a); pthread_attr_setstacksize(&a, PTHREAD_STACK_MIN);
	pthread_t h, t; pthread_create(&h, 0, holder, 0);
	if (pthread_create(&t, &a, worker, 0)) { printf("create failed\n"); return 2; }
	pthread_join(t, 0); pthread_join(h, 0);
	printf("done\n"); return 0;
}
