/* queue_pool N starve|lost: N workers (at most 16) take tasks from one
 * queue (a mutex and a get-work condvar), as a hand-written pool does; each
 * task's completion is a condvar of its own. Both hang for good, with no
 * timing:
 *
 * starve: N root tasks are queued before the workers start; each submits a
 *         child and waits, inside the task, for it: no worker is free to
 *         run a child (N = 1 too: a lone worker starves itself).
 * lost:   N tasks that just finish; main waits for one completion more than
 *         it queued. The workers end up idle at their get-work wait, the
 *         queue empty: an idle pool and a lost wake-up, not starvation. */
#include "progs.h"

struct task {
	void (*fn)(struct task *);
	struct task *next;
	int done;
	pthread_cond_t done_cv;
};

static struct task *head, *tail;
static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER, lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t get_work = PTHREAD_COND_INITIALIZER, completion = PTHREAD_COND_INITIALIZER;
static int completed;

static void submit(struct task *t)
{
	MUST(pthread_mutex_lock(&qlock));
	t->next = NULL;
	if (tail)
		tail->next = t;
	else
		head = t;
	tail = t;
	MUST(pthread_cond_signal(&get_work));
	MUST(pthread_mutex_unlock(&qlock));
}

static struct task *new_task(void (*fn)(struct task *))
{
	struct task *t = calloc(1, sizeof(*t));
	MUST(t ? 0 : ENOMEM);
	t->fn = fn;
	MUST(pthread_cond_init(&t->done_cv, NULL));
	return t;
}

static void finish(struct task *t)
{
	MUST(pthread_mutex_lock(&lock));
	t->done = 1;
	completed++;
	MUST(pthread_cond_broadcast(&t->done_cv));
	MUST(pthread_cond_broadcast(&completion));
	MUST(pthread_mutex_unlock(&lock));
}

static void leaf(struct task *t) { finish(t); }

static void root(struct task *t)
{
	struct task *child = new_task(leaf);
	submit(child);
	MUST(pthread_mutex_lock(&lock));
	while (!child->done)
		MUST(pthread_cond_wait(&child->done_cv, &lock));
	MUST(pthread_mutex_unlock(&lock));
	finish(t);
}

static void *worker(void *arg)
{
	for (;;) {
		MUST(pthread_mutex_lock(&qlock));
		while (!head)
			MUST(pthread_cond_wait(&get_work, &qlock));
		struct task *t = head;
		head = t->next;
		if (!head)
			tail = NULL;
		MUST(pthread_mutex_unlock(&qlock));
		t->fn(t);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2, starve = argc > 2 && !strcmp(argv[2], "starve");
	if (n < 1 || n > 16)
		return 2;
	for (int i = 0; i < n; i++)
		submit(new_task(starve ? root : leaf));
	for (int i = 0; i < n; i++) {
		pthread_t t;
		MUST(pthread_create(&t, NULL, worker, NULL));
	}
	MUST(pthread_mutex_lock(&lock));
	while (completed < n + !starve)   /* lost: one more than was queued */
		MUST(pthread_cond_wait(&completion, &lock));
	MUST(pthread_mutex_unlock(&lock));
	printf("never\n");
	return 0;
}
