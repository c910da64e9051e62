/* dlopen_ctor_waits LIB: dlopens LIB (libctorwait.so: its constructor
 * waits, under dlopen's lock, for threads it starts) and says whether it
 * loaded. */
#include <dlfcn.h>

#include "progs.h"

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	void *h = dlopen(argv[1], RTLD_NOW);
	puts(h ? "loaded" : dlerror());
	return h ? 0 : 1;
}
