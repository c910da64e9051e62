/* The main thread and a worker deadlock (A then B against B then A), and
 * a third thread, once /proc shows both asleep, sends the main thread a
 * SIGTERM whose handler calls exit(3): the profile, written from inside
 * the handler that interrupted the main thread's wait, holds both waits
 * (a live wait must not read as one left by a jump). No timing: the
 * watcher waits for the kernel's word that both sleep. */
#include "progs.h"

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold;
static pid_t main_tid, worker_tid;

static void on_term(int sig)
{
	(void)sig;
	exit(3);
}

static char state_of(pid_t tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return '?';
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *close = strrchr(buf, ')');
	return close && close[1] == ' ' ? close[2] : '?';
}

static void *worker(void *arg)
{
	(void)arg;
	worker_tid = (pid_t)syscall(SYS_gettid);
	MUST(pthread_mutex_lock(&b));
	pthread_barrier_wait(&both_hold);
	pthread_mutex_lock(&a);   /* never */
	return NULL;
}

static void *watcher(void *arg)
{
	pthread_t main_thread = *(pthread_t *)arg;
	while (!worker_tid || state_of(main_tid) != 'S' || state_of(worker_tid) != 'S')
		usleep(1000);
	/* Both asleep: in the locks' futex waits (the barrier is behind them). */
	MUST(pthread_kill(main_thread, SIGTERM));
	return NULL;
}

int main(void)
{
	main_tid = (pid_t)syscall(SYS_gettid);
	struct sigaction sa = { .sa_handler = on_term };
	sigemptyset(&sa.sa_mask);
	MUST(sigaction(SIGTERM, &sa, NULL));
	MUST(pthread_barrier_init(&both_hold, NULL, 2));
	pthread_t w, x, self = pthread_self();
	MUST(pthread_create(&w, NULL, worker, NULL));
	MUST(pthread_mutex_lock(&a));
	pthread_barrier_wait(&both_hold);
	MUST(pthread_create(&x, NULL, watcher, &self));
	pthread_mutex_lock(&b);   /* never */
	printf("unreachable\n");
	return 0;
}
