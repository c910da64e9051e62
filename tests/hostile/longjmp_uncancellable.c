#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
/* Only async-signal-safe calls (sem_post) are interrupted by the jumping handler. */
static __thread sigjmp_buf env;
static __thread volatile int armed;
static sem_t never;
static volatile int stop;
static volatile long jumps;
static void h(int s) { if (armed) { armed = 0; jumps++; siglongjmp(env, 1); } }
#define NS 4096
static void *worker(void *a) {
  sem_t *sems = malloc(NS * sizeof(sem_t));
  for (long i = 0; !stop; i++) {
    sem_t *s = &sems[i % NS];
    sem_init(s, 0, 0);
    if (sigsetjmp(env, 1) == 0) {
      armed = 1;
      sem_post(s);   /* async-signal-safe */
      armed = 0;
    }
    armed = 0;
    sem_destroy(s);
  }
  int old; pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
  if (old != PTHREAD_CANCEL_ENABLE) fprintf(stderr, "cancel state was DISABLE at end\n");
  pthread_setcancelstate(old, 0);
  sem_wait(&never);   /* cancellation point: pthread_cancel must end it */
  return (void*)1;
}
int main(int argc, char **argv) {
  sem_init(&never, 0, 0);
  struct sigaction sa; memset(&sa, 0, sizeof sa); sa.sa_handler = h; sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, 0);
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, worker, 0);
  for (int i = 0; i < 100000; i++) { pthread_kill(t[i & 1], SIGUSR1); if (i % 64 == 0) usleep(100); }
  stop = 1;
  usleep(100000);
  for (int i = 0; i < 2; i++) pthread_cancel(t[i]);
  int ok = 0;
  for (int i = 0; i < 2; i++) { struct timespec ts; clock_gettime(CLOCK_REALTIME, &ts); ts.tv_sec += 3; void *r; int jr = pthread_timedjoin_np(t[i], &r, &ts); if (jr == 0 && r == PTHREAD_CANCELED) ok++; else printf("thread %d: join %d (not cancelled)\n", i, jr); }
  printf("cancelled ok=%d jumps>0=%d\n", ok, jumps > 0);
  fflush(stdout);
  _exit(0);
}
