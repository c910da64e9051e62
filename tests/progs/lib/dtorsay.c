/* A library whose destructor writes to stderr, unbuffered: it runs after
 * the shim's (the program links it; the shim is preloaded), when the
 * program's stdout still holds its last buffer. */
#include <unistd.h>

int dtorsay_linked(void)
{
	return 1;   /* called, so that the linker keeps the library (--as-needed) */
}

__attribute__((destructor)) static void say(void)
{
	static const char line[] = "libdtorsay: destructor, on stderr\n";
	(void)!write(2, line, sizeof(line) - 1);
}
