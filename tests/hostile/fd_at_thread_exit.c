#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/resource.h>
static volatile int stop;
static long emfile, notlowest, opens;
static void *opener(void *a) {
  while (!stop) {
    int fd = open("/dev/null", O_RDONLY);
    if (fd < 0) { if (errno == EMFILE) emfile++; continue; }
    if (fd != 3) notlowest++;
    opens++;
    close(fd);
  }
  return a;
}
static void *shortlived(void *a) { usleep(3000); return a; }
int main(int argc, char **argv) {
  int lim = atoi(argv[1]);
  for (int fd = 3; fd < 1024; fd++) close(fd);
  if (lim) { struct rlimit rl = { lim, lim }; if (setrlimit(RLIMIT_NOFILE, &rl)) { perror("setrlimit"); return 1; } }
  pthread_t o; pthread_create(&o, 0, opener, 0);
  for (int i = 0; i < 400; i++) { pthread_t t; pthread_create(&t, 0, shortlived, 0); if (i % 4 == 3) pthread_join(t, 0); else pthread_detach(t); }
  usleep(10000);
  stop = 1; pthread_join(o, 0);
  printf("emfile=%ld notlowest=%ld\n", emfile, notlowest);
  return 0;
}
