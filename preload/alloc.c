/* alloc.c — the shim's memory: mmap'd chunks carved by a bump pointer.
 *
 * Nothing the shim allocates goes through malloc: the program may interpose
 * malloc with an allocator that locks pthread mutexes (we would recurse), and
 * what we allocate lives until the profile is written anyway, so there is
 * nothing to free.
 */
#include <sys/mman.h>

#include "shim.h"

#define CV_CHUNK (1u << 20)

static cv_spinlock_t alloc_lock;
static char *chunk_pos, *chunk_end;

void *cv__alloc(size_t size)
{
	size = (size + 15) & ~(size_t)15;
	void *p = NULL;
	cv__spin_lock(&alloc_lock);
	if ((size_t)(chunk_end - chunk_pos) < size) {
		size_t len = size > CV_CHUNK ? size : CV_CHUNK;
		void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			goto out;
		chunk_pos = m;
		chunk_end = chunk_pos + len;
	}
	p = chunk_pos;
	chunk_pos += size;
out:
	cv__spin_unlock(&alloc_lock);
	return p;   /* fresh anonymous pages are zero */
}

/* Fork child: another thread may have held the lock mid-update at the
 * fork; release it and start a fresh chunk rather than trust the pointers. */
void cv__alloc_after_fork(void)
{
	cv__spin_unlock(&alloc_lock);
	chunk_pos = chunk_end = NULL;
}
