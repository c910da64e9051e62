/* dlopen.c — the analyzer's dlopen, which libdw's calls reach (the
 * executable exports it: Makefile), to keep libdw from loading a
 * debuginfod client nobody configured.
 *
 * libdw 0.188 opens libdebuginfod.so.1 (and through it libcurl and some
 * thirty libraries) once a module's separate debug file is not found on
 * disk, by dwfl_standard_find_debuginfo or dwfl_build_id_find_elf, as a
 * last resort, whether or not DEBUGINFOD_URLS names a server; the client
 * then asks nobody. That open is most of what `convoy report` of a short
 * profile costs (docs/performance.md has the numbers). Refused where
 * DEBUGINFOD_URLS is unset or empty, libdw goes on as where the library
 * is not installed: no dlerror() message is set for it, and libdw reads
 * none. Every other open, and this one where servers are named, goes to
 * the C library's dlopen.
 *
 * glibc's dlopen takes its caller from its return address (the RUNPATH
 * and namespace searched): the forwarding is a tail call at -O2, so the
 * caller is still libdw (or cachelines.c); unoptimized, it is convoy,
 * which has no RUNPATH and loads everything in the one namespace, so the
 * search is the same. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

static void *(*c_library_dlopen)(const char *, int);

void *dlopen(const char *file, int mode)
{
	static const char client[] = "libdebuginfod.so";   /* .so.1, or the development link */
	if (file && !strncmp(file, client, sizeof(client) - 1)) {
		const char *urls = getenv("DEBUGINFOD_URLS");
		if (!urls || !*urls)
			return NULL;
	}
	/* The sampler's thread opens Capstone (cachelines.c) beside the
	 * main thread's libdw: both may look it up, to the same answer. */
	void *(*real)(const char *, int) = __atomic_load_n(&c_library_dlopen, __ATOMIC_RELAXED);
	if (!real) {
		real = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
		if (!real)
			abort();   /* no C library's dlopen after this executable: cannot be */
		__atomic_store_n(&c_library_dlopen, real, __ATOMIC_RELAXED);
	}
	return real(file, mode);
}
