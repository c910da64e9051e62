/* churn — a thread per small task: 96 tasks (enough for the rule, few enough
 * to check the profile in), N at a time, each thread
 * named "run_task" after its start routine. The finding must name the
 * routine and the thread that created them, not pthread_create. */
#include "data_progs.h"

static void *run_task(void *arg)
{
	dp_name("run_task");
	(void)arg;
	dp_spin(2000);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = dp_workers(argc, argv);
	pthread_t t[64];
	for (int done = 0; done < 96; done += n) {
		dp_start(t, n, run_task, t, 0);
		dp_join(t, n);
	}
	return 0;
}
