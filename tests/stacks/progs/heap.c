/* heap.c — locks with no symbol, named by the code that made them: one
 * initialised in make_queue, one zeroed by calloc and first used in
 * use_plain, two made by one helper for two callers (make_a, make_b), and
 * a condvar initialised in main and waited on in wait_ready. */
#include <string.h>

#include "stacks_progs.h"

struct queue {
	long items;
	pthread_mutex_t lock;
};

struct plain {
	char pad[24];
	pthread_mutex_t lock;
};

struct ready {
	pthread_mutex_t m;
	pthread_cond_t cv;
	int flag;
};

__attribute__((noinline)) static struct queue *make_queue(void)
{
	struct queue *q = calloc(1, sizeof(*q));
	if (!q)
		exit(99);
	pthread_mutex_init(&q->lock, NULL);   /* MAKE_QUEUE_LINE */
	return q;
}

/* A helper that makes locks for two callers: the two are told apart by them. */
__attribute__((noinline)) static void init_lock(pthread_mutex_t *m)
{
	pthread_mutex_init(m, NULL);   /* INIT_LOCK_LINE */
}

__attribute__((noinline)) static pthread_mutex_t *make_a(void)
{
	pthread_mutex_t *m = calloc(1, sizeof(*m));
	if (!m)
		exit(99);
	init_lock(m);   /* MAKE_A_LINE */
	return m;
}

__attribute__((noinline)) static pthread_mutex_t *make_b(void)
{
	pthread_mutex_t *m = calloc(1, sizeof(*m));
	if (!m)
		exit(99);
	init_lock(m);   /* MAKE_B_LINE */
	return m;
}

__attribute__((noinline)) static void use_plain(struct plain *p)
{
	pthread_mutex_lock(&p->lock);   /* USE_PLAIN_LINE */
	pthread_mutex_unlock(&p->lock);
}

static void *queue_worker(void *arg)
{
	struct queue *q = arg;
	pthread_mutex_lock(&q->lock);
	q->items++;
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

__attribute__((noinline)) static void wait_ready(struct ready *r)
{
	pthread_mutex_lock(&r->m);
	while (!r->flag)
		pthread_cond_wait(&r->cv, &r->m);   /* WAIT_READY_LINE */
	pthread_mutex_unlock(&r->m);
}

static void *ready_worker(void *arg)
{
	wait_ready(arg);
	return NULL;
}

int main(void)
{
	pthread_t th;
	struct queue *q = make_queue();
	pthread_mutex_lock(&q->lock);
	MUST(pthread_create(&th, NULL, queue_worker, q));
	wait_for_waiter(&q->lock);
	pthread_mutex_unlock(&q->lock);
	MUST(pthread_join(th, NULL));

	struct plain *p = calloc(1, sizeof(*p));
	if (!p)
		exit(99);
	use_plain(p);

	struct ready *r = calloc(1, sizeof(*r));
	if (!r)
		exit(99);
	pthread_mutex_init(&r->m, NULL);
	pthread_cond_init(&r->cv, NULL);   /* COND_INIT_LINE */
	MUST(pthread_create(&th, NULL, ready_worker, r));
	pthread_mutex_lock(&r->m);
	wait_for_cond_waiter(&r->cv, &r->m);
	r->flag = 1;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->m);
	MUST(pthread_join(th, NULL));
	pthread_mutex_t *a = make_a(), *b = make_b();
	pthread_mutex_lock(a);
	pthread_mutex_unlock(a);
	pthread_mutex_lock(b);
	pthread_mutex_unlock(b);
	printf("heap: done %ld\n", q->items);
	return 0;
}
