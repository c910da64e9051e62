/* serial_phase — one thread working while the others cannot: the main
 * thread loads its input alone (60 ms of CPU) before it starts N workers
 * that share 120 ms of work. Adding workers shrinks only the parallel part;
 * the idle slots of the serial phase must be named with the thread that ran
 * alone (main, at its start), not left as anonymous idle time. */
#include "data_progs.h"

#define SERIAL_NS 60000000
#define PARALLEL_NS 120000000

static int workers;

static void *worker(void *arg)
{
	(void)arg;
	dp_name("worker");
	dp_spin(PARALLEL_NS / (uint64_t)workers);
	return NULL;
}

int main(int argc, char **argv)
{
	workers = dp_workers(argc, argv);
	dp_spin(SERIAL_NS);   /* the serial load */
	pthread_t t[64];
	dp_start(t, workers, worker, t, 0);
	dp_join(t, workers);
	return 0;
}
