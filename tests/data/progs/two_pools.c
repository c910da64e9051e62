/* two_pools — the shape of zstd -T2: one thread-pool implementation, made
 * twice from two places: N compressing workers, and one writer whose
 * thread runs the same start routine (pool_thread) over its own queue.
 * Each compressed chunk is handed to the writer, which sleeps standing for
 * the write. The writer is parked most of its life on its own pool's
 * condvar, made at another call site than the workers' (so the analyzer
 * can tell the pools apart, though their threads share a start routine):
 * a helper beside the workers, not their idle "median worker". */
#include <stdlib.h>

#include "data_progs.h"

#define CHUNKS 100
#define WORK_NS 1000000   /* CPU per chunk in a worker: the writer's wake-ups stay a few % of it */
#define WRITE_NS 40000    /* the writer's I/O per chunk: it parks more than it sleeps */

struct pool {
	pthread_mutex_t lock;
	pthread_cond_t have_job, idle;
	const char *name;    /* its threads' */
	void (*job)(void);   /* what every job of this pool does */
	int queued, running, stop, nthreads;
	pthread_t threads[64];
};

static void *pool_thread(void *arg)
{
	struct pool *p = arg;
	dp_name(p->name);
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->queued && !p->stop)
			pthread_cond_wait(&p->have_job, &p->lock);
		if (!p->queued)
			break;
		p->queued--;
		p->running++;
		pthread_mutex_unlock(&p->lock);
		p->job();
		pthread_mutex_lock(&p->lock);
		if (--p->running == 0 && !p->queued)
			pthread_cond_broadcast(&p->idle);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static struct pool *pool_create(const char *name, int nthreads, void (*job)(void))
{
	struct pool *p = calloc(1, sizeof(*p));
	p->name = name;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->have_job, NULL);
	pthread_cond_init(&p->idle, NULL);
	p->job = job;
	p->nthreads = nthreads;
	for (int i = 0; i < nthreads; i++)
		pthread_create(&p->threads[i], NULL, pool_thread, p);
	return p;
}

static void pool_add(struct pool *p)
{
	pthread_mutex_lock(&p->lock);
	p->queued++;
	pthread_cond_signal(&p->have_job);
	pthread_mutex_unlock(&p->lock);
}

/* Waits for the pool's jobs, stops its threads and joins them. */
static void pool_finish(struct pool *p)
{
	pthread_mutex_lock(&p->lock);
	while (p->queued || p->running)
		pthread_cond_wait(&p->idle, &p->lock);
	p->stop = 1;
	pthread_cond_broadcast(&p->have_job);
	pthread_mutex_unlock(&p->lock);
	for (int i = 0; i < p->nthreads; i++)
		pthread_join(p->threads[i], NULL);
}

static struct pool *writers;

static void write_chunk(void)
{
	dp_sleep_ns(WRITE_NS);
}

static void compress_chunk(void)
{
	dp_spin(WORK_NS);
	pool_add(writers);
}

static struct pool *make_writer(void)
{
	return pool_create("writer", 1, write_chunk);
}

static struct pool *make_workers(int n)
{
	return pool_create("compress", n, compress_chunk);
}

int main(int argc, char **argv)
{
	int workers = dp_workers(argc, argv);
	writers = make_writer();
	struct pool *compress = make_workers(workers);
	CONVOY_NAME(&writers->have_job, "write_queue");
	CONVOY_NAME(&compress->have_job, "compress_queue");
	for (int i = 0; i < CHUNKS; i++)
		pool_add(compress);
	pool_finish(compress);
	pool_finish(writers);
	return 0;
}
