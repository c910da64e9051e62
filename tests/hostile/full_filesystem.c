#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/wait.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static void *w(void *a) { for (int i = 0; i < 1000; i++) { pthread_mutex_lock(&m); pthread_mutex_unlock(&m); } return a; }
int main(int argc, char **argv) {
  int nchild = atoi(argv[1]); size_t sz = strtoul(argv[2], 0, 0);
  for (int i = 0; i < nchild; i++) {
    pid_t p = fork();
    if (p == 0) { pthread_t t; pthread_create(&t, 0, w, 0); w(0); pthread_join(t, 0); exit(0); }
    waitpid(p, 0, 0);
  }
  char *buf = calloc(1, sz);
  int fd = open("data.bin", O_WRONLY|O_CREAT|O_TRUNC, 0644);
  ssize_t n = write(fd, buf, sz);
  int e = errno;
  printf("wrote %zd of %zu (%s)\n", n, sz, n < 0 ? strerror(e) : "ok");
  close(fd); unlink("data.bin");
  return n == (ssize_t)sz ? 0 : 1;
}
