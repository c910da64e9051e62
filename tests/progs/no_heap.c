/* A program that never calls malloc: whether its heap exists at exit
 * (mallinfo2's arena, the bytes malloc took from the system). Natively
 * none; the shim must not make one (trust::the_shim_makes_no_heap_in_a_
 * program_that_never_allocates): it allocates from its own mappings, and
 * the C library calls it makes must not allocate either (a failed dlvsym
 * formats its error with malloc; a dlopen of a loaded library keeps a
 * search list from it). Printed with write(2): stdio would allocate its
 * buffer. */
#include <malloc.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	char line[64];
	struct mallinfo2 m = mallinfo2();
	int n = snprintf(line, sizeof(line), "heap bytes: %zu\n", m.arena);
	return write(STDOUT_FILENO, line, (size_t)n) == n ? 0 : 1;
}
