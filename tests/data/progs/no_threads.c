/* no_threads — a program that takes --workers N and makes no thread: its
 * main thread does all the work (100 ms of CPU), at every N. Swept 1,2,
 * the 2-thread run has one worker where two were asked for, and the
 * finding says the process made no thread (its parallel work, if the
 * command had any, would be in other processes: make -j). */
#include "data_progs.h"

int main(int argc, char **argv)
{
	(void)dp_workers(argc, argv);
	dp_spin(100000000);
	return 0;
}
