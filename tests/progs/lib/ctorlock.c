/* libctorlock.so: its constructor locks ctor_lock 100 times and creates and
 * joins a thread (ctor_thread) that locks it 50 more, before the program's
 * main and, when this library's constructor runs first, before the shim's.
 * It checks errno survives its first lock, and records what it saw. With
 * CTORLOCK_FORK set it then forks a child that locks it once and ends with
 * _exit(0). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>

pthread_mutex_t ctor_lock = PTHREAD_MUTEX_INITIALIZER;
int ctorlock_count;
int ctorlock_errno_kept = -1;
int ctorlock_thread_rc = -1;

static void *ctor_thread(void *arg)
{
	for (int i = 0; i < 50; i++) {
		pthread_mutex_lock(&ctor_lock);
		ctorlock_count++;
		pthread_mutex_unlock(&ctor_lock);
	}
	return arg;
}

__attribute__((constructor)) static void ctorlock_init(void)
{
	errno = 4242;
	pthread_mutex_lock(&ctor_lock);
	ctorlock_errno_kept = errno == 4242;
	ctorlock_count++;
	pthread_mutex_unlock(&ctor_lock);
	for (int i = 1; i < 100; i++) {
		pthread_mutex_lock(&ctor_lock);
		ctorlock_count++;
		pthread_mutex_unlock(&ctor_lock);
	}
	pthread_t t;
	ctorlock_thread_rc = pthread_create(&t, NULL, ctor_thread, NULL);
	if (ctorlock_thread_rc == 0)
		ctorlock_thread_rc = pthread_join(t, NULL);
	if (getenv("CTORLOCK_FORK")) {   /* a helper child that ends at once: its profile is written first */
		pid_t child = fork();
		if (child == 0) {
			pthread_mutex_lock(&ctor_lock);   /* something to write */
			pthread_mutex_unlock(&ctor_lock);
			_exit(0);
		}
		waitpid(child, NULL, 0);
	}
}
