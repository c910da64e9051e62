/* libforkinside.so: a fork made inside another fork's steps. Its
 * constructor registers a prepare handler before the shim registers its
 * own (this library is the program's, initialised before the preloaded
 * shim), so the handler runs after the shim's prepare step: once armed, it
 * forks with _Fork there, as a signal handler that forks could at that
 * moment. The process _Fork makes then finishes the outer fork itself. */
#include <pthread.h>
#include <unistd.h>

static int armed;
int forkinside_inner;   /* 1 in the process _Fork made, and in its children */

void forkinside_arm(void)
{
	armed = 1;
}

static void prepare(void)
{
	if (!armed)
		return;
	armed = 0;
	if (_Fork() == 0)
		forkinside_inner = 1;
}

__attribute__((constructor)) static void forkinside_init(void)
{
	pthread_atfork(prepare, NULL, NULL);
}
