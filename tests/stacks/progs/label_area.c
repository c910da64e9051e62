/* label_area.c — a lock inside memory that only a label without a size
 * names: what a linker's marker is (__bss_start, _edata, _end, exported
 * by a stripped binary such as Debian's chromium, whose .bss locks were
 * named "__bss_start+569784"). The label is placed in .bss by hand here, the
 * lock 4,096 bytes past it. A symbol without a size says where something
 * starts, not what lies 4 KiB on: the lock is named by its module and
 * offset (symbols.c, syms__data_name). */
#include "stacks_progs.h"

__asm__(".pushsection .bss\n"
	".balign 64\n"
	".globl area_marker\n"
	"area_marker:\n"
	".zero 8192\n"
	".popsection\n");
extern char area_marker[];

#define AREA_LOCK ((pthread_mutex_t *)(area_marker + 4096))   /* all zeros: a default mutex */

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(AREA_LOCK);
	pthread_mutex_unlock(AREA_LOCK);
	return NULL;
}

int main(void)
{
	pthread_t th;
	pthread_mutex_lock(AREA_LOCK);
	MUST(pthread_create(&th, NULL, worker, NULL));
	wait_for_waiter(AREA_LOCK);
	pthread_mutex_unlock(AREA_LOCK);
	MUST(pthread_join(th, NULL));
	puts("label_area: done");
	return 0;
}
