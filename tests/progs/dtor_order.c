/* Prints a line to stdout, through stdio, and returns from main: the
 * line stays in stdout's buffer until the C library's flush at exit,
 * after every destructor, libdtorsay's (stderr) included. With both on
 * one file, natively the destructor's line comes first. */
#include "progs.h"

int dtorsay_linked(void);

int main(void)
{
	MUST(!dtorsay_linked());
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	MUST(pthread_mutex_lock(&m));
	MUST(pthread_mutex_unlock(&m));
	printf("main: on stdout\n");
	return 0;
}
