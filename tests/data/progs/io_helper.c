/* io_helper — the shape of zstd -T1 and pigz: the main thread reads input
 * (sleeps standing for I/O) and hands chunks to N compressing workers, and a
 * writer thread writes their output (sleeps again). More threads run than
 * {threads}, yet the stack is built on the N workers: no component may be
 * negative or above the budget, and the reader and writer are helpers. */
#include "data_progs.h"

#define CHUNKS 200
#define WORK_NS 400000    /* CPU per chunk in a worker */
#define READ_NS 150000    /* the reader's I/O per chunk */
#define WRITE_NS 100000   /* the writer's I/O per chunk */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t have_input = PTHREAD_COND_INITIALIZER, have_output = PTHREAD_COND_INITIALIZER;
static int read_count, taken, compressed, written;

static void *worker(void *arg)
{
	(void)arg;
	dp_name("compress");
	pthread_mutex_lock(&lock);
	for (;;) {
		while (taken == read_count && read_count < CHUNKS)
			pthread_cond_wait(&have_input, &lock);
		if (taken == CHUNKS)
			break;
		taken++;
		pthread_mutex_unlock(&lock);
		dp_spin(WORK_NS);
		pthread_mutex_lock(&lock);
		compressed++;
		pthread_cond_signal(&have_output);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void *writer(void *arg)
{
	(void)arg;
	dp_name("writer");
	pthread_mutex_lock(&lock);
	while (written < CHUNKS) {
		while (written == compressed)
			pthread_cond_wait(&have_output, &lock);
		written++;
		pthread_mutex_unlock(&lock);
		dp_sleep_ns(WRITE_NS);
		pthread_mutex_lock(&lock);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	int workers = dp_workers(argc, argv);
	pthread_t t[64], w;
	CONVOY_NAME(&lock, "chunk_lock");
	CONVOY_NAME(&have_input, "have_input");
	CONVOY_NAME(&have_output, "have_output");
	pthread_create(&w, NULL, writer, NULL);
	dp_start(t, workers, worker, t, 0);
	for (int i = 0; i < CHUNKS; i++) {
		dp_sleep_ns(READ_NS);   /* the read */
		pthread_mutex_lock(&lock);
		read_count++;
		pthread_cond_signal(&have_input);
		pthread_mutex_unlock(&lock);
	}
	pthread_mutex_lock(&lock);
	pthread_cond_broadcast(&have_input);
	pthread_mutex_unlock(&lock);
	dp_join(t, workers);
	pthread_join(w, NULL);
	return 0;
}
