/* errno is the program's: set it to a sentinel before calls that succeed
 * (and a timed wait that times out, which returns its error) and print it
 * after each. The first calls on a new thread and on a new object take the
 * shim's slow paths (allocation, registry), so they are here too. */
#include <convoy.h>

#include "progs.h"

#define SENTINEL 4242

#define KEEP(label, expr)                                                        \
	do {                                                                     \
		errno = SENTINEL;                                                \
		int keep_rc_ = (expr);                                           \
		int keep_errno_ = errno;                                         \
		printf("%s: rc %d %s, errno %s\n", (label), keep_rc_, rc_name(keep_rc_), \
		       keep_errno_ == SENTINEL ? "kept" : strerrorname_np(keep_errno_)); \
	} while (0)

pthread_mutex_t static_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t dyn_lock;
static pthread_cond_t dyn_cond;
static sem_t worker_go, worker_done;

static void *errno_worker(void *arg)
{
	sem_wait_all(&worker_go);   /* main prints its lines about us first */
	KEEP("thread: first lock", pthread_mutex_lock(&static_lock));
	KEEP("thread: unlock", pthread_mutex_unlock(&static_lock));
	KEEP("thread: trylock new object", pthread_mutex_trylock(&dyn_lock));
	KEEP("thread: unlock", pthread_mutex_unlock(&dyn_lock));
	KEEP("thread: signal", pthread_cond_signal(&dyn_cond));
	errno = SENTINEL;
	CONVOY_COUNTER_ADD("errno-test", 1);
	printf("thread: counter, errno %s\n", errno == SENTINEL ? "kept" : "changed");
	sem_post(&worker_done);
	return arg;
}

int main(void)
{
	pthread_mutex_t many[64];
	KEEP("mutex init", pthread_mutex_init(&dyn_lock, NULL));
	KEEP("cond init", pthread_cond_init(&dyn_cond, NULL));
	KEEP("first lock of static mutex", pthread_mutex_lock(&static_lock));
	KEEP("unlock", pthread_mutex_unlock(&static_lock));
	KEEP("trylock", pthread_mutex_trylock(&dyn_lock));
	KEEP("unlock", pthread_mutex_unlock(&dyn_lock));
	struct timespec ts = deadline_ms(CLOCK_REALTIME, 1000);
	KEEP("timedlock", pthread_mutex_timedlock(&dyn_lock, &ts));
	KEEP("unlock", pthread_mutex_unlock(&dyn_lock));
	KEEP("signal", pthread_cond_signal(&dyn_cond));
	KEEP("broadcast", pthread_cond_broadcast(&dyn_cond));
	KEEP("lock", pthread_mutex_lock(&dyn_lock));
	ts = deadline_ms(CLOCK_REALTIME, 10);
	KEEP("timedwait (times out)", pthread_cond_timedwait(&dyn_cond, &dyn_lock, &ts));
	KEEP("unlock", pthread_mutex_unlock(&dyn_lock));
	/* Many new objects: the per-thread table grows. */
	int grew = 0;
	for (int i = 0; i < 64; i++) {
		errno = SENTINEL;
		pthread_mutex_init(&many[i], NULL);
		pthread_mutex_lock(&many[i]);
		pthread_mutex_unlock(&many[i]);
		pthread_mutex_destroy(&many[i]);
		grew += errno != SENTINEL;
	}
	printf("64 new mutexes: errno changed %d times\n", grew);
	pthread_t t;
	sem_init(&worker_go, 0, 0);
	sem_init(&worker_done, 0, 0);
	KEEP("create", pthread_create(&t, NULL, errno_worker, NULL));
	KEEP("setname", pthread_setname_np(t, "errno-worker"));
	sem_post(&worker_go);
	KEEP("join", pthread_join(t, NULL));
	sem_wait_all(&worker_done);
	MUST(pthread_create(&t, NULL, errno_worker, NULL));
	KEEP("detach", pthread_detach(t));
	sem_post(&worker_go);
	sem_wait_all(&worker_done);
	errno = SENTINEL;
	CONVOY_NAME(&dyn_lock, "dyn");
	CONVOY_PROGRESS("errno-progress");
	printf("annotations: errno %s\n", errno == SENTINEL ? "kept" : "changed");
	KEEP("cond destroy", pthread_cond_destroy(&dyn_cond));
	KEEP("mutex destroy", pthread_mutex_destroy(&dyn_lock));
	return 0;
}
