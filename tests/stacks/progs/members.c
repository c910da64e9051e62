/* members.c — locks inside global structs and arrays, each named by its
 * member path: workers[3].lock, pool.q.queue_lock, pool.grid[1][2]; and
 * inside a function's static struct, named after the function:
 * main::spare.lock. */
#include "stacks_progs.h"

struct worker {
	int id;
	char pad[20];
	pthread_mutex_t lock;
	long count;
};

struct pool {
	int n;
	struct {
		long x;
		pthread_mutex_t queue_lock;
	} q;
	pthread_mutex_t grid[2][3];
};

/* Zeroed memory is an unlocked default mutex in glibc, as the initializer. */
struct worker workers[4];
struct pool pool;

static void *worker(void *arg)
{
	pthread_mutex_t *m = arg;
	pthread_mutex_lock(m);
	pthread_mutex_unlock(m);
	return NULL;
}

static void contend(pthread_mutex_t *m)
{
	pthread_t th;
	pthread_mutex_lock(m);
	MUST(pthread_create(&th, NULL, worker, m));
	wait_for_waiter(m);
	pthread_mutex_unlock(m);
	MUST(pthread_join(th, NULL));
}

int main(void)
{
	static struct worker spare;
	contend(&workers[3].lock);
	contend(&pool.q.queue_lock);
	contend(&pool.grid[1][2]);
	contend(&spare.lock);
	puts("members: done");
	return 0;
}
