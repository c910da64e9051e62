/* A thread locks m and blocks in sem_wait, where it is cancelled (sem_wait
 * is a cancellation point), m still locked; then main locks m and hangs
 * for ever, natively too. The ended thread's wait must not be in the
 * profile: it once was, and convoy reported a deadlock m -> s -> m
 * through a thread that no longer existed. */
#include "progs.h"

static sem_t s;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile pid_t waiter_tid;

static void *waiter(void *arg)
{
	MUST(pthread_mutex_lock(&m));
	waiter_tid = (pid_t)syscall(SYS_gettid);
	sem_wait(&s);
	return arg;
}

/* Whether thread tid sleeps (state S in /proc): blocked in sem_wait. */
static int sleeping(pid_t tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'S';
}

int main(void)
{
	MUST(sem_init(&s, 0, 0));
	MUST(sem_post(&s));   /* the main thread posts s: it is s's poster */
	while (sem_wait(&s) != 0)
		;
	pthread_t t;
	MUST(pthread_create(&t, NULL, waiter, NULL));
	while (!waiter_tid || !sleeping(waiter_tid))
		usleep(1000);
	MUST(pthread_cancel(t));
	MUST(pthread_join(t, NULL));
	printf("cancelled; locking the mutex it ended holding\n");
	fflush(stdout);
	pthread_mutex_lock(&m);
	return 0;
}
