/* Green threads, as Go-like runtimes make them: argv[1] coroutines on argv[2]-byte
 * stacks (mapped before any thread, a guard page below each) run on argv[3] threads and
 * migrate between them; each, argv[4] bytes deep in its stack, locks a shared mutex
 * (contended) and one of its own (a first use on each thread it lands on), then yields.
 * The shim once unwound such a stack for a contended wait, with less room than the
 * unwinder needs (SIGSEGV); it takes no stack on a stack that is not the thread's own.
 * Prints the shared count (coroutines x 3000). (From tests/hostile, third round.) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#define MAXC 1024
static ucontext_t co[MAXC]; static char *stk[MAXC]; static int ready[MAXC], done[MAXC];
static __thread ucontext_t sched_ctx; static __thread int cur;
static pthread_mutex_t q = PTHREAD_MUTEX_INITIALIZER, shared = PTHREAD_MUTEX_INITIALIZER; static pthread_mutex_t own[MAXC];
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int nco, ssz, nthr, ndone, rounds = 3000; static long counter;
static __attribute__((noinline)) ucontext_t *get_sched(void){ __asm__ volatile(""); return &sched_ctx; }
static __attribute__((noinline)) int get_cur(void){ __asm__ volatile(""); return cur; }
static __attribute__((noinline)) void yield(void){ int me = get_cur(); swapcontext(&co[me], get_sched()); }
static int deep; static __attribute__((noinline)) void locked_deep(int id, int d){ volatile char pad[d > 0 ? d : 1]; pad[0] = 1; pthread_mutex_lock(&shared); for (volatile int z = 0; z < 200; z++) ; counter++; pthread_mutex_unlock(&shared); pthread_mutex_lock(&own[id]); pthread_mutex_unlock(&own[id]); (void)pad[0]; }
static void body(int id){ if (deep) { for (int r = 0; r < rounds; r++) { locked_deep(id, deep); yield(); } done[id] = 1; for (;;) yield(); } for (int r = 0; r < rounds; r++) { pthread_mutex_lock(&shared); for (volatile int z = 0; z < 200; z++) ; counter++; pthread_cond_signal(&cv); pthread_mutex_unlock(&shared);
		pthread_mutex_lock(&own[id]); pthread_mutex_unlock(&own[id]); yield(); }
	done[id] = 1; for (;;) yield(); }
static void *worker(void *a){ (void)a; for (;;) { int pick = -1; pthread_mutex_lock(&q);
		if (ndone == nco) { pthread_mutex_unlock(&q); return 0; }
		for (int i = 0; i < nco; i++) { int j = (i + (int)(long)a * 7 + rand()) % nco; if (ready[j] && !done[j]) { pick = j; ready[j] = 0; break; } }
		pthread_mutex_unlock(&q);
		if (pick < 0) { sched_yield(); continue; }
		cur = pick; swapcontext(&sched_ctx, &co[pick]);
		pthread_mutex_lock(&q); if (done[pick]) ndone++; else ready[pick] = 1; pthread_mutex_unlock(&q); } }
int main(int argc, char **argv){
	nco = argc > 1 ? atoi(argv[1]) : 64; ssz = argc > 2 ? atoi(argv[2]) : 4096; nthr = argc > 3 ? atoi(argv[3]) : 4; deep = argc > 4 ? atoi(argv[4]) : 0;
	long pg = sysconf(_SC_PAGESIZE);
	for (int i = 0; i < nco; i++) { size_t len = ((ssz + pg - 1) / pg) * pg + pg; char *p = mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		mprotect(p, pg, PROT_NONE); stk[i] = p + len - ssz; pthread_mutex_init(&own[i], 0);
		getcontext(&co[i]); co[i].uc_stack.ss_sp = stk[i]; co[i].uc_stack.ss_size = ssz; co[i].uc_link = 0; makecontext(&co[i], (void (*)(void))body, 1, i); ready[i] = 1; }
	pthread_t t[64]; for (long i = 0; i < nthr; i++) pthread_create(&t[i], 0, worker, (void *)i);
	for (int i = 0; i < nthr; i++) pthread_join(t[i], 0);
	printf("counter %ld\n", counter); return 0;
}
