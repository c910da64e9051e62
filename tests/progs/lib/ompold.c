/* libompold.so: OpenMP nest locks as a program built against GCC before
 * 4.4 takes them: its references name the OMP_1.0 versions, whose lock
 * (omp_nest_lock_25_t) is two ints, 8 bytes, where OMP_3.0's is 16. The
 * shim's unversioned omp_set_nest_lock takes such a call too; forwarded
 * to the default OMP_3.0 function it wrote the 8 bytes after the lock
 * (helper-132). Locks one twice and unlocks it twice, with a guard after
 * it, and prints what it finds: "nest25 count 2 1 guard 11111111 22222222". */
#include <stdio.h>

typedef struct {
	int owner, count;
} nest25_t;

void init25(nest25_t *) __asm__("omp_init_nest_lock");
void set25(nest25_t *) __asm__("omp_set_nest_lock");
void unset25(nest25_t *) __asm__("omp_unset_nest_lock");
void destroy25(nest25_t *) __asm__("omp_destroy_nest_lock");
__asm__(".symver omp_init_nest_lock, omp_init_nest_lock@OMP_1.0");
__asm__(".symver omp_set_nest_lock, omp_set_nest_lock@OMP_1.0");
__asm__(".symver omp_unset_nest_lock, omp_unset_nest_lock@OMP_1.0");
__asm__(".symver omp_destroy_nest_lock, omp_destroy_nest_lock@OMP_1.0");

static struct {
	nest25_t lock;
	unsigned guard[2];
} s = { { 0, 0 }, { 0x11111111, 0x22222222 } };

int omp_plugin_run(void)
{
	init25(&s.lock);
	set25(&s.lock);
	set25(&s.lock);
	int twice = s.lock.count;
	unset25(&s.lock);
	int once = s.lock.count;
	unset25(&s.lock);
	destroy25(&s.lock);
	printf("nest25 count %d %d guard %x %x\n", twice, once, s.guard[0], s.guard[1]);
	return 0;
}
