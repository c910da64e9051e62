/* Prints LD_PRELOAD as the program sees it and which preloaded libraries
 * are actually in the process. */
#include <dlfcn.h>

#include "progs.h"

int main(void)
{
	const char *v = getenv("LD_PRELOAD");
	printf("LD_PRELOAD=%s\n", v ? v : "(unset)");
	printf("marker loaded: %s\n", dlsym(RTLD_DEFAULT, "convoy_test_marker") ? "yes" : "no");
	printf("convoy loaded: %s\n", dlsym(RTLD_DEFAULT, "convoy_progress") ? "yes" : "no");
	return 0;
}
