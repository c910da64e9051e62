/* init_many.c — argv[1] mutexes (default 3000) made by make_all, every one
 * initialised before any is used, then each locked once by use_all on a
 * second thread: each is named by its init stack (make_all), which the
 * shim keeps until the object's first use in a table that grows with the
 * inits waiting, and the objects fill a registry that grows too. */
#include "stacks_progs.h"

struct item {
	long n;
	pthread_mutex_t lock;
};

__attribute__((noinline)) static struct item *make_all(long n)
{
	struct item *items = calloc((size_t)n, sizeof(*items));
	if (!items)
		exit(99);
	for (long i = 0; i < n; i++)
		pthread_mutex_init(&items[i].lock, NULL);   /* MAKE_ALL_LINE */
	return items;
}

struct work { struct item *items; long n; };

__attribute__((noinline)) static void *use_all(void *arg)
{
	struct work *w = arg;
	for (long i = w->n - 1; i >= 0; i--) {   /* not in the order made */
		pthread_mutex_lock(&w->items[i].lock);   /* USE_ALL_LINE */
		w->items[i].n++;
		pthread_mutex_unlock(&w->items[i].lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct work w = { NULL, argc > 1 ? atol(argv[1]) : 3000 };
	w.items = make_all(w.n);
	pthread_t t;
	if (pthread_create(&t, NULL, use_all, &w) || pthread_join(t, NULL))
		return 98;
	printf("used %ld\n", w.n);
	return 0;
}
