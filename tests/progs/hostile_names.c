/* Names chosen to break a report that pastes them into HTML: a thread called
 * "<img src=x>" (the kernel keeps 15 bytes of a thread name), a lock called
 * "<img src=x onerror=alert(1)>", a condvar whose name ends the page's data
 * block ("</script><script>alert(2)</script>"), a counter with U+2028 in its
 * name, and a lock whose name is not UTF-8. Both threads take the lock, so it
 * is in the report. */
#include <convoy.h>

#include "progs.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t bytes = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ready;

static void *worker(void *arg)
{
	MUST(pthread_setname_np(pthread_self(), "<img src=x>"));
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&lock);
		CONVOY_COUNTER_ADD("line\u2028separator", 1);
		pthread_mutex_unlock(&lock);
	}
	pthread_mutex_lock(&lock);
	ready = 1;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
	return arg;
}

int main(void)
{
	CONVOY_NAME(&lock, "<img src=x onerror=alert(1)>");
	CONVOY_NAME(&cond, "</script><script>alert(2)</script><!--");
	CONVOY_NAME(&bytes, "bytes \xff\xfe\xc0 not UTF-8");
	pthread_mutex_lock(&bytes);
	pthread_mutex_unlock(&bytes);
	pthread_t t;
	MUST(pthread_create(&t, NULL, worker, NULL));
	pthread_mutex_lock(&lock);
	while (!ready)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	MUST(pthread_join(t, NULL));
	puts("done");
	return 0;
}
