/* ready_then_pause: prints "ready" once main runs (the shim's constructor
 * has run by then), then waits in pause() until a signal ends it. */
#include <signal.h>

#include "progs.h"

int main(void)
{
	puts("ready");
	fflush(stdout);
	for (;;)
		pause();
}
