#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/mman.h>
static pthread_mutex_t m[8];
static sem_t s;
static volatile int done_flag;
static volatile long cnt[8];
static int child_fn(void *a) {
  for (int i = 0; i < 300000; i++) {
    int k = i & 7, j = (i >> 3) & 7;
    pthread_mutex_lock(&m[k]); cnt[k]++;
    if (j > k) { pthread_mutex_lock(&m[j]); cnt[j]++; pthread_mutex_unlock(&m[j]); }
    pthread_mutex_unlock(&m[k]);
    if (i % 1000 == 0) { pthread_mutex_t l = PTHREAD_MUTEX_INITIALIZER; pthread_mutex_lock(&l); pthread_mutex_unlock(&l); sem_post(&s); }
  }
  __atomic_store_n(&done_flag, 1, __ATOMIC_SEQ_CST);
  syscall(SYS_futex, &done_flag, FUTEX_WAKE, 1, 0, 0, 0);
  syscall(SYS_exit, 0);
  return 0;
}
int main(int argc, char **argv) {
  { pthread_t d; pthread_create(&d, 0, (void*(*)(void*))sem_post, &s); pthread_join(d, 0); }
  for (int i = 0; i < 8; i++) pthread_mutex_init(&m[i], 0);
  sem_init(&s, 0, 0);
  size_t sz = 1 << 20; char *stk = mmap(0, sz, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_STACK, -1, 0);
  int flags = CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM;
  if (clone(child_fn, stk + sz, flags, 0) < 0) { perror("clone"); return 1; }
  child_fn2:
  for (int i = 0; i < 300000; i++) {
    int k = i & 7, j = (i >> 3) & 7;
    pthread_mutex_lock(&m[k]); cnt[k]++;
    if (j > k) { pthread_mutex_lock(&m[j]); cnt[j]++; pthread_mutex_unlock(&m[j]); }
    pthread_mutex_unlock(&m[k]);
    if (i % 1000 == 0) while (sem_trywait(&s) == 0);
  }
  while (!__atomic_load_n(&done_flag, __ATOMIC_SEQ_CST)) syscall(SYS_futex, &done_flag, FUTEX_WAIT, 0, 0, 0, 0);
  long tot = 0; for (int i = 0; i < 8; i++) tot += cnt[i];
  printf("total=%ld\n", tot);
  return 0;
}
